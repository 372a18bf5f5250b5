// SPDX-License-Identifier: Apache-2.0
// The matmul family: AIC tasks per (batch, M tile, N tile) of the output, each looping over K
// tiles of the cube_tile with an accumulating matmul instruction.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

// 2-D region over axes (row_axis, col_axis) of `base`, rows x cols elements from `offset`.
GlobalRegion region_2d(const GlobalRegion& base, std::int64_t rows, std::int64_t cols, int row_axis,
                       int col_axis, std::int64_t offset) {
  GlobalRegion r = base;
  r.rank = 2;
  r.shape[0] = rows;
  r.shape[1] = cols;
  r.stride[0] = base.stride[row_axis];
  r.stride[1] = base.stride[col_axis];
  r.offset_elems = offset;
  return r;
}

// Rank-2 view of the last two axes of a region whose other axes have extent 1 here.
GlobalRegion last_two_axes(const GlobalRegion& reg, int R) {
  GlobalRegion r2 = reg;
  r2.rank = 2;
  r2.shape[0] = reg.shape[R - 2];
  r2.shape[1] = reg.shape[R - 1];
  r2.stride[0] = reg.stride[R - 2];
  r2.stride[1] = reg.stride[R - 1];
  for (int k = 2; k < kMaxRank; ++k) {
    r2.shape[k] = 1;
    r2.stride[k] = 0;
  }
  return r2;
}

std::string kib(std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes / 1024) + " KiB)";
}

}  // namespace

void EmitContext::check_cube_buffers(const Unit& u, const CubeTile& c, std::int64_t M,
                                     std::int64_t K, std::int64_t N, DType ad, DType acc_d) const {
  // A tile larger than the matrix is clipped to it; 0 (not given) means the whole axis.
  const auto eff = [](std::int64_t t, std::int64_t dim) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(1, t > 0 ? std::min(t, dim) : dim));
  };
  const std::uint64_t eb = sim::dtype_bytes(ad), ab = sim::dtype_bytes(acc_d);
  const std::uint64_t m0 = eff(c.m[0], M), k0 = eff(c.k[0], K), n0 = eff(c.n[0], N);
  const std::uint64_t m1 = eff(c.m[1], M), k1 = eff(c.k[1], K), n1 = eff(c.n[1], N);
  struct Need {
    const char* buffer;
    const char* key;
    std::uint32_t kib;
    std::uint64_t bytes;
    std::string what;
  };
  const auto dims = [](std::uint64_t a, std::uint64_t b) {
    return std::to_string(a) + "x" + std::to_string(b);
  };
  const Need needs[] = {
      {"L0A", "cores.l0a_kib", chip_.cores.l0a_kib, m0 * k0 * eb,
       "the left tile m[0] x k[0] = " + dims(m0, k0) + " " + std::string(sim::to_string(ad))},
      {"L0B", "cores.l0b_kib", chip_.cores.l0b_kib, k0 * n0 * eb,
       "the right tile k[0] x n[0] = " + dims(k0, n0) + " " + std::string(sim::to_string(ad))},
      {"L0C", "cores.l0c_kib", chip_.cores.l0c_kib, m1 * n1 * ab,
       "the accumulator m[1] x n[1] = " + dims(m1, n1) + " " + std::string(sim::to_string(acc_d))},
      {"L1", "cores.l1_kib", chip_.cores.l1_kib, (m1 * k1 + k1 * n1) * eb,
       "the operand tiles m[1] x k[1] + k[1] x n[1] = " + dims(m1, k1) + " + " + dims(k1, n1) +
           " " + std::string(sim::to_string(ad))},
  };
  for (const Need& n : needs) {
    const std::uint64_t cap = std::uint64_t{n.kib} * 1024;
    if (n.bytes <= cap) continue;
    throw ConfigError(u.loc + ": matmul cube tile does not fit " + n.buffer + ": " + n.what +
                      " is " + kib(n.bytes) + ", " + n.buffer + " holds " + kib(cap) + " (" +
                      n.key + " of chip " + chip_.chip.name +
                      "); choose smaller pypto.set_cube_tile_shapes");
  }
}

