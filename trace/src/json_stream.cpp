// SPDX-License-Identifier: Apache-2.0
// JsonStream: the grammar is nlohmann's (RFC 8259, UTF-8 checked in strings, surrogate pairs
// in \u escapes, a leading byte order mark skipped, numbers classified as nlohmann does), so
// that the accepted files are those the DOM readers accepted.
#include "json_stream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "pypto/common/errors.h"
#include "readers.h"
#include "swar_digits.h"

namespace pypto::trace::detail {

namespace {

constexpr std::size_t kChunkBytes = std::size_t(4) << 20;

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void append_utf8(std::string& s, std::uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

JsonStream::JsonStream(const std::string& path, const char* top_name)
    : path_(path), top_name_(top_name) {
  file_bytes_ = input_file_size(path);
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw TraceError(path + ": cannot open: " + std::strerror(errno));
  buf_.resize(read_buffer_bytes(file_bytes_, kChunkBytes));
  std::size_t keep = 0;
  more(keep);
  // nlohmann skips a UTF-8 byte order mark (and refuses a broken one).
  ensure(3);
  if (end_ - pos_ >= 1 && static_cast<unsigned char>(buf_[pos_]) == 0xEF) {
    if (end_ - pos_ >= 3 && static_cast<unsigned char>(buf_[pos_ + 1]) == 0xBB &&
        static_cast<unsigned char>(buf_[pos_ + 2]) == 0xBF) {
      pos_ += 3;
    } else {
      syntax_error("invalid byte order mark");
    }
  }
}

JsonStream::~JsonStream() {
  if (file_) std::fclose(file_);
}

bool JsonStream::more(std::size_t& keep) {
  if (eof_) return false;
  if (keep > 0) {
    std::memmove(buf_.data(), buf_.data() + keep, end_ - keep);
    base_ += keep;
    pos_ -= keep;
    end_ -= keep;
    keep = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a token longer than the buffer
  // Read what stat() saw, and no more: the file may grow while being read.
  const std::uint64_t left = file_bytes_ - (base_ + end_);
  const std::size_t want = static_cast<std::size_t>(
      std::min<std::uint64_t>(left, static_cast<std::uint64_t>(buf_.size() - end_)));
  const std::size_t got = want ? std::fread(buf_.data() + end_, 1, want, file_) : 0;
  if (std::ferror(file_)) throw TraceError(path_ + ": read error: " + std::strerror(errno));
  end_ += got;
  if (got < want || base_ + end_ >= file_bytes_) eof_ = true;
  return got > 0;
}

void JsonStream::ensure(std::size_t n) {
  while (end_ - pos_ < n) {
    std::size_t keep = pos_;
    if (!more(keep)) return;
  }
}

char JsonStream::peek_char_slow() {
  while (true) {
    while (pos_ < end_) {
      const char c = buf_[pos_];
      if (!is_ws(c)) return c;
      ++pos_;
    }
    std::size_t keep = pos_;
    if (!more(keep)) return 0;
  }
}

void JsonStream::expect(char c) {
  if (peek_char() != c || pos_ == end_) {
    const char what[] = {'e', 'x', 'p', 'e', 'c', 't', 'e', 'd', ' ', '\'', c, '\'', '\0'};
    syntax_error(what);
  }
  ++pos_;
}

JsonStream::Kind JsonStream::peek_kind() {
  const char c = peek_char();
  if (pos_ == end_) syntax_error("unexpected end of input; expected a value");
  switch (c) {
    case '"': return Kind::kString;
    case '[': return Kind::kArray;
    case '{': return Kind::kObject;
    case 't': return Kind::kTrue;
    case 'f': return Kind::kFalse;
    case 'n': return Kind::kNull;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return Kind::kUint;  // the number's own kind is known once read
    default: syntax_error("expected a value");
  }
}

bool JsonStream::next_element(bool& first) {
  const char c = peek_char();
  const bool was_first = first;
  first = false;
  if (c == ']' && pos_ < end_) {
    ++pos_;
    return false;
  }
  if (was_first) return true;
  if (c != ',' || pos_ == end_) syntax_error("expected ',' or ']'");
  ++pos_;
  return true;
}

bool JsonStream::next_key(bool& first, std::string_view& key) {
  char c = peek_char();
  if (first) {
    first = false;
    if (c == '}' && pos_ < end_) {
      ++pos_;
      return false;
    }
  } else {
    if (c == '}' && pos_ < end_) {
      ++pos_;
      return false;
    }
    if (c != ',' || pos_ == end_) syntax_error("expected ',' or '}'");
    ++pos_;
    c = peek_char();
  }
  if (c != '"' || pos_ == end_) syntax_error("expected a string key");
  read_string(key);
  if (pos_ < end_ && buf_[pos_] == ':') {
    ++pos_;
    return true;
  }
  // Whitespace before the ':' may refill the buffer, which moves a key viewed there.
  if (key.data() != scratch_.data()) {
    scratch_.assign(key.data(), key.size());
    key = scratch_;
  }
  expect(':');
  return true;
}

void JsonStream::read_string(std::string_view& out) {
  ++pos_;  // the opening quote
  std::size_t start = pos_;
  while (true) {
    // Eight bytes at a time while none is a quote, a backslash, a control byte or non-ASCII.
    while (pos_ + 8 <= end_) {
      const std::uint64_t special = swar::string_specials(swar::load8(buf_.data() + pos_));
      if (special == 0) {
        pos_ += 8;
        continue;
      }
      // The string's first special byte: a quote there ends it; anything else takes the
      // slow way.
      pos_ += static_cast<std::size_t>(__builtin_ctzll(special)) / 8;
      if (buf_[pos_] != '"') {
        read_string_slow(start, out);
        return;
      }
      out = std::string_view(buf_.data() + start, pos_ - start);
      ++pos_;
      return;
    }
    while (pos_ < end_) {
      const auto c = static_cast<unsigned char>(buf_[pos_]);
      if (c == '"') {
        // A view of the buffer: valid until the next refill (the caller's next call).
        out = std::string_view(buf_.data() + start, pos_ - start);
        ++pos_;
        return;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) {
        read_string_slow(start, out);
        return;
      }
      ++pos_;
    }
    if (!more(start)) syntax_error("unterminated string");
  }
}

namespace {

// A string at p in [p, e) without escapes, control bytes or non-ASCII: its body into out and
// p past its closing quote; false where it is anything else or runs past e.
bool plain_string(const char*& p, const char* e, std::string_view& out) {
  if (p == e || *p != '"') return false;
  const char* const start = ++p;
  for (; p + 8 <= e; p += 8) {
    const std::uint64_t special = swar::string_specials(swar::load8(p));
    if (special != 0) {
      p += static_cast<std::size_t>(__builtin_ctzll(special)) / 8;
      break;
    }
  }
  for (; p != e; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') {
      out = std::string_view(start, static_cast<std::size_t>(p - start));
      ++p;
      return true;
    }
    if (c == '\\' || c < 0x20 || c >= 0x80) return false;
  }
  return false;
}

// An unsigned integer at p of 1-15 digits, no leading zero: its value and p past it.
bool plain_uint(const char*& p, const char* e, std::uint64_t& v) {
  const char* const start = p;
  if (e - p >= 16) {  // eight digits at a time
    const unsigned n = swar::read_digits15(p, &v);
    if (n == 0 || n == 16) return false;
    p += n;
    return !(*start == '0' && n > 1);
  }
  v = 0;
  for (; p != e && static_cast<unsigned>(*p - '0') <= 9; ++p) {
    v = v * 10 + static_cast<unsigned>(*p - '0');
  }
  const auto n = p - start;
  return n >= 1 && n <= 15 && !(*start == '0' && n > 1);
}

}  // namespace

bool JsonStream::plain_object(PlainObject& out, std::uint64_t array_max) {
  constexpr std::size_t kWindowBytes = 4096;
  if (end_ - pos_ < kWindowBytes) ensure(kWindowBytes);
  const char* const begin = buf_.data() + pos_;
  const char* const e = buf_.data() + end_;
  const char* p = begin;
  if (p == e || *p++ != '{') return false;
  out.fields.clear();
  out.numbers.clear();
  if (p != e && *p == '}') {
    pos_ += 2;
    return true;
  }
  while (true) {
    PlainField f;
    if (!plain_string(p, e, f.key) || p == e || *p++ != ':' || p == e) return false;
    if (*p == '"') {
      if (!plain_string(p, e, f.s)) return false;
      f.kind = Kind::kString;
    } else if (*p == '[') {
      ++p;
      f.kind = Kind::kArray;
      f.begin = static_cast<std::uint32_t>(out.numbers.size());
      if (p != e && *p == ']') {
        ++p;
      } else {
        while (true) {
          std::uint64_t v = 0;
          if (!plain_uint(p, e, v) || v > array_max || p == e) return false;
          out.numbers.push_back(v);
          const char c = *p++;
          if (c == ']') break;
          if (c != ',') return false;
        }
      }
      f.end = static_cast<std::uint32_t>(out.numbers.size());
    } else {
      if (!plain_uint(p, e, f.u)) return false;
      f.kind = Kind::kUint;
    }
    out.fields.push_back(f);
    if (p == e) return false;
    const char c = *p++;
    if (c == '}') break;
    if (c != ',') return false;
  }
  pos_ += static_cast<std::size_t>(p - begin);
  return true;
}

// Escapes, control characters and UTF-8 (nlohmann's checks, RFC 3629 byte ranges).
void JsonStream::read_string_slow(std::size_t start, std::string_view& out) {
  scratch_.assign(buf_.data() + start, pos_ - start);
  auto next = [&]() -> unsigned char {
    if (pos_ == end_) {
      std::size_t keep = pos_;
      if (!more(keep)) syntax_error("unterminated string");
    }
    return static_cast<unsigned char>(buf_[pos_++]);
  };
  auto read_hex4 = [&]() -> std::uint32_t {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = hex_value(static_cast<char>(next()));
      if (h < 0) syntax_error("invalid \\u escape");
      v = v * 16 + static_cast<std::uint32_t>(h);
    }
    return v;
  };
  while (true) {
    const unsigned char c = next();
    if (c == '"') break;
    if (c < 0x20) syntax_error("control character in a string");
    if (c == '\\') {
      const unsigned char e = next();
      switch (e) {
        case '"': scratch_ += '"'; break;
        case '\\': scratch_ += '\\'; break;
        case '/': scratch_ += '/'; break;
        case 'b': scratch_ += '\b'; break;
        case 'f': scratch_ += '\f'; break;
        case 'n': scratch_ += '\n'; break;
        case 'r': scratch_ += '\r'; break;
        case 't': scratch_ += '\t'; break;
        case 'u': {
          std::uint32_t cp = read_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (next() != '\\' || next() != 'u') syntax_error("lone high surrogate");
            const std::uint32_t lo = read_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) syntax_error("lone high surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            syntax_error("lone low surrogate");
          }
          append_utf8(scratch_, cp);
          break;
        }
        default: syntax_error("invalid escape");
      }
      continue;
    }
    if (c < 0x80) {
      scratch_ += static_cast<char>(c);
      continue;
    }
    int extra = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c == 0xE0) {
      extra = 2;
      lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      extra = 2;
    } else if (c == 0xED) {
      extra = 2;
      hi = 0x9F;
    } else if (c == 0xF0) {
      extra = 3;
      lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      extra = 3;
    } else if (c == 0xF4) {
      extra = 3;
      hi = 0x8F;
    } else {
      syntax_error("invalid UTF-8");
    }
    scratch_ += static_cast<char>(c);
    for (int k = 0; k < extra; ++k) {
      const unsigned char t = next();
      if (t < lo || t > hi) syntax_error("invalid UTF-8");
      lo = 0x80;
      hi = 0xBF;
      scratch_ += static_cast<char>(t);
    }
  }
  out = scratch_;
}

