// SPDX-License-Identifier: Apache-2.0
// The indexed family: ops whose addresses come from the values of an index tensor.
//  - gather / scatter (torch semantics along one axis `dim`): PyPTO keeps the indexed axis
//    whole in every tile (its TileShape rule), so each AIV task loads the input window of its
//    tile over the whole axis, the index tile and (scatter) the source tile, and indexes
//    inside the task. The dependencies are exact: the window is what the task may touch.
//  - scatter_update (PyPTO's row scatter for paged KV caches): the rows it writes can be
//    anywhere in the destination, so the result is first a copy of the input (tiled copy
//    tasks), then one task per source tile writes its rows through the index. Each such task
//    declares a write of the whole destination for dependencies (the timing model cannot see
//    the addresses) and is priced for the bytes of its rows only.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

bool same_box(const GlobalRegion& a, const GlobalRegion& b) {
  if (a.buffer != b.buffer || a.offset_elems != b.offset_elems || a.rank != b.rank ||
      a.dtype != b.dtype) {
    return false;
  }
  for (int k = 0; k < a.rank; ++k) {
    if (a.shape[k] != b.shape[k] || (a.shape[k] > 1 && a.stride[k] != b.stride[k])) return false;
  }
  return true;
}

}  // namespace

void EmitContext::emit_indexed(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value, iin = st.inputs[1].value;
  const RtVal& x = vals_[xin];
  const RtVal& ix = vals_[iin];
  NPU_CHECK(x.has_region && ix.has_region, "indexed op operand without storage");
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int r = y.rank;
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  const DType xd = k_.values[xin].dtype;
  const DType id = k_.values[iin].dtype;
  const std::int64_t zero[kMaxRank] = {};

  if (st.op == OpKind::kScatterUpdate) {
    const int sin = st.inputs[2].value;
    const RtVal& src = vals_[sin];
    NPU_CHECK(src.has_region, "scatter_update source without storage");
    const int rs = src.rank;
    if (src.shape[rs - 1] != y.shape[r - 1]) {
      throw ConfigError(u.loc + ": scatter_update: the source rows have " +
                        std::to_string(src.shape[rs - 1]) + " elements, the input's " +
                        std::to_string(y.shape[r - 1]));
    }
    std::int64_t src_rows = 1;
    for (int k = 0; k < rs - 1; ++k) src_rows *= src.shape[k];
    if (src_rows != ix.shape[0] * ix.shape[1]) {
      throw ConfigError(u.loc + ": scatter_update: the source has " + std::to_string(src_rows) +
                        " rows but the index " + std::to_string(ix.shape[0] * ix.shape[1]) +
                        " entries");
    }
    if (ix.shape[0] > 1 && ix.region.stride[0] != ix.region.stride[1] * ix.shape[1]) {
      throw ConfigError(u.loc +
                        ": scatter_update: the index must be a dense [b, s] tensor "
                        "(a view of whole rows)");
    }
    // Destinations: the output's own storage and each absorbed write, all of y's shape.
    struct Dest {
      GlobalRegion reg;
      const Storage* st;
      std::string name;
    };
    std::vector<Dest> dests;
    if (need_out)
      dests.push_back(Dest{sub_region(y, zero, y.shape, r), &y.storage, value_name(st.out)});
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      const RtVal& d = vals_[w.dst];
      for (int k = 0; k < r; ++k) check_write_span(w, k, woffs[wi][k], y.shape[k], d.shape[k]);
      dests.push_back(
          Dest{sub_region(d, woffs[wi].data(), y.shape, r), &d.storage, value_name(w.dst)});
    }
    // 1. result = input (skipped where the destination is the input itself).
    for (const Dest& d : dests) {
      if (!same_box(d.reg, sub_region(x, zero, x.shape, r))) {
        emit_copy(u, x, d.reg, *d.st, {}, d.name);
      }
    }
    // 2. the rows, one task per source tile (the last axis whole).
    std::int64_t T[kMaxRank];
    tile_sizes(st.vec_tile, rs, T);
    T[rs - 1] = std::max<std::int64_t>(1, src.shape[rs - 1]);
    const DType sd = k_.values[sin].dtype;
    // Element stride of one source row number in the flattened index.
    std::int64_t row_stride[kMaxRank];
    {
      std::int64_t acc = ix.region.stride[1];
      for (int k = rs - 2; k >= 0; --k) {
        row_stride[k] = acc;
        acc *= src.shape[k];
      }
    }
    for_each_tile(rs, src.shape, T, [&](const std::int64_t* off, const std::int64_t* len) {
      std::int64_t E[kMaxRank];
      for (int k = 0; k < rs; ++k) {
        E[k] = std::min(len[k], src.valid[k] - off[k]);
        if (E[k] <= 0) return;
      }
      TaskBuilder& tb = new_task();
      const int ls = tb.local(sd, rs, E);
      load(tb, ls, sub_region(src, off, E, rs), src.storage, named(sin), u.loc);
      GlobalRegion ireg = ix.region;
      ireg.rank = static_cast<std::uint8_t>(rs - 1);
      for (int k = 0; k < rs - 1; ++k) {
        ireg.shape[k] = E[k];
        ireg.stride[k] = row_stride[k];
        ireg.offset_elems += off[k] * row_stride[k];
      }
      for (int k = rs - 1; k < kMaxRank; ++k) {
        ireg.shape[k] = 1;
        ireg.stride[k] = 0;
      }
      const int li = tb.local(id, std::max(rs - 1, 1), E);
      load(tb, li, ireg, ix.storage, named(iin), u.loc);
      std::int64_t bytes_rows = 1;
      for (int k = 0; k < rs; ++k) bytes_rows *= E[k];
      for (const Dest& d : dests) {
        check_bounds(d.reg, *d.st, d.name, u.loc, true);
        TileInstr in;
        in.op = TileOpcode::kScatterRows;
        in.src[0] = ls;
        in.src[1] = li;
        in.region = d.reg;
        tb.p.instrs.push_back(in);
        tb.acc.push_back(Access{d.reg, true, false, 0, 0, d.st->no_l2});
        // Priced stand-in: as many elements as the rows written, at the destination's start
        // (dense destinations; a strided one is priced by its whole declared region).
        std::int64_t total = 1, want = 1;
        bool dense = true;
        for (int k = d.reg.rank - 1; k >= 0; --k) {
          dense = dense && (d.reg.shape[k] <= 1 || d.reg.stride[k] == want);
          want *= d.reg.shape[k];
          total *= d.reg.shape[k];
        }
        tb.acc.back().priced = !dense;
        GlobalRegion stand = d.reg;
        stand.rank = 1;
        stand.shape[0] = std::min(bytes_rows, total);
        stand.stride[0] = 1;
        for (int k = 1; k < kMaxRank; ++k) {
          stand.shape[k] = 1;
          stand.stride[k] = 0;
        }
        if (dense) tb.acc.push_back(Access{stand, true, true, 0, 0, d.st->no_l2});
      }
      commit(tb, u, common::CoreType::kAiv, covers_tile(E, T, rs), 1);
    });
    return;
  }

  if (st.op == OpKind::kLoadElems) return emit_load_elems(u, need_out, woffs);

  // gather / scatter: tiles over the output with the indexed axis whole.
  const int a = st.dims[0];
  std::int64_t T[kMaxRank];
  tile_sizes(st.vec_tile, r, T);
  T[a] = std::max<std::int64_t>(1, y.shape[a]);
  const bool gather = st.op == OpKind::kGather;
  for_each_valid_tile(r, y.shape, y.valid, T, [&](const std::int64_t* off, const std::int64_t* E) {
    TaskBuilder& tb = new_task();
    // The input window: the tile's box, the whole valid extent along the indexed axis.
    std::int64_t XE[kMaxRank], XL[kMaxRank];
    for (int k = 0; k < r; ++k) {
      XE[k] = k == a ? x.valid[a] : E[k];
      XL[k] = k == a ? x.valid[a] : clamp0(std::min(E[k], x.valid[k] - off[k]));
    }
    const int lx = tb.local(xd, r, XE);
    load(tb, lx, sub_region(x, off, XL, r), x.storage, named(xin), u.loc);
    const int lout = tb.local(xd, r, gather ? E : XE);
    TileInstr in;
    in.op = opcode_of(st.op);
    in.dst = lout;
    in.src[0] = lx;
    in.reduce_mask = static_cast<std::uint8_t>(1u << a);
    if (gather) {
      std::int64_t IL[kMaxRank];
      for (int k = 0; k < r; ++k) IL[k] = clamp0(std::min(E[k], ix.valid[k] - off[k]));
      const int li = tb.local(id, r, E);
      load(tb, li, sub_region(ix, off, IL, r), ix.storage, named(iin), u.loc);
      in.src[1] = li;
      tb.p.instrs.push_back(in);
    } else {
      // The index box inside this tile (the whole index extent along the axis).
      std::int64_t IE[kMaxRank];
      bool any = true;
      for (int k = 0; k < r; ++k) {
        IE[k] = k == a ? ix.valid[a] : clamp0(std::min(E[k], ix.valid[k] - off[k]));
        any = any && IE[k] > 0;
      }
      if (any) {
        const int li = tb.local(id, r, IE);
        load(tb, li, sub_region(ix, off, IE, r), ix.storage, named(iin), u.loc);
        in.src[1] = li;
        in.accumulate = static_cast<std::uint8_t>(st.scatter_reduce);
        const Operand& so = st.inputs[2];
        if (so.value >= 0) {
          const RtVal& s = vals_[so.value];
          NPU_CHECK(s.has_region, "scatter source without storage");
          std::int64_t SL[kMaxRank];
          for (int k = 0; k < r; ++k) SL[k] = clamp0(std::min(IE[k], s.valid[k] - off[k]));
          const int lsrc = tb.local(xd, r, IE);
          load(tb, lsrc, sub_region(s, off, SL, r), s.storage, named(so.value), u.loc);
          in.src[2] = lsrc;
        } else {
          in.scalar_operand = 4;
          in.scalar[2] =
              so.expr != kNoExpr ? static_cast<double>(eval(k_, so.expr, env_)) : so.constant;
        }
        tb.p.instrs.push_back(in);
      } else {
        TileInstr c;
        c.op = TileOpcode::kCopy;
        c.dst = lout;
        c.src[0] = lx;
        tb.p.instrs.push_back(c);
      }
    }
    if (need_out) store(tb, lout, sub_region(y, off, E, r), y.storage, named(st.out), u.loc);
    store_writes(tb, lout, u, woffs, off, E);
    commit(tb, u, common::CoreType::kAiv, covers_tile(E, T, r), 1);
  });
}

