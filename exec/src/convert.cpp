// SPDX-License-Identifier: Apache-2.0
// The tile executor's conversions of whole tiles into a dtype's value set: the rounding step
// after every op and the modes of the cast instruction (numeric.h).
#include "numeric.h"
#include "pypto/exec/tile_exec.h"

namespace pypto::exec {

namespace detail {

namespace {

Rounding rounding_of(CastMode m) {
  switch (m) {
    case CastMode::kNone:
    case CastMode::kRint: return Rounding::kNearestEven;
    case CastMode::kRound: return Rounding::kNearestAway;
    case CastMode::kFloor: return Rounding::kDown;
    case CastMode::kCeil: return Rounding::kUp;
    case CastMode::kTrunc: return Rounding::kTowardZero;
    case CastMode::kOdd: return Rounding::kOdd;
  }
  return Rounding::kNearestEven;
}

// v rounded to an integral value per mode (kNone truncates, like torch's .to(int)).
double integerize(double v, CastMode m) {
  switch (m) {
    case CastMode::kRint: return std::nearbyint(v);  // the default FP environment: half-even
    case CastMode::kRound: return std::round(v);
    case CastMode::kFloor: return std::floor(v);
    case CastMode::kCeil: return std::ceil(v);
    default: return std::trunc(v);
  }
}

}  // namespace

void round_inplace(double* p, std::int64_t n, DType d, IntConv c) {
  switch (d) {
    case DType::kFp32:
      for (std::int64_t i = 0; i < n; ++i) p[i] = double(float(p[i]));
      return;
    case DType::kFp16:
      for (std::int64_t i = 0; i < n; ++i) p[i] = Fp16::round_nearest_even(p[i]);
      return;
    case DType::kBf16:
      for (std::int64_t i = 0; i < n; ++i) p[i] = Bf16::round_nearest_even(p[i]);
      return;
    case DType::kBool:
      for (std::int64_t i = 0; i < n; ++i) p[i] = p[i] != 0 ? 1.0 : 0.0;
      return;
    default:
      for (std::int64_t i = 0; i < n; ++i) p[i] = to_int(p[i], d, c);
      return;
  }
}

void cast_values(const double* x, double* y, std::int64_t n, DType from, DType to, CastMode m,
                 bool sat) {
  if (to == DType::kBool) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] != 0 ? 1.0 : 0.0;
  } else if (is_float(to)) {
    if (from == to && m != CastMode::kNone && m != CastMode::kOdd) {
      // AscendC's float->float cast with a rounding mode: round to an integral value.
      for (std::int64_t i = 0; i < n; ++i) y[i] = integerize(x[i], m);
    } else if (!sat && (m == CastMode::kNone || m == CastMode::kRint)) {
      if (y != x) std::copy(x, x + n, y);
      round_inplace(y, n, to, IntConv::kWrap);
    } else {
      const Rounding r = rounding_of(m);
      for (std::int64_t i = 0; i < n; ++i) y[i] = to_float(x[i], to, r, sat);
    }
  } else {
    if (is_float(from)) {
      const IntConv ic = sat ? IntConv::kSaturate : IntConv::kFromFloat;
      for (std::int64_t i = 0; i < n; ++i) y[i] = to_int(integerize(x[i], m), to, ic);
    } else {
      const IntConv ic = sat ? IntConv::kSaturate : IntConv::kWrap;
      for (std::int64_t i = 0; i < n; ++i) y[i] = to_int(x[i], to, ic);
    }
  }
}

}  // namespace detail

double round_to_dtype(double v, DType d) {
  return detail::round_value(v, d, detail::IntConv::kWrap);
}

}  // namespace pypto::exec
