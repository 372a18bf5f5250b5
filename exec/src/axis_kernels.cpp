// SPDX-License-Identifier: Apache-2.0
// The tile executor's kernels along axes (numeric.h): iota, permute, triangles, scans,
// sorts, arg reductions, reductions and matmul, each in the order of operations (and the
// accumulator types) of torch's CPU kernels, which define the numbers.
#include <algorithm>
#include <limits>

#include "numeric.h"

namespace pypto::exec::detail {

namespace {

// The value set a running accumulator of src dtype `d` lives in (torch CPU's acc_type:
// double for fp32, fp32 for fp16/bf16, int64 for integers).
double acc_round(double v, DType d) {
  return d == DType::kFp16 || d == DType::kBf16 ? double(float(v)) : v;
}

// y[m x n] += x[m x k] @ w[k x n], row-major. Every y[i][j] adds its k products in
// ascending k, one rounding each (the order that defines the numbers); blocks of 4 x 4
// outputs are kept in registers across k, so the loop is bound by the arithmetic rather
// than by storing y once per product. The rows and columns outside whole blocks take the
// same sums one output row at a time.
void matmul_accumulate(const double* x, const double* w, double* y, std::int64_t m, std::int64_t kk,
                       std::int64_t nn) {
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

}  // namespace

void iota_values(double* y, std::int64_t n, std::int64_t last, double start, double step,
                 double first, DType dt) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = start + (first + double(i % last)) * step;
  const bool integral = std::trunc(start) == start && std::trunc(step) == step;
  round_inplace(y, n, dt, integral ? IntConv::kWrap : IntConv::kFromFloat);
}

void permute_values(double* y, const PaddedDims& dn, DType dt, const double* x,
                    const PaddedDims& sn, DType from, int rank, const std::uint8_t* perm) {
  // Row-major strides of src, then the stride of src each padded dst axis walks.
  std::int64_t sstride[kMaxRank];
  sstride[kColAxis] = 1;
  for (int k = kColAxis - 1; k >= 0; --k) sstride[k] = sstride[k + 1] * sn.n[k + 1];
  const int lead = kMaxRank - rank;
  std::int64_t walk[kMaxRank];
  for (int k = 0; k < kMaxRank; ++k) walk[k] = k < lead ? 0 : sstride[lead + perm[k - lead]];
  double* out = y;
  const std::int64_t cols = dn.n[kColAxis], col_walk = walk[kColAxis];
  for_each_outer_index(dn, kColAxis, [&](const std::int64_t* i) {
    const double* q = x;
    for (int k = 0; k < kColAxis; ++k) q += i[k] * walk[k];
    for (std::int64_t j = 0; j < cols; ++j) *out++ = q[j * col_walk];
  });
  if (dt != from) round_inplace(y, out - y, dt, int_conv_from(from));
}

void triangle_values(double* y, DType dt, const double* x, DType from, std::int64_t n,
                     std::int64_t rows, std::int64_t cols, std::int64_t diag, bool upper) {
  const std::int64_t mats = rows * cols == 0 ? 0 : n / (rows * cols);
  for (std::int64_t m = 0; m < mats; ++m) {
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t base = (m * rows + i) * cols;
      for (std::int64_t j = 0; j < cols; ++j) {
        const bool keep = upper ? j - i >= diag : j - i <= diag;
        y[base + j] = keep ? x[base + j] : 0.0;
      }
    }
  }
  if (dt != from) round_inplace(y, n, dt, int_conv_from(from));
}

void scan_values(double* y, DType dt, const double* x, DType from, const AxisWalk& w,
                 std::int64_t n, bool sum) {
  const bool ints = !is_float(from);
  for (std::int64_t o = 0; o < w.outer; ++o) {
    for (std::int64_t c = 0; c < w.inner; ++c) {
      const std::int64_t base = o * w.n * w.inner + c;
      double acc = sum ? 0.0 : 1.0;
      std::int64_t iacc = sum ? 0 : 1;
      for (std::int64_t i = 0; i < w.n; ++i) {
        const std::int64_t q = base + i * w.inner;
        if (ints) {
          iacc = sum ? wrap_add(iacc, as_i64(x[q])) : wrap_mul(iacc, as_i64(x[q]));
          y[q] = double(iacc);
        } else {
          acc = acc_round(sum ? acc + x[q] : acc * x[q], from);
          y[q] = acc;
        }
      }
    }
  }
  round_inplace(y, n, dt, ints ? IntConv::kWrap : IntConv::kFromFloat);
}

void sort_values(double* y, DType dt, std::int64_t y_n, const double* x, const AxisWalk& w,
                 const AxisWalk& wd, bool indices, bool descending) {
  std::vector<std::int64_t> order(std::size_t(w.n));
  for (std::int64_t o = 0; o < w.outer; ++o) {
    for (std::int64_t c = 0; c < w.inner; ++c) {
      const double* line = x + o * w.n * w.inner + c;
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
      double* out = y + o * wd.n * w.inner + c;
      for (std::int64_t i = 0; i < wd.n; ++i) {
        const std::int64_t j = order[std::size_t(i)];
        out[i * step] = indices ? double(j) : line[j * step];
      }
    }
  }
  round_inplace(y, y_n, dt, IntConv::kWrap);
}