void JsonStream::read_number(Scalar& out) {
  // Fastest path: up to 15 digits read eight at a time, when 16 bytes are in the buffer.
  if (pos_ + 16 <= end_) {
    const char* p = buf_.data() + pos_;
    std::uint64_t v = 0;
    const unsigned n = swar::read_digits15(p, &v);  // 16: 16 digits or more, the loop below
    const char c = n < 16 ? p[n] : '0';
    if (n != 0 && n < 16 && !(p[0] == '0' && n > 1) && c != '-' && c != '+' && c != '.' &&
        c != 'e' && c != 'E') {
      pos_ += n;
      out.kind = Kind::kUint;
      out.u = v;
      return;
    }
  }
  // Fast path: up to 19 digits without '-', fraction or exponent, all in the buffer.
  {
    std::size_t i = pos_;
    std::uint64_t v = 0;
    const std::size_t stop = std::min(end_, pos_ + 19);
    while (i < stop && buf_[i] >= '0' && buf_[i] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(buf_[i] - '0');
      ++i;
    }
    if (i > pos_ && i < end_ && !(buf_[pos_] == '0' && i > pos_ + 1)) {
      const char c = buf_[i];
      if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) {
        pos_ = i;
        out.kind = Kind::kUint;
        out.u = v;
        return;
      }
    }
  }
  std::size_t start = pos_;
  while (true) {
    while (pos_ < end_) {
      const char c = buf_[pos_];
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
        ++pos_;
      } else {
        goto done;
      }
    }
    if (!more(start)) break;
  }
