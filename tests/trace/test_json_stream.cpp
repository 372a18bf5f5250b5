// SPDX-License-Identifier: Apache-2.0
// JsonStream (trace/src/json_stream.h), the streamed readers' parser: its scalars against
// nlohmann's for the forms its fast paths take or hand on (strings ending at every offset
// of an eight-byte word, escapes and UTF-8 after plain text; integers of 1 to 20 digits, a
// leading zero, a sign, a fraction or an exponent right after the digits), each value both
// with room after it and as the file's last bytes.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "json_stream.h"
#include "pypto/common/errors.h"

using pypto::trace::detail::JsonStream;
using Kind = JsonStream::Kind;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("pypto_json_stream_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// Every element of the array `text` as JsonStream reads it, checked against nlohmann.
void check_scalars(const std::string& text) {
  const nlohmann::json ref = nlohmann::json::parse(text);
  const std::string path = temp_file("scalars.json", text);
  JsonStream js(path, "value");
  js.begin_array();
  bool first = true;
  std::size_t i = 0;
  while (js.next_element(first)) {
    INFO("element " << i << " of " << text);
    REQUIRE(i < ref.size());
    const nlohmann::json& want = ref[i++];
    JsonStream::Scalar got;
    js.read_scalar(got);
    switch (want.type()) {
      case nlohmann::json::value_t::string:
        REQUIRE(got.kind == Kind::kString);
        CHECK(std::string(got.s) == want.get<std::string>());
        break;
      case nlohmann::json::value_t::number_unsigned:
        REQUIRE(got.kind == Kind::kUint);
        CHECK(got.u == want.get<std::uint64_t>());
        break;
      case nlohmann::json::value_t::number_integer:
        REQUIRE(got.kind == Kind::kInt);
        CHECK(got.i == want.get<std::int64_t>());
        break;
      case nlohmann::json::value_t::number_float:
        REQUIRE(got.kind == Kind::kFloat);
        CHECK(got.d == want.get<double>());
        break;
      default: FAIL("unexpected value in the test's text");
    }
  }
  CHECK(i == ref.size());
  js.end_document();
  std::filesystem::remove(path);
}

}  // namespace

TEST_CASE("JsonStream strings: the quote at every offset of a word, escapes and UTF-8") {
  std::string text = "[";
  for (int n = 0; n <= 24; ++n) text += "\"" + std::string(n, 'a' + n % 26) + "\",";
  for (int n = 0; n <= 17; ++n) {
    const std::string plain(n, 'x');
    text += "\"" + plain + "\\\"q\",\"" + plain + "\\u00e9\",\"" + plain + "\xc3\xa9\",";
  }
  text += "\"last\"]";
  check_scalars(text);
  check_scalars("[\"" + std::string(9, 'z') + "\"]");  // a string ending the file
}

TEST_CASE("JsonStream integers: 1 to 20 digits, and what ends them") {
  std::vector<std::string> nums;
  std::istringstream list(
      "0 7 10 99999999 12345678 123456789 1234567890123456 12345678901234567 999999999999999 "
      "18446744073709551615 18446744073709551616 -0 -5 -12345678901 1.5 12345678.25 1e5 2E-3 "
      "123456789e2 0.0 100000000000000000000");
  for (std::string n; list >> n;) nums.push_back(n);
  for (int d = 1; d <= 20; ++d) {
    std::string s;
    for (int k = 0; k < d; ++k) s += static_cast<char>('1' + k % 9);
    nums.push_back(s);
  }
  std::string text = "[";
  for (const std::string& n : nums) text += n + ",";
  text += "1]";
  check_scalars(text);
  for (const std::string& n : nums) check_scalars("[" + n + "]");  // the file's last bytes
}

TEST_CASE("JsonStream numbers nlohmann refuses are syntax errors") {
  for (const std::string bad :
       {"01", "00", "0123456789", "0123456789012345", "1.", "1e", "-", "+1"}) {
    for (const std::string& after : {std::string("]"), "]" + std::string(20, ' ')}) {
      INFO(bad << after.size());
      const std::string path = temp_file("bad.json", "[" + bad + after);
      JsonStream js(path, "value");
      js.begin_array();
      bool first = true;
      JsonStream::Scalar got;
      CHECK_THROWS_AS((js.next_element(first), js.read_scalar(got), js.next_element(first)),
                      pypto::TraceError);
      std::filesystem::remove(path);
    }
  }
}

TEST_CASE("JsonStream plain objects: read as nlohmann reads them, or left whole to the calls") {
  // One object a line: plain ones (no blanks, plain strings, integers of up to 15 digits,
  // arrays of them up to 9), then ones the token-by-token calls must read from their start.
  const std::string plain =
      "{}\n"
      "{\"a\":1}\n"
      "{\"taskId\":12345678,\"funcName\":\"f\",\"semanticLabel\":\"\",\"successors\":[1,2]}\n"
      "{\"seqNo\":0,\"execStart\":123456789012345,\"execEnd\":9,\"s\":[]}\n"
      "{\"k\":[0,9,3],\"x\":\"yz\"}\n";
  const std::string other =
      "{ \"a\":1}\n{\"a\": 1}\n{\"a\":-1}\n{\"a\":1.5}\n{\"a\":1e3}\n{\"a\":true}\n"
      "{\"a\":null}\n{\"a\":{}}\n{\"a\":[[1]]}\n{\"a\":[10]}\n{\"a\":\"x\\ny\"}\n"
      "{\"a\":\"\xc3\xa9\"}\n{\"a\":1234567890123456}\n";
  const auto lines = [](const std::string& t) {
    std::vector<std::string> out;
    std::istringstream in(t);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const std::vector<std::string> p = lines(plain), o = lines(other);
  std::string text = "[";
  for (const std::string& x : p) text += x + ",";
  for (const std::string& x : o) text += x + ",";
  text += "{}]";
  const nlohmann::json want = nlohmann::json::parse(text);
  const std::string path = temp_file("plain.json", text);
  JsonStream js(path, "value");
  js.begin_array();
  bool first = true;
  JsonStream::PlainObject po;
  std::size_t i = 0;
  while (js.next_element(first)) {
    INFO("object " << i);
    REQUIRE(js.peek_kind() == Kind::kObject);
    const nlohmann::json& w = want[i];
    const bool is_plain = i < p.size() || i == p.size() + o.size();
    REQUIRE(js.plain_object(po, 9) == is_plain);
    if (is_plain) {
      REQUIRE(po.fields.size() == w.size());
      for (const JsonStream::PlainField& f : po.fields) {
        const nlohmann::json& v = w.at(std::string(f.key));
        if (f.kind == Kind::kUint) CHECK(f.u == v.get<std::uint64_t>());
        if (f.kind == Kind::kString) CHECK(std::string(f.s) == v.get<std::string>());
        if (f.kind == Kind::kArray) {
          CHECK(std::vector<std::uint64_t>(po.numbers.begin() + f.begin,
                                           po.numbers.begin() + f.end) ==
                v.get<std::vector<std::uint64_t>>());
        }
      }
    } else {
      js.skip_value();  // nothing was consumed: the whole object is still there
    }
    ++i;
  }
  CHECK(i == want.size());
  js.end_document();
  std::filesystem::remove(path);
}