void arg_reduce_values(double* y, DType dt, std::int64_t y_n, const double* x, const AxisWalk& w,
                       bool is_max) {
  for (std::int64_t o = 0; o < w.outer; ++o) {
    for (std::int64_t c = 0; c < w.inner; ++c) {
      const std::int64_t base = o * w.n * w.inner + c;
      std::int64_t best = 0;
      double bv = x[base];
      for (std::int64_t i = 1; i < w.n && !std::isnan(bv); ++i) {
        const double v = x[base + i * w.inner];
        if (std::isnan(v) || (is_max ? v > bv : v < bv)) {
          best = i;
          bv = v;
        }
      }
      y[o * w.inner + c] = double(best);
    }
  }
  round_inplace(y, y_n, dt, IntConv::kWrap);
}

bool reduce_values(TileOpcode op, double* y, std::int64_t y_n, DType dt, const PaddedDims& dn,
                   const double* x, DType from, const PaddedDims& sn,
                   std::vector<std::int64_t>& int_acc) {
  const bool is_prod = op == TileOpcode::kReduceProd;
  const bool is_sum = op == TileOpcode::kReduceSum || is_prod;
  // Each padded src axis maps to a dst stride; reduced axes map to 0.
  std::int64_t dst_stride[kMaxRank];
  std::int64_t acc = 1;
  for (int k = kMaxRank - 1; k >= 0; --k) {
    dst_stride[k] = dn.n[k] == sn.n[k] && sn.n[k] != 1 ? acc : 0;
    acc *= dn.n[k];
  }
  const bool integer_sum = is_sum && !is_float(from);
  const DType sdt = from;
  const auto visit = [&](auto init, auto combine, auto* out) {
    std::fill(out, out + y_n, init);
    const double* xp = x;
    const std::int64_t cols = sn.n[kColAxis];
    for_each_outer_index(sn, kColAxis, [&](const std::int64_t* i) {
      auto* o = out;
      for (int k = 0; k < kColAxis; ++k) o += i[k] * dst_stride[k];
      if (dst_stride[kColAxis] == 0) {
        auto a = *o;
        for (std::int64_t j = 0; j < cols; ++j) a = combine(a, xp[j]);
        *o = a;
      } else {
        for (std::int64_t j = 0; j < cols; ++j) o[j] = combine(o[j], xp[j]);
      }
      xp += cols;
    });
  };
  switch (op) {
    case TileOpcode::kReduceSum:
      if (integer_sum) {
        // Exact, wrapping like torch's integer sum; the int64 sums live in dst's doubles.
        std::vector<std::int64_t>& tmp = int_acc;
        tmp.resize(std::size_t(y_n));
        visit(
            std::int64_t(0), [](std::int64_t u, double v) { return wrap_add(u, as_i64(v)); },
            tmp.data());
        for (std::int64_t i = 0; i < y_n; ++i) y[i] = double(tmp[std::size_t(i)]);
      } else {
        visit(
            0.0, [](double u, double v) { return u + v; }, y);
      }
      break;
    case TileOpcode::kReduceProd:
      // torch's prod: integers exact and wrapping in int64; fp16/bf16 accumulate in fp32,
      // fp32 in double (CPU acc_type), in row-major order of the reduced elements.
      if (integer_sum) {
        std::vector<std::int64_t>& tmp = int_acc;
        tmp.resize(std::size_t(y_n));
        visit(
            std::int64_t(1), [](std::int64_t u, double v) { return wrap_mul(u, as_i64(v)); },
            tmp.data());
        for (std::int64_t i = 0; i < y_n; ++i) y[i] = double(tmp[std::size_t(i)]);
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
          std::numeric_limits<double>::infinity(), [](double u, double v) { return nan_min(u, v); },
          y);
      break;
    default: return false;
  }
  const bool selects = !is_sum && from == dt;
  if (!selects) round_inplace(y, y_n, dt, int_conv_from(from));
  return true;
}

void matmul_values(double* c, std::int64_t c_n, DType dt, bool accumulate, const double* a,
                   const double* b, std::int64_t batch, std::int64_t m, std::int64_t k,
                   std::int64_t n, bool integers) {
  if (!accumulate) std::fill(c, c + c_n, 0.0);
  for (std::int64_t bi = 0; bi < batch; ++bi) {
    matmul_accumulate(a + bi * m * k, b + bi * k * n, c + bi * m * n, m, k, n);
  }
  round_inplace(c, c_n, dt, integers ? IntConv::kWrap : IntConv::kFromFloat);
}

}  // namespace pypto::exec::detail
