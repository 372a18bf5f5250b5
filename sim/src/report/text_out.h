// SPDX-License-Identifier: Apache-2.0
// Text of large JSON outputs (trace.json, swim.json, topo.json, PyPTO's trace formats,
// synthetic native traces), built in a buffer and handed to a stream a MiB at a time. The writers
// format millions of records, and an ordered_json per record (or iostream's << per field) costs
// several times the simulation itself. Numbers are written exactly as nlohmann::json::dump() writes
// them (integers in decimal, doubles by its own to_chars), so the files are byte for byte what a
// DOM would give.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace pypto::sim::report_detail {

class TextOut {
 public:
  // Records between two calls of `every_records`.
  static constexpr std::uint64_t kCheckEvery = 4096;

  // `every_records` (may be empty) is called once every kCheckEvery records: a writer polls
  // there for Ctrl-C and for a failed write, and may throw to stop.
  explicit TextOut(std::ostream& os, std::function<void()> every_records = {})
      : os_(os), every_records_(std::move(every_records)) {
    buf_.reserve(kFlushBytes + 4096);
  }
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;

  TextOut& operator<<(std::string_view s) {
    buf_.append(s.data(), s.size());
    return *this;
  }
  TextOut& operator<<(char c) {
    buf_.push_back(c);
    return *this;
  }
  // An unsigned integer in decimal.
  TextOut& u(std::uint64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, r.ptr);
    return *this;
  }
  // A double as nlohmann::json::dump() writes it (null for NaN and infinities).
  TextOut& d(double v) {
    if (!std::isfinite(v)) return *this << "null";
    char tmp[64];
    char* end = nlohmann::detail::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, end);
    return *this;
  }
  // Contract: ends a record; flushes a full buffer and calls every_records when due.
  void end_record() {
    if (buf_.size() >= kFlushBytes) flush();
    if (every_records_ && ++records_ % kCheckEvery == 0) every_records_();
  }
  // Contract: hands the buffered text to the stream (whose state says whether it took it).
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlushBytes = 1 << 20;
  std::ostream& os_;
  std::function<void()> every_records_;
  std::string buf_;
  std::uint64_t records_ = 0;
};

}  // namespace pypto::sim::report_detail
