// SPDX-License-Identifier: Apache-2.0
// Private helpers of the tile executor: exact decoding of the small IEEE binary formats
// (fp16, bf16, fp32) to double and correctly rounded encoding from double, with every rounding
// direction a cast can ask for. Written by hand rather than through _Float16 because the
// conversions must be exact on every compiler, need directed modes, and run in the hot path.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#ifdef __FAST_MATH__
#error "the fp16/bf16 rounding needs IEEE arithmetic: build without -ffast-math"
#endif

namespace pypto::exec::detail {

enum class Rounding : std::uint8_t {
  kNearestEven,  // IEEE default; torch's float -> half/bfloat16
  kNearestAway,  // ties away from zero
  kTowardZero,
  kDown,  // toward -inf
  kUp,    // toward +inf
  kOdd,   // truncate, then set the last bit when inexact (no double-rounding error)
};

inline std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline double double_of(std::uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// An IEEE binary format with kExpBits exponent bits and kManBits stored fraction bits, held in
// the low bits of a uint32 (fp16: 5/10, bf16: 8/7, fp32: 8/23).
template <int kExpBits, int kManBits>
struct SmallFloat {
  static_assert(kExpBits <= 8 && kManBits <= 23, "formats narrower than fp32 only");
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr int kEmin = 1 - kBias;
  static constexpr int kShift = 52 - kManBits;  // fraction bits dropped from a double
  static constexpr std::uint32_t kManMask = (1u << kManBits) - 1;
  static constexpr std::uint32_t kExpMask = ((1u << kExpBits) - 1) << kManBits;
  static constexpr std::uint32_t kSignBit = 1u << (kExpBits + kManBits);
  static constexpr std::uint32_t kMaxFinite = kExpMask - 1;
  static constexpr std::uint32_t kQuietNan = kExpMask | (1u << (kManBits - 1));

  // The exact value of the bit pattern h: the significand (implicit bit for normals) times
  // a power of two, one formula for normals and subnormals.
  static double decode(std::uint32_t h) {
    const std::uint32_t e = (h & kExpMask) >> kManBits;
    const std::uint32_t m = h & kManMask;
    const std::uint64_t sign = std::uint64_t((h & kSignBit) != 0) << 63;
    if (e == (kExpMask >> kManBits)) {
      const double v = m != 0 ? std::numeric_limits<double>::quiet_NaN()
                              : std::numeric_limits<double>::infinity();
      return double_of(bits_of(v) | sign);
    }
    const std::uint32_t sig = e != 0 ? (m | (1u << kManBits)) : m;
    const int scale_exp = (e != 0 ? int(e) : 1) - kBias - kManBits;
    const double v = double(sig) * double_of(std::uint64_t(scale_exp + 1023) << 52);
    return double_of(bits_of(v) | sign);
  }

  // v rounded to nearest-even in this format, returned as the double it decodes to: the
  // hot path after every fp16/bf16 op. Adding then subtracting 2^(e + 52 - kManBits) leaves the
  // hardware's round-to-nearest-even to drop exactly the bits the format lacks (at least the
  // smallest normal exponent, so subnormal results keep a fixed quantum). Needs the default
  // FP environment and no -ffast-math, which would fold the add and subtract.
  static double round_nearest_even(double v) {
    const std::uint64_t b = bits_of(v);
    const std::uint64_t sign = b & (std::uint64_t(1) << 63);
    const std::uint64_t abs = b ^ sign;
    constexpr std::uint64_t kOverflowBits = std::uint64_t(kBias + 1 + 1023) << 52;
    if (abs >= kOverflowBits) {  // |v| >= 2^(bias+1): inf, or NaN/inf already
      return abs > 0x7ff0000000000000ULL ? v : double_of(sign | 0x7ff0000000000000ULL);
    }
    const double min_normal = double_of(std::uint64_t(kEmin + 1023) << 52);
    const double p = std::max(double_of(abs & 0x7ff0000000000000ULL), min_normal);
    const double magic = p * double_of(std::uint64_t(52 - kManBits + 1023) << 52);
    const double a = double_of(abs);
    double r = (a + magic) - magic;
    if (r >= double_of(kOverflowBits)) r = std::numeric_limits<double>::infinity();
    return double_of(bits_of(r) | sign);
  }

  // encode<kNearestEven>, by the same hardware rounding: the sum's fraction field counts
  // units of the result's last place, which is the significand the format stores (plus the
  // implicit bit, which carries into the exponent field; a rounding carry does the same).
  static std::uint32_t encode_nearest_even(double v) {
    const std::uint64_t b = bits_of(v);
    const std::uint32_t sign = (b >> 63) != 0 ? kSignBit : 0;
    const std::uint64_t abs = b & ~(std::uint64_t(1) << 63);
    constexpr std::uint64_t kOverflowBits = std::uint64_t(kBias + 1 + 1023) << 52;
    if (abs >= kOverflowBits) {
      return sign | (abs > 0x7ff0000000000000ULL ? kQuietNan : kExpMask);
    }
    const double min_normal = double_of(std::uint64_t(kEmin + 1023) << 52);
    const double p = std::max(double_of(abs & 0x7ff0000000000000ULL), min_normal);
    const double sum = double_of(abs) + p * double_of(std::uint64_t(52 - kManBits + 1023) << 52);
    const std::uint64_t units = bits_of(sum) & ((std::uint64_t(1) << 52) - 1);
    const int e = int(bits_of(p) >> 52) - 1023;
    return sign | std::uint32_t((std::uint64_t(e - kEmin) << kManBits) + units);
  }

  // v rounded in direction R to this format, as a bit pattern. A single rounding straight
  // from double, so it equals float -> format for every value a float holds. Overflow gives
  // inf when the direction rounds away from zero, else the largest finite value (IEEE 754).
  template <Rounding R>
  static std::uint32_t encode(double v) {
    if constexpr (R == Rounding::kNearestEven) return encode_nearest_even(v);
    const std::uint64_t b = bits_of(v);
    const bool neg = (b >> 63) != 0;
    const std::uint32_t sign = neg ? kSignBit : 0;
    const std::uint64_t abs = b & ~(std::uint64_t(1) << 63);
    if (abs >= 0x7ff0000000000000ULL) {
      return abs > 0x7ff0000000000000ULL ? (sign | kQuietNan) : (sign | kExpMask);
    }
    const int e = int(abs >> 52) - 1023;  // -1023 for double subnormals: far below kEmin
    if (e > kBias) {
      return sign | (overflow_to_inf<R>(neg) ? kExpMask : kMaxFinite);
    }
    // One formula for normal and subnormal results, without data-dependent branches (tiles
    // mix magnitudes): keep the significand's top bits, shifting further for subnormals, and
    // add the exponent field for normals (the implicit bit carries into it). Shifts saturate
    // at 63, where everything is remainder below half. A double subnormal has no implicit
    // bit, so zero stays exactly zero and the rest round as tiny nonzero values.
    const std::uint64_t implicit = e > -1023 ? (std::uint64_t(1) << 52) : 0;
    const std::uint64_t full = (abs & ((std::uint64_t(1) << 52) - 1)) | implicit;
    const bool normal = e >= kEmin;
    const int shift = normal ? kShift : std::min(kShift + (kEmin - e), 63);
    const std::uint64_t base = normal ? std::uint64_t(e + kBias - 1) << kManBits : 0;
    std::uint64_t h = base + (full >> shift);
    const std::uint64_t rem = full & ((std::uint64_t(1) << shift) - 1);
    const std::uint64_t half = std::uint64_t(1) << (shift - 1);
    if constexpr (R == Rounding::kOdd) {
      h |= std::uint64_t(rem != 0);
    } else {
      h += std::uint64_t(round_up<R>(neg, h, rem, half));  // a carry into the exponent is right
    }
    return sign | std::uint32_t(h);
  }

  static std::uint32_t encode(double v, Rounding r) {
    switch (r) {
      case Rounding::kNearestEven: return encode<Rounding::kNearestEven>(v);
      case Rounding::kNearestAway: return encode<Rounding::kNearestAway>(v);
      case Rounding::kTowardZero: return encode<Rounding::kTowardZero>(v);
      case Rounding::kDown: return encode<Rounding::kDown>(v);
      case Rounding::kUp: return encode<Rounding::kUp>(v);
      case Rounding::kOdd: return encode<Rounding::kOdd>(v);
    }
    return encode<Rounding::kNearestEven>(v);
  }

 private:
  template <Rounding R>
  static bool overflow_to_inf(bool neg) {
    switch (R) {
      case Rounding::kNearestEven:
      case Rounding::kNearestAway: return true;
      case Rounding::kUp: return !neg;
      case Rounding::kDown: return neg;
      case Rounding::kTowardZero:
      case Rounding::kOdd: return false;
    }
    return true;
  }

  template <Rounding R>
  static bool round_up(bool neg, std::uint64_t h, std::uint64_t rem, std::uint64_t half) {
    switch (R) {
      case Rounding::kNearestEven: return (rem > half) | ((rem == half) & ((h & 1) != 0));
      case Rounding::kNearestAway: return rem >= half;
      case Rounding::kUp: return rem != 0 && !neg;
      case Rounding::kDown: return rem != 0 && neg;
      case Rounding::kTowardZero:
      case Rounding::kOdd: return false;
    }
    return false;
  }
};

using Fp16 = SmallFloat<5, 10>;

// fp16 decoding for bulk loads: per (sign, exponent) pair a scale and the implicit bit, so
// normals and subnormals share one branch-free formula (a 65536-entry table is no faster once
// the tiles compete for the cache). inf and NaN take the generic path.
struct Fp16Decoder {
  double scale[64];
  std::int32_t implicit[64];
  Fp16Decoder() {
    for (int hi = 0; hi < 64; ++hi) {
      const int e = hi & 31;
      const double s = double_of(std::uint64_t((e != 0 ? e : 1) - 25 + 1023) << 52);
      scale[hi] = (hi & 32) != 0 ? -s : s;
      implicit[hi] = e != 0 ? 1024 : 0;
    }
  }
  double operator()(std::uint16_t h) const {
    const unsigned hi = h >> 10;
    if ((hi & 31) == 31) return Fp16::decode(h);
    return double(std::int32_t(h & 1023) + implicit[hi]) * scale[hi];
  }
};

inline const Fp16Decoder& fp16_decoder() {
  static const Fp16Decoder decoder;
  return decoder;
}

// bf16 is the upper half of a float.
inline double bf16_decode_fast(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
using Bf16 = SmallFloat<8, 7>;
using Fp32 = SmallFloat<8, 23>;

}  // namespace pypto::exec::detail