done:
  const char* p = buf_.data() + start;
  const std::size_t n = pos_ - start;
  // nlohmann's grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  std::size_t i = 0;
  const bool neg = n > 0 && p[0] == '-';
  if (neg) ++i;
  if (i >= n || !(p[i] >= '0' && p[i] <= '9')) syntax_error("invalid number");
  const std::size_t int_begin = i;
  if (p[i] == '0') {
    ++i;
  } else {
    while (i < n && p[i] >= '0' && p[i] <= '9') ++i;
  }
  const std::size_t int_end = i;
  bool is_float = false;
  if (i < n && p[i] == '.') {
    ++i;
    if (i >= n || !(p[i] >= '0' && p[i] <= '9')) syntax_error("invalid number");
    while (i < n && p[i] >= '0' && p[i] <= '9') ++i;
    is_float = true;
  }
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    ++i;
    if (i < n && (p[i] == '+' || p[i] == '-')) ++i;
    if (i >= n || !(p[i] >= '0' && p[i] <= '9')) syntax_error("invalid number");
    while (i < n && p[i] >= '0' && p[i] <= '9') ++i;
    is_float = true;
  }
  if (i != n) syntax_error("invalid number");
  if (!is_float) {
    // nlohmann: strtoull / strtoll, and a float when the integer does not fit.
    std::uint64_t v = 0;
    bool overflow = false;
    for (std::size_t k = int_begin; k < int_end; ++k) {
      const auto d = static_cast<std::uint64_t>(p[k] - '0');
      if (v > (~std::uint64_t{0} - d) / 10) {
        overflow = true;
        break;
      }
      v = v * 10 + d;
    }
    if (!overflow && !neg) {
      out.kind = Kind::kUint;
      out.u = v;
      return;
    }
    if (!overflow && neg && v <= (std::uint64_t{1} << 63)) {
      out.kind = Kind::kInt;
      out.i = v == (std::uint64_t{1} << 63) ? INT64_MIN : -static_cast<std::int64_t>(v);
      return;
    }
  }
  scratch_.assign(p, n);
  const double d = std::strtod(scratch_.c_str(), nullptr);
  if (!std::isfinite(d)) syntax_error("number too large for a double");
  out.kind = Kind::kFloat;
  out.d = d;
}

