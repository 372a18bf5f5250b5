// SPDX-License-Identifier: Apache-2.0
// The element-wise family: one fusion group (a chain of element-wise ops of one output shape
// and vec_tile, lowering's UnitKind::kEltwise) as one AIV task per output tile, broadcasting
// its inputs numpy-style and computing only the valid part some delivered value needs.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

void EmitContext::emit_group(const Unit& u) {
  for (const int s : u.ops) {
    const int out = k_.stmts[s].out;
    vals_[out] = make_val(out);
  }
  // A stored value gets a bf16 region, an fp32 one, or both (stored_forms).
  for (const int v : u.stores) {
    bool wide = false, narrow = false;
    stored_forms(u, v, &wide, &narrow);
    if (narrow) give_dense_storage(v, vals_[v]);
    if (wide) give_wide_storage(v, vals_[v]);
  }
  // Inputs with an fp32 copy that an op of this group reads as fp32 load that copy.
  std::vector<char> load_wide(u.ext_inputs.size(), 0);
  for (std::size_t i = 0; i < u.ext_inputs.size(); ++i) {
    const int x = u.ext_inputs[i];
    if (!vals_[x].has_wide) continue;
    for (const int s : u.ops) {
      for (const Operand& o : k_.stmts[s].inputs) {
        if (o.value == x && reads_fp32(k_.stmts[s], x)) load_wide[i] = 1;
      }
    }
  }
  const Stmt& first = k_.stmts[u.ops.front()];
  const RtVal S = vals_[first.out];
  const int r = S.rank;
  std::int64_t T[kMaxRank];
  tile_sizes(first.vec_tile, r, T);
  for (const int x : u.ext_inputs) {
    const RtVal& xv = vals_[x];
    NPU_CHECK(xv.has_region || xv.has_wide, "fusion group input without storage: " + value_name(x));
    for (int k = r - xv.rank; k < r; ++k) {
      const std::int64_t d = xv.shape[k - (r - xv.rank)];
      if (d != 1 && d != S.shape[k]) {
        throw ConfigError(u.loc + ": " + value_name(x) + " has size " + std::to_string(d) +
                          " on axis " + std::to_string(k - (r - xv.rank)) +
                          ", which does not broadcast to " + std::to_string(S.shape[k]));
      }
    }
  }
  // Scalars once per execution (expression scalars depend on loop indices).
  std::vector<std::array<double, 3>> scalars(u.ops.size());
  for (std::size_t i = 0; i < u.ops.size(); ++i) {
    const Stmt& st = k_.stmts[u.ops[i]];
    env_.loc = &st.loc;
    for (std::size_t j = 0; j < st.inputs.size() && j < 3; ++j) {
      const Operand& o = st.inputs[j];
      if (o.value < 0) {
        scalars[i][j] =
            o.expr != kNoExpr ? static_cast<double>(eval(k_, o.expr, env_)) : o.constant;
      }
    }
  }
  std::vector<std::vector<std::int64_t>> woffs;
  for (const int w : u.writes) {
    env_.loc = &k_.stmts[w].loc;
    woffs.push_back(eval_offsets(k_.stmts[w].offsets));
  }
  env_.loc = &u.loc;
  // Values whose valid part this group delivers (to their own storage or a write).
  std::vector<int> delivered = u.stores;
  for (const int w : u.writes) delivered.push_back(k_.stmts[w].src);
  // The group's values (its inputs, then its ops' results) numbered 0..m-1: each tile's
  // locals of them are two flat arrays (local_of, wide_of; -1: none yet).
  std::vector<int>& index = value_index_;
  if (index.size() < k_.values.size()) index.assign(k_.values.size(), -1);
  std::vector<int> members;
  for (const int x : u.ext_inputs) members.push_back(x);
  for (const int s : u.ops) members.push_back(k_.stmts[s].out);
  for (std::size_t i = 0; i < members.size(); ++i) index[members[i]] = static_cast<int>(i);
  std::vector<int> local_of, wide_of;
  // Per op, what every tile repeats (made at the first tile): the instruction without its
  // locals, where each operand comes from and what the result is.
  struct OpPlan {
    TileInstr proto;
    int src_value[3] = {-1, -1, -1};
    bool src_wide[3] = {false, false, false};  // read as fp32 (reads_fp32)
    int out_index = -1;                        // into local_of / wide_of
    bool out_wide = false;                     // computes in fp32: the result is an fp32 tile
    DType dst_dtype = DType::kFp32;
    OpKind kind = OpKind::kAdd;
  };
  std::vector<OpPlan> plans;
  // Names for the bounds checks' messages, made once per unit instead of once per tile.
  for_each_tile(r, S.shape, T, [&](const std::int64_t* off, const std::int64_t* len) {
    // The tile computes on the part some delivered value has valid; nothing valid: no task.
    std::int64_t E[kMaxRank], ext[kMaxRank];
    for (int k = 0; k < r; ++k) {
      std::int64_t e = 0;
      for (const int v : delivered) e = std::max(e, std::min(len[k], vals_[v].valid[k] - off[k]));
      E[k] = e;
      if (e <= 0) return;
    }
    bool any = false;
    for (const int v : delivered) {
      bool nonempty = true;
      for (int k = 0; k < r; ++k) nonempty = nonempty && vals_[v].valid[k] - off[k] > 0;
      any = any || nonempty;
    }
    if (!any) return;
    TaskBuilder& tb = new_task();
    local_of.assign(members.size(), -1);
    // bf16 values an fp32-computing op produced live as fp32 tiles (wide_of); their bf16 tile
    // is made, rounding, only when a store or an op computing on bf16 reads it (PyPTO's
    // AutoCast, see Bf16Compute in op_table.h). An input's fp32 copy loads as such a tile.
    wide_of.assign(members.size(), -1);
    const bool full = covers_tile(E, T, r);
    for (std::size_t xi = 0; xi < u.ext_inputs.size(); ++xi) {
      const int x = u.ext_inputs[xi];
      const RtVal& xv = vals_[x];
      const bool as_wide = load_wide[xi] != 0;
      const int loc_idx = tb.local(as_wide ? DType::kFp32 : k_.values[x].dtype, r, E);
      (as_wide ? wide_of : local_of)[index[x]] = loc_idx;
      const GlobalRegion& src = as_wide ? xv.wide_region : xv.region;
      // Broadcast (numpy, aligned right): missing or size-1 axes are read with stride 0.
      GlobalRegion reg = src;
      reg.rank = static_cast<std::uint8_t>(r);
      for (int k = 0; k < r; ++k) {
        const int kx = k - (r - xv.rank);
        if (kx < 0 || (xv.shape[kx] == 1 && S.shape[k] != 1)) {
          reg.shape[k] = kx >= 0 && xv.valid[kx] <= 0 ? 0 : E[k];
          reg.stride[k] = 0;
        } else {
          reg.shape[k] = clamp0(std::min(E[k], xv.valid[kx] - off[k]));
          reg.stride[k] = src.stride[kx];
          reg.offset_elems += off[k] * src.stride[kx];
        }
      }
      load(tb, loc_idx, reg, as_wide ? xv.wide_storage : xv.storage, named(x), u.loc);
      // A trailing size-1 axis read against a wider one: without combine_axis PyPTO's vector
      // unit first expands the operand to the tile's shape (expand_clone), with it the op
      // reads a brcb'd 32 B per row in place (a pass this model leaves out).
      const int last = r - 1;
      if (!first.combine_axis && last >= 0 && reg.stride[last] == 0 && E[last] > 1 &&
          !tb.p.instrs.empty() && tb.p.instrs.back().op == TileOpcode::kLoad &&
          tb.p.instrs.back().dst == loc_idx) {
        tb.p.instrs.back().expand = 1;
      }
    }
    auto cast_local = [&](int src, DType to) {
      const int dst = tb.local(to, r, E);
      TileInstr c;
      c.op = TileOpcode::kCast;
      c.dst = dst;
      c.src[0] = src;
      tb.p.instrs.push_back(c);
      return dst;
    };
    auto narrow = [&](int v) {  // the tile of v in its own dtype
      const int i = index[v];
      NPU_CHECK(i >= 0, "not a value of the fusion group: " + value_name(v));
      if (local_of[i] >= 0) return local_of[i];
      NPU_CHECK(wide_of[i] >= 0, "fusion group value without a tile: " + value_name(v));
      local_of[i] = cast_local(wide_of[i], k_.values[v].dtype);
      return local_of[i];
    };
    auto wide = [&](int v) {  // v as an fp32 tile (exact: widening a bf16 tile)
      const int i = index[v];
      NPU_CHECK(i >= 0, "not a value of the fusion group: " + value_name(v));
      if (wide_of[i] >= 0) return wide_of[i];
      NPU_CHECK(local_of[i] >= 0, "fusion group value without a tile: " + value_name(v));
      wide_of[i] = cast_local(local_of[i], DType::kFp32);
      return wide_of[i];
    };
    if (plans.empty()) {
      plans.resize(u.ops.size());
      for (std::size_t i = 0; i < u.ops.size(); ++i) {
        const Stmt& st = k_.stmts[u.ops[i]];
        const DType out_dtype = k_.values[st.out].dtype;
        OpPlan& pl = plans[i];
        pl.out_wide = computes_in_fp32(st.op, out_dtype);
        pl.proto.op = opcode_of(st.op);
        for (std::size_t j = 0; j < st.inputs.size() && j < 3; ++j) {
          const Operand& o = st.inputs[j];
          if (o.value >= 0) {
            pl.src_value[j] = o.value;
            pl.src_wide[j] = reads_fp32(st, o.value);
          } else {
            pl.proto.scalar_operand |= static_cast<std::uint8_t>(1u << j);
            pl.proto.scalar[j] = scalars[i][j];
          }
        }
        pl.dst_dtype = pl.out_wide ? DType::kFp32 : out_dtype;
        pl.out_index = index[st.out];
        pl.proto.cast_mode = st.cast_mode;
        pl.proto.saturate = st.saturate ? 1 : 0;
        pl.kind = st.op;
      }
    }
    for (const OpPlan& pl : plans) {
      std::int32_t src[3] = {-1, -1, -1};
      for (int j = 0; j < 3; ++j) {
        const int v = pl.src_value[j];
        if (v >= 0) src[j] = pl.src_wide[j] ? wide(v) : narrow(v);
      }
      const int dst = tb.local(pl.dst_dtype, r, E);
      (pl.out_wide ? wide_of : local_of)[pl.out_index] = dst;
      TileInstr& in = tb.p.instrs.emplace_back(pl.proto);
      in.dst = dst;
      for (int j = 0; j < 3; ++j) in.src[j] = src[j];
      if (pl.kind == OpKind::kTriu || pl.kind == OpKind::kTril) {
        // The diagonal in the tile's own coordinates: global (row, col) = off + (i, j).
        in.scalar[1] -= static_cast<double>(off[r - 1] - off[r - 2]);
      } else if (pl.kind == OpKind::kArange) {
        // Element j of the tile is element off + j of the whole range.
        in.scalar[2] = static_cast<double>(off[r - 1]);
      }
    }
    for (std::size_t si = 0; si < u.stores.size(); ++si) {
      const int v = u.stores[si];
      for (int k = 0; k < r; ++k) ext[k] = std::min(E[k], vals_[v].valid[k] - off[k]);
      const RtVal& sv = vals_[v];
      if (sv.has_region) {
        store(tb, narrow(v), sub_region(sv, off, ext, r), sv.storage, named(v), u.loc);
      }
      if (sv.has_wide) {
        RtVal w = sv;
        w.region = sv.wide_region;
        const int l = wide_of[index[v]];
        NPU_CHECK(l >= 0, "stored fp32 copy without an fp32 tile: " + value_name(v));
        store(tb, l, sub_region(w, off, ext, r), sv.wide_storage, named(v), u.loc);
      }
    }
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      const RtVal& src = vals_[w.src];
      for (int k = 0; k < r; ++k) ext[k] = clamp0(std::min(E[k], src.valid[k] - off[k]));
      GlobalRegion reg;
      if (write_region(w, woffs[wi].data(), off, ext, &reg)) {
        store(tb, narrow(w.src), reg, vals_[w.dst].storage, named(w.dst), w.loc);
      }
    }
    commit(tb, u, common::CoreType::kAiv, full, 1);
  });
  for (const int v : members) index[v] = -1;
}

}  // namespace pypto::compiler::detail
