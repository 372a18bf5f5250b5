// SPDX-License-Identifier: Apache-2.0
// The reduction family (sum, amax, amin, prod, argmax, argmin) and the scans (cumsum, cumprod):
// one AIV task per tile of the kept axes, each loading the whole valid extent of the reduced
// (scanned) axes. A scan's output has the input's shape: its tile spans the scanned axis too.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

void EmitContext::emit_reduce(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value;
  const RtVal& x = vals_[xin];
  // A bf16 input with an fp32 copy that this reduction reads as fp32 loads that copy; a bf16
  // result some later op reads as fp32 keeps an fp32 copy too (ValueInfo::wide_uses).
  const bool x_wide = x.has_wide && reads_fp32(st, xin);
  NPU_CHECK(x_wide || x.has_region, "reduction input without storage");
  const GlobalRegion& xr = x_wide ? x.wide_region : x.region;
  vals_[st.out] = make_val(st.out);
  bool out_wide = false, need_out = false;
  if (k_.values[st.out].materialised) stored_forms(u, st.out, &out_wide, &need_out);
  if (need_out) give_dense_storage(st.out, vals_[st.out]);
  if (out_wide) give_wide_storage(st.out, vals_[st.out]);
  if (!need_out && !out_wide && u.writes.empty()) return;
  const RtVal& y = vals_[st.out];
  const int r = x.rank;
  const bool scan = op_info(st.op).family == OpFamily::kScan;
  // sort/argsort: the scan's tiling; the output keeps k entries along the axis.
  const bool sort = st.op == OpKind::kSort || st.op == OpKind::kArgsort;
  if (sort) {
    const int a = st.dims[0];
    if (st.sort_k > x.shape[a] || y.shape[a] != st.sort_k) {
      throw ConfigError(u.loc + ": " + op_name(st.op) + ": k = " + std::to_string(st.sort_k) +
                        " must be at most the axis' extent " + std::to_string(x.shape[a]) +
                        " and equal the output's " + std::to_string(y.shape[a]));
    }
    if (st.sort_k > x.valid[a]) {
      throw ConfigError(u.loc + ": " + op_name(st.op) + ": k = " + std::to_string(st.sort_k) +
                        " exceeds the valid extent " + std::to_string(x.valid[a]) +
                        " along the axis");
    }
  }
  bool reduced[kMaxRank] = {false, false, false, false};
  std::uint8_t mask = 0;
  for (const int d : st.dims) {
    reduced[d] = true;
    mask |= static_cast<std::uint8_t>(1u << d);
  }
  std::vector<int> kept;
  for (int k = 0; k < r; ++k) {
    if (!reduced[k]) kept.push_back(k);
  }
  // vec_tile: the input's rank, or (without keepdim) the output's rank over the kept axes.
  std::int64_t T[kMaxRank];
  if (!st.keepdim && !kept.empty() && st.vec_tile.size() == kept.size() &&
      st.vec_tile.size() != static_cast<std::size_t>(r)) {
    for (std::size_t i = 0; i < kept.size(); ++i) T[kept[i]] = st.vec_tile[i];
  } else {
    tile_sizes(st.vec_tile, r, T);
  }
  std::int64_t grid[kMaxRank];
  for (int k = 0; k < r; ++k) {
    if (reduced[k])
      T[k] = grid[k] = 1;
    else
      grid[k] = x.shape[k];
  }
  // Output axis of input axis k (-1 when the output dropped it).
  int yaxis[kMaxRank];
  for (int k = 0, j = 0; k < r; ++k) {
    if (st.keepdim || scan)
      yaxis[k] = k;
    else
      yaxis[k] = reduced[k] ? -1 : j++;
  }
  const bool scalar_out = kept.empty() && !st.keepdim && !scan;  // output shape [1]
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  const DType xd = k_.values[xin].dtype;
  const DType yd = k_.values[st.out].dtype;
  // The keepdim-form region (rank r) of `v` (the output or a write destination whose axes
  // are the output's, shifted by base_off) for a tile of extent E at `off`.
  const auto out_region = [&](const RtVal& v, const GlobalRegion& vr, const std::int64_t* base_off,
                              const std::int64_t* off, const std::int64_t* E, GlobalRegion* reg) {
    *reg = vr;
    reg->rank = static_cast<std::uint8_t>(r);
    for (int k = 0; k < r; ++k) {
      const int a = yaxis[k];
      if (a < 0) {
        reg->shape[k] = 1;
        reg->stride[k] = 0;
        continue;
      }
      const std::int64_t o = reduced[k] ? 0 : off[k];
      reg->shape[k] = reduced[k] ? std::min<std::int64_t>(scan ? E[k] : 1, y.valid[a])
                                 : clamp0(std::min(E[k], y.valid[a] - o));
      reg->stride[k] = vr.stride[a];
      reg->offset_elems += (base_off[a] + o) * vr.stride[a];
    }
    if (scalar_out) {
      reg->offset_elems += base_off[0] * vr.stride[0];
      if (y.valid[0] <= 0) reg->shape[0] = 0;
    }
  };
  const std::int64_t zero[kMaxRank] = {0, 0, 0, 0};
  for_each_tile(r, grid, T, [&](const std::int64_t* off, const std::int64_t* len) {
    std::int64_t E[kMaxRank], in_shape[kMaxRank], out_shape[kMaxRank];
    for (int k = 0; k < r; ++k) {
      if (reduced[k]) {
        in_shape[k] = std::max<std::int64_t>(1, x.valid[k]);
        E[k] = sort ? st.sort_k : scan ? in_shape[k] : 1;
      } else {
        E[k] = std::min(len[k], y.valid[yaxis[k]] - off[k]);
        if (E[k] <= 0) return;
        in_shape[k] = E[k];
      }
      out_shape[k] = E[k];
    }
    if (scalar_out && y.valid[0] <= 0) return;
    TaskBuilder tb;
    GlobalRegion sreg, wreg;
    if (need_out) out_region(y, y.region, zero, off, E, &sreg);
    if (out_wide) out_region(y, y.wide_region, zero, off, E, &wreg);
    std::vector<GlobalRegion> wregs(u.writes.size());
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      const RtVal& d = vals_[w.dst];
      out_region(d, d.region, woffs[wi].data(), off, E, &wregs[wi]);
      // Bounds of the destination, in its own axes.
      for (int a = 0; a < d.rank; ++a) {
        std::int64_t o = woffs[wi][a], n = 1;
        for (int k = 0; k < r; ++k) {
          if (yaxis[k] == a) {
            o += reduced[k] ? 0 : off[k];
            n = wregs[wi].shape[k];
          }
        }
        check_write_span(w, a, o, n, d.shape[a]);
      }
    }
    const int lin = tb.local(x_wide ? DType::kFp32 : xd, r, in_shape);
    // With an fp32 copy the result is computed in fp32 and rounded once more for bf16 readers.
    const int lwide = out_wide ? tb.local(DType::kFp32, r, out_shape) : -1;
    GlobalRegion lreg = xr;
    lreg.rank = static_cast<std::uint8_t>(r);
    for (int k = 0; k < r; ++k) {
      const std::int64_t o = reduced[k] ? 0 : off[k];
      lreg.shape[k] = reduced[k] ? x.valid[k] : clamp0(std::min(E[k], x.valid[k] - off[k]));
      lreg.offset_elems += o * xr.stride[k];
    }
    load(tb, lin, lreg, x_wide ? x.wide_storage : x.storage, value_name(xin), u.loc);
    TileInstr in;
    in.op = opcode_of(st.op);
    in.dst = out_wide ? lwide : tb.local(yd, r, out_shape);
    in.src[0] = lin;
    in.reduce_mask = mask;
    if (sort) in.scalar[1] = st.descending ? 1.0 : 0.0;
    tb.p.instrs.push_back(in);
    int lout = in.dst;
    if (out_wide) {
      store(tb, lwide, wreg, y.wide_storage, value_name(st.out), u.loc);
      if (need_out || !u.writes.empty()) {
        lout = tb.local(yd, r, out_shape);
        TileInstr c;
        c.op = TileOpcode::kCast;
        c.dst = lout;
        c.src[0] = lwide;
        tb.p.instrs.push_back(c);
      }
    }
    if (need_out) store(tb, lout, sreg, y.storage, value_name(st.out), u.loc);
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      store(tb, lout, wregs[wi], vals_[w.dst].storage, value_name(w.dst), w.loc);
    }
    bool full = true;
    for (int k = 0; k < r; ++k) {
      full = full && (reduced[k] ? x.valid[k] == x.shape[k] : E[k] == T[k]);
    }
    commit(tb, u, common::CoreType::kAiv, full, 1);
  });
}

}  // namespace pypto::compiler::detail
