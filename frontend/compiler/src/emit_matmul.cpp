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

}  // namespace

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
