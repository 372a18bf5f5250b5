// SPDX-License-Identifier: Apache-2.0
// Private to the tile executor: its numeric library. Locals are dense row-major doubles holding
// exact values of their dtype (an fp32 local may be held as floats instead: the fp32 kernels
// below); these are the conversions into a dtype's value set (inline:
// they run once per element), the element access of global memory, and the kernels that
// compute one instruction's values on raw arrays (element-wise, cast, reductions, scans,
// sorts, matmul, layout). They know no TaskProgram and report no errors: the interpreter
// (tile_exec.cpp) checks an instruction's operands and shapes before it calls them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "half.h"
#include "pypto/exec/program.h"

namespace pypto::exec::detail {

inline constexpr double kTwo63 = 9223372036854775808.0;
inline constexpr double kTwo64 = 18446744073709551616.0;

inline bool is_float(DType d) {
  return d == DType::kFp32 || d == DType::kFp16 || d == DType::kBf16;
}

// ---- conversions to a dtype's value set --------------------------------------------------------

// How a value becomes an integer: kWrap for results of integer arithmetic (two's complement),
// kFromFloat for floating values (torch's .to() on x86-64), kSaturate for a saturating cast.
enum class IntConv : std::uint8_t { kWrap, kFromFloat, kSaturate };

// t finite and integral: its residue modulo 2^64.
inline std::uint64_t wrap64(double t) {
  if (std::fabs(t) < kTwo63) return std::uint64_t(std::int64_t(t));
  double m = std::fmod(t, kTwo64);  // exact; a multiple of 2^11 here, so m + 2^64 is exact
  if (m < 0) m += kTwo64;
  return std::uint64_t(m);
}

inline int int_bits(DType d) {
  switch (d) {
    case DType::kInt8: return 8;
    case DType::kUInt8: return 8;
    case DType::kInt16: return 16;
    case DType::kInt32: return 32;
    default: return 64;
  }
}

// The low `bits` bits of u, sign-extended.
inline double sign_extend(std::uint64_t u, int bits) {
  if (bits == 64) return double(std::int64_t(u));
  const int sh = 64 - bits;
  return double(std::int64_t(u << sh) >> sh);
}

// The low bits of u as a value of integer dtype d: sign-extended, zero-extended for DT_UINT8.
inline double narrow_int(std::uint64_t u, DType d) {
  if (d == DType::kUInt8) return double(u & 0xffu);
  return sign_extend(u, int_bits(d));
}

// What x86 cvtt* produce for NaN/inf/out of range ("integer indefinite"), as torch shows it:
// int8/int16 go through int32, so they keep the low bits of INT32_MIN (0).
inline double int_indefinite(DType d) {
  if (d == DType::kInt64) return -kTwo63;
  if (d == DType::kInt32) return -2147483648.0;
  return 0.0;
}

inline double int_min(DType d) {
  return d == DType::kUInt8 ? 0.0 : -std::ldexp(1.0, int_bits(d) - 1);
}
inline double int_max(DType d) {
  // INT64_MAX has no double; the largest double below 2^63 stands in for it.
  if (d == DType::kUInt8) return 255.0;
  return d == DType::kInt64 ? 9223372036854774784.0 : std::ldexp(1.0, int_bits(d) - 1) - 1;
}

// v as a value of integer (or bool) dtype d, converted per c.
inline double to_int(double v, DType d, IntConv c) {
  if (d == DType::kBool) return v != 0 ? 1.0 : 0.0;
  switch (c) {
    case IntConv::kWrap:
      if (!std::isfinite(v)) return int_indefinite(d);
      return narrow_int(wrap64(std::trunc(v)), d);
    case IntConv::kFromFloat:
      if (d == DType::kInt64) return (v >= -kTwo63 && v < kTwo63) ? std::trunc(v) : -kTwo63;
      {
        const std::int32_t i =
            (v > -2147483649.0 && v < 2147483648.0) ? std::int32_t(v) : INT32_MIN;
        return narrow_int(std::uint64_t(std::int64_t(i)), d);
      }
    case IntConv::kSaturate:
      if (std::isnan(v)) return 0.0;
      return std::clamp(std::trunc(v), int_min(d), int_max(d));
  }
  return 0.0;
}

// v encoded in the binary format F (half.h) per r and decoded back.
template <class F>
inline double to_small_float(double v, Rounding r, bool saturate) {
  std::uint32_t h = F::encode(v, r);
  if (saturate && (h & ~F::kSignBit) == F::kExpMask) h = (h & F::kSignBit) | F::kMaxFinite;
  return F::decode(h);
}

// v as a value of floating dtype d, rounded per r; saturate: overflow gives the largest finite.
inline double to_float(double v, DType d, Rounding r, bool saturate) {
  switch (d) {
    case DType::kFp32:
      if (r == Rounding::kNearestEven && !saturate) return double(float(v));
      return to_small_float<Fp32>(v, r, saturate);
    case DType::kFp16:
      if (r == Rounding::kNearestEven && !saturate) return Fp16::round_nearest_even(v);
      return to_small_float<Fp16>(v, r, saturate);
    case DType::kBf16:
      if (r == Rounding::kNearestEven && !saturate) return Bf16::round_nearest_even(v);
      return to_small_float<Bf16>(v, r, saturate);
    default: return v;
  }
}

// How values of dtype `from` become integers: float values truncate like torch's .to(),
// integer values wrap.
inline IntConv int_conv_from(DType from) {
  return is_float(from) ? IntConv::kFromFloat : IntConv::kWrap;
}

// v rounded to d's value set: floats to nearest even, integers per c.
inline double round_value(double v, DType d, IntConv c) {
  return is_float(d) ? to_float(v, d, Rounding::kNearestEven, false) : to_int(v, d, c);
}

// The integer a double of an integer tile holds (int64 locals may hold 2^63: wrap it).
inline std::int64_t as_i64(double v) { return std::int64_t(wrap64(v)); }

// Two's-complement arithmetic on 64 bits (what torch's integer ops do).
inline std::int64_t wrap_add(std::int64_t x, std::int64_t y) {
  return std::int64_t(std::uint64_t(x) + std::uint64_t(y));
}
inline std::int64_t wrap_sub(std::int64_t x, std::int64_t y) {
  return std::int64_t(std::uint64_t(x) - std::uint64_t(y));
}
inline std::int64_t wrap_mul(std::int64_t x, std::int64_t y) {
  return std::int64_t(std::uint64_t(x) * std::uint64_t(y));
}

// max/min that propagate NaN (torch.maximum/minimum, amax/amin).
inline double nan_max(double x, double y) {
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return y;
  return x > y ? x : y;
}

inline double nan_min(double x, double y) {
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return y;
  return x < y ? x : y;
}

// Rounds n values in place to d's value set (the step after every op).
void round_inplace(double* p, std::int64_t n, DType d, IntConv c);

// y[i] = x[i] (values of dtype `from`) cast to `to`: CastMode m rounds (to an integral value
// when from == to is floating; kOdd only to a floating dtype), saturate clamps to the range.
void cast_values(const double* x, double* y, std::int64_t n, DType from, DType to, CastMode m,
                 bool saturate);

// ---- global memory ---------------------------------------------------------------------------

// A shape right-aligned into kMaxRank axes (leading axes of extent 1), so every loop has one
// depth: the rows are axis kRowAxis, the elements of a row axis kColAxis.
struct PaddedDims {
  std::int64_t n[kMaxRank];
};
inline constexpr int kRowAxis = kMaxRank - 2;
inline constexpr int kColAxis = kMaxRank - 1;

inline PaddedDims pad_shape(const std::int64_t* shape, int rank) {
  PaddedDims d;
  for (int k = 0; k < kMaxRank - rank; ++k) d.n[k] = 1;
  for (int k = 0; k < rank; ++k) d.n[kMaxRank - rank + k] = shape[k];
  return d;
}

inline PaddedDims pad_stride(const std::int64_t* stride, int rank) {
  PaddedDims d{};
  for (int k = 0; k < rank; ++k) d.n[kMaxRank - rank + k] = stride[k];
  return d;
}

// Calls f(i) for each index tuple i of the padded axes [0, axes) of `d`, in row-major order
// (i[k] for k < axes); the loops every padded walk shares outside its innermost ones.
template <class F>
inline void for_each_outer_index(const PaddedDims& d, int axes, F&& f) {
  std::int64_t i[kMaxRank] = {};
  for (int k = 0; k < axes; ++k) {
    if (d.n[k] <= 0) return;
  }
  while (true) {
    f(static_cast<const std::int64_t*>(i));
    int k = axes - 1;
    while (k >= 0 && ++i[k] == d.n[k]) i[k--] = 0;
    if (k < 0) return;
  }
}

// Loads region r's box of `buf` (inside it: checked by the caller) into the same-index prefix
// of a dst tile of padded shape `dn`, exactly (values of r.dtype).
void load_region(double* dst, const PaddedDims& dn, const std::uint8_t* buf, const GlobalRegion& r);

// Stores region r's box from a src tile of padded shape `sn`, holding values of `from`,
// converted to r.dtype (`row`: one row of scratch).
void store_region(std::uint8_t* buf, const GlobalRegion& r, const double* src, DType from,
                  const PaddedDims& sn, std::vector<double>& row);

// ---- fp32 locals held as floats --------------------------------------------------------------
// A float loop of fp32 load, + - * / and store gives the bytes the double path gives (a double
// holds a float op's operands exactly, and rounding a double + - * / result to float equals the
// float op's rounding: 53 >= 2 * 24 + 2 bits), except where a value is NaN (the double path
// quiets a signalling NaN and may pick another NaN operand) or the FP environment is not the
// default one. So a NaN result or a NaN to store sends the op to the double path, and these
// kernels run only where float_kernels_exact() says so.

// Whether the float kernels are exact here: x86's MXCSR rounds to nearest and flushes no
// denormal (DAZ and FTZ clear); false on other targets.
bool float_kernels_exact();

// Loads region r's box (fp32, inside `buf`) into the same-index prefix of a float tile of
// padded shape `dn`.
void load_region_f32(float* dst, const PaddedDims& dn, const std::uint8_t* buf,
                     const GlobalRegion& r);

// Stores region r's box (fp32) from a float tile of padded shape `sn`.
void store_region_f32(std::uint8_t* buf, const GlobalRegion& r, const float* src,
                      const PaddedDims& sn);

// Whether any of the n floats is NaN.
bool any_nan_f32(const float* p, std::int64_t n);

// y = a op b for fp32 kAdd, kSub, kMul, kDiv on rows x cols floats (y dense), `a` a tile with
// row i at a + i * pa, or the scalar `as` when null (`b` likewise). False when op is none of
// these or a result is NaN (y then undefined; it must not alias a or b, which stay intact for
// the double path to redo the op).
bool binary_f32(TileOpcode op, float* y, const float* a, std::int64_t pa, float as, const float* b,
                std::int64_t pb, float bs, std::int64_t rows, std::int64_t cols);

// Reads the element at element offset `off` of `buf`, of dtype `from`, as a double.
double load_elem(const std::uint8_t* buf, DType from, std::int64_t off);

// Stores n values of dtype `from` at elements off, off + stride, ... of `buf`, converted to
// dtype `to`.
void store_row(std::uint8_t* buf, DType to, std::int64_t off, std::int64_t stride,
               const double* src, std::int64_t n, DType from);

// ---- element-wise kernels --------------------------------------------------------------------

// An operand of an element-wise op: a local tile or a scalar.
struct Operand {
  const double* p = nullptr;
  double s = 0;
  bool scalar = false;
  DType dtype = DType::kFp32;  // the tile's, or the dtype the scalar was rounded to
  bool integral = false;       // holds only integers (integer/bool tile or integral scalar)
};

enum class BinaryStatus : std::uint8_t { kOk, kNotBinary, kZeroDivisor };

// The binary ops that need integer operands and an integer dst (gcd, floor/ceil division,
// bitwise, shifts).
bool integer_only(TileOpcode op);

// y (n values of dtype dt) = a op b, in dt's value set. Arithmetic runs on 64-bit integers
// when both operands and dt are integral (exact and wrapping like torch), else on doubles.
// Contract: an integer_only op is given integer operands and dt.
BinaryStatus binary_values(TileOpcode op, double* y, const Operand& a, const Operand& b,
                           std::int64_t n, DType dt);

// y (n values of dtype dt) = op(a), in dt's value set; false: op is no unary op. `arg` is
// the op's scalar argument (round's decimals, tf32's mode, leaky_relu's slope). Contract:
// tf32 has an fp32 dt; bitwise_not an integral a and an integer dt.
bool unary_values(TileOpcode op, double* y, const Operand& a, std::int64_t n, DType dt, double arg);

// y (n values of dtype dt) = c ? a : b, in dt's value set.
void where_values(double* y, const Operand& c, const Operand& a, const Operand& b, std::int64_t n,
                  DType dt);

// ---- axis kernels ----------------------------------------------------------------------------

// One axis of a dense tile, as the walk over it: outer * n * inner elements.
struct AxisWalk {
  std::int64_t outer = 1, n = 1, inner = 1;
};

// iota: y[i] = start + (first + i % last) * step, in double, rounded once (torch.arange).
void iota_values(double* y, std::int64_t n, std::int64_t last, double start, double step,
                 double first, DType dt);

// y (shape dn, dtype dt) = x (rank `rank`, shape sn, dtype from) with its axes permuted: dst
// axis k is src axis perm[k].
void permute_values(double* y, const PaddedDims& dn, DType dt, const double* x,
                    const PaddedDims& sn, DType from, int rank, const std::uint8_t* perm);

// triu/tril of each rows x cols matrix of n values: the elements with j - i >= diag (upper)
// or <= diag kept, the others 0.
void triangle_values(double* y, DType dt, const double* x, DType from, std::int64_t n,
                     std::int64_t rows, std::int64_t cols, std::int64_t diag, bool upper);

// cumsum (sum) or cumprod along w's axis, accumulating as torch's CPU kernels do.
void scan_values(double* y, DType dt, const double* x, DType from, const AxisWalk& w,
                 std::int64_t n, bool sum);

// A stable sort of each line of x along w's axis (NaN the largest): y, with wd.n entries per
// line, gets the first values, or their indices.
void sort_values(double* y, DType dt, std::int64_t y_n, const double* x, const AxisWalk& w,
                 const AxisWalk& wd, bool indices, bool descending);

// argmax/argmin along w's axis: the index of the first extreme; a NaN counts as the extreme.
void arg_reduce_values(double* y, DType dt, std::int64_t y_n, const double* x, const AxisWalk& w,
                       bool is_max);

// sum/prod/max/min of x (padded shape sn, dtype from) over the axes where y's padded shape dn
// is 1 and sn is not; false: op is no reduction. int_acc: scratch for integer accumulators.
bool reduce_values(TileOpcode op, double* y, std::int64_t y_n, DType dt, const PaddedDims& dn,
                   const double* x, DType from, const PaddedDims& sn,
                   std::vector<std::int64_t>& int_acc);

// c[batch][m x n] (+)= a[batch][m x k] @ b[batch][k x n], rounded to dt once the sums are done.
// `integers`: both operands are integer tiles.
void matmul_values(double* c, std::int64_t c_n, DType dt, bool accumulate, const double* a,
                   const double* b, std::int64_t batch, std::int64_t m, std::int64_t k,
                   std::int64_t n, bool integers);

}  // namespace pypto::exec::detail