void EmitContext::emit_matmul(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int ai = st.inputs[0].value, bi = st.inputs[1].value;
  const RtVal& a = vals_[ai];
  const RtVal& b = vals_[bi];
  NPU_CHECK(a.has_region && b.has_region, "matmul operand without storage");
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int R = y.rank, nb = R - 2;
  // Axes of M and K in a, K and N in b.
  const int am = st.a_trans ? R - 1 : R - 2, ak = st.a_trans ? R - 2 : R - 1;
  const int bk = st.b_trans ? R - 1 : R - 2, bn = st.b_trans ? R - 2 : R - 1;
  const std::int64_t M = a.shape[am], K = a.shape[ak], N = b.shape[bn];
  if (b.shape[bk] != K || y.shape[R - 2] != M || y.shape[R - 1] != N) {
    throw ConfigError(u.loc + ": matmul sizes disagree: a gives M=" + std::to_string(M) +
                      " K=" + std::to_string(K) + ", b gives K=" + std::to_string(b.shape[bk]) +
                      " N=" + std::to_string(N) + ", the output is " +
                      std::to_string(y.shape[R - 2]) + "x" + std::to_string(y.shape[R - 1]));
  }
  for (int k = 0; k < nb; ++k) {
    const bool ok = (a.shape[k] == 1 || a.shape[k] == y.shape[k]) &&
                    (b.shape[k] == 1 || b.shape[k] == y.shape[k]);
    if (!ok) {
      throw ConfigError(u.loc + ": matmul batch axis " + std::to_string(k) + " has sizes " +
                        std::to_string(a.shape[k]) + " and " + std::to_string(b.shape[k]) +
                        " for an output of " + std::to_string(y.shape[k]));
    }
  }
  const std::int64_t tm = st.cube.m[1], tn = st.cube.n[1], tk = st.cube.k[1];
  const DType ad = k_.values[ai].dtype;
  const DType acc_d = cube_acc_dtype(ad);
  check_cube_buffers(u, st.cube, M, K, N, ad, acc_d);
  const DType yd = k_.values[st.out].dtype;
  // Elements past a valid extent are padding: they would contribute zeros, so the K loop
  // stops at the valid depth of both operands.
  const std::int64_t Kv = std::min({K, a.valid[ak], b.valid[bk]});
  const std::int64_t ksteps = Kv > 0 ? ceil_div(Kv, tk) : 0;
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  // Grid: batch axes (tile 1), then M and N tiles.
  std::int64_t grid[kMaxRank], T[kMaxRank];
  for (int k = 0; k < nb; ++k) {
    grid[k] = y.shape[k];
    T[k] = 1;
  }
  grid[R - 2] = M;
  grid[R - 1] = N;
  T[R - 2] = tm;
  T[R - 1] = tn;
  for_each_tile(R, grid, T, [&](const std::int64_t* off, const std::int64_t* len) {
    const std::int64_t m0 = off[R - 2], n0 = off[R - 1];
    std::int64_t ext[kMaxRank];
    for (int k = 0; k < nb; ++k) ext[k] = std::min<std::int64_t>(1, y.valid[k] - off[k]);
    ext[R - 2] = std::min(len[R - 2], y.valid[R - 2] - m0);
    ext[R - 1] = std::min(len[R - 1], y.valid[R - 1] - n0);
    for (int k = 0; k < R; ++k) {
      if (ext[k] <= 0) return;
    }
    const std::int64_t mE = ext[R - 2], nE = ext[R - 1];
    TaskBuilder tb;
    // Batch offsets of the operands (broadcast where their batch size is 1).
    std::int64_t a_off = a.region.offset_elems, b_off = b.region.offset_elems;
    for (int k = 0; k < nb; ++k) {
      if (a.shape[k] != 1) a_off += off[k] * a.region.stride[k];
      if (b.shape[k] != 1) b_off += off[k] * b.region.stride[k];
    }
    const std::int64_t a_rows = clamp0(std::min(mE, a.valid[am] - m0));
    const std::int64_t b_cols = clamp0(std::min(nE, b.valid[bn] - n0));
    const std::int64_t acc_shape[2] = {mE, nE};
    const int lacc = tb.local(acc_d, 2, acc_shape);
    int la_full = -1, lb_full = -1, la_tail = -1, lb_tail = -1;
    if (ksteps == 0) {
      TileInstr f;
      f.op = TileOpcode::kFill;
      f.dst = lacc;
      f.scalar_operand = 1;
      tb.p.instrs.push_back(f);
    }
    for (std::int64_t s = 0; s < ksteps; ++s) {
      const std::int64_t k0 = s * tk, kL = std::min(tk, Kv - k0);
      const std::int64_t ash[2] = {mE, kL}, bsh[2] = {kL, nE};
      int& la = kL == tk ? la_full : la_tail;
      int& lb = kL == tk ? lb_full : lb_tail;
      if (la < 0) la = tb.local(ad, 2, ash);
      if (lb < 0) lb = tb.local(ad, 2, bsh);
      const GlobalRegion ra =
          region_2d(a.region, a_rows, kL, am, ak,
                    a_off + m0 * a.region.stride[am] + k0 * a.region.stride[ak]);
      load(tb, la, ra, a.storage, value_name(ai), u.loc);
      const GlobalRegion rb =
          region_2d(b.region, kL, b_cols, bk, bn,
                    b_off + k0 * b.region.stride[bk] + n0 * b.region.stride[bn]);
      load(tb, lb, rb, b.storage, value_name(bi), u.loc);
      TileInstr mm;
      mm.op = TileOpcode::kMatmul;
      mm.dst = lacc;
      mm.src[0] = la;
      mm.src[1] = lb;
      mm.accumulate = s > 0 ? 1 : 0;
      tb.p.instrs.push_back(mm);
    }
    int lout = lacc;
    if (yd != acc_d) {
      lout = tb.local(yd, 2, acc_shape);
      TileInstr c;
      c.op = TileOpcode::kCast;
      c.dst = lout;
      c.src[0] = lacc;
      tb.p.instrs.push_back(c);
    }
    // Dependencies and traffic: whole K panels instead of one range per K step (the loads
    // are all the task has recorded so far).
    tb.acc.clear();
    if (ksteps > 0) {
      const GlobalRegion pa =
          region_2d(a.region, a_rows, Kv, am, ak, a_off + m0 * a.region.stride[am]);
      const GlobalRegion pb =
          region_2d(b.region, Kv, b_cols, bk, bn, b_off + n0 * b.region.stride[bn]);
      if (!region_empty(pa)) tb.acc.push_back(Access{pa, false});
      if (!region_empty(pb)) tb.acc.push_back(Access{pb, false});
    }
    if (need_out) {
      store(tb, lout, last_two_axes(sub_region(y, off, ext, R), R), y.storage, value_name(st.out),
            u.loc);
    }
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      GlobalRegion reg;
      if (!write_region(w, woffs[wi].data(), off, ext, &reg)) continue;
      store(tb, lout, last_two_axes(reg, R), vals_[w.dst].storage, value_name(w.dst), w.loc);
    }
    const bool full = mE == tm && nE == tn && Kv == K && K % tk == 0;
    const auto tiles = static_cast<std::uint16_t>(
        std::min<std::int64_t>(std::max<std::int64_t>(ksteps, 1), 0xFFFF));
    commit(tb, u, sched::CoreType::kAic, full, tiles);
  });
}

}  // namespace pypto::compiler::detail
