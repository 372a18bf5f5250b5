// SPDX-License-Identifier: Apache-2.0
// Functional execution of one leaf task's tile program on host memory (tile_exec.h): what makes
// SIM runs produce torch's numbers. Each instruction is dispatched once and runs a tight loop
// over its tile; locals are dense row-major doubles holding exact values of their dtype.
#include "pypto/exec/tile_exec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "half.h"
#include "pypto/common/errors.h"
#include "pypto/exec/tile_op_table.h"

namespace pypto::exec {

using detail::Bf16;
using detail::Fp16;
using detail::Fp32;
using detail::Rounding;

std::string_view to_string(TileOpcode op) {
  const TileOpInfo* info = find_tile_op(op);
  return info != nullptr ? info->name : "unknown";
}

namespace {

constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;
// Locals are on-chip tiles (UB/L1/L0 hold well under a million elements); anything larger is a
// corrupt program, and refusing it beats allocating gigabytes.
constexpr std::int64_t kMaxLocalElems = std::int64_t(1) << 26;

bool is_float(DType d) { return d == DType::kFp32 || d == DType::kFp16 || d == DType::kBf16; }

// ---- conversions to a dtype's value set --------------------------------------------------------

// How a value becomes an integer: kWrap for results of integer arithmetic (two's complement),
// kFromFloat for floating values (torch's .to() on x86-64), kSaturate for a saturating cast.
enum class IntConv : std::uint8_t { kWrap, kFromFloat, kSaturate };

// t finite and integral: its residue modulo 2^64.
std::uint64_t wrap64(double t) {
  if (std::fabs(t) < kTwo63) return std::uint64_t(std::int64_t(t));
  double m = std::fmod(t, kTwo64);  // exact; a multiple of 2^11 here, so m + 2^64 is exact
  if (m < 0) m += kTwo64;
  return std::uint64_t(m);
}

int int_bits(DType d) {
  switch (d) {
    case DType::kInt8: return 8;
    case DType::kInt16: return 16;
    case DType::kInt32: return 32;
    default: return 64;
  }
}

// The low `bits` bits of u, sign-extended.
double sign_extend(std::uint64_t u, int bits) {
  if (bits == 64) return double(std::int64_t(u));
  const int sh = 64 - bits;
  return double(std::int64_t(u << sh) >> sh);
}

// What x86 cvtt* produce for NaN/inf/out of range ("integer indefinite"), as torch shows it:
// int8/int16 go through int32, so they keep the low bits of INT32_MIN (0).
double int_indefinite(DType d) {
  if (d == DType::kInt64) return -kTwo63;
  if (d == DType::kInt32) return -2147483648.0;
  return 0.0;
}

double int_min(DType d) { return -std::ldexp(1.0, int_bits(d) - 1); }
double int_max(DType d) {
  // INT64_MAX has no double; the largest double below 2^63 stands in for it.
  return d == DType::kInt64 ? 9223372036854774784.0 : std::ldexp(1.0, int_bits(d) - 1) - 1;
}

double to_int(double v, DType d, IntConv c) {
  if (d == DType::kBool) return v != 0 ? 1.0 : 0.0;
  switch (c) {
    case IntConv::kWrap:
      if (!std::isfinite(v)) return int_indefinite(d);
      return sign_extend(wrap64(std::trunc(v)), int_bits(d));
    case IntConv::kFromFloat:
      if (d == DType::kInt64) return (v >= -kTwo63 && v < kTwo63) ? std::trunc(v) : -kTwo63;
      {
        const std::int32_t i =
            (v > -2147483649.0 && v < 2147483648.0) ? std::int32_t(v) : INT32_MIN;
        return sign_extend(std::uint64_t(std::int64_t(i)), int_bits(d));
      }
    case IntConv::kSaturate:
      if (std::isnan(v)) return 0.0;
      return std::clamp(std::trunc(v), int_min(d), int_max(d));
  }
  return 0.0;
}

template <class F>
double to_small_float(double v, Rounding r, bool saturate) {
  std::uint32_t h = F::encode(v, r);
  if (saturate && (h & ~F::kSignBit) == F::kExpMask) h = (h & F::kSignBit) | F::kMaxFinite;
  return F::decode(h);
}

double to_float(double v, DType d, Rounding r, bool saturate) {
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
IntConv int_conv_from(DType from) { return is_float(from) ? IntConv::kFromFloat : IntConv::kWrap; }

double round_value(double v, DType d, IntConv c) {
  return is_float(d) ? to_float(v, d, Rounding::kNearestEven, false) : to_int(v, d, c);
}

// Rounds n values in place to d's value set (the step after every op).
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

// The integer a double of an integer tile holds (int64 locals may hold 2^63: wrap it).
std::int64_t as_i64(double v) { return std::int64_t(wrap64(v)); }

// ---- global memory element access --------------------------------------------------------------

// get() decodes one stored element exactly; put() stores a value that is already in D's
// value set (callers convert first), wrapping defensively rather than invoking UB.
template <DType D>
struct Elem;

template <>
struct Elem<DType::kFp32> {
  using S = float;
  static double get(const std::uint8_t* q) {
    float f;
    std::memcpy(&f, q, sizeof f);
    return f;
  }
  static void put(std::uint8_t* q, double v) {
    const float f = float(v);
    std::memcpy(q, &f, sizeof f);
  }
};

template <class F>
struct HalfElem {
  using S = std::uint16_t;
  static double get(const std::uint8_t* q) {
    std::uint16_t h;
    std::memcpy(&h, q, sizeof h);
    if constexpr (std::is_same_v<F, Fp16>) {
      return detail::fp16_decoder()(h);
    } else {
      return detail::bf16_decode_fast(h);
    }
  }
  static void put(std::uint8_t* q, double v) {
    const auto h = std::uint16_t(F::template encode<Rounding::kNearestEven>(v));
    std::memcpy(q, &h, sizeof h);
  }
};
template <>
struct Elem<DType::kFp16> : HalfElem<Fp16> {};
template <>
struct Elem<DType::kBf16> : HalfElem<Bf16> {};

template <class T>
struct IntElem {
  using S = T;
  static double get(const std::uint8_t* q) {
    T x;
    std::memcpy(&x, q, sizeof x);
    return double(x);
  }
  static void put(std::uint8_t* q, double v) {
    const T x = T(std::isfinite(v) ? wrap64(std::trunc(v)) : 0);
    std::memcpy(q, &x, sizeof x);
  }
};
template <>
struct Elem<DType::kInt8> : IntElem<std::int8_t> {};
template <>
struct Elem<DType::kInt16> : IntElem<std::int16_t> {};
template <>
struct Elem<DType::kInt32> : IntElem<std::int32_t> {};
template <>
struct Elem<DType::kInt64> : IntElem<std::int64_t> {};

template <>
struct Elem<DType::kBool> {
  using S = std::uint8_t;
  static double get(const std::uint8_t* q) { return *q != 0 ? 1.0 : 0.0; }
  static void put(std::uint8_t* q, double v) { *q = v != 0 ? 1 : 0; }
};

// Calls fn(std::integral_constant<DType, d>) so loops are instantiated per dtype.
template <class Fn>
void with_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::kFp32: fn(std::integral_constant<DType, DType::kFp32>{}); return;
    case DType::kFp16: fn(std::integral_constant<DType, DType::kFp16>{}); return;
    case DType::kBf16: fn(std::integral_constant<DType, DType::kBf16>{}); return;
    case DType::kInt8: fn(std::integral_constant<DType, DType::kInt8>{}); return;
    case DType::kInt16: fn(std::integral_constant<DType, DType::kInt16>{}); return;
    case DType::kInt32: fn(std::integral_constant<DType, DType::kInt32>{}); return;
    case DType::kInt64: fn(std::integral_constant<DType, DType::kInt64>{}); return;
    case DType::kBool: fn(std::integral_constant<DType, DType::kBool>{}); return;
  }
}

// A shape right-aligned into 4 axes (leading axes of extent 1), so every loop is 4 deep.
struct Dims4 {
  std::int64_t n[kMaxRank];
};

Dims4 pad_shape(const std::int64_t* shape, int rank) {
  Dims4 d{{1, 1, 1, 1}};
  for (int k = 0; k < rank; ++k) d.n[kMaxRank - rank + k] = shape[k];
  return d;
}

Dims4 pad_stride(const std::int64_t* stride, int rank) {
  Dims4 d{{0, 0, 0, 0}};
  for (int k = 0; k < rank; ++k) d.n[kMaxRank - rank + k] = stride[k];
  return d;
}

// Walks the innermost rows of region r's box, which has the same indices in a dense tile of
// padded shape `tn`: row(q, t) gets the row's element offset q in the buffer and t in the tile.
template <class Row>
void for_each_box_row(const GlobalRegion& r, const Dims4& tn, Row&& row) {
  const Dims4 n = pad_shape(r.shape, r.rank);
  const Dims4 st = pad_stride(r.stride, r.rank);
  for (std::int64_t i0 = 0; i0 < n.n[0]; ++i0) {
    for (std::int64_t i1 = 0; i1 < n.n[1]; ++i1) {
      for (std::int64_t i2 = 0; i2 < n.n[2]; ++i2) {
        row(r.offset_elems + i0 * st.n[0] + i1 * st.n[1] + i2 * st.n[2],
            ((i0 * tn.n[1] + i1) * tn.n[2] + i2) * tn.n[3]);
      }
    }
  }
}

// Length and element stride of the innermost rows of region r's box.
std::int64_t row_length(const GlobalRegion& r) { return pad_shape(r.shape, r.rank).n[3]; }
std::int64_t row_stride(const GlobalRegion& r) { return pad_stride(r.stride, r.rank).n[3]; }

// Loads the region's box into the same-index prefix of a dst tile of padded shape `dn`.
template <DType D>
void load_box(double* dst, const Dims4& dn, const std::uint8_t* buf, const GlobalRegion& r) {
  using E = Elem<D>;
  constexpr std::int64_t kEb = sizeof(typename E::S);
  const std::int64_t n3 = row_length(r);
  const std::int64_t s3 = row_stride(r);
  [[maybe_unused]] const detail::Fp16Decoder& fp16 = detail::fp16_decoder();
  for_each_box_row(r, dn, [&](std::int64_t off, std::int64_t tile_off) {
    const std::uint8_t* q = buf + off * kEb;
    double* out = dst + tile_off;
    if constexpr (D == DType::kFp16) {
      if (s3 == 1) {  // the common contiguous fp16 row, without a call per element
        for (std::int64_t j = 0; j < n3; ++j) {
          std::uint16_t h;
          std::memcpy(&h, q + j * kEb, sizeof h);
          out[j] = fp16(h);
        }
        return;
      }
    }
    if (s3 == 1) {
      for (std::int64_t j = 0; j < n3; ++j) out[j] = E::get(q + j * kEb);
    } else if (s3 == 0) {
      std::fill(out, out + n3, E::get(q));
    } else {
      for (std::int64_t j = 0; j < n3; ++j) out[j] = E::get(q + j * s3 * kEb);
    }
  });
}

// Stores the region's box from a src tile of padded shape `sn`. With kConv, `conv` maps each
// src value into D's value set first (through `row`, one row of scratch).
template <DType D, bool kConv, class Conv>
void store_box(std::uint8_t* buf, const GlobalRegion& r, const double* src, const Dims4& sn,
               std::vector<double>& row, Conv conv) {
  using E = Elem<D>;
  constexpr std::int64_t kEb = sizeof(typename E::S);
  const std::int64_t n3 = row_length(r);
  const std::int64_t s3 = row_stride(r);
  if (kConv) row.resize(std::size_t(n3));
  for_each_box_row(r, sn, [&](std::int64_t off, std::int64_t tile_off) {
    std::uint8_t* q = buf + off * kEb;
    const double* s = src + tile_off;
    if (kConv) {
      for (std::int64_t j = 0; j < n3; ++j) row[std::size_t(j)] = conv(s[j]);
      s = row.data();
    }
    if (s3 == 1) {
      for (std::int64_t j = 0; j < n3; ++j) E::put(q + j * kEb, s[j]);
    } else {
      for (std::int64_t j = 0; j < n3; ++j) E::put(q + j * s3 * kEb, s[j]);
    }
  });
}

std::string shape_str(const std::int64_t* shape, int rank) {
  std::string s = "[";
  for (int k = 0; k < rank; ++k) {
    if (k) s += ", ";
    s += std::to_string(shape[k]);
  }
  return s + "]";
}

std::int64_t numel(const std::int64_t* shape, int rank) {
  std::int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= shape[k];
  return n;
}

// An operand of an element-wise op: a local tile or a scalar.
struct Operand {
  const double* p = nullptr;
  double s = 0;
  bool scalar = false;
  DType dtype = DType::kFp32;  // the tile's, or the dtype the scalar was rounded to
  bool integral = false;       // holds only integers (integer/bool tile or integral scalar)
};

struct TileRef {
  const LocalTile* t;
  double* data;
  std::int64_t n;
};

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
  const int bits = int_bits(dt);
  run_binary(d, a, b, n, [f, bits](double x, double y) {
    return sign_extend(std::uint64_t(f(as_i64(x), as_i64(y))), bits);
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

double nan_max(double x, double y) {
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return y;
  return x > y ? x : y;
}

double nan_min(double x, double y) {
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return y;
  return x < y ? x : y;
}

std::int64_t wrap_add(std::int64_t x, std::int64_t y) {
  return std::int64_t(std::uint64_t(x) + std::uint64_t(y));
}
std::int64_t wrap_sub(std::int64_t x, std::int64_t y) {
  return std::int64_t(std::uint64_t(x) - std::uint64_t(y));
}
std::int64_t wrap_mul(std::int64_t x, std::int64_t y) {
  return std::int64_t(std::uint64_t(x) * std::uint64_t(y));
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

class Executor {
 public:
  Executor(const TaskProgram& p, const GlobalMemory& mem, ExecScratch& s)
      : p_(p), mem_(mem), s_(s) {}

  void run() {
    check_memory();
    const std::size_t nl = p_.locals.size();
    if (s_.tiles.size() < nl) s_.tiles.resize(nl);
    s_.written.assign(nl, 0);
    for (std::size_t i = 0; i < nl; ++i) {
      const LocalTile& t = p_.locals[i];
      const std::string what = "local " + std::to_string(i);
      check_shape(t.shape, t.rank, what.c_str());
      const std::int64_t n = numel(t.shape, t.rank);
      if (n > kMaxLocalElems) {
        fail_program(what + " has shape " + shape_str(t.shape, t.rank) + " (" + std::to_string(n) +
                     " elements), more than any on-chip buffer holds");
      }
      s_.tiles[i].resize(std::size_t(n));
    }
    for (idx_ = 0; idx_ < p_.instrs.size(); ++idx_) step(p_.instrs[idx_]);
  }

 private:
  // ---- diagnostics and operand access ----------------------------------------------------------

  [[noreturn]] void fail_program(const std::string& msg) const {
    throw_model_error(__FILE__, __LINE__, "tile program: " + msg);
  }

  [[noreturn]] void fail(const std::string& msg) const {
    const TileInstr& in = p_.instrs[idx_];
    throw_model_error(__FILE__, __LINE__,
                      "tile instruction " + std::to_string(idx_) + " (" +
                          std::string(to_string(in.op)) + "): " + msg);
  }

  void check_memory() const {
    if (mem_.size_bytes.size() != mem_.base.size()) {
      fail_program("global memory has " + std::to_string(mem_.base.size()) + " bases but " +
                   std::to_string(mem_.size_bytes.size()) + " sizes");
    }
  }

  void check_shape(const std::int64_t* shape, int rank, const char* what) const {
    if (rank > kMaxRank) {
      fail_program(std::string(what) + " has rank " + std::to_string(rank) + ", above " +
                   std::to_string(kMaxRank));
    }
    for (int k = 0; k < rank; ++k) {
      if (shape[k] < 0) {
        fail_program(std::string(what) + " has a negative extent: " + shape_str(shape, rank));
      }
    }
  }

  std::string tile_desc(std::int32_t k) const {
    const LocalTile& t = p_.locals[std::size_t(k)];
    return "local " + std::to_string(k) + " " + shape_str(t.shape, t.rank) + " " +
           std::string(sim::to_string(t.dtype));
  }

  TileRef tile(std::int32_t k, const char* role) const {
    if (k < 0 || std::size_t(k) >= p_.locals.size()) {
      fail(std::string(role) + " names local " + std::to_string(k) + " but the task has " +
           std::to_string(p_.locals.size()) + " locals");
    }
    auto& v = s_.tiles[std::size_t(k)];
    return TileRef{&p_.locals[std::size_t(k)], v.data(), std::int64_t(v.size())};
  }

  TileRef read_tile(std::int32_t k, const char* role) const {
    TileRef t = tile(k, role);
    if (!s_.written[std::size_t(k)]) {
      fail(std::string(role) + " reads " + tile_desc(k) +
           " before any instruction of the task wrote it");
    }
    return t;
  }

  void same_shape(std::int32_t a, std::int32_t b, const char* role_a, const char* role_b) const {
    const LocalTile& x = p_.locals[std::size_t(a)];
    const LocalTile& y = p_.locals[std::size_t(b)];
    bool same = x.rank == y.rank;
    for (int k = 0; same && k < x.rank; ++k) same = x.shape[k] == y.shape[k];
    if (!same) {
      fail(std::string(role_a) + " " + tile_desc(a) + " and " + role_b + " " + tile_desc(b) +
           " differ in shape (the compiler expands broadcasts before element-wise ops)");
    }
  }

  std::string region_desc(const GlobalRegion& r) const {
    return "region of buffer " + std::to_string(r.buffer) + " at element " +
           std::to_string(r.offset_elems) + ", shape " + shape_str(r.shape, r.rank) + ", strides " +
           shape_str(r.stride, r.rank) + ", " + std::string(sim::to_string(r.dtype));
  }

  // The buffer a region lives in, after checking every element it touches is inside it;
  // nullptr when the region is empty.
  std::uint8_t* region_buffer(const GlobalRegion& r) const {
    if (r.rank > kMaxRank) fail(region_desc(r) + " has rank above " + std::to_string(kMaxRank));
    for (int k = 0; k < r.rank; ++k) {
      if (r.shape[k] < 0) fail(region_desc(r) + " has a negative extent");
    }
    if (r.buffer >= mem_.base.size()) {
      fail(region_desc(r) + " names buffer " + std::to_string(r.buffer) + " but the launch has " +
           std::to_string(mem_.base.size()) + " buffers");
    }
    if (numel(r.shape, r.rank) == 0) return nullptr;
    __int128 lo = r.offset_elems;
    __int128 hi = r.offset_elems;
    for (int k = 0; k < r.rank; ++k) {
      const __int128 ext = __int128(r.stride[k]) * (r.shape[k] - 1);
      (ext < 0 ? lo : hi) += ext;
    }
    const std::uint64_t elems = mem_.size_bytes[r.buffer] / dtype_bytes(r.dtype);
    if (lo < 0 || hi >= __int128(elems)) {
      std::string decl;
      if (r.buffer < mem_.dtype.size()) {
        decl = " (declared " + std::string(sim::to_string(mem_.dtype[r.buffer])) + ")";
      }
      fail(region_desc(r) + " touches elements " + std::to_string(std::int64_t(lo)) + ".." +
           std::to_string(std::int64_t(hi)) + " but buffer " + std::to_string(r.buffer) + decl +
           " holds " + std::to_string(elems) + " " + std::string(sim::to_string(r.dtype)) +
           " elements");
    }
    if (mem_.base[r.buffer] == nullptr) fail(region_desc(r) + ": buffer has no memory");
    return mem_.base[r.buffer];
  }

  // src[i] or scalar[i] of `in`; a scalar is rounded to `partner`'s dtype when given.
  Operand operand(const TileInstr& in, int i, std::int32_t dst, const TileRef* partner) const {
    static const char* const kRoles[] = {"src0", "src1", "src2"};
    Operand o;
    if (in.scalar_operand & (1u << i)) {
      o.scalar = true;
      o.s = in.scalar[i];
      if (partner) {
        o.dtype = partner->t->dtype;
        o.s = round_value(o.s, o.dtype,
                          std::trunc(o.s) == o.s ? IntConv::kWrap : IntConv::kFromFloat);
        o.integral = !is_float(o.dtype);
      } else {
        o.dtype = std::trunc(o.s) == o.s ? DType::kInt64 : DType::kFp32;
        o.integral = std::trunc(o.s) == o.s && std::fabs(o.s) < kTwo63;
      }
      return o;
    }
    const TileRef t = read_tile(in.src[i], kRoles[i]);
    same_shape(dst, in.src[i], "dst", kRoles[i]);
    o.p = t.data;
    o.dtype = t.t->dtype;
    o.integral = !is_float(o.dtype);
    return o;
  }

  void done(std::int32_t dst) { s_.written[std::size_t(dst)] = 1; }

  // Rounds tile d, holding values of dtype `from`, into its own dtype's value set.
  static void convert_from(const TileRef& d, DType from) {
    round_inplace(d.data, d.n, d.t->dtype, int_conv_from(from));
  }

  // ---- instructions ---------------------------------------------------------------------------

  void step(const TileInstr& in) {
    const TileOpInfo* info = find_tile_op(in.op);
    if (info != nullptr) {
      switch (info->exec) {
        case TileExec::kLoad: return load(in);
        case TileExec::kStore: return store(in);
        case TileExec::kFill: return fill(in);
        case TileExec::kCopy: return copy(in);
        case TileExec::kPermute: return permute(in);
        case TileExec::kCast: return cast(in);
        case TileExec::kBinary: return binary(in);
        case TileExec::kUnary: return unary(in);
        case TileExec::kWhere: return where(in);
        case TileExec::kReduce: return reduce(in);
        case TileExec::kMatmul: return matmul(in);
        case TileExec::kTriangle: return triangle(in);
        case TileExec::kScan: return scan(in);
        case TileExec::kGather: return gather(in);
        case TileExec::kScatter: return scatter(in);
        case TileExec::kScatterRows: return scatter_rows(in);
        case TileExec::kSort: return sort(in);
      }
    }
    fail("unknown opcode " + std::to_string(int(in.op)));
  }

  void load(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const GlobalRegion& r = in.region;
    bool fits = r.rank == d.t->rank;
    bool whole = fits;
    for (int k = 0; fits && k < r.rank; ++k) {
      fits = r.shape[k] <= d.t->shape[k];
      whole = whole && r.shape[k] == d.t->shape[k];
    }
    if (!fits) fail(region_desc(r) + " is not a prefix box of dst " + tile_desc(in.dst));
    if (!whole && !s_.written[std::size_t(in.dst)]) {
      fail(region_desc(r) + " fills only part of dst " + tile_desc(in.dst) +
           ", which no instruction wrote before (the rest would be undefined)");
    }
    const std::uint8_t* buf = region_buffer(r);
    if (buf) {
      const Dims4 dn = pad_shape(d.t->shape, d.t->rank);
      with_dtype(r.dtype, [&](auto tag) { load_box<decltype(tag)::value>(d.data, dn, buf, r); });
    }
    // The part outside a prefix box already holds dst's dtype: rounding it again is a no-op.
    if (r.dtype != d.t->dtype) {
      convert_from(d, r.dtype);
    }
    done(in.dst);
  }

  void store(const TileInstr& in) {
    const TileRef src = read_tile(in.src[0], "src0");
    const GlobalRegion& r = in.region;
    bool fits = r.rank == src.t->rank;
    for (int k = 0; fits && k < r.rank; ++k) fits = r.shape[k] <= src.t->shape[k];
    if (!fits) {
      fail(region_desc(r) + " is not a prefix box of src0 " + tile_desc(in.src[0]));
    }
    for (int k = 0; k < r.rank; ++k) {
      if (r.stride[k] == 0 && r.shape[k] > 1) {
        fail(region_desc(r) + " writes one element several times (stride 0 on axis " +
             std::to_string(k) + ")");
      }
    }
    std::uint8_t* buf = region_buffer(r);
    if (!buf) return;
    const Dims4 sn = pad_shape(src.t->shape, src.t->rank);
    const DType to = r.dtype;
    with_dtype(to, [&](auto tag) {
      constexpr DType D = decltype(tag)::value;
      if (src.t->dtype == D) {
        store_box<D, false>(buf, r, src.data, sn, s_.row, [](double v) { return v; });
      } else {
        const IntConv ic = int_conv_from(src.t->dtype);
        store_box<D, true>(buf, r, src.data, sn, s_.row,
                           [ic](double v) { return round_value(v, D, ic); });
      }
    });
  }

  void fill(const TileInstr& in) {
    if (in.op == TileOpcode::kIota) return iota(in);
    const TileRef d = tile(in.dst, "dst");
    const double s = in.scalar[0];
    const IntConv ic = std::trunc(s) == s ? IntConv::kWrap : IntConv::kFromFloat;
    std::fill(d.data, d.data + d.n, round_value(s, d.t->dtype, ic));
    done(in.dst);
  }

  // kIota: start + (scalar[2] + j) * step along the last axis, in double, rounded once
  // (torch.arange).
  void iota(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const std::int64_t last = d.t->rank > 0 ? d.t->shape[d.t->rank - 1] : 1;
    const double start = in.scalar[0];
    const double step = in.scalar[1];
    const double first = in.scalar[2];
    for (std::int64_t i = 0; i < d.n; ++i) d.data[i] = start + (first + double(i % last)) * step;
    const bool integral = std::trunc(start) == start && std::trunc(step) == step;
    round_inplace(d.data, d.n, d.t->dtype, integral ? IntConv::kWrap : IntConv::kFromFloat);
    done(in.dst);
  }

  void copy(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    if (d.n != s.n) {
      fail("dst " + tile_desc(in.dst) + " and src0 " + tile_desc(in.src[0]) +
           " differ in element count");
    }
    if (d.data != s.data) std::copy(s.data, s.data + s.n, d.data);
    if (d.t->dtype != s.t->dtype) convert_from(d, s.t->dtype);
    done(in.dst);
  }

  void permute(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    if (in.dst == in.src[0]) fail("dst and src0 are the same local " + tile_desc(in.dst));
    const int rank = s.t->rank;
    bool ok = d.t->rank == rank;
    unsigned seen = 0;
    for (int k = 0; ok && k < rank; ++k) {
      const int a = in.perm[k];
      ok = a < rank && !(seen & (1u << a)) && d.t->shape[k] == s.t->shape[a];
      seen |= 1u << a;
    }
    if (!ok) {
      std::string perm;
      for (int k = 0; k < rank; ++k) perm += (k ? ", " : "") + std::to_string(int(in.perm[k]));
      fail("perm [" + perm + "] does not map src0 " + tile_desc(in.src[0]) + " onto dst " +
           tile_desc(in.dst));
    }
    // Row-major strides of src, then the stride of src each padded dst axis walks.
    const Dims4 sn = pad_shape(s.t->shape, rank);
    std::int64_t sstride[kMaxRank];
    sstride[3] = 1;
    for (int k = 2; k >= 0; --k) sstride[k] = sstride[k + 1] * sn.n[k + 1];
    const int lead = kMaxRank - rank;
    std::int64_t walk[kMaxRank];
    for (int k = 0; k < kMaxRank; ++k) walk[k] = k < lead ? 0 : sstride[lead + in.perm[k - lead]];
    const Dims4 dn = pad_shape(d.t->shape, rank);
    double* out = d.data;
    for (std::int64_t i0 = 0; i0 < dn.n[0]; ++i0) {
      for (std::int64_t i1 = 0; i1 < dn.n[1]; ++i1) {
        for (std::int64_t i2 = 0; i2 < dn.n[2]; ++i2) {
          const double* q = s.data + i0 * walk[0] + i1 * walk[1] + i2 * walk[2];
          for (std::int64_t j = 0; j < dn.n[3]; ++j) *out++ = q[j * walk[3]];
        }
      }
    }
    if (d.t->dtype != s.t->dtype) convert_from(d, s.t->dtype);
    done(in.dst);
  }

  void cast(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const DType from = s.t->dtype;
    const DType to = d.t->dtype;
    const CastMode m = in.cast_mode;
    const bool sat = in.saturate != 0;
    const double* x = s.data;
    double* y = d.data;
    const std::int64_t n = d.n;
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
      if (m == CastMode::kOdd) {
        fail("cast_mode odd rounds to a floating dtype, not to " + std::string(sim::to_string(to)));
      }
      if (is_float(from)) {
        const IntConv ic = sat ? IntConv::kSaturate : IntConv::kFromFloat;
        for (std::int64_t i = 0; i < n; ++i) y[i] = to_int(integerize(x[i], m), to, ic);
      } else {
        const IntConv ic = sat ? IntConv::kSaturate : IntConv::kWrap;
        for (std::int64_t i = 0; i < n; ++i) y[i] = to_int(x[i], to, ic);
      }
    }
    done(in.dst);
  }

  void binary(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    // A scalar combines with the other operand's dtype (torch rounds a Python scalar so).
    const bool sa = in.scalar_operand & 1u;
    const bool sb = in.scalar_operand & 2u;
    TileRef ta{};
    TileRef tb{};
    if (!sa) ta = read_tile(in.src[0], "src0");
    if (!sb) tb = read_tile(in.src[1], "src1");
    const Operand a = operand(in, 0, in.dst, sa && !sb ? &tb : nullptr);
    const Operand b = operand(in, 1, in.dst, sb && !sa ? &ta : nullptr);
    const DType dt = d.t->dtype;
    const bool int_domain = a.integral && b.integral && !is_float(dt);
    double* y = d.data;
    const std::int64_t n = d.n;
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
    switch (in.op) {
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
      case TileOpcode::kPow:
        arith(int_pow, [](double u, double v) { return std::pow(u, v); });
        break;
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
      case TileOpcode::kShiftRight:
        if (!int_domain) fail(std::string(to_string(in.op)) + " needs integer operands and dst");
        integer_binary(in.op, y, a, b, n, dt, &zero_divisor);
        break;
      default: fail("not a binary opcode");
    }
    if (zero_divisor) fail("integer division by zero (torch raises ZeroDivisionError)");
    // Max/min of operands already in dst's dtype select one of them: nothing to round.
    const bool selects = (in.op == TileOpcode::kMaximum || in.op == TileOpcode::kMinimum) &&
                         a.dtype == dt && b.dtype == dt && !(a.scalar && b.scalar);
    // Integer-domain results were narrowed to dst already.
    if (!exact01 && !selects && !int_domain) round_inplace(y, n, dt, IntConv::kFromFloat);
    done(in.dst);
  }

  // The integer-only binary ops (gcd, floor/ceil division, bitwise, shifts) on 64 bits,
  // narrowed to dst's width. A division by zero sets *zero_divisor.
  static void integer_binary(TileOpcode op, double* y, const Operand& a, const Operand& b,
                             std::int64_t n, DType dt, bool* zero_divisor) {
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

  void unary(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const Operand a = operand(in, 0, in.dst, nullptr);
    double* y = d.data;
    const std::int64_t n = d.n;
    bool exact = false;  // the result is already in dst's value set
    switch (in.op) {
      case TileOpcode::kNeg: run_unary(y, a, n, [](double v) { return -v; }); break;
      case TileOpcode::kAbs: run_unary(y, a, n, [](double v) { return std::fabs(v); }); break;
      case TileOpcode::kRelu:
        // torch's clamp_min(x, 0): NaN and -0.0 pass through.
        run_unary(y, a, n, [](double v) { return v < 0 ? 0.0 : v; });
        break;
      case TileOpcode::kExp: run_unary(y, a, n, [](double v) { return std::exp(v); }); break;
      case TileOpcode::kLog: run_unary(y, a, n, [](double v) { return std::log(v); }); break;
      case TileOpcode::kSqrt: run_unary(y, a, n, [](double v) { return std::sqrt(v); }); break;
      case TileOpcode::kRsqrt:
        run_unary(y, a, n, [](double v) { return 1.0 / std::sqrt(v); });
        break;
      case TileOpcode::kReciprocal: run_unary(y, a, n, [](double v) { return 1.0 / v; }); break;
      case TileOpcode::kSigmoid:
        run_unary(y, a, n, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
        break;
      case TileOpcode::kTanh: run_unary(y, a, n, [](double v) { return std::tanh(v); }); break;
      case TileOpcode::kFloor: run_unary(y, a, n, [](double v) { return std::floor(v); }); break;
      case TileOpcode::kLogicalNot:
        run_unary(y, a, n, [](double v) { return double(v == 0); });
        exact = true;
        break;
      case TileOpcode::kCeil: run_unary(y, a, n, [](double v) { return std::ceil(v); }); break;
      case TileOpcode::kTrunc: run_unary(y, a, n, [](double v) { return std::trunc(v); }); break;
      case TileOpcode::kRound: round_decimals(y, a, n, d.t->dtype, in.scalar[1]); break;
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
        if (d.t->dtype != DType::kFp32) fail("dst " + tile_desc(in.dst) + " must be fp32");
        const int mode = static_cast<int>(in.scalar[1]);
        run_unary(y, a, n, [mode](double v) { return tf32_round(v, mode); });
        break;
      }
      case TileOpcode::kLrelu: {
        // torch.nn.functional.leaky_relu: the slope as fp32 (PyPTO's Element(DT_FP32, slope)),
        // one product rounded to dst. NaN passes through.
        const double slope = double(float(in.scalar[1]));
        run_unary(y, a, n, [slope](double v) { return v < 0 ? v * slope : v; });
        break;
      }
      case TileOpcode::kTan: run_unary(y, a, n, [](double v) { return std::tan(v); }); break;
      case TileOpcode::kAsin: run_unary(y, a, n, [](double v) { return std::asin(v); }); break;
      case TileOpcode::kAcos: run_unary(y, a, n, [](double v) { return std::acos(v); }); break;
      case TileOpcode::kAtan: run_unary(y, a, n, [](double v) { return std::atan(v); }); break;
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
        if (!a.integral || is_float(d.t->dtype)) fail("bitwise_not needs an integer operand");
        run_unary(y, a, n, [](double v) { return double(~as_i64(v)); });
        break;
      default: fail("not a unary opcode");
    }
    if (!exact) {
      const bool int_domain = a.integral && !is_float(d.t->dtype);
      round_inplace(y, n, d.t->dtype, int_domain ? IntConv::kWrap : IntConv::kFromFloat);
    }
    done(in.dst);
  }

  // torch.round(x, decimals): in fp32 arithmetic (torch's opmath for fp16/bf16/fp32), the
  // scaled value rounded half-even, then scaled back; decimals 0 is rint.
  static void round_decimals(double* y, const Operand& a, std::int64_t n, DType dt, double dec) {
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

  void triangle(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const int rank = d.t->rank;
    if (rank < 2) fail("needs a tile of rank 2 or more, got " + tile_desc(in.dst));
    const std::int64_t rows = d.t->shape[rank - 2];
    const std::int64_t cols = d.t->shape[rank - 1];
    const std::int64_t diag = static_cast<std::int64_t>(in.scalar[1]);
    const bool upper = in.op == TileOpcode::kTriu;
    const std::int64_t mats = rows * cols == 0 ? 0 : d.n / (rows * cols);
    for (std::int64_t m = 0; m < mats; ++m) {
      for (std::int64_t i = 0; i < rows; ++i) {
        const std::int64_t base = (m * rows + i) * cols;
        for (std::int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= diag : j - i <= diag;
          d.data[base + j] = keep ? s.data[base + j] : 0.0;
        }
      }
    }
    if (d.t->dtype != s.t->dtype) convert_from(d, s.t->dtype);
    done(in.dst);
  }

  // The one axis of reduce_mask of src (rank `rank`), with the padded extent and stride
  // decomposition used to walk it: outer * n * inner elements.
  struct AxisWalk {
    std::int64_t outer = 1, n = 1, inner = 1;
  };
  AxisWalk one_axis(const TileInstr& in, const LocalTile& t) const {
    int axis = -1;
    for (int k = 0; k < t.rank; ++k) {
      if ((in.reduce_mask >> k) & 1u) {
        if (axis >= 0)
          fail("reduce_mask " + std::to_string(int(in.reduce_mask)) + " names more than one axis");
        axis = k;
      }
    }
    if (axis < 0 || in.reduce_mask >> t.rank) {
      fail("reduce_mask " + std::to_string(int(in.reduce_mask)) + " names no single axis of " +
           tile_desc(in.src[0]));
    }
    AxisWalk w;
    for (int k = 0; k < axis; ++k) w.outer *= t.shape[k];
    w.n = t.shape[axis];
    for (int k = axis + 1; k < t.rank; ++k) w.inner *= t.shape[k];
    return w;
  }

  // The value set a running accumulator of src dtype `d` lives in (torch CPU's acc_type:
  // double for fp32, fp32 for fp16/bf16, int64 for integers).
  static double acc_round(double v, DType d) {
    return d == DType::kFp16 || d == DType::kBf16 ? double(float(v)) : v;
  }

  void scan(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const AxisWalk w = one_axis(in, *s.t);
    const bool sum = in.op == TileOpcode::kCumSum;
    const DType sd = s.t->dtype;
    const bool ints = !is_float(sd);
    for (std::int64_t o = 0; o < w.outer; ++o) {
      for (std::int64_t c = 0; c < w.inner; ++c) {
        const std::int64_t base = o * w.n * w.inner + c;
        double acc = sum ? 0.0 : 1.0;
        std::int64_t iacc = sum ? 0 : 1;
        for (std::int64_t i = 0; i < w.n; ++i) {
          const std::int64_t q = base + i * w.inner;
          if (ints) {
            iacc = sum ? wrap_add(iacc, as_i64(s.data[q])) : wrap_mul(iacc, as_i64(s.data[q]));
            d.data[q] = double(iacc);
          } else {
            acc = acc_round(sum ? acc + s.data[q] : acc * s.data[q], sd);
            d.data[q] = acc;
          }
        }
      }
    }
    round_inplace(d.data, d.n, d.t->dtype, ints ? IntConv::kWrap : IntConv::kFromFloat);
    done(in.dst);
  }

  // kSortValues/kSortIndices: a stable sort of each line along the axis (NaN the largest);
  // dst keeps the first k = dst.shape[axis] entries (src0's shape on the other axes).
  void sort(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    const AxisWalk w = one_axis(in, *s.t);
    const AxisWalk wd = one_axis(in, *d.t);
    bool ok = d.t->rank == s.t->rank && wd.outer == w.outer && wd.inner == w.inner && wd.n >= 1 &&
              wd.n <= w.n;
    if (!ok) {
      fail("dst " + tile_desc(in.dst) + " must have src0 " + tile_desc(in.src[0]) +
           "'s shape, with 1..n entries along the sorted axis");
    }
    const bool indices = in.op == TileOpcode::kSortIndices;
    if (indices && is_float(d.t->dtype)) {
      fail("dst " + tile_desc(in.dst) + " must have an integer dtype");
    }
    const bool descending = in.scalar[1] != 0;
    std::vector<std::int64_t> order(std::size_t(w.n));
    for (std::int64_t o = 0; o < w.outer; ++o) {
      for (std::int64_t c = 0; c < w.inner; ++c) {
        const double* line = s.data + o * w.n * w.inner + c;
        const std::int64_t step = w.inner;
        for (std::int64_t i = 0; i < w.n; ++i) order[std::size_t(i)] = i;
        // NaN orders above every number (torch.sort); ties keep their original order.
        const auto before = [&](std::int64_t i, std::int64_t j) {
          const double u = line[i * step];
          const double v = line[j * step];
          if (descending) return std::isnan(u) ? !std::isnan(v) : u > v;
          return std::isnan(v) ? !std::isnan(u) : u < v;
        };
        std::stable_sort(order.begin(), order.end(), before);
        double* out = d.data + o * wd.n * w.inner + c;
        for (std::int64_t i = 0; i < wd.n; ++i) {
          const std::int64_t j = order[std::size_t(i)];
          out[i * step] = indices ? double(j) : line[j * step];
        }
      }
    }
    round_inplace(d.data, d.n, d.t->dtype, IntConv::kWrap);
    done(in.dst);
  }

  // kArgMax/kArgMin: dst (keepdim shape, an integer dtype) gets the index of the first
  // extreme along the axis; a NaN counts as the extreme (torch).
  void arg_reduce(const TileInstr& in, const TileRef& d, const TileRef& s) {
    if (is_float(d.t->dtype)) fail("dst " + tile_desc(in.dst) + " must have an integer dtype");
    const AxisWalk w = one_axis(in, *s.t);
    if (w.n == 0 && d.n != 0) {
      fail("argmax/argmin over an empty axis of src0 " + tile_desc(in.src[0]) + " (torch raises)");
    }
    const bool is_max = in.op == TileOpcode::kArgMax;
    for (std::int64_t o = 0; o < w.outer; ++o) {
      for (std::int64_t c = 0; c < w.inner; ++c) {
        const std::int64_t base = o * w.n * w.inner + c;
        std::int64_t best = 0;
        double bv = s.data[base];
        for (std::int64_t i = 1; i < w.n && !std::isnan(bv); ++i) {
          const double v = s.data[base + i * w.inner];
          if (std::isnan(v) || (is_max ? v > bv : v < bv)) {
            best = i;
            bv = v;
          }
        }
        d.data[o * w.inner + c] = double(best);
      }
    }
    round_inplace(d.data, d.n, d.t->dtype, IntConv::kWrap);
    done(in.dst);
  }

  void where(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const Operand c = operand(in, 0, in.dst, nullptr);
    const Operand a = operand(in, 1, in.dst, &d);
    const Operand b = operand(in, 2, in.dst, &d);
    double* y = d.data;
    const std::int64_t n = d.n;
    for (std::int64_t i = 0; i < n; ++i) {
      const double ci = c.scalar ? c.s : c.p[i];
      y[i] = ci != 0 ? (a.scalar ? a.s : a.p[i]) : (b.scalar ? b.s : b.p[i]);
    }
    const DType dt = d.t->dtype;
    if (a.dtype != dt || b.dtype != dt) {
      const bool ints = a.integral && b.integral;
      round_inplace(y, n, dt, ints ? IntConv::kWrap : IntConv::kFromFloat);
    }
    done(in.dst);
  }

  void reduce(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    if (in.dst == in.src[0]) fail("dst and src0 are the same local " + tile_desc(in.dst));
    const int rank = s.t->rank;
    if (in.reduce_mask >> rank) {
      fail("reduce_mask " + std::to_string(int(in.reduce_mask)) + " names an axis beyond src0 " +
           tile_desc(in.src[0]));
    }
    bool ok = d.t->rank == rank;
    for (int k = 0; ok && k < rank; ++k) {
      ok = d.t->shape[k] == ((in.reduce_mask >> k) & 1 ? 1 : s.t->shape[k]);
    }
    if (!ok) {
      fail("dst " + tile_desc(in.dst) + " is not the keepdim shape of src0 " +
           tile_desc(in.src[0]) + " reduced over mask " + std::to_string(int(in.reduce_mask)));
    }
    if (in.op == TileOpcode::kArgMax || in.op == TileOpcode::kArgMin) return arg_reduce(in, d, s);
    const bool is_prod = in.op == TileOpcode::kReduceProd;
    const bool is_sum = in.op == TileOpcode::kReduceSum || is_prod;
    if (!is_sum && s.n == 0 && d.n != 0) {
      fail("max/min over an empty axis of src0 " + tile_desc(in.src[0]) + " (torch raises)");
    }
    // Each padded src axis maps to a dst stride; reduced axes map to 0.
    const Dims4 sn = pad_shape(s.t->shape, rank);
    const Dims4 dn = pad_shape(d.t->shape, rank);
    std::int64_t dst_stride[kMaxRank];
    std::int64_t acc = 1;
    for (int k = kMaxRank - 1; k >= 0; --k) {
      dst_stride[k] = dn.n[k] == sn.n[k] && sn.n[k] != 1 ? acc : 0;
      acc *= dn.n[k];
    }
    const bool integer_sum = is_sum && !is_float(s.t->dtype);
    const DType sdt = s.t->dtype;
    const auto visit = [&](auto init, auto combine, auto* out) {
      std::fill(out, out + d.n, init);
      const double* x = s.data;
      for (std::int64_t i0 = 0; i0 < sn.n[0]; ++i0) {
        for (std::int64_t i1 = 0; i1 < sn.n[1]; ++i1) {
          for (std::int64_t i2 = 0; i2 < sn.n[2]; ++i2) {
            auto* o = out + i0 * dst_stride[0] + i1 * dst_stride[1] + i2 * dst_stride[2];
            const std::int64_t n3 = sn.n[3];
            if (dst_stride[3] == 0) {
              auto a = *o;
              for (std::int64_t j = 0; j < n3; ++j) a = combine(a, x[j]);
              *o = a;
            } else {
              for (std::int64_t j = 0; j < n3; ++j) o[j] = combine(o[j], x[j]);
            }
            x += n3;
          }
        }
      }
    };
    double* y = d.data;
    switch (in.op) {
      case TileOpcode::kReduceSum:
        if (integer_sum) {
          // Exact, wrapping like torch's integer sum; the int64 sums live in dst's doubles.
          std::vector<std::int64_t>& tmp = s_.int_acc;
          tmp.resize(std::size_t(d.n));
          visit(
              std::int64_t(0), [](std::int64_t u, double v) { return wrap_add(u, as_i64(v)); },
              tmp.data());
          for (std::int64_t i = 0; i < d.n; ++i) y[i] = double(tmp[std::size_t(i)]);
        } else {
          visit(
              0.0, [](double u, double v) { return u + v; }, y);
        }
        break;
      case TileOpcode::kReduceProd:
        // torch's prod: integers exact and wrapping in int64; fp16/bf16 accumulate in fp32,
        // fp32 in double (CPU acc_type), in row-major order of the reduced elements.
        if (integer_sum) {
          std::vector<std::int64_t>& tmp = s_.int_acc;
          tmp.resize(std::size_t(d.n));
          visit(
              std::int64_t(1), [](std::int64_t u, double v) { return wrap_mul(u, as_i64(v)); },
              tmp.data());
          for (std::int64_t i = 0; i < d.n; ++i) y[i] = double(tmp[std::size_t(i)]);
        } else {
          visit(
              1.0, [sdt](double u, double v) { return acc_round(u * v, sdt); }, y);
        }
        break;
      case TileOpcode::kReduceMax:
        visit(
            -std::numeric_limits<double>::infinity(),
            [](double u, double v) { return nan_max(u, v); }, y);
        break;
      case TileOpcode::kReduceMin:
        visit(
            std::numeric_limits<double>::infinity(),
            [](double u, double v) { return nan_min(u, v); }, y);
        break;
      default: fail("not a reduction opcode");
    }
    const bool selects = !is_sum && s.t->dtype == d.t->dtype;
    if (!selects) convert_from(d, s.t->dtype);
    done(in.dst);
  }

  // y[m x n] += x[m x k] @ w[k x n], row-major. Every y[i][j] adds its k products in
  // ascending k, one rounding each (the order that defines the numbers); blocks of 4 x 4
  // outputs are kept in registers across k, so the loop is bound by the arithmetic rather
  // than by storing y once per product. The rows and columns outside whole blocks take the
  // same sums one output row at a time.
  static void matmul_accumulate(const double* x, const double* w, double* y, std::int64_t m,
                                std::int64_t kk, std::int64_t nn) {
    constexpr std::int64_t kB = 4;
    const std::int64_t m_blocked = m - m % kB;
    const std::int64_t n_blocked = nn - nn % kB;
    for (std::int64_t i0 = 0; i0 < m_blocked; i0 += kB) {
      for (std::int64_t j0 = 0; j0 < n_blocked; j0 += kB) {
        double acc[kB][kB];
        for (std::int64_t ii = 0; ii < kB; ++ii) {
          for (std::int64_t jj = 0; jj < kB; ++jj) acc[ii][jj] = y[(i0 + ii) * nn + j0 + jj];
        }
        for (std::int64_t k = 0; k < kk; ++k) {
          const double* wr = w + k * nn + j0;
          for (std::int64_t ii = 0; ii < kB; ++ii) {
            const double xv = x[(i0 + ii) * kk + k];
            for (std::int64_t jj = 0; jj < kB; ++jj) acc[ii][jj] += xv * wr[jj];
          }
        }
        for (std::int64_t ii = 0; ii < kB; ++ii) {
          for (std::int64_t jj = 0; jj < kB; ++jj) y[(i0 + ii) * nn + j0 + jj] = acc[ii][jj];
        }
      }
    }
    auto rows = [&](std::int64_t i_first, std::int64_t i_last, std::int64_t j_first) {
      for (std::int64_t i = i_first; i < i_last; ++i) {
        double* yr = y + i * nn;
        for (std::int64_t k = 0; k < kk; ++k) {
          const double xv = x[i * kk + k];
          const double* wr = w + k * nn;
          for (std::int64_t j = j_first; j < nn; ++j) yr[j] += xv * wr[j];
        }
      }
    };
    rows(0, m_blocked, n_blocked);  // the columns right of the blocks
    rows(m_blocked, m, 0);          // the rows below them
  }

  void matmul(const TileInstr& in) {
    const TileRef c = in.accumulate ? read_tile(in.dst, "dst") : tile(in.dst, "dst");
    const TileRef a = read_tile(in.src[0], "src0");
    const TileRef b = read_tile(in.src[1], "src1");
    if (in.dst == in.src[0] || in.dst == in.src[1]) {
      fail("dst " + tile_desc(in.dst) + " is also an operand");
    }
    const LocalTile& ta = *a.t;
    const LocalTile& tb = *b.t;
    const LocalTile& tc = *c.t;
    const int rank = ta.rank;
    bool ok = rank >= 2 && tb.rank == rank && tc.rank == rank;
    for (int k = 0; ok && k < rank - 2; ++k) {
      ok = ta.shape[k] == tb.shape[k] && ta.shape[k] == tc.shape[k];
    }
    if (ok) {
      ok = ta.shape[rank - 1] == tb.shape[rank - 2] && tc.shape[rank - 2] == ta.shape[rank - 2] &&
           tc.shape[rank - 1] == tb.shape[rank - 1];
    }
    if (!ok) {
      fail("shapes do not multiply: src0 " + tile_desc(in.src[0]) + " @ src1 " +
           tile_desc(in.src[1]) + " -> dst " + tile_desc(in.dst) +
           " (want [.., M, K] @ [.., K, N] -> [.., M, N], equal batch axes)");
    }
    const std::int64_t m = ta.shape[rank - 2];
    const std::int64_t kk = ta.shape[rank - 1];
    const std::int64_t nn = tb.shape[rank - 1];
    const std::int64_t batch = numel(ta.shape, rank - 2);
    if (!in.accumulate) std::fill(c.data, c.data + c.n, 0.0);
    for (std::int64_t bi = 0; bi < batch; ++bi) {
      matmul_accumulate(a.data + bi * m * kk, b.data + bi * kk * nn, c.data + bi * m * nn, m, kk,
                        nn);
    }
    const bool ints = !is_float(ta.dtype) && !is_float(tb.dtype);
    round_inplace(c.data, c.n, tc.dtype, ints ? IntConv::kWrap : IntConv::kFromFloat);
    done(in.dst);
  }

  // ---- indexed ops ----------------------------------------------------------------------------

  // The one axis of reduce_mask (gather/scatter), checked against `rank`.
  int index_axis(const TileInstr& in, int rank) const {
    int axis = -1;
    for (int k = 0; k < kMaxRank; ++k) {
      if ((in.reduce_mask >> k) & 1u) {
        if (axis >= 0 || k >= rank) {
          fail("reduce_mask " + std::to_string(int(in.reduce_mask)) +
               " must name exactly one axis below " + std::to_string(rank));
        }
        axis = k;
      }
    }
    if (axis < 0) fail("reduce_mask names no axis");
    return axis;
  }

  // Element offsets of a dense row-major tile of shape t (strides per axis).
  static void dense_strides(const LocalTile& t, std::int64_t* st) {
    std::int64_t acc = 1;
    for (int k = t.rank - 1; k >= 0; --k) {
      st[k] = acc;
      acc *= t.shape[k];
    }
  }

  std::int64_t checked_index(double v, std::int64_t n, const char* what) const {
    if (!(v >= 0 && v < double(n))) {
      fail(std::string(what) + " index " + std::to_string(std::int64_t(v)) + " is outside [0, " +
           std::to_string(n) + ")");
    }
    return std::int64_t(v);
  }

  void gather(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef x = read_tile(in.src[0], "src0");
    const TileRef ix = read_tile(in.src[1], "src1");
    same_shape(in.dst, in.src[1], "dst", "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    const int r = d.t->rank;
    if (x.t->rank != r) fail("src0 " + tile_desc(in.src[0]) + " must have dst's rank");
    const int a = index_axis(in, r);
    for (int k = 0; k < r; ++k) {
      if (k != a && x.t->shape[k] < d.t->shape[k]) {
        fail("src0 " + tile_desc(in.src[0]) + " is smaller than dst " + tile_desc(in.dst) +
             " on axis " + std::to_string(k));
      }
    }
    std::int64_t ds[kMaxRank], xs[kMaxRank];
    dense_strides(*d.t, ds);
    dense_strides(*x.t, xs);
    for (std::int64_t i = 0; i < d.n; ++i) {
      std::int64_t rem = i, off = 0;
      for (int k = 0; k < r; ++k) {
        const std::int64_t c = rem / ds[k];
        rem -= c * ds[k];
        off += (k == a ? checked_index(ix.data[i], x.t->shape[a], "gather") : c) * xs[k];
      }
      d.data[i] = x.data[off];
    }
    if (d.t->dtype != x.t->dtype) convert_from(d, x.t->dtype);
    done(in.dst);
  }

  void scatter(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef x = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const TileRef ix = read_tile(in.src[1], "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    const int r = d.t->rank;
    if (ix.t->rank != r) fail("src1 " + tile_desc(in.src[1]) + " must have dst's rank");
    const int a = index_axis(in, r);
    for (int k = 0; k < r; ++k) {
      if (k != a && ix.t->shape[k] > d.t->shape[k]) {
        fail("src1 " + tile_desc(in.src[1]) + " is larger than dst " + tile_desc(in.dst));
      }
    }
    const bool scalar_src = (in.scalar_operand & 4u) != 0;
    const double* sv = nullptr;
    if (!scalar_src) {
      const TileRef s = read_tile(in.src[2], "src2");
      same_shape(in.src[1], in.src[2], "src1", "src2");
      sv = s.data;
    }
    if (in.accumulate > 2) fail("accumulate " + std::to_string(int(in.accumulate)) + " is no mode");
    const DType dt = d.t->dtype;
    const IntConv ic = is_float(dt) ? IntConv::kFromFloat : IntConv::kWrap;
    const double scal =
        scalar_src ? round_value(in.scalar[2], dt,
                                 std::trunc(in.scalar[2]) == in.scalar[2] ? IntConv::kWrap
                                                                          : IntConv::kFromFloat)
                   : 0.0;
    if (d.data != x.data) std::copy(x.data, x.data + x.n, d.data);
    if (d.t->dtype != x.t->dtype) convert_from(d, x.t->dtype);
    std::int64_t is[kMaxRank], ds[kMaxRank];
    dense_strides(*ix.t, is);
    dense_strides(*d.t, ds);
    for (std::int64_t i = 0; i < ix.n; ++i) {
      std::int64_t rem = i, off = 0;
      for (int k = 0; k < r; ++k) {
        const std::int64_t c = rem / is[k];
        rem -= c * is[k];
        off += (k == a ? checked_index(ix.data[i], d.t->shape[a], "scatter") : c) * ds[k];
      }
      const double v = scalar_src ? scal : round_value(sv[i], dt, ic);
      double& o = d.data[off];
      if (in.accumulate == 0) {
        o = v;
      } else if (!is_float(dt)) {
        const std::int64_t p =
            in.accumulate == 1 ? wrap_add(as_i64(o), as_i64(v)) : wrap_mul(as_i64(o), as_i64(v));
        o = round_value(double(p), dt, IntConv::kWrap);
      } else {
        o = round_value(in.accumulate == 1 ? o + v : o * v, dt, IntConv::kFromFloat);
      }
    }
    done(in.dst);
  }

  void scatter_rows(const TileInstr& in) {
    const TileRef s = read_tile(in.src[0], "src0");
    const TileRef ix = read_tile(in.src[1], "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    const GlobalRegion& r = in.region;
    if (r.rank < 1 || s.t->rank < 1) fail("needs a region and rows of rank 1 or more");
    const std::int64_t cols = r.shape[r.rank - 1];
    if (s.t->shape[s.t->rank - 1] != cols) {
      fail("src0 " + tile_desc(in.src[0]) + " rows do not have the " + std::to_string(cols) +
           " elements of the " + region_desc(r));
    }
    const std::int64_t nrows = cols == 0 ? 0 : s.n / cols;
    if (ix.n != nrows) {
      fail("src1 " + tile_desc(in.src[1]) + " has " + std::to_string(ix.n) + " row numbers for " +
           std::to_string(nrows) + " rows of src0");
    }
    std::uint8_t* buf = region_buffer(r);
    if (!buf) return;
    const std::int64_t total_rows = cols == 0 ? 0 : numel(r.shape, r.rank) / cols;
    const DType to = r.dtype;
    const IntConv ic = int_conv_from(s.t->dtype);
    with_dtype(to, [&](auto tag) {
      constexpr DType D = decltype(tag)::value;
      using E = Elem<D>;
      constexpr std::int64_t kEb = sizeof(typename E::S);
      for (std::int64_t i = 0; i < nrows; ++i) {
        std::int64_t row = checked_index(ix.data[i], total_rows, "scatter_update row");
        std::int64_t off = r.offset_elems;
        for (int k = r.rank - 2; k >= 0; --k) {
          const std::int64_t c = row % r.shape[k];
          row /= r.shape[k];
          off += c * r.stride[k];
        }
        const double* src = s.data + i * cols;
        for (std::int64_t j = 0; j < cols; ++j) {
          const double v = s.t->dtype == D ? src[j] : round_value(src[j], D, ic);
          E::put(buf + (off + j * r.stride[r.rank - 1]) * kEb, v);
        }
      }
    });
  }

  const TaskProgram& p_;
  const GlobalMemory& mem_;
  ExecScratch& s_;
  std::size_t idx_ = 0;
};

}  // namespace

void execute(const TaskProgram& p, const GlobalMemory& mem, ExecScratch& scratch) {
  Executor(p, mem, scratch).run();
}

double round_to_dtype(double v, DType d) { return round_value(v, d, IntConv::kWrap); }

}  // namespace pypto::exec
