// SPDX-License-Identifier: Apache-2.0
// Decimal digits eight bytes at a time (SWAR), for the readers' fast paths: the native
// reader's direct scan (native_fast.cpp) and JsonStream's numbers (json_stream.cpp).
#pragma once

#include <cstdint>
#include <cstring>

namespace pypto::trace::detail::swar {

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHighs = 0x8080808080808080ull;

// The eight bytes at p as a little-endian word (the caller makes sure they are readable).
inline std::uint64_t load8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// The number of leading decimal digits of the little-endian word w (0-8).
inline unsigned leading_digits(std::uint64_t w) {
  const std::uint64_t x = w ^ (kOnes * '0');  // a digit becomes its value 0-9
  // A byte is no digit where its high nibble is set before or after adding 6; a carry out
  // of a non-digit byte only changes the bytes after it.
  const std::uint64_t stop = (x | (x + kOnes * 6)) & (kOnes * 0xF0);
  return stop ? static_cast<unsigned>(__builtin_ctzll(stop)) / 8 : 8;
}

// The value of the first n (1-8) decimal digits of w, the first one most significant.
inline std::uint64_t digits_value(std::uint64_t w, unsigned n) {
  std::uint64_t x = (w ^ (kOnes * '0')) << (64 - 8 * n);  // leading zero digits in front
  x = x * 10 + (x >> 8);
  x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  return x & 0xFFFFFFFFull;
}

// The digits at p (16 readable bytes) as an integer of at most 15 digits: their count
// (0 when none, 16 when there are 16 or more) and, below 16, their value.
[[gnu::always_inline]] inline unsigned read_digits15(const char* p, std::uint64_t* value) {
  static constexpr std::uint64_t kPow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  const std::uint64_t w = load8(p);
  const unsigned n = leading_digits(w);
  if (n == 0) return 0;
  std::uint64_t v = digits_value(w, n);
  if (n == 8) {
    const std::uint64_t w2 = load8(p + 8);
    const unsigned n2 = leading_digits(w2);
    if (n2 == 8) return 16;
    if (n2 != 0) v = v * kPow10[n2] + digits_value(w2, n2);
    *value = v;
    return 8 + n2;
  }
  *value = v;
  return n;
}

// Bit 7 of each byte of the string word w that ends or escapes a plain JSON string (a quote,
// a backslash, a control byte, non-ASCII); exact at the lowest such byte (a borrow only
// flags bytes above a flagged one), so its index is __builtin_ctzll(result) / 8.
[[gnu::always_inline]] inline std::uint64_t string_specials(std::uint64_t w) {
  const std::uint64_t q = w ^ (kOnes * '"'), b = w ^ (kOnes * '\\');
  return (((q - kOnes) & ~q) | ((b - kOnes) & ~b) | ((w - kOnes * 0x20) & ~w) | w) & kHighs;
}

}  // namespace pypto::trace::detail::swar
