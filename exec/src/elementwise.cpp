// SPDX-License-Identifier: Apache-2.0
// The tile executor's element-wise kernels (numeric.h): binary, unary and select ops on
// tiles and scalars, with torch's integer semantics (64-bit, wrapping) and rounding.
#include <cmath>
#include <cstring>

#include "numeric.h"

namespace pypto::exec::detail {

namespace {

// Element-wise loops, one instantiation per op; `f` is inlined so the loops vectorize.
template <class F>
void run_binary(double* d, const Operand& a, const Operand& b, std::int64_t n, F f) {
  if (!a.scalar && !b.scalar) {
    const double* x = a.p;
    const double* y = b.p;
    for (std::int64_t i = 0; i < n; ++i) d[i] = f(x[i], y[i]);
  } else if (!a.scalar) {
    const double* x = a.p;
    const double y = b.s;
    for (std::int64_t i = 0; i < n; ++i) d[i] = f(x[i], y);
  } else if (!b.scalar) {
    const double x = a.s;
    const double* y = b.p;
    for (std::int64_t i = 0; i < n; ++i) d[i] = f(x, y[i]);
  } else {
    std::fill(d, d + n, f(a.s, b.s));
  }
}

// Integer arithmetic on 64 bits, narrowed to dst's width before it becomes a double, so
// products beyond 2^53 still wrap exactly.
template <class F>
void run_binary_int(double* d, const Operand& a, const Operand& b, std::int64_t n, DType dt, F f) {
  if (dt == DType::kBool) {
    run_binary(d, a, b, n,
               [f](double x, double y) { return f(as_i64(x), as_i64(y)) != 0 ? 1.0 : 0.0; });
    return;
  }
  run_binary(d, a, b, n, [f, dt](double x, double y) {
    return narrow_int(std::uint64_t(f(as_i64(x), as_i64(y))), dt);
  });
}

template <class F>
void run_unary(double* d, const Operand& a, std::int64_t n, F f) {
  if (a.scalar) {
    std::fill(d, d + n, f(a.s));
    return;
  }
  const double* x = a.p;
  for (std::int64_t i = 0; i < n; ++i) d[i] = f(x[i]);
}

// torch's integer pow (powi): negative exponents give 0 except for bases 1 and -1.
std::int64_t int_pow(std::int64_t base, std::int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  std::uint64_t result = 1;
  std::uint64_t b = std::uint64_t(base);
  for (std::uint64_t e = std::uint64_t(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return std::int64_t(result);
}

// fp32 value v (as double) with its mantissa cut to TF32's 10 bits: mode 0 truncates, 1 rounds
// to nearest even, 2 to nearest away from zero. NaN and inf pass through; a carry into the
// exponent may give inf, as on the cube unit.
double tf32_round(double v, int mode) {
  if (!std::isfinite(v)) return v;
  float f = float(v);
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  constexpr std::uint32_t kDrop = 13;  // 23 - 10 mantissa bits
  constexpr std::uint32_t kMask = (1u << kDrop) - 1;
  const std::uint32_t rem = u & kMask;
  u &= ~kMask;
  const std::uint32_t half = 1u << (kDrop - 1);
  const bool up = mode == 1   ? (rem > half || (rem == half && ((u >> kDrop) & 1u)))
                  : mode == 2 ? rem >= half
                              : false;
  if (up) u += 1u << kDrop;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void integer_binary(TileOpcode op, double* y, const Operand& a, const Operand& b, std::int64_t n,
                    DType dt, bool* zero_divisor) {
  const int bits = int_bits(dt);
  switch (op) {
    case TileOpcode::kGcd:
      run_binary_int(y, a, b, n, dt, [](std::int64_t u, std::int64_t v) {
        std::uint64_t p = u < 0 ? 0 - std::uint64_t(u) : std::uint64_t(u);
        std::uint64_t q = v < 0 ? 0 - std::uint64_t(v) : std::uint64_t(v);
        while (q != 0) {
          const std::uint64_t t = p % q;
          p = q;
          q = t;
        }
        return std::int64_t(p);
      });
      break;
    case TileOpcode::kFloorDiv:
    case TileOpcode::kCeilDiv: {
      const bool ceil = op == TileOpcode::kCeilDiv;
      run_binary_int(y, a, b, n, dt, [zero_divisor, ceil](std::int64_t u, std::int64_t v) {
        if (v == 0) {
          *zero_divisor = true;
          return std::int64_t(0);
        }
        if (v == -1) return wrap_sub(0, u);
        std::int64_t q = u / v;
        const std::int64_t r = u % v;
        if (r != 0 && ((r < 0) != (v < 0)) && !ceil) --q;  // toward -inf
        if (r != 0 && ((r < 0) == (v < 0)) && ceil) ++q;   // toward +inf
        return q;
      });
      break;
    }
    case TileOpcode::kBitAnd:
      run_binary_int(y, a, b, n, dt, [](std::int64_t u, std::int64_t v) { return u & v; });
      break;
    case TileOpcode::kBitOr:
      run_binary_int(y, a, b, n, dt, [](std::int64_t u, std::int64_t v) { return u | v; });
      break;
    case TileOpcode::kBitXor:
      run_binary_int(y, a, b, n, dt, [](std::int64_t u, std::int64_t v) { return u ^ v; });
      break;
    case TileOpcode::kShiftLeft:
      // torch: a count outside [0, bits) gives 0; else the bits shifted out are lost.
      run_binary_int(y, a, b, n, dt, [bits](std::int64_t u, std::int64_t v) {
        if (v < 0 || v >= bits) return std::int64_t(0);
        return std::int64_t(std::uint64_t(u) << v);
      });
      break;
    case TileOpcode::kShiftRight:
      // torch: arithmetic; a count outside [0, bits) fills with the sign.
      run_binary_int(y, a, b, n, dt, [bits](std::int64_t u, std::int64_t v) {
        if (v < 0 || v >= bits) return u < 0 ? std::int64_t(-1) : std::int64_t(0);
        return u >> v;
      });
      break;
    default: break;
  }
}

// torch.round(x, decimals): in fp32 arithmetic (torch's opmath for fp16/bf16/fp32), the
// scaled value rounded half-even, then scaled back; decimals 0 is rint.
void round_decimals(double* y, const Operand& a, std::int64_t n, DType dt, double dec) {
  const int d = static_cast<int>(dec);
  if (d == 0 || !is_float(dt)) {
    run_unary(y, a, n, [](double v) { return std::nearbyint(v); });
    return;
  }
  const float tp = static_cast<float>(std::pow(10.0, std::abs(d)));
  if (d > 0) {
    run_unary(y, a, n,
              [tp](double v) { return double(std::nearbyint(static_cast<float>(v) * tp) / tp); });
  } else {
    run_unary(y, a, n,
              [tp](double v) { return double(std::nearbyint(static_cast<float>(v) / tp) * tp); });
  }
}

// Eight floats as one value (GCC's vector extension): one register in the AVX2 copy of
// binary_f32, two in the default one; the same IEEE operation on each lane. The ops write
// through a reference: a 32-byte vector passed by value draws GCC's psABI note without AVX.
typedef float F32x8 __attribute__((vector_size(32)));
typedef std::int32_t I32x8 __attribute__((vector_size(32)));

__attribute__((always_inline)) inline void load8(F32x8& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

// y = f(a, b) over rows x cols floats (y dense; row i of a tile operand at i * its pitch, a
// scalar when null); false when a result is NaN. y is apart from a and b: no alias checks.
// Each row goes eight floats at a time, then its last cols % 8 one by one; one NaN mask for
// the whole tile, reduced once. kA / kB: that operand is a tile. Always inlined, so that each
// copy of binary_f32 compiles it for its own target.
template <bool kA, bool kB, class F>
__attribute__((always_inline)) inline bool rows_f32(float* __restrict y, const float* __restrict a,
                                                    std::int64_t pa, float as,
                                                    const float* __restrict b, std::int64_t pb,
                                                    float bs, std::int64_t rows, std::int64_t cols,
                                                    F f) {
  F32x8 sa, sb;  // the scalars in every lane (a splat: 0 + s would turn -0 into +0)
  for (int k = 0; k < 8; ++k) sa[k] = as, sb[k] = bs;
  I32x8 nan{};
  int tail_nan = 0;
  const std::int64_t body = cols - cols % 8;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < body; j += 8) {
      F32x8 u = sa, v = sb;
      if constexpr (kA) load8(u, a + i * pa + j);
      if constexpr (kB) load8(v, b + i * pb + j);
      F32x8 w;
      f(w, u, v);
      std::memcpy(y + i * cols + j, &w, sizeof w);
      nan |= w != w;
    }
    for (std::int64_t j = body; j < cols; ++j) {
      float w;
      f(w, kA ? a[i * pa + j] : as, kB ? b[i * pb + j] : bs);
      y[i * cols + j] = w;
      tail_nan |= w != w ? -1 : 0;
    }
  }
  for (int k = 0; k < 8; ++k) tail_nan |= nan[k];
  return tail_nan == 0;
}

template <class F>
__attribute__((always_inline)) inline bool run_f32(float* __restrict y, const float* __restrict a,
                                                   std::int64_t pa, float as,
                                                   const float* __restrict b, std::int64_t pb,
                                                   float bs, std::int64_t rows, std::int64_t cols,
                                                   F f) {
  if (a && b) return rows_f32<true, true>(y, a, pa, as, b, pb, bs, rows, cols, f);
  if (a) return rows_f32<true, false>(y, a, pa, as, b, pb, bs, rows, cols, f);
  return rows_f32<false, true>(y, a, pa, as, b, pb, bs, rows, cols, f);
}

}  // namespace

// x86-64 builds target SSE2; an AVX2 copy, chosen when the library loads on a CPU that has it,
// does each row in half the instructions (the same IEEE results: no op is fused or reordered).
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
bool binary_f32(TileOpcode op, float* y, const float* a, std::int64_t pa, float as, const float* b,
                std::int64_t pb, float bs, std::int64_t rows, std::int64_t cols) {
  if (!a && !b) return false;
  switch (op) {
    case TileOpcode::kAdd:
      return run_f32(y, a, pa, as, b, pb, bs, rows, cols,
                     [](auto& w, const auto& u, const auto& v) { w = u + v; });
    case TileOpcode::kSub:
      return run_f32(y, a, pa, as, b, pb, bs, rows, cols,
                     [](auto& w, const auto& u, const auto& v) { w = u - v; });
    case TileOpcode::kMul:
      return run_f32(y, a, pa, as, b, pb, bs, rows, cols,
                     [](auto& w, const auto& u, const auto& v) { w = u * v; });
    case TileOpcode::kDiv:
      return run_f32(y, a, pa, as, b, pb, bs, rows, cols,
                     [](auto& w, const auto& u, const auto& v) { w = u / v; });
    default: return false;
  }
}

bool integer_only(TileOpcode op) {
  switch (op) {
    case TileOpcode::kGcd:
    case TileOpcode::kFloorDiv:
    case TileOpcode::kCeilDiv:
    case TileOpcode::kBitAnd:
    case TileOpcode::kBitOr:
    case TileOpcode::kBitXor:
    case TileOpcode::kShiftLeft:
    case TileOpcode::kShiftRight: return true;
    default: return false;
  }
}

BinaryStatus binary_values(TileOpcode op, double* y, const Operand& a, const Operand& b,
                           std::int64_t n, DType dt) {
  const bool int_domain = a.integral && b.integral && !is_float(dt);
  bool zero_divisor = false;
  bool exact01 = false;  // result is 0/1: representable in every dtype
  // Arithmetic runs on 64-bit integers when both operands and dst are integral (exact and
  // wrapping like torch), else on doubles.
  const auto arith = [&](auto int_op, auto float_op) {
    if (int_domain) {
      run_binary_int(y, a, b, n, dt, int_op);
    } else {
      run_binary(y, a, b, n, float_op);
    }
  };
  const auto predicate = [&](auto test) {
    run_binary(y, a, b, n, [test](double u, double v) { return double(test(u, v)); });
    exact01 = true;
  };
  // fp32 + - * / round in the same pass as the op (the same two steps per value, one walk).
  const auto fp32 = [](double v) { return double(float(v)); };
  if (dt == DType::kFp32) {
    switch (op) {
      case TileOpcode::kAdd:
        run_binary(y, a, b, n, [fp32](double u, double v) { return fp32(u + v); });
        return BinaryStatus::kOk;
      case TileOpcode::kSub:
        run_binary(y, a, b, n, [fp32](double u, double v) { return fp32(u - v); });
        return BinaryStatus::kOk;
      case TileOpcode::kMul:
        run_binary(y, a, b, n, [fp32](double u, double v) { return fp32(u * v); });
        return BinaryStatus::kOk;
      case TileOpcode::kDiv:
        run_binary(y, a, b, n, [fp32](double u, double v) { return fp32(u / v); });
        return BinaryStatus::kOk;
      default: break;
    }
  }
  switch (op) {
    case TileOpcode::kAdd: arith(wrap_add, [](double u, double v) { return u + v; }); break;
    case TileOpcode::kSub: arith(wrap_sub, [](double u, double v) { return u - v; }); break;
    case TileOpcode::kMul: arith(wrap_mul, [](double u, double v) { return u * v; }); break;
    case TileOpcode::kDiv:
      arith(
          [&zero_divisor](std::int64_t u, std::int64_t v) {
            if (v == 0) {
              zero_divisor = true;
              return std::int64_t(0);
            }
            return v == -1 ? wrap_sub(0, u) : u / v;
          },
          [](double u, double v) { return u / v; });
      break;
    case TileOpcode::kRemainder:
      arith(
          [&zero_divisor](std::int64_t u, std::int64_t v) {
            if (v == 0) {
              zero_divisor = true;
              return std::int64_t(0);
            }
            std::int64_t r = v == -1 ? 0 : u % v;
            if (r != 0 && ((r < 0) != (v < 0))) r += v;
            return r;
          },
          [](double u, double v) {
            double r = std::fmod(u, v);
            if (r != 0 && ((v < 0) != (r < 0))) r += v;
            return r;
          });
      break;
    case TileOpcode::kPow: arith(int_pow, [](double u, double v) { return std::pow(u, v); }); break;
    case TileOpcode::kMaximum: run_binary(y, a, b, n, nan_max); break;
    case TileOpcode::kMinimum: run_binary(y, a, b, n, nan_min); break;
    case TileOpcode::kEq: predicate([](double u, double v) { return u == v; }); break;
    case TileOpcode::kNe: predicate([](double u, double v) { return u != v; }); break;
    case TileOpcode::kLt: predicate([](double u, double v) { return u < v; }); break;
    case TileOpcode::kLe: predicate([](double u, double v) { return u <= v; }); break;
    case TileOpcode::kGt: predicate([](double u, double v) { return u > v; }); break;
    case TileOpcode::kGe: predicate([](double u, double v) { return u >= v; }); break;
    case TileOpcode::kLogicalAnd:
      predicate([](double u, double v) { return u != 0 && v != 0; });
      break;
    case TileOpcode::kLogicalOr:
      predicate([](double u, double v) { return u != 0 || v != 0; });
      break;
    case TileOpcode::kAtan2:
      run_binary(y, a, b, n, [](double u, double v) { return std::atan2(u, v); });
      break;
    case TileOpcode::kCopysign:
      run_binary(y, a, b, n, [](double u, double v) { return std::copysign(u, v); });
      break;
    case TileOpcode::kHypot:
      run_binary(y, a, b, n, [](double u, double v) { return std::hypot(u, v); });
      break;
    case TileOpcode::kFmod:
      arith(
          [&zero_divisor](std::int64_t u, std::int64_t v) {
            if (v == 0) {
              zero_divisor = true;
              return std::int64_t(0);
            }
            return v == -1 ? std::int64_t(0) : u % v;
          },
          [](double u, double v) { return std::fmod(u, v); });
      break;
    case TileOpcode::kGcd:
    case TileOpcode::kFloorDiv:
    case TileOpcode::kCeilDiv:
    case TileOpcode::kBitAnd:
    case TileOpcode::kBitOr:
    case TileOpcode::kBitXor:
    case TileOpcode::kShiftLeft:
    case TileOpcode::kShiftRight: integer_binary(op, y, a, b, n, dt, &zero_divisor); break;
    default: return BinaryStatus::kNotBinary;
  }
  if (zero_divisor) return BinaryStatus::kZeroDivisor;
  // Max/min of operands already in dst's dtype select one of them: nothing to round.
  const bool selects = (op == TileOpcode::kMaximum || op == TileOpcode::kMinimum) &&
                       a.dtype == dt && b.dtype == dt && !(a.scalar && b.scalar);
  // Integer-domain results were narrowed to dst already.
  if (!exact01 && !selects && !int_domain) round_inplace(y, n, dt, IntConv::kFromFloat);
  return BinaryStatus::kOk;
}

bool unary_values(TileOpcode op, double* y, const Operand& a, std::int64_t n, DType dt,
                  double arg) {
  bool exact = false;  // the result is already in dst's value set
  switch (op) {
    case TileOpcode::kNeg: run_unary(y, a, n, [](double v) { return -v; }); break;
    case TileOpcode::kAbs: run_unary(y, a, n, [](double v) { return std::fabs(v); }); break;
    case TileOpcode::kRelu:
      // torch's clamp_min(x, 0): NaN and -0.0 pass through.
      run_unary(y, a, n, [](double v) { return v < 0 ? 0.0 : v; });
      break;
    case TileOpcode::kExp: run_unary(y, a, n, [](double v) { return std::exp(v); }); break;
    case TileOpcode::kLog: run_unary(y, a, n, [](double v) { return std::log(v); }); break;
    case TileOpcode::kSqrt: run_unary(y, a, n, [](double v) { return std::sqrt(v); }); break;
    case TileOpcode::kRsqrt: run_unary(y, a, n, [](double v) { return 1.0 / std::sqrt(v); }); break;
    case TileOpcode::kReciprocal: run_unary(y, a, n, [](double v) { return 1.0 / v; }); break;
    case TileOpcode::kSigmoid:
      // torch and the vector unit compute 1 / (1 + exp(-x)) in fp32: an exp that overflows
      // fp32 (x below -88.72) gives 0, not the exact subnormal.
      run_unary(y, a, n, [](double v) {
        const double e = std::exp(-v);
        return std::isinf(static_cast<float>(e)) ? 0.0 : 1.0 / (1.0 + e);
      });
      break;
    case TileOpcode::kTanh: run_unary(y, a, n, [](double v) { return std::tanh(v); }); break;
    case TileOpcode::kFloor: run_unary(y, a, n, [](double v) { return std::floor(v); }); break;
    case TileOpcode::kLogicalNot:
      run_unary(y, a, n, [](double v) { return double(v == 0); });
      exact = true;
      break;
    case TileOpcode::kCeil: run_unary(y, a, n, [](double v) { return std::ceil(v); }); break;
    case TileOpcode::kTrunc: run_unary(y, a, n, [](double v) { return std::trunc(v); }); break;
    case TileOpcode::kRound: round_decimals(y, a, n, dt, arg); break;
    case TileOpcode::kSign:
      // torch.sign: NaN stays NaN, -0.0 gives -0.0 (0 * sign bit), as (0 < v) - (v < 0) does.
      run_unary(y, a, n, [](double v) {
        return std::isnan(v) ? v : v == 0 ? v : double((0 < v) - (v < 0));
      });
      break;
    case TileOpcode::kErf: run_unary(y, a, n, [](double v) { return std::erf(v); }); break;
    case TileOpcode::kErfc: run_unary(y, a, n, [](double v) { return std::erfc(v); }); break;
    case TileOpcode::kSin: run_unary(y, a, n, [](double v) { return std::sin(v); }); break;
    case TileOpcode::kCos: run_unary(y, a, n, [](double v) { return std::cos(v); }); break;
    case TileOpcode::kLog1p: run_unary(y, a, n, [](double v) { return std::log1p(v); }); break;
    case TileOpcode::kExpm1: run_unary(y, a, n, [](double v) { return std::expm1(v); }); break;
    case TileOpcode::kExp2: run_unary(y, a, n, [](double v) { return std::exp2(v); }); break;
    case TileOpcode::kLog2: run_unary(y, a, n, [](double v) { return std::log2(v); }); break;
    case TileOpcode::kLog10: run_unary(y, a, n, [](double v) { return std::log10(v); }); break;
    case TileOpcode::kCbrt: run_unary(y, a, n, [](double v) { return std::cbrt(v); }); break;
    case TileOpcode::kCosh: run_unary(y, a, n, [](double v) { return std::cosh(v); }); break;
    case TileOpcode::kSinh: run_unary(y, a, n, [](double v) { return std::sinh(v); }); break;
    case TileOpcode::kTf32: {
      const int mode = static_cast<int>(arg);
      run_unary(y, a, n, [mode](double v) { return tf32_round(v, mode); });
      break;
    }
    case TileOpcode::kLrelu: {
      // torch.nn.functional.leaky_relu: the slope as fp32 (PyPTO's Element(DT_FP32, slope)),
      // one product rounded to dst. NaN passes through.
      const double slope = double(float(arg));
      run_unary(y, a, n, [slope](double v) { return v < 0 ? v * slope : v; });
      break;
    }
    case TileOpcode::kTan: run_unary(y, a, n, [](double v) { return std::tan(v); }); break;
    case TileOpcode::kAsin: run_unary(y, a, n, [](double v) { return std::asin(v); }); break;
    case TileOpcode::kAcos: run_unary(y, a, n, [](double v) { return std::acos(v); }); break;
    case TileOpcode::kAtan: run_unary(y, a, n, [](double v) { return std::atan(v); }); break;
    case TileOpcode::kAcosh: run_unary(y, a, n, [](double v) { return std::acosh(v); }); break;
    case TileOpcode::kAsinh: run_unary(y, a, n, [](double v) { return std::asinh(v); }); break;
    case TileOpcode::kAtanh: run_unary(y, a, n, [](double v) { return std::atanh(v); }); break;
    case TileOpcode::kIsFinite:
      run_unary(y, a, n, [](double v) { return double(std::isfinite(v)); });
      exact = true;
      break;
    case TileOpcode::kIsNan:
      run_unary(y, a, n, [](double v) { return double(std::isnan(v)); });
      exact = true;
      break;
    case TileOpcode::kIsInf:
      run_unary(y, a, n, [](double v) { return double(std::isinf(v)); });
      exact = true;
      break;
    case TileOpcode::kSignBit:
      run_unary(y, a, n, [](double v) { return double(std::signbit(v)); });
      exact = true;
      break;
    case TileOpcode::kBitNot:
      run_unary(y, a, n, [](double v) { return double(~as_i64(v)); });
      break;
    default: return false;
  }
  if (!exact) {
    const bool int_domain = a.integral && !is_float(dt);
    round_inplace(y, n, dt, int_domain ? IntConv::kWrap : IntConv::kFromFloat);
  }
  return true;
}

void where_values(double* y, const Operand& c, const Operand& a, const Operand& b, std::int64_t n,
                  DType dt) {
  for (std::int64_t i = 0; i < n; ++i) {
    const double ci = c.scalar ? c.s : c.p[i];
    y[i] = ci != 0 ? (a.scalar ? a.s : a.p[i]) : (b.scalar ? b.s : b.p[i]);
  }
  if (a.dtype != dt || b.dtype != dt) {
    const bool ints = a.integral && b.integral;
    round_inplace(y, n, dt, ints ? IntConv::kWrap : IntConv::kFromFloat);
  }
}

}  // namespace pypto::exec::detail
