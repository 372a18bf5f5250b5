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
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace pypto::trace {

class TextOut {
 public:
  // Records between two calls of `every_records`.
  static constexpr std::uint64_t kCheckEvery = 4096;

  // `every_records` (may be empty) is called once every kCheckEvery records: a writer polls
  // there for Ctrl-C and for a failed write, and may throw to stop.
  explicit TextOut(std::ostream& os, std::function<void()> every_records = {})
      : os_(os), every_records_(std::move(every_records)), buf_(new char[kCapacity]) {}
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;

  // Always inlined: most arguments are literals, whose length and copy then fold into a few
  // moves (a call cost ~37 instructions and a strlen).
  __attribute__((always_inline)) TextOut& operator<<(std::string_view s) {
    if (s.size() > kCapacity - size_) {
      flush();
      if (s.size() > kCapacity) {  // longer than the whole buffer: straight to the stream
        os_.write(s.data(), static_cast<std::streamsize>(s.size()));
        return *this;
      }
    }
    std::memcpy(buf_.get() + size_, s.data(), s.size());
    size_ += s.size();
    return *this;
  }
  __attribute__((always_inline)) TextOut& operator<<(char c) {
    if (size_ == kCapacity) flush();
    buf_[size_++] = c;
    return *this;
  }
  // An unsigned integer in decimal, formatted in place (a number is at most kNumberBytes).
  TextOut& u(std::uint64_t v) {
    room_for_number();
    size_ = static_cast<std::size_t>(
        std::to_chars(buf_.get() + size_, buf_.get() + kCapacity, v).ptr - buf_.get());
    return *this;
  }
  // A double as nlohmann::json::dump() writes it (null for NaN and infinities).
  TextOut& d(double v) {
    if (!std::isfinite(v)) return *this << "null";
    room_for_number();
    size_ = static_cast<std::size_t>(
        nlohmann::detail::to_chars(buf_.get() + size_, buf_.get() + kCapacity, v) - buf_.get());
    return *this;
  }
  // Contract: writes d(v) from a memo of the doubles written before. trace.json's durations
  // are few distinct doubles, each written many times (a slice's dur is its length in µs
  // moved by a few ulps of its start, so each length gives a handful of doubles): a hit costs
  // a hash and a 24-byte copy instead of grisu2.
  TextOut& d_memo(double v) {
    if (!memo_) memo_.reset(new MemoSlot[kMemoSlots]());  // len 0: empty
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    MemoSlot& slot = memo_[(bits * 0x9E3779B97F4A7C15ull) >> (64 - kMemoBits)];
    room_for_number();
    char* at = buf_.get() + size_;
    if (slot.len != 0 && slot.bits == bits) {
      std::memcpy(at, slot.text, sizeof slot.text);  // room_for_number left the room
      size_ += slot.len;
      return *this;
    }
    d(v);
    const std::size_t len = static_cast<std::size_t>(buf_.get() + size_ - at);
    if (len <= sizeof slot.text) {
      slot.bits = bits;
      slot.len = static_cast<std::uint8_t>(len);
      std::memcpy(slot.text, at, len);
    }
    return *this;
  }
  // Contract: writes the double `ns / 1e3` (a whole ns count in µs) exactly as d() would,
  // without nlohmann's grisu2 (~450 instructions a number, the largest cost of trace.json).
  // Below kExactNs (2^40 ns, 18 minutes) the double is the correctly rounded quotient, under
  // 2^31, and its printed form is the decimal ns/1000 with trailing zeros stripped ("12.34",
  // "0.005", ".0" when whole). Why: the double's rounding interval (one ulp, <= 2^-22 wide)
  // holds no other decimal of <= 3 fractional digits, so ns/1000 is the shortest, and grisu2
  // finds it whenever it lies inside grisu2's narrowed interval (boundaries moved in by 1 of
  // its 64-bit units, its own computation errs by at most 1 more). It does: a boundary is an
  // odd multiple of ulp/2 (ulp/4 below a power of two, which ns/1000 could only equal), and
  // ns/1000 minus it has a numerator = 8 (mod 16) over 1000 * 2^(1-e), so it is at least
  // ulp/250 away: 4+ of grisu2's units (an ulp is 2^11 * [0.5, 1) of them). Above 2^42 ns an
  // ulp exceeds 0.001 and the digits differ (8859745821989.542 prints as ...543), hence the
  // limit. test_trace_json compares the two paths over a wide sample.
  TextOut& us_of_ns(std::uint64_t ns) {
    if (ns >= kExactNs) return d(static_cast<double>(ns) / 1e3);
    room_for_number();
    char* p = std::to_chars(buf_.get() + size_, buf_.get() + kCapacity, ns / 1000).ptr;
    *p++ = '.';
    std::uint32_t frac = static_cast<std::uint32_t>(ns % 1000);
    if (frac == 0) {
      *p++ = '0';
    } else {
      p[0] = static_cast<char>('0' + frac / 100);
      p[1] = static_cast<char>('0' + frac / 10 % 10);
      p[2] = static_cast<char>('0' + frac % 10);
      p += frac % 100 != 0 ? (frac % 10 != 0 ? 3 : 2) : 1;
    }
    size_ = static_cast<std::size_t>(p - buf_.get());
    return *this;
  }
  static constexpr std::uint64_t kExactNs = std::uint64_t{1} << 40;
  // Contract: writes the double `ps / 1e6` (a whole ps count in µs) exactly as d() would,
  // without grisu2 where that is provably the same text, else through d(). Fast for ps in
  // [1e6, 2^40), so the double v lies in [1, 2^21), printed in fixed notation, and an ulp is
  // at most 2^-32: the rounding interval holds no other decimal of <= 6 fractional digits, so
  // the shortest text is the decimal ps/10^6, trailing zeros stripped (".0" when whole).
  // Unlike us_of_ns, it can lie as close as ulp/31250 to a boundary, inside grisu2's margin
  // (1 of its units narrowed plus at most 1 of error, an ulp being 2^10..2^11 units), so the
  // distance is checked exactly: |ps * 2^-e - m * 10^6| / 10^6 is |v - ps/10^6| in ulps
  // (v = m * 2^e); within ulp/2 - ulp/64 of v (>= 16 units inside), grisu2 gives this text,
  // the only one of its length in its interval. A power of two (the lower boundary at ulp/4)
  // and the ~3 % near a boundary take d(). test_trace_json compares the two paths.
  TextOut& us_of_ps(std::uint64_t ps) {
    const double v = static_cast<double>(ps) / 1e6;
    if (ps < kFastPsMin || ps >= kExactPs) return d(v);
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint64_t frac_bits = bits & ((std::uint64_t{1} << 52) - 1);
    if (frac_bits == 0) return d(v);
    const int shift = 1075 - static_cast<int>(bits >> 52);  // v = m * 2^-shift, 32..52
    const unsigned __int128 scaled = static_cast<unsigned __int128>(ps) << shift;
    const unsigned __int128 m6 =
        static_cast<unsigned __int128>(frac_bits | (std::uint64_t{1} << 52)) * 1000000u;
    const unsigned __int128 off = scaled > m6 ? scaled - m6 : m6 - scaled;
    if (off * 64 > 31 * 1000000u) return d(v);
    room_for_number();
    char* p = std::to_chars(buf_.get() + size_, buf_.get() + kCapacity, ps / 1000000).ptr;
    *p++ = '.';
    std::uint32_t frac = static_cast<std::uint32_t>(ps % 1000000);
    if (frac == 0) {
      *p++ = '0';
    } else {
      int digits = 6;
      while (frac % 10 == 0) frac /= 10, --digits;
      for (int i = digits - 1; i >= 0; --i, frac /= 10) p[i] = static_cast<char>('0' + frac % 10);
      p += digits;
    }
    size_ = static_cast<std::size_t>(p - buf_.get());
    return *this;
  }
  static constexpr std::uint64_t kFastPsMin = 1000000;
  static constexpr std::uint64_t kExactPs = std::uint64_t{1} << 40;
  // Contract: ends a record; flushes a full buffer and calls every_records when due.
  void end_record() {
    if (size_ >= kFlushBytes) flush();
    if (every_records_ && ++records_ % kCheckEvery == 0) every_records_();
  }
  // Contract: hands the buffered text to the stream (whose state says whether it took it).
  void flush() {
    os_.write(buf_.get(), static_cast<std::streamsize>(size_));
    size_ = 0;
  }

 private:
  // Text is handed on a MiB at a time; the slack above it holds the rest of a record, so a
  // record rarely splits across two writes (the bytes are the same either way).
  static constexpr std::size_t kFlushBytes = 1 << 20;
  static constexpr std::size_t kCapacity = kFlushBytes + 4096;
  // Room for any number to_chars writes: 20 digits of a uint64, nlohmann's at most 24 of a
  // double (its own buffer contract is 64 bytes).
  static constexpr std::size_t kNumberBytes = 64;
  void room_for_number() {
    if (kCapacity - size_ < kNumberBytes) flush();
  }

  struct MemoSlot {
    std::uint64_t bits;
    std::uint8_t len;
    char text[24];  // nlohmann's longest double ("-1.2345678901234567e-308")
  };
  static constexpr int kMemoBits = 12;
  static constexpr std::size_t kMemoSlots = std::size_t{1} << kMemoBits;

  std::ostream& os_;
  std::function<void()> every_records_;
  std::unique_ptr<char[]> buf_;  // kCapacity bytes; a std::string's append of two pointers
                                 // goes through its generic _M_replace (~70 instructions)
  std::size_t size_ = 0;
  std::uint64_t records_ = 0;
  std::unique_ptr<MemoSlot[]> memo_;  // d_memo's, made on first use (160 KiB)
};

}  // namespace pypto::trace
