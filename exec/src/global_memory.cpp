// SPDX-License-Identifier: Apache-2.0
// The tile executor's access to global memory (numeric.h): each dtype's stored elements
// decoded exactly and encoded from values already in its value set, and the box walks of
// load and store, one loop instantiation per dtype.
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "numeric.h"

namespace pypto::exec::detail {

namespace {

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
struct Elem<DType::kUInt8> : IntElem<std::uint8_t> {};
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
    case DType::kUInt8: fn(std::integral_constant<DType, DType::kUInt8>{}); return;
  }
}

// Walks the innermost rows of region r's box, which has the same indices in a dense tile of
// padded shape `tn`: row(q, t) gets the row's element offset q in the buffer and t in the tile
// (the innermost loop by increments).
template <class Row>
void for_each_box_row(const GlobalRegion& r, const PaddedDims& tn, Row&& row) {
  const PaddedDims n = pad_shape(r.shape, r.rank);
  const PaddedDims st = pad_stride(r.stride, r.rank);
  // Row-major element strides of the tile's padded axes.
  std::int64_t ts[kMaxRank];
  ts[kColAxis] = 1;
  for (int k = kColAxis - 1; k >= 0; --k) ts[k] = ts[k + 1] * tn.n[k + 1];
  const std::int64_t rows = n.n[kRowAxis], row_st = st.n[kRowAxis], row_ts = ts[kRowAxis];
  for_each_outer_index(n, kRowAxis, [&](const std::int64_t* i) {
    std::int64_t q = r.offset_elems, t = 0;
    for (int k = 0; k < kRowAxis; ++k) {
      q += i[k] * st.n[k];
      t += i[k] * ts[k];
    }
    for (std::int64_t i2 = 0; i2 < rows; ++i2, q += row_st, t += row_ts) row(q, t);
  });
}

// Length and element stride of the innermost rows of region r's box.
std::int64_t row_length(const GlobalRegion& r) { return pad_shape(r.shape, r.rank).n[kColAxis]; }
std::int64_t row_stride(const GlobalRegion& r) { return pad_stride(r.stride, r.rank).n[kColAxis]; }

// Loads the region's box into the same-index prefix of a dst tile of padded shape `dn`.
template <DType D>
void load_box(double* dst, const PaddedDims& dn, const std::uint8_t* buf, const GlobalRegion& r) {
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
void store_box(std::uint8_t* buf, const GlobalRegion& r, const double* src, const PaddedDims& sn,
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

}  // namespace

void load_region(double* dst, const PaddedDims& dn, const std::uint8_t* buf,
                 const GlobalRegion& r) {
  with_dtype(r.dtype, [&](auto tag) { load_box<decltype(tag)::value>(dst, dn, buf, r); });
}

void store_region(std::uint8_t* buf, const GlobalRegion& r, const double* src, DType from,
                  const PaddedDims& sn, std::vector<double>& row) {
  with_dtype(r.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    if (from == D) {
      store_box<D, false>(buf, r, src, sn, row, [](double v) { return v; });
    } else {
      const IntConv ic = int_conv_from(from);
      store_box<D, true>(buf, r, src, sn, row, [ic](double v) { return round_value(v, D, ic); });
    }
  });
}

bool float_kernels_exact() {
#if defined(__SSE2__)
  // Rounding control (bits 13-14) nearest, FTZ (bit 15) and DAZ (bit 6) clear.
  return (_mm_getcsr() & 0xE040u) == 0;
#else
  return false;
#endif
}

void load_region_f32(float* dst, const PaddedDims& dn, const std::uint8_t* buf,
                     const GlobalRegion& r) {
  const std::int64_t n3 = row_length(r);
  const std::int64_t s3 = row_stride(r);
  const auto bytes = std::size_t(n3) * 4;
  if (s3 == 1) {
    for_each_box_row(
        r, dn, [&](std::int64_t q, std::int64_t t) { std::memcpy(dst + t, buf + q * 4, bytes); });
    return;
  }
  for_each_box_row(r, dn, [&](std::int64_t q, std::int64_t t) {
    for (std::int64_t j = 0; j < n3; ++j) std::memcpy(dst + t + j, buf + (q + j * s3) * 4, 4);
  });
}

void store_region_f32(std::uint8_t* buf, const GlobalRegion& r, const float* src,
                      const PaddedDims& sn) {
  const std::int64_t n3 = row_length(r);
  const std::int64_t s3 = row_stride(r);
  const auto bytes = std::size_t(n3) * 4;
  if (s3 == 1) {
    for_each_box_row(
        r, sn, [&](std::int64_t q, std::int64_t t) { std::memcpy(buf + q * 4, src + t, bytes); });
    return;
  }
  for_each_box_row(r, sn, [&](std::int64_t q, std::int64_t t) {
    for (std::int64_t j = 0; j < n3; ++j) std::memcpy(buf + (q + j * s3) * 4, src + t + j, 4);
  });
}

bool any_nan_f32(const float* p, std::int64_t n) {
  int nan = 0;  // an int reduction, so the loop vectorizes
  for (std::int64_t i = 0; i < n; ++i) nan |= p[i] != p[i];
  return nan != 0;
}

double load_elem(const std::uint8_t* buf, DType from, std::int64_t off) {
  double v = 0;
  with_dtype(from, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    v = Elem<D>::get(buf + off * std::int64_t(sizeof(typename Elem<D>::S)));
  });
  return v;
}

void store_row(std::uint8_t* buf, DType to, std::int64_t off, std::int64_t stride,
               const double* src, std::int64_t n, DType from) {
  const IntConv ic = int_conv_from(from);
  with_dtype(to, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    using E = Elem<D>;
    constexpr std::int64_t kEb = sizeof(typename E::S);
    for (std::int64_t j = 0; j < n; ++j) {
      const double v = from == D ? src[j] : round_value(src[j], D, ic);
      E::put(buf + (off + j * stride) * kEb, v);
    }
  });
}

}  // namespace pypto::exec::detail