void JsonStream::read_literal(const char* word, std::size_t len) {
  ensure(len);
  if (end_ - pos_ < len || std::memcmp(buf_.data() + pos_, word, len) != 0) {
    syntax_error("invalid literal");
  }
  pos_ += len;
}

void JsonStream::read_scalar(Scalar& out) {
  const Kind k = peek_kind();
  out.kind = k;
  switch (k) {
    case Kind::kString: read_string(out.s); return;
    case Kind::kUint: read_number(out); return;
    case Kind::kTrue: read_literal("true", 4); return;
    case Kind::kFalse: read_literal("false", 5); return;
    case Kind::kNull: read_literal("null", 4); return;
    default: syntax_error("expected a scalar");
  }
}

void JsonStream::skip_value() {
  // Iterative, so that nesting depth costs heap, not stack (nlohmann has no depth limit).
  std::vector<char> open;  // '[' or '{' per level
  std::vector<bool> first;
  Scalar s;
  std::string_view key;
  while (true) {
    const Kind k = peek_kind();
    if (k == Kind::kArray || k == Kind::kObject) {
      ++pos_;
      open.push_back(k == Kind::kArray ? '[' : '{');
      first.push_back(true);
    } else {
      read_scalar(s);
    }
    // Close finished levels, and move to the next value.
    while (!open.empty()) {
      bool f = first.back();
      bool more_values = false;
      if (open.back() == '[') {
        more_values = next_element(f);
      } else {
        more_values = next_key(f, key);
      }
      first.back() = f;
      if (more_values) break;
      open.pop_back();
      first.pop_back();
    }
    if (open.empty()) return;
  }
}