void EmitContext::emit_load_elems(const Unit& u, bool need_out,
                                  const std::vector<std::vector<std::int64_t>>& woffs) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value, iin = st.inputs[1].value;
  const RtVal& x = vals_[xin];
  const RtVal& ix = vals_[iin];
  const RtVal& y = vals_[st.out];
  const int r = y.rank;
  const DType xd = k_.values[xin].dtype;
  const DType id = k_.values[iin].dtype;
  const std::int64_t zero[kMaxRank] = {};
  // The whole source: its elements numbered in row-major order of its shape.
  const GlobalRegion whole = sub_region(x, zero, x.shape, x.rank);
  check_bounds(whole, x.storage, named(xin), u.loc, false);
  std::int64_t T[kMaxRank];
  tile_sizes(st.vec_tile, r, T);
  for_each_valid_tile(r, y.shape, y.valid, T, [&](const std::int64_t* off, const std::int64_t* E) {
    TaskBuilder& tb = new_task();
    std::int64_t IL[kMaxRank], n = 1;
    for (int k = 0; k < r; ++k) {
      IL[k] = clamp0(std::min(E[k], ix.valid[k] - off[k]));
      n *= E[k];
    }
    const int li = tb.local(id, r, E);
    load(tb, li, sub_region(ix, off, IL, r), ix.storage, named(iin), u.loc);
    const int lout = tb.local(xd, r, E);
    TileInstr in;
    in.op = TileOpcode::kGatherElems;
    in.dst = lout;
    in.src[1] = li;
    in.region = whole;
    tb.p.instrs.push_back(in);
    // Dependencies: the task may read any element of the source; a dense source's bytes are
    // priced as a stand-in of as many elements at its start (the timing model cannot see which
    // elements), a strided one's as its whole region.
    if (!region_empty(whole)) {
      std::int64_t total = 1;
      bool dense = true;
      for (int k = whole.rank - 1; k >= 0; --k) {
        dense = dense && (whole.shape[k] <= 1 || whole.stride[k] == total);
        total *= whole.shape[k];
      }
      tb.acc.push_back(Access{whole, false, !dense, 0, 0, x.storage.no_l2});
      GlobalRegion stand = whole;
      stand.rank = 1;
      stand.shape[0] = std::min(n, total);
      stand.stride[0] = 1;
      for (int k = 1; k < kMaxRank; ++k) {
        stand.shape[k] = 1;
        stand.stride[k] = 0;
      }
      if (dense) tb.acc.push_back(Access{stand, false, true, 0, 0, x.storage.no_l2});
    }
    if (need_out) store(tb, lout, sub_region(y, off, E, r), y.storage, named(st.out), u.loc);
    store_writes(tb, lout, u, woffs, off, E);
    commit(tb, u, common::CoreType::kAiv, covers_tile(E, T, r), 1);
  });
}

}  // namespace pypto::compiler::detail
