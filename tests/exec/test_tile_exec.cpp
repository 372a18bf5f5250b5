// SPDX-License-Identifier: Apache-2.0
// The tile executor against values worked out by hand and read off torch 1.13 (CPU).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/exec/tile_exec.h"

using Catch::Matchers::Contains;
using pypto::ModelError;
using pypto::exec::CastMode;
using pypto::exec::DType;
using pypto::exec::ExecScratch;
using pypto::exec::execute;
using pypto::exec::GlobalMemory;
using pypto::exec::GlobalRegion;
using pypto::exec::LocalTile;
using pypto::exec::round_to_dtype;
using pypto::exec::TaskProgram;
using pypto::exec::TileInstr;
using pypto::exec::TileOpcode;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Reference encoders, independent of the executor: float casts for fp32, torch's own
// bf16 algorithm (round the float's upper half to nearest even), and GCC's _Float16.
std::uint16_t bf16_bits_torch(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7FC0;
  return std::uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

double bf16_value(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint16_t fp16_bits(double v) {
  const _Float16 h = _Float16(v);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

double fp16_value(std::uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return double(h);
}

std::uint32_t size_of(DType d) { return pypto::model::dtype_bytes(d); }

// Builds one task program plus the buffers it runs on.
struct Harness {
  struct Buf {
    DType dtype;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Buf> bufs;
  TaskProgram prog;
  ExecScratch scratch;

  // A buffer holding `values` (each exactly representable in d).
  std::uint32_t buffer(DType d, const std::vector<double>& values) {
    Buf b{d, std::vector<std::uint8_t>(values.size() * size_of(d))};
    for (std::size_t i = 0; i < values.size(); ++i) put(b, i, values[i]);
    bufs.push_back(std::move(b));
    return std::uint32_t(bufs.size() - 1);
  }

  static void put(Buf& b, std::size_t i, double v) {
    std::uint8_t* q = b.bytes.data() + i * size_of(b.dtype);
    switch (b.dtype) {
      case DType::kFp32: {
        const float f = float(v);
        std::memcpy(q, &f, 4);
        break;
      }
      case DType::kFp16: {
        const std::uint16_t h = fp16_bits(v);
        std::memcpy(q, &h, 2);
        break;
      }
      case DType::kBf16: {
        const std::uint16_t h = bf16_bits_torch(float(v));
        std::memcpy(q, &h, 2);
        break;
      }
      case DType::kInt8: {
        const auto x = std::int8_t(v);
        std::memcpy(q, &x, 1);
        break;
      }
      case DType::kInt16: {
        const auto x = std::int16_t(v);
        std::memcpy(q, &x, 2);
        break;
      }
      case DType::kInt32: {
        const auto x = std::int32_t(v);
        std::memcpy(q, &x, 4);
        break;
      }
      case DType::kInt64: {
        const auto x = std::int64_t(v);
        std::memcpy(q, &x, 8);
        break;
      }
      case DType::kBool: *q = v != 0; break;
      case DType::kUInt8: *q = std::uint8_t(v); break;
    }
  }

  double get(std::uint32_t buf, std::size_t i) const {
    const Buf& b = bufs[buf];
    const std::uint8_t* q = b.bytes.data() + i * size_of(b.dtype);
    switch (b.dtype) {
      case DType::kFp32: {
        float f;
        std::memcpy(&f, q, 4);
        return f;
      }
      case DType::kFp16: {
        std::uint16_t h;
        std::memcpy(&h, q, 2);
        return fp16_value(h);
      }
      case DType::kBf16: {
        std::uint16_t h;
        std::memcpy(&h, q, 2);
        return bf16_value(h);
      }
      case DType::kInt8: {
        std::int8_t x;
        std::memcpy(&x, q, 1);
        return x;
      }
      case DType::kInt16: {
        std::int16_t x;
        std::memcpy(&x, q, 2);
        return x;
      }
      case DType::kInt32: {
        std::int32_t x;
        std::memcpy(&x, q, 4);
        return x;
      }
      case DType::kInt64: {
        std::int64_t x;
        std::memcpy(&x, q, 8);
        return double(x);
      }
      case DType::kBool: return *q;
      case DType::kUInt8: return *q;
    }
    return 0;
  }

  std::vector<double> read(std::uint32_t buf) const {
    std::vector<double> v(bufs[buf].bytes.size() / size_of(bufs[buf].dtype));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = get(buf, i);
    return v;
  }

  std::int32_t local(DType d, std::initializer_list<std::int64_t> shape) {
    LocalTile t;
    t.dtype = d;
    t.rank = std::uint8_t(shape.size());
    int k = 0;
    for (auto s : shape) t.shape[k++] = s;
    prog.locals.push_back(t);
    return std::int32_t(prog.locals.size() - 1);
  }

  // The dense row-major region of `buf` with `shape`, starting at element `off`.
  GlobalRegion dense(std::uint32_t buf, std::int64_t off, const std::int64_t* shape, int rank) {
    GlobalRegion r;
    r.buffer = buf;
    r.offset_elems = off;
    r.dtype = bufs[buf].dtype;
    r.rank = std::uint8_t(rank);
    std::int64_t st = 1;
    for (int k = rank - 1; k >= 0; --k) {
      r.shape[k] = shape[k];
      r.stride[k] = st;
      st *= shape[k];
    }
    return r;
  }

  TileInstr& emit(TileOpcode op, std::int32_t dst, std::int32_t a = -1, std::int32_t b = -1,
                  std::int32_t c = -1) {
    TileInstr in;
    in.op = op;
    in.dst = dst;
    in.src[0] = a;
    in.src[1] = b;
    in.src[2] = c;
    prog.instrs.push_back(in);
    return prog.instrs.back();
  }

  // Loads the whole of `buf` (from element 0) into local dst, shaped like dst.
  TileInstr& load(std::int32_t dst, std::uint32_t buf, std::int64_t off = 0) {
    const LocalTile& t = prog.locals[std::size_t(dst)];
    TileInstr& in = emit(TileOpcode::kLoad, dst);
    in.region = dense(buf, off, t.shape, t.rank);
    return in;
  }

  TileInstr& store(std::int32_t src, std::uint32_t buf, std::int64_t off = 0) {
    const LocalTile& t = prog.locals[std::size_t(src)];
    TileInstr& in = emit(TileOpcode::kStore, -1, src);
    in.region = dense(buf, off, t.shape, t.rank);
    return in;
  }

  // A local of dtype d and the given values, loaded from a buffer of the same dtype.
  std::int32_t input(DType d, std::initializer_list<std::int64_t> shape,
                     const std::vector<double>& values) {
    const std::int32_t t = local(d, shape);
    load(t, buffer(d, values));
    return t;
  }

  void run() {
    GlobalMemory mem;
    for (auto& b : bufs) {
      mem.base.push_back(b.bytes.data());
      mem.size_bytes.push_back(b.bytes.size());
      mem.dtype.push_back(b.dtype);
    }
    execute(prog, mem, scratch);
  }

  // Local k's values after the run, from whichever copy holds them (ExecScratch::held).
  std::vector<double> tile(std::int32_t k) const {
    const auto i = std::size_t(k);
    if (scratch.held[i] & ExecScratch::kHeldDoubles) return scratch.tiles[i];
    if (scratch.held[i] == ExecScratch::kHeldRows) {  // one plane of rows of its load's region
      const GlobalRegion& r = prog.instrs[scratch.rows_of[i]].region;
      const std::int64_t rows = r.rank >= 2 ? r.shape[r.rank - 2] : 1;
      const std::int64_t pitch = r.rank >= 2 ? r.stride[r.rank - 2] : 0;
      std::vector<double> v;
      for (std::int64_t a = 0; a < rows; ++a) {
        for (std::int64_t j = 0; j < r.shape[r.rank - 1]; ++j) {
          v.push_back(get(r.buffer, std::size_t(r.offset_elems + a * pitch + j)));
        }
      }
      return v;
    }
    const std::vector<float>& f = scratch.float_tiles[i];
    return std::vector<double>(f.begin(), f.begin() + std::ptrdiff_t(scratch.tiles[i].size()));
  }
};

// Runs `op` on two tiles of dtype d (or a tile and a scalar) into a dst of dtype `out`.
std::vector<double> binary(TileOpcode op, DType d, const std::vector<double>& a,
                           const std::vector<double>& b, DType out) {
  Harness h;
  const auto n = std::int64_t(a.size());
  const std::int32_t x = h.input(d, {n}, a);
  const std::int32_t y = h.input(d, {n}, b);
  const std::int32_t z = h.local(out, {n});
  h.emit(op, z, x, y);
  h.run();
  return h.tile(z);
}

std::vector<double> with_scalar(TileOpcode op, DType d, const std::vector<double>& a, double s,
                                DType out) {
  Harness h;
  const auto n = std::int64_t(a.size());
  const std::int32_t x = h.input(d, {n}, a);
  const std::int32_t z = h.local(out, {n});
  TileInstr& in = h.emit(op, z, x);
  in.scalar_operand = 2;
  in.scalar[1] = s;
  h.run();
  return h.tile(z);
}

std::vector<double> unary(TileOpcode op, DType d, const std::vector<double>& a) {
  Harness h;
  const auto n = std::int64_t(a.size());
  const std::int32_t x = h.input(d, {n}, a);
  const std::int32_t z = h.local(d, {n});
  h.emit(op, z, x);
  h.run();
  return h.tile(z);
}

std::vector<double> cast(DType from, const std::vector<double>& a, DType to, CastMode m,
                         bool saturate = false) {
  Harness h;
  const auto n = std::int64_t(a.size());
  const std::int32_t x = h.input(from, {n}, a);
  const std::int32_t z = h.local(to, {n});
  TileInstr& in = h.emit(TileOpcode::kCast, z, x);
  in.cast_mode = m;
  in.saturate = saturate;
  h.run();
  return h.tile(z);
}

// Element-wise equality that treats NaN as equal to NaN and tells -0.0 from 0.0.
bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("fp16 rounding matches torch", "[tile_exec][dtype]") {
  CHECK(round_to_dtype(0.1, DType::kFp16) == 0.0999755859375);
  CHECK(round_to_dtype(-0.1, DType::kFp16) == -0.0999755859375);
  CHECK(round_to_dtype(65504, DType::kFp16) == 65504);
  CHECK(round_to_dtype(65519.99, DType::kFp16) == 65504);
  CHECK(round_to_dtype(65520, DType::kFp16) == kInf);  // the tie above max rounds to inf
  CHECK(round_to_dtype(-70000, DType::kFp16) == -kInf);
  CHECK(round_to_dtype(2049, DType::kFp16) == 2048);  // tie: to the even 2048
  CHECK(round_to_dtype(2051, DType::kFp16) == 2052);  // tie: to the even 2052
  // Subnormals: units of 2^-24; half a unit ties to 0, 1.5 units to 2 units.
  CHECK(round_to_dtype(std::ldexp(1, -24), DType::kFp16) == std::ldexp(1, -24));
  CHECK(round_to_dtype(std::ldexp(1, -25), DType::kFp16) == 0);
  CHECK(round_to_dtype(3 * std::ldexp(1, -25), DType::kFp16) == std::ldexp(1, -23));
  CHECK(round_to_dtype(1e-8, DType::kFp16) == 0);
  CHECK(std::isnan(round_to_dtype(kNan, DType::kFp16)));
  CHECK(round_to_dtype(0.1, DType::kFp32) == double(0.1f));
}

TEST_CASE("fp16 conversions agree with GCC's _Float16 everywhere", "[tile_exec][dtype]") {
  // Every bit pattern decodes exactly and stores back to itself (NaNs stay NaN).
  Harness h;
  std::vector<double> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = fp16_value(std::uint16_t(i));
  const std::uint32_t in = h.buffer(DType::kFp16, all);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto b = std::uint16_t(i);
    std::memcpy(h.bufs[in].bytes.data() + 2 * i, &b, 2);  // NaN payloads too
  }
  const std::uint32_t out = h.buffer(DType::kFp16, std::vector<double>(65536, 0.0));
  const std::int32_t t = h.local(DType::kFp16, {256, 256});
  h.load(t, in);
  h.store(t, out);
  h.run();
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const double got = h.tile(t)[i];
    const bool nan = std::isnan(all[i]);
    if (nan ? !std::isnan(got) : (got != all[i] || std::signbit(got) != std::signbit(all[i]))) {
      ++mismatches;
    }
    std::uint16_t back;
    std::memcpy(&back, h.bufs[out].bytes.data() + 2 * i, 2);
    if (nan ? !std::isnan(fp16_value(back)) : back != i) ++mismatches;
  }
  CHECK(mismatches == 0);

  // Rounding straight from double, across normal, subnormal and overflow magnitudes.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> expo(-30, 17);
  mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    double v = std::ldexp(mant(rng), expo(rng));
    if (i & 1) v = -v;
    if (i % 7 == 0) v = std::ldexp(std::nearbyint(std::ldexp(v, 20)) + 0.5, -20);  // near ties
    if (round_to_dtype(v, DType::kFp16) != fp16_value(fp16_bits(v))) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("fp32 -> fp16 stores and casts agree with _Float16 in every direction",
          "[tile_exec][dtype][cast]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> expo(-27, 16);
  const int n = 4096;
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) {
    const float f = std::ldexp(mant(rng), expo(rng));
    v[std::size_t(i)] = (i & 1) ? -f : f;
  }
  v[0] = 0.0;
  v[1] = -0.0;
  v[2] = 65504;
  v[3] = 1.5;  // exact: every direction gives it back

  // A store converts with torch's rounding (nearest-even, overflow to inf).
  Harness h;
  const std::int32_t t = h.input(DType::kFp32, {n}, v);
  const std::uint32_t out = h.buffer(DType::kFp16, std::vector<double>(std::size_t(n), 0));
  h.store(t, out);
  h.run();
  std::size_t bad_store = 0;
  for (int i = 0; i < n; ++i) {
    std::uint16_t got;
    std::memcpy(&got, h.bufs[out].bytes.data() + 2 * i, 2);
    if (got != fp16_bits(v[std::size_t(i)])) ++bad_store;
  }
  CHECK(bad_store == 0);

  // Saturating nearest-even: _Float16's rounding, clamped to +-65504.
  const auto sat = cast(DType::kFp32, v, DType::kFp16, CastMode::kRint, true);
  // Directed modes bracket the value with neighbouring fp16 values.
  const auto down = cast(DType::kFp32, v, DType::kFp16, CastMode::kFloor);
  const auto up = cast(DType::kFp32, v, DType::kFp16, CastMode::kCeil);
  const auto trunc = cast(DType::kFp32, v, DType::kFp16, CastMode::kTrunc);
  const auto away = cast(DType::kFp32, v, DType::kFp16, CastMode::kRound);
  const auto odd = cast(DType::kFp32, v, DType::kFp16, CastMode::kOdd);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < std::size_t(n); ++i) {
    const double x = v[i];
    const double rne = fp16_value(fp16_bits(x));
    if (sat[i] != std::clamp(rne, -65504.0, 65504.0)) ++bad;
    const bool exact = rne == x;
    if (exact) {
      if (down[i] != x || up[i] != x || trunc[i] != x || away[i] != x || odd[i] != x) ++bad;
      continue;
    }
    // Neighbours: no fp16 value lies strictly between down and up.
    if (!(down[i] < x && x < up[i])) ++bad;
    const double lo_mag = std::fabs(x < 0 ? up[i] : down[i]);
    const double hi_mag = std::fabs(x < 0 ? down[i] : up[i]);
    if (std::isfinite(hi_mag) && fp16_bits(hi_mag) != fp16_bits(lo_mag) + 1) ++bad;
    if (std::isinf(hi_mag) && lo_mag != 65504) ++bad;
    if (trunc[i] != (x < 0 ? up[i] : down[i])) ++bad;
    // Away from zero agrees with nearest-even except on ties.
    const bool tie = std::fabs(x) - lo_mag == hi_mag - std::fabs(x);
    if (away[i] != (tie ? (x < 0 ? down[i] : up[i]) : rne)) ++bad;
    // Round-to-odd picks the neighbour whose last bit is set (overflow saturates to 65504).
    const double odd_mag = std::isinf(hi_mag) || (fp16_bits(lo_mag) & 1) ? lo_mag : hi_mag;
    if (odd[i] != (x < 0 ? -odd_mag : odd_mag)) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("bf16 rounding matches torch", "[tile_exec][dtype]") {
  CHECK(round_to_dtype(1.00390625, DType::kBf16) == 1.0);       // tie: to the even 1.0
  CHECK(round_to_dtype(1.01171875, DType::kBf16) == 1.015625);  // tie: to the even 1.015625
  CHECK(round_to_dtype(1.0117, DType::kBf16) == 1.0078125);
  CHECK(round_to_dtype(0.1, DType::kBf16) == 0.10009765625);
  CHECK(round_to_dtype(3.39e38, DType::kBf16) == 3.3895313892515355e+38);
  CHECK(round_to_dtype(3.4e38, DType::kBf16) == kInf);
  CHECK(std::isnan(round_to_dtype(kNan, DType::kBf16)));

  // torch rounds bf16 from float; for every float the single rounding from double agrees.
  std::mt19937 rng(11);
  std::size_t mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    const double want = bf16_value(bf16_bits_torch(f));
    if (round_to_dtype(f, DType::kBf16) != want) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("integer results wrap and bool is nonzero", "[tile_exec][dtype]") {
  CHECK(round_to_dtype(128, DType::kInt8) == -128);
  CHECK(round_to_dtype(-129, DType::kInt8) == 127);
  CHECK(round_to_dtype(65536 + 5, DType::kInt16) == 5);
  CHECK(round_to_dtype(4294967298.0, DType::kInt32) == 2);
  CHECK(round_to_dtype(-7.9, DType::kInt32) == -7);
  CHECK(round_to_dtype(0.5, DType::kBool) == 1);
  CHECK(round_to_dtype(kNan, DType::kBool) == 1);
  CHECK(round_to_dtype(-0.0, DType::kBool) == 0);

  CHECK(binary(TileOpcode::kAdd, DType::kInt8, {127, -128, 100}, {1, -1, 27}, DType::kInt8) ==
        std::vector<double>{-128, 127, 127});
  CHECK(with_scalar(TileOpcode::kMul, DType::kInt8, {100}, 3, DType::kInt8) ==
        std::vector<double>{44});
  // int32 products beyond 2^53 are still exact modulo 2^32 (torch: 1 and -67153019).
  CHECK(binary(TileOpcode::kMul, DType::kInt32, {2147483647, 123456789}, {2147483647, 987654321},
               DType::kInt32) == std::vector<double>{1, -67153019});
  CHECK(binary(TileOpcode::kAdd, DType::kBool, {1, 0, 1}, {1, 0, 0}, DType::kBool) ==
        std::vector<double>{1, 0, 1});
}

TEST_CASE("uint8 wraps modulo 256 and converts like torch.uint8", "[tile_exec][dtype]") {
  CHECK(round_to_dtype(256 + 7, DType::kUInt8) == 7);
  CHECK(round_to_dtype(-1, DType::kUInt8) == 255);
  // torch: 200 + 100 = 44, 100 - 200 = 156, 200 * 3 = 88 (uint8 wraps).
  CHECK(binary(TileOpcode::kAdd, DType::kUInt8, {200, 255}, {100, 1}, DType::kUInt8) ==
        std::vector<double>{44, 0});
  CHECK(binary(TileOpcode::kSub, DType::kUInt8, {100, 0}, {200, 1}, DType::kUInt8) ==
        std::vector<double>{156, 255});
  CHECK(with_scalar(TileOpcode::kMul, DType::kUInt8, {200}, 3, DType::kUInt8) ==
        std::vector<double>{88});
  Harness h;
  const std::uint32_t f = h.buffer(DType::kFp32, {-1, 300, 255.9, -3.7, 1e10});
  const std::int32_t u8 = h.local(DType::kUInt8, {5});
  h.load(u8, f);
  h.run();
  // torch (x86): through int32, then the low byte: -1 -> 255, 300 -> 44, -3.7 -> 253.
  CHECK(h.tile(u8) == std::vector<double>{255, 44, 255, 253, 0});
}

TEST_CASE("loads convert like torch's .to()", "[tile_exec][load]") {
  Harness h;
  const std::uint32_t f = h.buffer(DType::kFp32, {0.1, 65520, 300, -300.5, 1e10});
  const std::int32_t half = h.local(DType::kFp16, {5});
  const std::int32_t i8 = h.local(DType::kInt8, {5});
  const std::int32_t i32 = h.local(DType::kInt32, {5});
  h.load(half, f);
  h.load(i8, f);
  h.load(i32, f);
  h.run();
  CHECK(h.tile(half) == std::vector<double>{0.0999755859375, kInf, 300, -300.5, kInf});
  // torch (x86): 300 -> 44, -300.5 -> -44 through int32; 1e10 is out of int32 range.
  CHECK(h.tile(i8) == std::vector<double>{0, -16, 44, -44, 0});
  CHECK(h.tile(i32) == std::vector<double>{0, 65520, 300, -300, -2147483648.0});
}

TEST_CASE("a stride-0 load broadcasts", "[tile_exec][load]") {
  Harness h;
  const std::uint32_t row = h.buffer(DType::kFp32, {1, 2, 3});
  const std::int32_t rows = h.local(DType::kFp32, {2, 3});
  const std::int32_t cols = h.local(DType::kFp32, {3, 2});
  h.load(rows, row).region.stride[0] = 0;  // [[1,2,3],[1,2,3]]
  TileInstr& c = h.load(cols, row);        // [[1,1],[2,2],[3,3]]
  c.region.stride[0] = 1;
  c.region.stride[1] = 0;
  h.run();
  CHECK(h.tile(rows) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(h.tile(cols) == std::vector<double>{1, 1, 2, 2, 3, 3});
}

TEST_CASE("a strided load reads a window of a larger tensor", "[tile_exec][load]") {
  Harness h;
  std::vector<double> m(20);
  for (int i = 0; i < 20; ++i) m[std::size_t(i)] = i;  // a 4x5 matrix
  const std::uint32_t buf = h.buffer(DType::kInt16, m);
  const std::int32_t t = h.local(DType::kInt16, {2, 3});
  TileInstr& in = h.load(t, buf, 6);  // rows 1..2, columns 1..3
  in.region.stride[0] = 5;
  h.run();
  CHECK(h.tile(t) == std::vector<double>{6, 7, 8, 11, 12, 13});
}

TEST_CASE("a tail load fills the prefix box and keeps the rest", "[tile_exec][load]") {
  // A 3x5 tensor, the tail tile at rows 2.., columns 3..: a [1, 2] box of a [2, 4] local
  // that was zero-filled first (as the compiler does for tails).
  Harness h;
  std::vector<double> m(15);
  for (int i = 0; i < 15; ++i) m[std::size_t(i)] = i + 1;
  const std::uint32_t buf = h.buffer(DType::kFp16, m);
  const std::int32_t t = h.local(DType::kFp32, {2, 4});
  h.emit(TileOpcode::kFill, t).scalar_operand = 1;
  TileInstr& in = h.load(t, buf, 2 * 5 + 3);
  in.region.shape[0] = 1;
  in.region.shape[1] = 2;
  in.region.stride[0] = 5;
  h.run();
  CHECK(h.tile(t) == std::vector<double>{14, 15, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("a tail store touches only the valid box", "[tile_exec][store]") {
  Harness h;
  std::vector<double> vals(16);
  for (int i = 0; i < 16; ++i) vals[std::size_t(i)] = i + 1;
  const std::int32_t t = h.input(DType::kFp32, {4, 4}, vals);
  const std::uint32_t out = h.buffer(DType::kFp32, std::vector<double>(25, -1));
  TileInstr& st = h.store(t, out, 5 * 2 + 3);  // at row 2, column 3 of a 5x5 tensor
  st.region.shape[0] = 3;
  st.region.shape[1] = 2;
  st.region.stride[0] = 5;
  h.run();
  std::vector<double> want(25, -1);
  want[13] = 1;
  want[14] = 2;
  want[18] = 5;
  want[19] = 6;
  want[23] = 9;
  want[24] = 10;
  CHECK(h.read(out) == want);
}

TEST_CASE("stores convert to the region's dtype", "[tile_exec][store]") {
  Harness h;
  const std::int32_t t = h.input(DType::kFp32, {4}, {65520, 0.1, -2.5, 300});
  const std::uint32_t half = h.buffer(DType::kFp16, std::vector<double>(4, 0));
  const std::uint32_t i8 = h.buffer(DType::kInt8, std::vector<double>(4, 0));
  const std::uint32_t b = h.buffer(DType::kBool, std::vector<double>(4, 0));
  h.store(t, half);
  h.store(t, i8);
  h.store(t, b);
  h.run();
  std::uint16_t bits;
  std::memcpy(&bits, h.bufs[half].bytes.data(), 2);
  CHECK(bits == 0x7c00);  // inf
  CHECK(h.read(half) == std::vector<double>{kInf, 0.0999755859375, -2.5, 300});
  CHECK(h.read(i8) == std::vector<double>{-16, 0, -2, 44});
  CHECK(h.read(b) == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("arithmetic rounds once per op in the tile's dtype", "[tile_exec][elementwise]") {
  // fp16: 1 + fp16(2^-11 * 1.0001) = 1 + 2^-11, a tie that goes to 1.0 (torch: 1.0).
  CHECK(with_scalar(TileOpcode::kAdd, DType::kFp16, {1.0}, std::ldexp(1.0001, -11), DType::kFp16) ==
        std::vector<double>{1.0});
  // The scalar is rounded to fp16 first: 3 * fp16(0.1) (torch: 0.2998046875).
  CHECK(with_scalar(TileOpcode::kMul, DType::kFp16, {3.0}, 0.1, DType::kFp16) ==
        std::vector<double>{0.2998046875});
  CHECK(with_scalar(TileOpcode::kDiv, DType::kFp16, {1.0}, 3, DType::kFp16) ==
        std::vector<double>{0.333251953125});
  CHECK(with_scalar(TileOpcode::kDiv, DType::kBf16, {1.0}, 3, DType::kBf16) ==
        std::vector<double>{0.333984375});
  CHECK(binary(TileOpcode::kSub, DType::kFp32, {1.0}, {0.1}, DType::kFp32) ==
        std::vector<double>{double(1.0f - 0.1f)});
  // Mixed dtypes: fp16 2048 + fp32 1 into fp32 is exact.
  Harness h;
  const std::int32_t a = h.input(DType::kFp16, {1}, {2048});
  const std::int32_t b = h.input(DType::kFp32, {1}, {1});
  const std::int32_t c = h.local(DType::kFp32, {1});
  h.emit(TileOpcode::kAdd, c, a, b);
  h.run();
  CHECK(h.tile(c) == std::vector<double>{2049});
}

TEST_CASE("a reflected op takes the scalar as operand a", "[tile_exec][elementwise]") {
  Harness h;
  const std::int32_t x = h.input(DType::kFp32, {2}, {4, 8});
  const std::int32_t z = h.local(DType::kFp32, {2});
  TileInstr& in = h.emit(TileOpcode::kSub, z, -1, x);
  in.scalar_operand = 1;
  in.scalar[0] = 1;
  h.run();
  CHECK(h.tile(z) == std::vector<double>{-3, -7});
}

TEST_CASE("division and remainder follow torch's sign rules", "[tile_exec][elementwise]") {
  CHECK(binary(TileOpcode::kRemainder, DType::kInt32, {-7, 7, 7, -7}, {2, -2, 2, -2},
               DType::kInt32) == std::vector<double>{1, -1, 1, -1});
  CHECK(binary(TileOpcode::kRemainder, DType::kFp32, {-7.5, 7.5, -7, 6}, {2, -2, 2, 3},
               DType::kFp32) == std::vector<double>{0.5, -0.5, 1, 0});
  // Integer dst: truncation toward zero, like C.
  CHECK(binary(TileOpcode::kDiv, DType::kInt32, {-7, 7, -2147483648.0}, {2, -2, -1},
               DType::kInt32) == std::vector<double>{-3, -3, -2147483648.0});
  // Integer operands into a float dst: true division.
  CHECK(binary(TileOpcode::kDiv, DType::kInt32, {-7, 1}, {2, 0}, DType::kFp32) ==
        std::vector<double>{-3.5, kInf});
  CHECK_THROWS_WITH(binary(TileOpcode::kDiv, DType::kInt32, {1, 2}, {1, 0}, DType::kInt32),
                    Contains("tile instruction 2 (div)") && Contains("division by zero"));
  CHECK_THROWS_WITH(binary(TileOpcode::kRemainder, DType::kInt8, {1}, {0}, DType::kInt8),
                    Contains("ZeroDivisionError"));
}

TEST_CASE("pow follows torch for floats and integers", "[tile_exec][elementwise]") {
  CHECK(binary(TileOpcode::kPow, DType::kFp32, {2, 9, -8}, {10, 0.5, 2}, DType::kFp32) ==
        std::vector<double>{1024, 3, 64});
  // torch: 2 ** -1 == 0, 3 ** 40 wraps to 689956897 in int32, (-1) ** -3 == -1.
  CHECK(binary(TileOpcode::kPow, DType::kInt32, {2, 3, -1}, {-1, 40, -3}, DType::kInt32) ==
        std::vector<double>{0, 689956897, -1});
}

TEST_CASE("maximum and minimum propagate NaN", "[tile_exec][elementwise]") {
  const auto mx =
      binary(TileOpcode::kMaximum, DType::kFp32, {kNan, 1, 2}, {1, kNan, 3}, DType::kFp32);
  CHECK(same_values(mx, {kNan, kNan, 3}));
  const auto mn =
      binary(TileOpcode::kMinimum, DType::kFp32, {kNan, 1, 2}, {1, kNan, 3}, DType::kFp32);
  CHECK(same_values(mn, {kNan, kNan, 2}));
}

TEST_CASE("comparisons and logical ops give 0/1", "[tile_exec][elementwise]") {
  CHECK(binary(TileOpcode::kLt, DType::kFp32, {1, 2, kNan}, {2, 2, 1}, DType::kBool) ==
        std::vector<double>{1, 0, 0});
  CHECK(binary(TileOpcode::kNe, DType::kFp32, {1, 2, kNan}, {2, 2, kNan}, DType::kBool) ==
        std::vector<double>{1, 0, 1});
  CHECK(binary(TileOpcode::kGe, DType::kInt32, {1, 2, 3}, {2, 2, 2}, DType::kBool) ==
        std::vector<double>{0, 1, 1});
  // The scalar is compared in the tile's dtype: fp16(0.1) == 0.1 (torch: True, and < False).
  CHECK(with_scalar(TileOpcode::kEq, DType::kFp16, {0.0999755859375}, 0.1, DType::kBool) ==
        std::vector<double>{1});
  CHECK(with_scalar(TileOpcode::kLt, DType::kFp16, {0.0999755859375}, 0.1, DType::kBool) ==
        std::vector<double>{0});
  // NaN counts as true (torch.logical_and([0, nan, 2], [1, 1, 0]) == [F, T, F]).
  CHECK(binary(TileOpcode::kLogicalAnd, DType::kFp32, {0, kNan, 2}, {1, 1, 0}, DType::kBool) ==
        std::vector<double>{0, 1, 0});
  CHECK(binary(TileOpcode::kLogicalOr, DType::kBool, {0, 0, 1}, {0, 1, 1}, DType::kBool) ==
        std::vector<double>{0, 1, 1});
  CHECK(unary(TileOpcode::kLogicalNot, DType::kBool, {0, 1}) == std::vector<double>{1, 0});
}

TEST_CASE("unary ops round their result to the dtype", "[tile_exec][elementwise]") {
  // torch bf16: sigmoid([0.5, -1]) = [0.62109375, 0.26953125], exp(1) = 2.71875.
  CHECK(unary(TileOpcode::kSigmoid, DType::kBf16, {0.5, -1}) ==
        std::vector<double>{0.62109375, 0.26953125});
  CHECK(unary(TileOpcode::kExp, DType::kBf16, {1}) == std::vector<double>{2.71875});
  CHECK(unary(TileOpcode::kTanh, DType::kBf16, {0.30078125}) == std::vector<double>{0.29296875});
  // torch fp32: sigmoid(0.5), rsqrt(2).
  CHECK(unary(TileOpcode::kSigmoid, DType::kFp32, {0.5}) == std::vector<double>{0.622459352016449});
  CHECK(unary(TileOpcode::kRsqrt, DType::kFp32, {2}) == std::vector<double>{0.7071067690849304});
  CHECK(unary(TileOpcode::kReciprocal, DType::kFp16, {3}) == std::vector<double>{0.333251953125});
  CHECK(unary(TileOpcode::kSqrt, DType::kFp32, {16, -1})[0] == 4);
  CHECK(std::isnan(unary(TileOpcode::kLog, DType::kFp32, {-1})[0]));
  CHECK(unary(TileOpcode::kFloor, DType::kFp32, {-1.5, 2.5}) == std::vector<double>{-2, 2});
  CHECK(unary(TileOpcode::kAbs, DType::kInt8, {-128, -3}) == std::vector<double>{-128, 3});
  CHECK(unary(TileOpcode::kNeg, DType::kInt8, {-128, 5}) == std::vector<double>{-128, -5});
  // relu is torch's clamp_min(x, 0): NaN and -0.0 pass through.
  CHECK(
      same_values(unary(TileOpcode::kRelu, DType::kFp32, {-2, 3, kNan, -0.0}), {0, 3, kNan, -0.0}));
}

TEST_CASE("where picks tiles or scalars per element", "[tile_exec][elementwise]") {
  Harness h;
  const std::int32_t c = h.input(DType::kBool, {3}, {1, 0, 1});
  const std::int32_t a = h.input(DType::kFp16, {3}, {1.5, 2.5, 3.5});
  const std::int32_t b = h.input(DType::kFp16, {3}, {-1, -2, -3});
  const std::int32_t z1 = h.local(DType::kFp16, {3});
  const std::int32_t z2 = h.local(DType::kFp16, {3});
  const std::int32_t z3 = h.local(DType::kFp16, {3});
  h.emit(TileOpcode::kWhere, z1, c, a, b);
  TileInstr& s2 = h.emit(TileOpcode::kWhere, z2, c, a);  // torch.where(c, a, 0.1)
  s2.scalar_operand = 4;
  s2.scalar[2] = 0.1;
  TileInstr& s3 = h.emit(TileOpcode::kWhere, z3, c);  // torch.where(c, 7.0, -0.5)
  s3.scalar_operand = 6;
  s3.scalar[1] = 7;
  s3.scalar[2] = -0.5;
  h.run();
  CHECK(h.tile(z1) == std::vector<double>{1.5, -2, 3.5});
  CHECK(h.tile(z2) == std::vector<double>{1.5, 0.0999755859375, 3.5});
  CHECK(h.tile(z3) == std::vector<double>{7, -0.5, 7});
}

TEST_CASE("fill and copy", "[tile_exec][movement]") {
  Harness h;
  const std::int32_t f = h.local(DType::kFp16, {2, 2});
  const std::int32_t i = h.local(DType::kInt32, {2});
  TileInstr& fi = h.emit(TileOpcode::kFill, f);
  fi.scalar[0] = 0.1;
  h.emit(TileOpcode::kFill, i).scalar[0] = -2.7;
  const std::int32_t src = h.input(DType::kFp32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::int32_t dst = h.local(DType::kFp32, {3, 2});
  h.emit(TileOpcode::kCopy, dst, src);
  h.run();
  CHECK(h.tile(f) == std::vector<double>(4, 0.0999755859375));
  CHECK(h.tile(i) == std::vector<double>{-2, -2});
  CHECK(h.tile(dst) == std::vector<double>{1, 2, 3, 4, 5, 6});  // reshape keeps row-major order
}

TEST_CASE("permute moves axes", "[tile_exec][movement]") {
  Harness h;
  const std::int32_t m = h.input(DType::kFp32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::int32_t t = h.local(DType::kFp32, {3, 2});
  TileInstr& tr = h.emit(TileOpcode::kPermute, t, m);
  tr.perm[0] = 1;
  tr.perm[1] = 0;
  // A [2, 2, 3] tile x[a][b][c] = 100a + 10b + c, permuted by [2, 0, 1]: y[c][a][b].
  std::vector<double> v;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 3; ++c) v.push_back(100 * a + 10 * b + c);
    }
  }
  const std::int32_t x = h.input(DType::kInt32, {2, 2, 3}, v);
  const std::int32_t y = h.local(DType::kInt32, {3, 2, 2});
  TileInstr& p3 = h.emit(TileOpcode::kPermute, y, x);
  p3.perm[0] = 2;
  p3.perm[1] = 0;
  p3.perm[2] = 1;
  h.run();
  CHECK(h.tile(t) == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(h.tile(y) == std::vector<double>{0, 10, 100, 110, 1, 11, 101, 111, 2, 12, 102, 112});
}

TEST_CASE("five-axis tiles load, permute, reduce and store", "[tile_exec][movement]") {
  // x[a][b][c][d][e] = 10000a + 1000b + 100c + 10d + e over [2, 3, 2, 2, 3].
  const std::int64_t n[5] = {2, 3, 2, 2, 3};
  const auto value = [](const std::int64_t* i) {
    return double(10000 * i[0] + 1000 * i[1] + 100 * i[2] + 10 * i[3] + i[4]);
  };
  const auto for_each = [&](auto&& f) {
    std::int64_t i[5];
    for (i[0] = 0; i[0] < n[0]; ++i[0])
      for (i[1] = 0; i[1] < n[1]; ++i[1])
        for (i[2] = 0; i[2] < n[2]; ++i[2])
          for (i[3] = 0; i[3] < n[3]; ++i[3])
            for (i[4] = 0; i[4] < n[4]; ++i[4]) f(static_cast<const std::int64_t*>(i));
  };
  std::vector<double> v;
  for_each([&](const std::int64_t* i) { v.push_back(value(i)); });
  Harness h;
  const std::int32_t x = h.input(DType::kInt32, {2, 3, 2, 2, 3}, v);
  // y = x.permute(4, 0, 3, 1, 2): y[e][a][d][b][c].
  const std::int32_t y = h.local(DType::kInt32, {3, 2, 2, 3, 2});
  TileInstr& p = h.emit(TileOpcode::kPermute, y, x);
  const std::uint8_t perm[5] = {4, 0, 3, 1, 2};
  std::copy(perm, perm + 5, p.perm);
  // s = x.sum(1, keepdim=True).
  const std::int32_t s = h.local(DType::kInt32, {2, 1, 2, 2, 3});
  h.emit(TileOpcode::kReduceSum, s, x).reduce_mask = 2;
  // x stored transposed on its axes 0 and 3 through a strided region: out[d][b][c][a][e].
  const std::uint32_t out = h.buffer(DType::kInt32, std::vector<double>(v.size(), 0.0));
  TileInstr& st = h.store(x, out);
  const std::int64_t dense_st[5] = {36, 12, 6, 3, 1};  // of out's [2, 3, 2, 2, 3]
  st.region.stride[0] = dense_st[3];
  st.region.stride[3] = dense_st[0];
  h.run();
  std::vector<double> want_y(v.size()), want_s(24, 0.0), want_out(v.size());
  for_each([&](const std::int64_t* i) {
    const std::int64_t yi = (((i[4] * 2 + i[0]) * 2 + i[3]) * 3 + i[1]) * 2 + i[2];
    want_y[std::size_t(yi)] = value(i);
    want_s[std::size_t((i[0] * 2 + i[2]) * 6 + i[3] * 3 + i[4])] += value(i);
    const std::int64_t oi = i[3] * 36 + i[1] * 12 + i[2] * 6 + i[0] * 3 + i[4];
    want_out[std::size_t(oi)] = value(i);
  });
  CHECK(h.tile(y) == want_y);
  CHECK(h.tile(s) == want_s);
  CHECK(h.read(out) == want_out);
}

TEST_CASE("reductions keep dims and round once", "[tile_exec][reduce]") {
  Harness h;
  const std::int32_t a = h.input(DType::kFp16, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::int32_t s0 = h.local(DType::kFp16, {1, 3});
  const std::int32_t s1 = h.local(DType::kFp16, {2, 1});
  const std::int32_t all = h.local(DType::kFp16, {1, 1});
  h.emit(TileOpcode::kReduceSum, s0, a).reduce_mask = 1;
  h.emit(TileOpcode::kReduceSum, s1, a).reduce_mask = 2;
  h.emit(TileOpcode::kReduceSum, all, a).reduce_mask = 3;
  // fp16 [2048, 1, 1]: step by step 2048+1 ties back to 2048 twice; torch sums to 2050.
  const std::int32_t big = h.input(DType::kFp16, {3}, {2048, 1, 1});
  const std::int32_t bs = h.local(DType::kFp16, {1});
  h.emit(TileOpcode::kReduceSum, bs, big).reduce_mask = 1;
  // amax over [[1, nan], [3, 4]]: axis 0 -> [[3, nan]], axis 1 -> [[nan], [4]] (torch).
  const std::int32_t m = h.input(DType::kFp32, {2, 2}, {1, kNan, 3, 4});
  const std::int32_t m0 = h.local(DType::kFp32, {1, 2});
  const std::int32_t m1 = h.local(DType::kFp32, {2, 1});
  const std::int32_t n1 = h.local(DType::kFp32, {2, 1});
  h.emit(TileOpcode::kReduceMax, m0, m).reduce_mask = 1;
  h.emit(TileOpcode::kReduceMax, m1, m).reduce_mask = 2;
  h.emit(TileOpcode::kReduceMin, n1, m).reduce_mask = 2;
  // int8 sum into int32 is exact: 4 * 100 = 400.
  const std::int32_t i8 = h.input(DType::kInt8, {4}, {100, 100, 100, 100});
  const std::int32_t is = h.local(DType::kInt32, {1});
  h.emit(TileOpcode::kReduceSum, is, i8).reduce_mask = 1;
  // A 3-D reduction over the middle axis.
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[std::size_t(i)] = i;
  const std::int32_t c = h.input(DType::kFp32, {2, 3, 4}, v);
  const std::int32_t cm = h.local(DType::kFp32, {2, 1, 4});
  h.emit(TileOpcode::kReduceSum, cm, c).reduce_mask = 2;
  h.run();
  CHECK(h.tile(s0) == std::vector<double>{5, 7, 9});
  CHECK(h.tile(s1) == std::vector<double>{6, 15});
  CHECK(h.tile(all) == std::vector<double>{21});
  CHECK(h.tile(bs) == std::vector<double>{2050});
  CHECK(same_values(h.tile(m0), {3, kNan}));
  CHECK(same_values(h.tile(m1), {kNan, 4}));
  CHECK(same_values(h.tile(n1), {kNan, 3}));
  CHECK(h.tile(is) == std::vector<double>{400});
  CHECK(h.tile(cm) == std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57});
}

TEST_CASE("matmul 2-D", "[tile_exec][matmul]") {
  Harness h;
  const std::int32_t a = h.input(DType::kFp16, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::int32_t b = h.input(DType::kFp16, {3, 2}, {7, 8, 9, 10, 11, 12});
  const std::int32_t c = h.local(DType::kFp32, {2, 2});
  h.emit(TileOpcode::kMatmul, c, a, b);
  const std::int32_t o = h.local(DType::kFp16, {2, 2});
  h.emit(TileOpcode::kCast, o, c);
  h.run();
  CHECK(h.tile(c) == std::vector<double>{58, 64, 139, 154});
  CHECK(h.tile(o) == std::vector<double>{58, 64, 139, 154});
}

TEST_CASE("batched matmul accumulates across K halves like one full K", "[tile_exec][matmul]") {
  // a: [2, 2, 4], b: [2, 4, 3]; values with fractions so rounding to fp32 would show.
  std::vector<double> av(16);
  std::vector<double> bv(24);
  for (int i = 0; i < 16; ++i) av[std::size_t(i)] = 0.25 * (i % 7) - 0.5;
  for (int i = 0; i < 24; ++i) bv[std::size_t(i)] = 0.125 * (i % 5) + 1;
  Harness full;
  const std::int32_t a = full.input(DType::kFp32, {2, 2, 4}, av);
  const std::int32_t b = full.input(DType::kFp32, {2, 4, 3}, bv);
  const std::int32_t c = full.local(DType::kFp32, {2, 2, 3});
  full.emit(TileOpcode::kMatmul, c, a, b);
  full.run();
  // By hand: c[b][m][n] = sum_k a[b][m][k] * b[b][k][n].
  std::vector<double> want;
  for (int bi = 0; bi < 2; ++bi) {
    for (int m = 0; m < 2; ++m) {
      for (int n = 0; n < 3; ++n) {
        double s = 0;
        for (int k = 0; k < 4; ++k) {
          s += av[std::size_t(bi * 8 + m * 4 + k)] * bv[std::size_t(bi * 12 + k * 3 + n)];
        }
        want.push_back(s);
      }
    }
  }
  CHECK(full.tile(c) == want);

  // The same with K split in two: loads of the [.., 0:2] / [.., 2:4] windows.
  Harness split;
  const std::uint32_t ab = split.buffer(DType::kFp32, av);
  const std::uint32_t bb = split.buffer(DType::kFp32, bv);
  const std::int32_t c2 = split.local(DType::kFp32, {2, 2, 3});
  for (int half = 0; half < 2; ++half) {
    const std::int32_t ah = split.local(DType::kFp32, {2, 2, 2});
    const std::int32_t bh = split.local(DType::kFp32, {2, 2, 3});
    TileInstr& la = split.load(ah, ab, 2 * half);
    la.region.stride[0] = 8;
    la.region.stride[1] = 4;
    TileInstr& lb = split.load(bh, bb, 6 * half);
    lb.region.stride[0] = 12;
    lb.region.stride[1] = 3;
    split.emit(TileOpcode::kMatmul, c2, ah, bh).accumulate = std::uint8_t(half);
  }
  split.run();
  CHECK(split.tile(c2) == want);
}

TEST_CASE("cast modes", "[tile_exec][cast]") {
  const std::vector<double> x{2.5, -2.5, 3.5, -0.5, 1.7};
  CHECK(cast(DType::kFp32, x, DType::kInt32, CastMode::kNone) ==
        std::vector<double>{2, -2, 3, 0, 1});
  CHECK(cast(DType::kFp32, x, DType::kInt32, CastMode::kTrunc) ==
        std::vector<double>{2, -2, 3, 0, 1});
  CHECK(cast(DType::kFp32, x, DType::kInt32, CastMode::kRint) ==
        std::vector<double>{2, -2, 4, 0, 2});
  CHECK(cast(DType::kFp32, x, DType::kInt32, CastMode::kRound) ==
        std::vector<double>{3, -3, 4, -1, 2});
  CHECK(cast(DType::kFp32, x, DType::kInt32, CastMode::kFloor) ==
        std::vector<double>{2, -3, 3, -1, 1});
  CHECK(cast(DType::kFp32, x, DType::kInt32, CastMode::kCeil) ==
        std::vector<double>{3, -2, 4, 0, 2});
  // Narrowing fp32 -> fp16 in each direction. 1 + 2^-11 + 2^-12 lies between 1 and
  // 1 + 2^-10; 1 + 2^-11 is the exact midpoint.
  const double up = 1.0009765625;
  const std::vector<double> y{1.000732421875, -1.000732421875, 1.00048828125, 65535};
  CHECK(cast(DType::kFp32, y, DType::kFp16, CastMode::kNone) ==
        std::vector<double>{up, -up, 1, kInf});
  CHECK(cast(DType::kFp32, y, DType::kFp16, CastMode::kFloor) ==
        std::vector<double>{1, -up, 1, 65504});
  CHECK(cast(DType::kFp32, y, DType::kFp16, CastMode::kCeil) ==
        std::vector<double>{up, -1, up, kInf});
  CHECK(cast(DType::kFp32, y, DType::kFp16, CastMode::kTrunc) ==
        std::vector<double>{1, -1, 1, 65504});
  CHECK(cast(DType::kFp32, y, DType::kFp16, CastMode::kRound) ==
        std::vector<double>{up, -up, up, kInf});
  // Round-to-odd: inexact results get an odd last bit (1 + 2^-10 is odd), exact stay.
  CHECK(cast(DType::kFp32, {1.00048828125, 1.5, 65535}, DType::kFp16, CastMode::kOdd) ==
        std::vector<double>{up, 1.5, 65504});
  // Saturation clamps to the finite range.
  CHECK(cast(DType::kFp32, {1e6, -1e6, kNan}, DType::kFp16, CastMode::kNone, true)[1] == -65504);
  CHECK(cast(DType::kFp32, {300, -300, kNan, 1e10}, DType::kInt8, CastMode::kNone, true) ==
        std::vector<double>{127, -128, 0, 127});
  CHECK(cast(DType::kFp32, {300, -300.5, kNan, 1e10}, DType::kInt8, CastMode::kNone) ==
        std::vector<double>{44, -44, 0, 0});
  CHECK(cast(DType::kInt32, {300, -129}, DType::kInt8, CastMode::kNone) ==
        std::vector<double>{44, 127});
  CHECK(cast(DType::kInt32, {16777217}, DType::kFp32, CastMode::kNone) ==
        std::vector<double>{16777216});
  CHECK(cast(DType::kFp32, {0, -2, 0.25}, DType::kBool, CastMode::kNone) ==
        std::vector<double>{0, 1, 1});
  // Same float dtype with a mode rounds to integral values (AscendC's float->float cast).
  CHECK(cast(DType::kFp32, x, DType::kFp32, CastMode::kFloor) ==
        std::vector<double>{2, -3, 3, -1, 1});
  CHECK(cast(DType::kFp32, x, DType::kFp32, CastMode::kNone) ==
        std::vector<double>{2.5, -2.5, 3.5, -0.5, double(1.7f)});
  CHECK_THROWS_WITH(cast(DType::kFp32, {1.5}, DType::kInt32, CastMode::kOdd),
                    Contains("tile instruction 1 (cast)") && Contains("cast_mode odd"));
}

TEST_CASE("a region outside its buffer is a ModelError naming the instruction",
          "[tile_exec][errors]") {
  Harness h;
  const std::uint32_t buf = h.buffer(DType::kFp32, std::vector<double>(64, 1));
  const std::int32_t t = h.local(DType::kFp32, {8, 8});
  h.load(t, buf);
  h.load(t, buf, 1);  // one element past the end
  CHECK_THROWS_WITH(h.run(),
                    Contains("tile instruction 1 (load)") && Contains("buffer 0 at element 1") &&
                        Contains("touches elements 1..64") && Contains("holds 64 fp32 elements"));
  Harness s;
  const std::uint32_t out = s.buffer(DType::kFp16, std::vector<double>(10, 0));
  const std::int32_t u = s.input(DType::kFp16, {4}, {1, 2, 3, 4});
  TileInstr& st = s.store(u, out, 3);
  st.region.stride[0] = -2;  // elements 3, 1, -1, -3
  CHECK_THROWS_WITH(s.run(),
                    Contains("tile instruction 1 (store)") && Contains("touches elements -3..3"));
  Harness w;
  const std::int32_t v = w.local(DType::kFp32, {2});
  TileInstr& bad = w.emit(TileOpcode::kLoad, v);
  bad.region.buffer = 3;
  bad.region.rank = 1;
  bad.region.shape[0] = 2;
  bad.region.stride[0] = 1;
  CHECK_THROWS_WITH(w.run(), Contains("tile instruction 0 (load)") &&
                                 Contains("names buffer 3 but the launch has 0 buffers"));
}

TEST_CASE("malformed programs are ModelErrors naming the instruction", "[tile_exec][errors]") {
  SECTION("mismatched element-wise shapes") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp32, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t b = h.input(DType::kFp32, {3, 2}, std::vector<double>(6, 1));
    const std::int32_t c = h.local(DType::kFp32, {2, 3});
    h.emit(TileOpcode::kAdd, c, a, b);
    CHECK_THROWS_WITH(h.run(), Contains("tile instruction 2 (add)") &&
                                   Contains("local 1 [3, 2] fp32") && Contains("differ in shape"));
  }
  SECTION("load larger than its dst") {
    Harness h;
    const std::uint32_t buf = h.buffer(DType::kFp32, std::vector<double>(8, 1));
    const std::int32_t t = h.local(DType::kFp32, {2, 3});
    h.load(t, buf).region.shape[1] = 4;
    CHECK_THROWS_WITH(h.run(), Contains("tile instruction 0 (load)") &&
                                   Contains("is not a prefix box of dst local 0 [2, 3] fp32"));
  }
  SECTION("partial load into a local nothing wrote") {
    Harness h;
    const std::uint32_t buf = h.buffer(DType::kFp32, std::vector<double>(6, 1));
    const std::int32_t t = h.local(DType::kFp32, {2, 3});
    h.load(t, buf).region.shape[1] = 2;
    CHECK_THROWS_WITH(h.run(),
                      Contains("tile instruction 0 (load)") && Contains("fills only part of dst"));
  }
  SECTION("store larger than its src") {
    Harness h;
    const std::uint32_t buf = h.buffer(DType::kFp32, std::vector<double>(16, 1));
    const std::int32_t t = h.input(DType::kFp32, {2, 2}, std::vector<double>(4, 1));
    h.store(t, buf).region.shape[0] = 3;
    CHECK_THROWS_WITH(h.run(),
                      Contains("tile instruction 1 (store)") && Contains("not a prefix box"));
  }
  SECTION("store with a stride-0 axis") {
    Harness h;
    const std::uint32_t buf = h.buffer(DType::kFp32, std::vector<double>(4, 1));
    const std::int32_t t = h.input(DType::kFp32, {2, 2}, std::vector<double>(4, 1));
    h.store(t, buf).region.stride[0] = 0;
    CHECK_THROWS_WITH(h.run(), Contains("writes one element several times"));
  }
  SECTION("read before write") {
    Harness h;
    const std::int32_t a = h.local(DType::kFp32, {2});
    const std::int32_t b = h.local(DType::kFp32, {2});
    h.emit(TileOpcode::kExp, b, a);
    CHECK_THROWS_WITH(h.run(), Contains("tile instruction 0 (exp)") &&
                                   Contains("before any instruction of the task wrote it"));
  }
  SECTION("local index out of range") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp32, {2}, {1, 2});
    h.emit(TileOpcode::kNeg, 5, a);
    CHECK_THROWS_WITH(h.run(), Contains("tile instruction 1 (neg)") &&
                                   Contains("dst names local 5 but the task has 1 locals"));
  }
  SECTION("bad permutation") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp32, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t b = h.local(DType::kFp32, {3, 2});
    TileInstr& p = h.emit(TileOpcode::kPermute, b, a);
    p.perm[0] = 1;
    p.perm[1] = 1;
    CHECK_THROWS_WITH(h.run(), Contains("tile instruction 1 (permute)") && Contains("perm [1, 1]"));
  }
  SECTION("reduction dst not in keepdim shape") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp32, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t b = h.local(DType::kFp32, {2});
    h.emit(TileOpcode::kReduceSum, b, a).reduce_mask = 2;
    CHECK_THROWS_WITH(
        h.run(), Contains("tile instruction 1 (reduce_sum)") && Contains("not the keepdim shape"));
  }
  SECTION("matmul shapes that do not multiply") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp16, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t b = h.input(DType::kFp16, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t c = h.local(DType::kFp32, {2, 3});
    h.emit(TileOpcode::kMatmul, c, a, b);
    CHECK_THROWS_WITH(
        h.run(), Contains("tile instruction 2 (matmul)") && Contains("shapes do not multiply"));
  }
  SECTION("matmul accumulating into an unwritten dst") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp16, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t b = h.input(DType::kFp16, {3, 2}, std::vector<double>(6, 1));
    const std::int32_t c = h.local(DType::kFp32, {2, 2});
    h.emit(TileOpcode::kMatmul, c, a, b).accumulate = 1;
    CHECK_THROWS_WITH(
        h.run(), Contains("tile instruction 2 (matmul)") && Contains("before any instruction"));
  }
  SECTION("copy between tiles of different sizes") {
    Harness h;
    const std::int32_t a = h.input(DType::kFp32, {2, 3}, std::vector<double>(6, 1));
    const std::int32_t b = h.local(DType::kFp32, {5});
    h.emit(TileOpcode::kCopy, b, a);
    CHECK_THROWS_WITH(h.run(),
                      Contains("tile instruction 1 (copy)") && Contains("differ in element count"));
  }
  SECTION("a local too large for any buffer") {
    Harness h;
    h.local(DType::kFp32, {1 << 14, 1 << 14});
    CHECK_THROWS_WITH(h.run(), Contains("tile program: local 0") &&
                                   Contains("more than any on-chip buffer holds"));
  }
}

TEST_CASE("instructions before a failing one have taken effect", "[tile_exec][errors]") {
  Harness h;
  const std::int32_t a = h.input(DType::kFp32, {2}, {5, 6});
  const std::uint32_t out = h.buffer(DType::kFp32, {0, 0});
  h.store(a, out);
  h.store(a, out, 1);  // out of bounds
  CHECK_THROWS_AS(h.run(), ModelError);
  CHECK(h.read(out) == std::vector<double>{5, 6});
}

TEST_CASE("scratch is reused across tasks of different shapes", "[tile_exec]") {
  ExecScratch scratch;
  for (int n : {4, 2, 8}) {
    Harness h;
    std::vector<double> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[std::size_t(i)] = i;
    const std::int32_t a = h.input(DType::kInt32, {n}, v);
    const std::int32_t s = h.local(DType::kInt32, {1});
    h.emit(TileOpcode::kReduceSum, s, a).reduce_mask = 1;
    const std::uint32_t out = h.buffer(DType::kInt32, {0});
    h.store(s, out);
    GlobalMemory mem;
    for (auto& b : h.bufs) {
      mem.base.push_back(b.bytes.data());
      mem.size_bytes.push_back(b.bytes.size());
      mem.dtype.push_back(b.dtype);
    }
    execute(h.prog, mem, scratch);
    CHECK(h.read(out) == std::vector<double>{double(n * (n - 1) / 2)});
  }
}

// ---- instructions added for PyPTO compatibility ------------------------------------------------

namespace {

// A one-operand instruction with parameter scalar[1] (lrelu's slope, round's decimals).
std::vector<double> unary_param(TileOpcode op, DType d, const std::vector<double>& a, double p) {
  Harness h;
  const auto n = std::int64_t(a.size());
  const std::int32_t x = h.input(d, {n}, a);
  const std::int32_t z = h.local(d, {n});
  h.emit(op, z, x).scalar[1] = p;
  h.run();
  return h.tile(z);
}

}  // namespace

TEST_CASE("rounding, sign and lrelu follow torch", "[tile_exec][elementwise][compat]") {
  CHECK(unary(TileOpcode::kCeil, DType::kFp32, {-1.5, 2.1, -0.2}) ==
        std::vector<double>{-1, 3, -0.0});
  CHECK(unary(TileOpcode::kTrunc, DType::kFp16, {-1.75, 2.5}) == std::vector<double>{-1, 2});
  // torch.round is half-even; with decimals it scales in fp32: round(2.675, 2) = 2.68 in fp32
  // (2.675f is 2.67499995, times 100 rounds to 267.5 in fp32, then to 268).
  CHECK(unary_param(TileOpcode::kRound, DType::kFp32, {0.5, 1.5, -2.5}, 0) ==
        std::vector<double>{0, 2, -2});
  CHECK(unary_param(TileOpcode::kRound, DType::kFp32, {2.675}, 2) ==
        std::vector<double>{double(268.0f / 100.0f)});
  CHECK(unary_param(TileOpcode::kRound, DType::kFp32, {1234.0, 15.0}, -1) ==
        std::vector<double>{1230, 20});
  CHECK(same_values(unary(TileOpcode::kSign, DType::kFp32, {-3, 0, -0.0, 7, kNan}),
                    {-1, 0, -0.0, 1, kNan}));
  CHECK(unary(TileOpcode::kSign, DType::kInt8, {-128, 0, 9}) == std::vector<double>{-1, 0, 1});
  // lrelu: the slope is an fp32 value, one product rounded to the dtype (fp16 -2 * 0.01f).
  CHECK(unary_param(TileOpcode::kLrelu, DType::kFp16, {-2, 3}, 0.01) ==
        std::vector<double>{fp16_value(fp16_bits(-2.0 * double(0.01f))), 3});
  CHECK(
      same_values(unary_param(TileOpcode::kLrelu, DType::kFp32, {kNan, -0.0}, 0.5), {kNan, -0.0}));
}

TEST_CASE("erf, erfc and the other transcendentals round once",
          "[tile_exec][elementwise][compat]") {
  CHECK(unary(TileOpcode::kErf, DType::kFp32, {0.5}) ==
        std::vector<double>{double(float(std::erf(0.5)))});
  CHECK(unary(TileOpcode::kErfc, DType::kBf16, {1.0}) ==
        std::vector<double>{bf16_value(bf16_bits_torch(float(std::erfc(1.0))))});
  CHECK(unary(TileOpcode::kSin, DType::kFp32, {0})[0] == 0);
  CHECK(unary(TileOpcode::kCos, DType::kFp16, {0})[0] == 1);
  CHECK(unary(TileOpcode::kLog1p, DType::kFp32, {1e-10})[0] == double(1e-10f));
  CHECK(unary(TileOpcode::kExpm1, DType::kFp32, {0})[0] == 0);
}

TEST_CASE("triu and tril keep one triangle of each matrix", "[tile_exec][compat]") {
  Harness h;
  std::vector<double> v(2 * 3 * 4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i + 1);
  const std::int32_t x = h.input(DType::kFp32, {2, 3, 4}, v);
  const std::int32_t u = h.local(DType::kFp32, {2, 3, 4});
  const std::int32_t l = h.local(DType::kFp32, {2, 3, 4});
  h.emit(TileOpcode::kTriu, u, x).scalar[1] = 1;
  h.emit(TileOpcode::kTril, l, x).scalar[1] = -1;
  h.run();
  CHECK(h.tile(u) == std::vector<double>{0, 2,  3,  4,  0, 0, 7,  8,  0, 0, 0, 12,
                                         0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24});
  CHECK(h.tile(l) == std::vector<double>{0, 0, 0, 0, 5,  0, 0, 0, 9,  10, 0, 0,
                                         0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0});
}

TEST_CASE("prod, argmax, argmin, cumsum and cumprod", "[tile_exec][reduce][compat]") {
  Harness h;
  const std::int32_t a = h.input(DType::kFp32, {2, 3}, {1, 5, 5, kNan, 2, 0});
  const std::int32_t am = h.local(DType::kInt32, {2, 1});
  const std::int32_t an = h.local(DType::kInt32, {1, 3});
  h.emit(TileOpcode::kArgMax, am, a).reduce_mask = 2;
  h.emit(TileOpcode::kArgMin, an, a).reduce_mask = 1;
  const std::int32_t b = h.input(DType::kInt8, {2, 3}, {2, 3, 4, -1, 100, 100});
  const std::int32_t p = h.local(DType::kInt32, {2, 1});
  h.emit(TileOpcode::kReduceProd, p, b).reduce_mask = 2;
  const std::int32_t pi8 = h.local(DType::kInt8, {2, 1});
  h.emit(TileOpcode::kReduceProd, pi8, b).reduce_mask = 2;
  const std::int32_t cs = h.local(DType::kInt8, {2, 3});
  h.emit(TileOpcode::kCumSum, cs, b).reduce_mask = 2;
  const std::int32_t f = h.input(DType::kFp16, {1, 4}, {2048, 1, 1, 0.5});
  const std::int32_t fs = h.local(DType::kFp16, {1, 4});
  const std::int32_t fp = h.local(DType::kFp16, {1, 4});
  h.emit(TileOpcode::kCumSum, fs, f).reduce_mask = 2;
  h.emit(TileOpcode::kCumProd, fp, f).reduce_mask = 2;
  h.run();
  CHECK(h.tile(am) == std::vector<double>{1, 0});  // first maximum; a NaN is the maximum
  CHECK(h.tile(an) == std::vector<double>{1, 1, 1});
  CHECK(h.tile(p) == std::vector<double>{24, -10000});
  CHECK(h.tile(pi8) == std::vector<double>{24, double(std::int8_t(-10000 & 0xFF))});
  CHECK(h.tile(cs) == std::vector<double>{2, 5, 9, -1, 99, double(std::int8_t(199 - 256))});
  // The running sum lives in fp32 (torch's CPU acc_type for fp16): 2049 is kept, then 2050.
  CHECK(h.tile(fs) == std::vector<double>{2048, 2048, 2050, 2050});
  CHECK(h.tile(fp) == std::vector<double>{2048, 2048, 2048, 1024});
}

TEST_CASE("scans and arg reductions need one axis", "[tile_exec][errors][compat]") {
  Harness h;
  const std::int32_t a = h.input(DType::kFp32, {2, 2}, {1, 2, 3, 4});
  const std::int32_t s = h.local(DType::kFp32, {2, 2});
  h.emit(TileOpcode::kCumSum, s, a).reduce_mask = 3;
  REQUIRE_THROWS_AS(h.run(), pypto::ModelError);
}

TEST_CASE("gather and scatter index along one axis of a window", "[tile_exec][compat]") {
  Harness h;
  // x = [[0 1 2 3], [10 11 12 13], [20 21 22 23]]
  const std::int32_t x =
      h.input(DType::kFp16, {3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  const std::int32_t i0 = h.input(DType::kInt64, {2, 3}, {2, 0, 1, 1, 1, 0});
  const std::int32_t g0 = h.local(DType::kFp16, {2, 3});
  h.emit(TileOpcode::kGather, g0, x, i0).reduce_mask = 1;
  const std::int32_t i1 = h.input(DType::kInt32, {3, 2}, {3, 0, 1, 1, 2, 0});
  const std::int32_t g1 = h.local(DType::kFp16, {3, 2});
  h.emit(TileOpcode::kGather, g1, x, i1).reduce_mask = 2;
  // scatter along axis 0 with a tensor source, and with reduce add of a scalar
  const std::int32_t s = h.input(DType::kFp16, {2, 3}, {-1, -2, -3, -4, -5, -6});
  const std::int32_t sc = h.local(DType::kFp16, {3, 4});
  h.emit(TileOpcode::kScatter, sc, x, i0, s).reduce_mask = 1;
  const std::int32_t sa = h.local(DType::kFp16, {3, 4});
  TileInstr& add = h.emit(TileOpcode::kScatter, sa, x, i0);
  add.reduce_mask = 1;
  add.accumulate = 1;
  add.scalar_operand = 4;
  add.scalar[2] = 0.5;
  h.run();
  CHECK(h.tile(g0) == std::vector<double>{20, 1, 12, 10, 11, 2});
  CHECK(h.tile(g1) == std::vector<double>{3, 0, 11, 11, 22, 20});
  CHECK(h.tile(sc) == std::vector<double>{0, -2, -6, 3, -4, -5, -3, 13, -1, 21, 22, 23});
  CHECK(h.tile(sa) == std::vector<double>{0, 1.5, 2.5, 3, 10.5, 11.5, 12.5, 13, 20.5, 21, 22, 23});
}

TEST_CASE("scatter_rows writes rows of a global tensor through an index", "[tile_exec][compat]") {
  Harness h;
  const std::uint32_t cache = h.buffer(DType::kBf16, std::vector<double>(12, 0));  // [6, 2]
  const std::int32_t rows = h.input(DType::kBf16, {2, 1, 2}, {1, 2, 3, 4});
  const std::int32_t idx = h.input(DType::kInt16, {2, 1}, {4, 1});
  const std::int64_t shape[2] = {6, 2};
  h.emit(TileOpcode::kScatterRows, -1, rows, idx).region = h.dense(cache, 0, shape, 2);
  h.run();
  CHECK(h.read(cache) == std::vector<double>{0, 0, 3, 4, 0, 0, 0, 0, 1, 2, 0, 0});
}

TEST_CASE("gather_elems reads elements of a global region through an index",
          "[tile_exec][compat]") {
  Harness h;
  const std::uint32_t src = h.buffer(DType::kFp32, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const std::int32_t idx = h.input(DType::kInt32, {2, 2}, {5, 0, 2, 3});
  const std::int32_t g = h.local(DType::kFp32, {2, 2});
  // The region [3, 2] over columns 1..2 of a [3, 4] buffer: elements 1, 2, 5, 6, 9, 10.
  const std::int64_t shape[2] = {3, 2};
  GlobalRegion r = h.dense(src, 1, shape, 2);
  r.stride[0] = 4;
  h.emit(TileOpcode::kGatherElems, g, -1, idx).region = r;
  h.run();
  CHECK(h.tile(g) == std::vector<double>{10, 1, 5, 6});
  Harness e;
  const std::uint32_t s2 = e.buffer(DType::kFp32, {0, 1, 2});
  const std::int32_t i2 = e.input(DType::kInt32, {1}, {3});
  const std::int32_t o2 = e.local(DType::kFp32, {1});
  const std::int64_t sh[1] = {3};
  e.emit(TileOpcode::kGatherElems, o2, -1, i2).region = e.dense(s2, 0, sh, 1);
  REQUIRE_THROWS_WITH(e.run(), Contains("load element index 3 is outside [0, 3)"));
}

TEST_CASE("indexed ops reject an index outside the axis", "[tile_exec][errors][compat]") {
  Harness h;
  const std::int32_t x = h.input(DType::kFp32, {2, 2}, {1, 2, 3, 4});
  const std::int32_t i = h.input(DType::kInt32, {2, 2}, {0, 2, 1, 0});
  const std::int32_t g = h.local(DType::kFp32, {2, 2});
  h.emit(TileOpcode::kGather, g, x, i).reduce_mask = 2;
  REQUIRE_THROWS_WITH(h.run(), Contains("outside [0, 2)"));
}

TEST_CASE("tf32 keeps 10 mantissa bits", "[tile_exec][compat]") {
  const double one_plus = 1.0 + std::ldexp(1.0, -11);  // half an ulp of tf32 at 1: a tie
  Harness h;
  const std::int32_t x = h.input(
      DType::kFp32, {1, 3}, {one_plus, 1.0 + 3 * std::ldexp(1.0, -11), 1.0 + std::ldexp(1.0, -12)});
  std::int32_t out[3];
  for (int mode = 0; mode < 3; ++mode) {
    out[mode] = h.local(DType::kFp32, {1, 3});
    TileInstr& t = h.emit(TileOpcode::kTf32, out[mode], x);
    t.scalar[1] = mode;
  }
  h.run();
  const double u = std::ldexp(1.0, -10);
  CHECK(h.tile(out[0]) == std::vector<double>{1, 1 + u, 1});
  CHECK(h.tile(out[1]) == std::vector<double>{1, 1 + 2 * u, 1});
  CHECK(h.tile(out[2]) == std::vector<double>{1 + u, 1 + 2 * u, 1});
}

TEST_CASE("integer ops: gcd, floor/ceil division, bitwise, shifts", "[tile_exec][compat]") {
  Harness h;
  const std::int32_t a = h.input(DType::kInt16, {1, 4}, {-12, 7, 0, -7});
  const std::int32_t b = h.input(DType::kInt16, {1, 4}, {18, -2, 0, 2});
  const std::int32_t n = h.input(DType::kInt16, {1, 4}, {1, 15, 16, 3});
  std::int32_t out[8];
  const TileOpcode ops[8] = {TileOpcode::kGcd,    TileOpcode::kBitAnd,    TileOpcode::kBitOr,
                             TileOpcode::kBitXor, TileOpcode::kShiftLeft, TileOpcode::kShiftRight,
                             TileOpcode::kBitNot, TileOpcode::kGcd};
  for (int i = 0; i < 8; ++i) {
    out[i] = h.local(DType::kInt16, {1, 4});
    const bool shift = ops[i] == TileOpcode::kShiftLeft || ops[i] == TileOpcode::kShiftRight;
    TileInstr& in = h.emit(ops[i], out[i], a, shift ? n : b);
    if (i == 7) {  // gcd with a scalar
      in.scalar_operand = 2;
      in.scalar[1] = 4;
    }
  }
  h.run();
  CHECK(h.tile(out[0]) == std::vector<double>{6, 1, 0, 1});
  CHECK(h.tile(out[1]) == std::vector<double>{-12 & 18, 7 & -2, 0, -7 & 2});
  CHECK(h.tile(out[2]) == std::vector<double>{-12 | 18, 7 | -2, 0, -7 | 2});
  CHECK(h.tile(out[3]) == std::vector<double>{-12 ^ 18, 7 ^ -2, 0, -7 ^ 2});
  // 7 << 15 wraps to int16 (-32768); a count of 16 is outside [0, 16): 0, and the sign fill.
  CHECK(h.tile(out[4]) == std::vector<double>{-24, -32768, 0, -56});
  CHECK(h.tile(out[5]) == std::vector<double>{-6, 0, 0, -1});
  CHECK(h.tile(out[6]) == std::vector<double>{11, -8, -1, 6});
  CHECK(h.tile(out[7]) == std::vector<double>{4, 1, 4, 1});

  Harness d;
  const std::int32_t p = d.input(DType::kInt32, {1, 4}, {7, -7, 7, -7});
  const std::int32_t q = d.input(DType::kInt32, {1, 4}, {2, 2, -2, -2});
  const std::int32_t fl = d.local(DType::kInt32, {1, 4});
  const std::int32_t ce = d.local(DType::kInt32, {1, 4});
  const std::int32_t fm = d.local(DType::kInt32, {1, 4});
  d.emit(TileOpcode::kFloorDiv, fl, p, q);
  d.emit(TileOpcode::kCeilDiv, ce, p, q);
  d.emit(TileOpcode::kFmod, fm, p, q);
  d.run();
  CHECK(d.tile(fl) == std::vector<double>{3, -4, -4, 3});
  CHECK(d.tile(ce) == std::vector<double>{4, -3, -3, 4});
  CHECK(d.tile(fm) == std::vector<double>{1, -1, 1, -1});

  Harness z;
  const std::int32_t u = z.input(DType::kInt32, {1, 2}, {1, 2});
  const std::int32_t v = z.input(DType::kInt32, {1, 2}, {1, 0});
  z.emit(TileOpcode::kFloorDiv, z.local(DType::kInt32, {1, 2}), u, v);
  REQUIRE_THROWS_WITH(z.run(), Contains("division by zero"));
  Harness f;
  const std::int32_t x = f.input(DType::kFp32, {1, 2}, {1, 2});
  f.emit(TileOpcode::kBitAnd, f.local(DType::kFp32, {1, 2}), x, x);
  REQUIRE_THROWS_WITH(f.run(), Contains("needs integer operands"));
}

TEST_CASE("float tests give DT_BOOL: copysign, fmod and iota", "[tile_exec][compat]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Harness h;
  const std::int32_t x = h.input(DType::kFp16, {1, 5}, {1.5, -0.0, inf, -inf, nan});
  std::int32_t t[4];
  const TileOpcode tests[4] = {TileOpcode::kIsFinite, TileOpcode::kIsNan, TileOpcode::kIsInf,
                               TileOpcode::kSignBit};
  for (int i = 0; i < 4; ++i) {
    t[i] = h.local(DType::kBool, {1, 5});
    h.emit(tests[i], t[i], x);
  }
  const std::int32_t y = h.input(DType::kFp16, {1, 5}, {-1, 1, -1, 1, -1});
  const std::int32_t cs = h.local(DType::kFp16, {1, 5});
  h.emit(TileOpcode::kCopysign, cs, x, y);
  const std::int32_t io = h.local(DType::kFp16, {2, 3});
  TileInstr& iota = h.emit(TileOpcode::kIota, io);
  iota.scalar[0] = 0.5;
  iota.scalar[1] = 0.25;
  iota.scalar[2] = 4;  // the tile starts at element 4 of the range
  h.run();
  CHECK(h.tile(t[0]) == std::vector<double>{1, 1, 0, 0, 0});
  CHECK(h.tile(t[1]) == std::vector<double>{0, 0, 0, 0, 1});
  CHECK(h.tile(t[2]) == std::vector<double>{0, 0, 1, 1, 0});
  CHECK(h.tile(t[3]) == std::vector<double>{0, 1, 0, 1, 0});
  const std::vector<double> c = h.tile(cs);
  CHECK(c[0] == -1.5);
  CHECK((c[1] == 0 && !std::signbit(c[1])));
  CHECK(c[2] == -inf);
  CHECK(c[3] == inf);
  CHECK(std::isnan(c[4]));
  CHECK(h.tile(io) == std::vector<double>{1.5, 1.75, 2, 1.5, 1.75, 2});
}

TEST_CASE("sort keeps k entries, stable, NaN largest", "[tile_exec][compat]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Harness h;
  // Two lines along axis 1 of a [2, 5] tile.
  const std::int32_t x = h.input(DType::kFp32, {2, 5}, {3, 1, nan, 1, 2, 0, -1, 5, -1, 4});
  const std::int32_t v = h.local(DType::kFp32, {2, 3});
  const std::int32_t i = h.local(DType::kInt32, {2, 3});
  const std::int32_t a = h.local(DType::kInt32, {2, 5});
  TileInstr& tv = h.emit(TileOpcode::kSortValues, v, x);
  tv.reduce_mask = 2;
  tv.scalar[1] = 1;  // descending
  TileInstr& ti = h.emit(TileOpcode::kSortIndices, i, x);
  ti.reduce_mask = 2;
  ti.scalar[1] = 1;
  h.emit(TileOpcode::kSortIndices, a, x).reduce_mask = 2;  // ascending, all 5
  // Along axis 0 (columns of two).
  const std::int32_t c = h.local(DType::kInt32, {1, 5});
  h.emit(TileOpcode::kSortIndices, c, x).reduce_mask = 1;
  h.run();
  const std::vector<double> vals = h.tile(v);
  CHECK(std::isnan(vals[0]));
  CHECK(std::vector<double>(vals.begin() + 1, vals.end()) == std::vector<double>{3, 2, 5, 4, 0});
  CHECK(h.tile(i) == std::vector<double>{2, 0, 4, 2, 4, 0});
  CHECK(h.tile(a) == std::vector<double>{1, 3, 4, 0, 2, 1, 3, 0, 4, 2});
  CHECK(h.tile(c) == std::vector<double>{1, 1, 1, 1, 0});  // NaN after 5

  Harness e;
  const std::int32_t y = e.input(DType::kFp32, {1, 3}, {1, 2, 3});
  e.emit(TileOpcode::kSortValues, e.local(DType::kFp32, {1, 4}), y).reduce_mask = 2;
  REQUIRE_THROWS_WITH(e.run(), Contains("entries along the sorted axis"));
}

// ---- fp32 locals held as floats ----------------------------------------------------------------

std::uint32_t f32_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float f32_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The fp32 bits element i of fp32 buffer `buf` holds.
std::uint32_t stored_bits(const Harness& h, std::uint32_t buf, std::size_t i) {
  std::uint32_t u;
  std::memcpy(&u, h.bufs[buf].bytes.data() + i * 4, 4);
  return u;
}

TEST_CASE("fp32 + - * / held as floats store the bytes the double path stores",
          "[tile_exec][float]") {
  // Random bit patterns (denormals, huge values that overflow, signed zeros, infinities), no
  // NaN operand: every result must be the double op's result rounded to float.
  std::mt19937 rng(7);
  std::vector<double> a, b;
  while (a.size() < 4096) {
    const float x = f32_of(std::uint32_t(rng()));
    const float y = f32_of(std::uint32_t(rng()));
    if (x != x || y != y) continue;
    a.push_back(x);
    b.push_back(y);
  }
  a.insert(a.begin(), {0.0, -0.0, 0x1p-149, 0x1.fffffep127, -0x1.fffffep127, 1.0, 0.1f});
  b.insert(b.begin(), {-0.0, -0.0, 0x1p-149, 0x1.fffffep127, 0x1.fffffep127, 3.0, 0.3f});
  // 4103 elements take the plain loops, 4096 (a multiple of 8) the eight-wide ones.
  const auto len = GENERATE(std::size_t(4103), std::size_t(4096));
  a.resize(len);
  b.resize(len);
  const auto n = std::int64_t(a.size());
  const double s = 0.1f;  // a scalar operand (the compiler rounds it to the partner's dtype)
  for (const TileOpcode op :
       {TileOpcode::kAdd, TileOpcode::kSub, TileOpcode::kMul, TileOpcode::kDiv}) {
    const auto f = [op](double u, double v) {
      switch (op) {
        case TileOpcode::kAdd: return float(u + v);
        case TileOpcode::kSub: return float(u - v);
        case TileOpcode::kMul: return float(u * v);
        default: return float(u / v);
      }
    };
    Harness h;
    const std::int32_t x = h.input(DType::kFp32, {n}, a);
    const std::int32_t y = h.input(DType::kFp32, {n}, b);
    const std::int32_t z = h.local(DType::kFp32, {n});
    const std::int32_t zs = h.local(DType::kFp32, {n});
    const std::int32_t sz = h.local(DType::kFp32, {n});
    h.emit(op, z, x, y);
    TileInstr& ts = h.emit(op, zs, x);
    ts.scalar_operand = 2;
    ts.scalar[1] = s;
    TileInstr& st = h.emit(op, sz, -1, y);
    st.scalar_operand = 1;
    st.scalar[0] = s;
    const std::uint32_t out = h.buffer(DType::kFp32, std::vector<double>(a.size()));
    const std::uint32_t out_s = h.buffer(DType::kFp32, std::vector<double>(a.size()));
    const std::uint32_t out_r = h.buffer(DType::kFp32, std::vector<double>(a.size()));
    h.store(z, out);
    h.store(zs, out_s);
    h.store(sz, out_r);
    h.run();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      wrong += stored_bits(h, out, i) != f32_bits(f(a[i], b[i]));
      wrong += stored_bits(h, out_s, i) != f32_bits(f(a[i], s));
      wrong += stored_bits(h, out_r, i) != f32_bits(f(s, b[i]));
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("a NaN leaves the float kernels to the double path", "[tile_exec][float]") {
  // A signalling NaN comes back quiet (a double holds it so), as it did before floats.
  Harness h;
  const std::uint32_t in = h.buffer(DType::kFp32, {1, 2, 3, 4});
  const std::uint32_t snan = 0x7f800001u;
  std::memcpy(h.bufs[in].bytes.data() + 4, &snan, 4);
  const std::int32_t x = h.local(DType::kFp32, {4});
  h.load(x, in);
  const std::uint32_t out = h.buffer(DType::kFp32, {0, 0, 0, 0});
  h.store(x, out);
  // In place, with a NaN result (inf - inf): the sources must be intact for the redo.
  const double inf = std::numeric_limits<double>::infinity();
  const std::int32_t y = h.input(DType::kFp32, {4}, {inf, 2, -3, 0.5});
  const std::int32_t w = h.input(DType::kFp32, {4}, {inf, 0.25, 1, 0.5});
  h.emit(TileOpcode::kSub, y, y, w);
  const std::uint32_t out2 = h.buffer(DType::kFp32, {0, 0, 0, 0});
  h.store(y, out2);
  // A NaN operand: the sum keeps its payload, quiet.
  const std::int32_t sum = h.local(DType::kFp32, {4});
  h.emit(TileOpcode::kAdd, sum, x, w);
  const std::uint32_t out3 = h.buffer(DType::kFp32, {0, 0, 0, 0});
  h.store(sum, out3);
  h.run();
  CHECK(stored_bits(h, out3, 1) == 0x7fc00001u);
  CHECK(h.read(out3)[2] == 4);
  CHECK(stored_bits(h, out, 1) == 0x7fc00001u);
  CHECK(h.read(out)[3] == 4);
  CHECK((h.scratch.held[std::size_t(x)] & ExecScratch::kHeldDoubles));  // stored through doubles
  const std::vector<double> r = h.read(out2);
  CHECK(std::isnan(r[0]));
  CHECK(std::vector<double>(r.begin() + 1, r.end()) == std::vector<double>{1.75, -4, 0});
  CHECK(h.scratch.held[std::size_t(y)] == ExecScratch::kHeldDoubles);
}

TEST_CASE("a NaN in any lane of the eight-wide float kernel leaves it for the double path",
          "[tile_exec][float]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t lane = 0; lane < 16; ++lane) {
    std::vector<double> u(16, 1.0), v(16, 2.0);
    u[lane] = v[lane] = inf;  // inf - inf
    Harness h;
    const std::int32_t x = h.input(DType::kFp32, {2, 8}, u);
    const std::int32_t y = h.input(DType::kFp32, {2, 8}, v);
    const std::int32_t z = h.local(DType::kFp32, {2, 8});
    h.emit(TileOpcode::kSub, z, x, y);
    const std::uint32_t out = h.buffer(DType::kFp32, std::vector<double>(16));
    h.store(z, out);
    h.run();
    INFO("lane " << lane);
    CHECK(h.scratch.held[std::size_t(z)] == ExecScratch::kHeldDoubles);
    const std::vector<double> r = h.read(out);
    for (std::size_t i = 0; i < 16; ++i) CHECK((i == lane ? std::isnan(r[i]) : r[i] == -1.0));
  }
}

TEST_CASE("a local held as floats reads right in every other op", "[tile_exec][float]") {
  Harness h;
  const std::int32_t x = h.input(DType::kFp32, {2, 2}, {1, 2, 3, 4});
  const std::int32_t y = h.input(DType::kFp32, {2, 2}, {0.5, 0.25, 0.125, 1});
  const std::int32_t z = h.local(DType::kFp32, {2, 2});
  h.emit(TileOpcode::kMul, z, x, y);  // held as floats
  const std::int32_t e = h.local(DType::kFp32, {2, 2});
  h.emit(TileOpcode::kExp, e, z);  // reads z's doubles
  const std::int32_t half = h.local(DType::kFp16, {2, 2});
  h.emit(TileOpcode::kCast, half, z);
  h.emit(TileOpcode::kAdd, z, z, x);  // floats again, in place
  h.run();
  CHECK(h.tile(e) == std::vector<double>{double(float(std::exp(0.5))), double(float(std::exp(0.5))),
                                         double(float(std::exp(0.375))),
                                         double(float(std::exp(4.0)))});
  CHECK(h.tile(half) == std::vector<double>{0.5, 0.5, 0.375, 4});
  CHECK(h.tile(z) == std::vector<double>{1.5, 2.5, 3.375, 8});
  CHECK(h.scratch.held[std::size_t(z)] == ExecScratch::kHeldFloats);
}

TEST_CASE("a load left in place reads the values it had before a store over them",
          "[tile_exec][float]") {
  // The store writes the bytes x was loaded from (the same buffer, then an alias of it).
  for (const bool alias : {false, true}) {
    Harness h;
    const std::uint32_t xb = h.buffer(DType::kFp32, {1, 2, 3, 4});
    const std::uint32_t xb_alias = h.buffer(DType::kFp32, {0, 0, 0, 0});
    const std::int32_t x = h.local(DType::kFp32, {2, 2});
    h.load(x, xb);
    const std::int32_t y = h.input(DType::kFp32, {2, 2}, {10, 20, 30, 40});
    h.store(y, alias ? xb_alias : xb);
    const std::int32_t z = h.local(DType::kFp32, {2, 2});
    h.emit(TileOpcode::kAdd, z, x, y);
    const std::uint32_t out = h.buffer(DType::kFp32, {0, 0, 0, 0});
    h.store(z, out);
    GlobalMemory mem;
    for (auto& b : h.bufs) {
      mem.base.push_back(b.bytes.data());
      mem.size_bytes.push_back(b.bytes.size());
      mem.dtype.push_back(b.dtype);
    }
    mem.base[xb_alias] = mem.base[xb];
    execute(h.prog, mem, h.scratch);
    INFO("alias " << alias);
    CHECK(h.read(out) == std::vector<double>{11, 22, 33, 44});
    CHECK(h.read(xb) == std::vector<double>{10, 20, 30, 40});
  }
}