void JsonStream::end_document() {
  if (peek_char() != 0 || pos_ != end_) syntax_error("unexpected text after the JSON value");
  validated_ = true;
}

void JsonStream::syntax_error(const char* what) {
  const std::uint64_t at = offset();
  check_json_syntax(path_, top_name_);
  // nlohmann accepted what this parser did not: still a TraceError with the position.
  const LineCol lc = file_line_col(path_, at);
  throw TraceError(path_ + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col) +
                   ": invalid JSON: " + what);
}

void JsonStream::semantic_error(const std::string& msg) {
  if (!validated_) check_json_syntax(path_, top_name_);
  throw TraceError(msg);
}

std::string brief(const JsonStream::Scalar& v) {
  using K = JsonStream::Kind;
  nlohmann::json j;
  switch (v.kind) {
    case K::kArray: return "an array";
    case K::kObject: return "an object";
    case K::kNone: return "nothing";
    case K::kString: j = std::string(v.s); break;
    case K::kUint: j = v.u; break;
    case K::kInt: j = v.i; break;
    case K::kFloat: j = v.d; break;
    case K::kTrue: j = true; break;
    case K::kFalse: j = false; break;
    case K::kNull: break;
  }
  std::string s = j.dump();
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return s;
}

std::string check_uint(const HeldScalar& v, const char* key, std::uint64_t max,
                       std::uint64_t* out) {
  using K = JsonStream::Kind;
  if (!v.present()) return std::string("missing \"") + key + "\"";
  std::uint64_t x = 0;
  if (v.kind == K::kUint) {
    x = v.u;
  } else if (v.kind == K::kInt && v.i >= 0) {
    x = static_cast<std::uint64_t>(v.i);
  } else {
    return std::string("expected \"") + key + "\" to be a non-negative integer, got " +
           brief(v.view());
  }
  if (x > max) {
    return std::string("\"") + key + "\" " + std::to_string(x) + " is larger than " +
           std::to_string(max);
  }
  *out = x;
  return {};
}

std::string check_string(const HeldScalar& v, const char* key) {
  if (!v.present()) return std::string("missing \"") + key + "\"";
  if (v.kind != JsonStream::Kind::kString) {
    return std::string("expected \"") + key + "\" to be a string, got " + brief(v.view());
  }
  return {};
}

// One HeldScalar for every entry that needs check_uint: the plain ids never copy a string.
void read_id_array(JsonStream& js, const char* key, std::vector<std::uint32_t>& out,
                   std::string& bad, JsonStream::Scalar& tmp) {
  out.clear();
  bad.clear();
  js.begin_array();
  bool first = true;
  HeldScalar el;
  while (js.next_element(first)) {
    const JsonStream::Kind ek = js.peek_kind();
    if (ek != JsonStream::Kind::kArray && ek != JsonStream::Kind::kObject) {
      js.read_scalar(tmp);
      if (bad.empty() && tmp.kind == JsonStream::Kind::kUint && tmp.u <= 0xFFFFFFFFull) {
        out.push_back(static_cast<std::uint32_t>(tmp.u));
        continue;
      }
      el.hold(tmp);
    } else {
      js.skip_value();
      el.hold_kind(ek);
    }
    if (!bad.empty()) continue;
    std::uint64_t id = 0;
    bad = check_uint(el, key, 0xFFFFFFFFull, &id);
    if (bad.empty()) out.push_back(static_cast<std::uint32_t>(id));
  }
}

}  // namespace pypto::trace::detail
