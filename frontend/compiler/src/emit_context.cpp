// SPDX-License-Identifier: Apache-2.0
// The EmitContext (instance.h): run-time values and their storage, the helpers every emitter
// builds tasks with (tile sizes, regions, bounds-checked loads and stores, absorbed writes,
// commit with the task's cost), and the dispatch of a unit to its family's emitter.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"
#include "pypto/model/cost_model.h"
#include "task_cost.h"

namespace pypto::compiler::detail {

// ---------------------------------------------------------------------------------------------
// values

std::string EmitContext::value_name(int value) const {
  const ValueInfo& v = k_.values[value];
  if (v.param >= 0) return "tensor \"" + k_.params[v.param].name + "\"";
  return "value %" + std::to_string(v.ir_id);
}

std::string EmitContext::value_name(const NameOf& n) const {
  if (n.value_id >= 0) return value_name(n.value_id);
  return n.text != nullptr ? *n.text : std::string(n.literal);
}

RtVal EmitContext::make_val(int value) {
  const ValueInfo& info = k_.values[value];
  RtVal v;
  v.rank = static_cast<int>(info.shape.size());
  for (int a = 0; a < v.rank; ++a) {
    v.shape[a] = eval(k_, info.shape[a], env_);
    if (v.shape[a] < 0) {
      throw ConfigError(*env_.loc + ": " + value_name(value) + " has size " +
                        std::to_string(v.shape[a]) + " on axis " + std::to_string(a) +
                        "; expected a size >= 0");
    }
    v.valid[a] = info.valid.empty() ? v.shape[a]
                                    : std::min(v.shape[a], clamp0(eval(k_, info.valid[a], env_)));
  }
  return v;
}

Storage EmitContext::allocate(int value, std::uint64_t bytes, bool wide) {
  const ValueInfo& info = k_.values[value];
  Storage s;
  s.size_bytes = bytes;
  s.value = value;
  if (info.storage == StorageClass::kLaunch) {
    const int slot = wide ? info.wide_slot : info.launch_slot;
    NPU_CHECK(slot >= 0, "launch value without a workspace region");
    const std::uint32_t copy = info.parallel_copies && in_parallel_ ? piter_ % par_ : 0;
    const std::size_t id = static_cast<std::size_t>(slot) * par_ + copy;
    const std::uint32_t version = slot_next_version_[id]++ % slot_versions_;
    std::vector<std::uint32_t>& later = slot_version_at_[id];
    if (version > later.size()) {  // first use of this version
      later.push_back(static_cast<std::uint32_t>(slot_bytes_.size()));
      slot_bytes_.push_back(0);
    }
    const std::size_t vid = version == 0 ? id : later[version - 1];
    slot_bytes_[vid] = std::max(slot_bytes_[vid], align_up(bytes, kAlignBytes));
    s.buffer = kSlotBufferBase + static_cast<std::uint32_t>(vid);
    s.base_bytes = 0;
  } else {
    NPU_CHECK(root_open_, "root-inner allocation outside a root");
    s.buffer = kRootBuffer;
    s.base_bytes = static_cast<std::int64_t>(root_bump_);
    root_bump_ += align_up(bytes, kAlignBytes);
  }
  return s;
}

void EmitContext::give_dense_storage(int value, RtVal& v) {
  const ValueInfo& info = k_.values[value];
  std::uint64_t elems = 1;
  for (int a = 0; a < v.rank; ++a) elems *= static_cast<std::uint64_t>(v.shape[a]);
  const std::uint32_t es = model::dtype_bytes(info.dtype);
  if (info.home >= 0) {
    // Computed in place in the parameter it is assembled into, when that parameter is dense
    // and exactly as large (its sizes are only known now).
    const RtVal& h = vals_[info.home];
    std::uint64_t helems = 1;
    for (int a = 0; a < h.rank; ++a) helems *= static_cast<std::uint64_t>(h.shape[a]);
    bool dense = h.has_region;
    std::int64_t stride = 1;
    for (int a = h.rank - 1; dense && a >= 0; --a) {
      dense = h.shape[a] <= 1 || h.region.stride[a] == stride;
      stride *= h.shape[a];
    }
    if (dense && helems == elems && h.region.dtype == info.dtype) {
      v.storage = h.storage;
      v.has_region = true;
      v.region = GlobalRegion{};
      v.region.buffer = h.region.buffer;
      v.region.offset_elems = h.region.offset_elems;
      v.region.dtype = info.dtype;
      set_dense_layout(v);
      return;
    }
  }
  v.storage = allocate(value, elems * es);
  v.has_region = true;
  v.region = GlobalRegion{};
  v.region.buffer = v.storage.buffer;
  v.region.offset_elems = v.storage.base_bytes / es;
  v.region.dtype = info.dtype;
  set_dense_layout(v);
}

void EmitContext::give_wide_storage(int value, RtVal& v) {
  RtVal w = v;
  std::uint64_t elems = 1;
  for (int a = 0; a < v.rank; ++a) elems *= static_cast<std::uint64_t>(v.shape[a]);
  const std::uint32_t es = model::dtype_bytes(DType::kFp32);
  w.storage = allocate(value, elems * es, /*wide=*/true);
  w.region = GlobalRegion{};
  w.region.buffer = w.storage.buffer;
  w.region.offset_elems = w.storage.base_bytes / es;
  w.region.dtype = DType::kFp32;
  set_dense_layout(w);
  v.has_wide = true;
  v.wide_region = w.region;
  v.wide_storage = w.storage;
}

void EmitContext::stored_forms(const Unit& u, int v, bool* wide, bool* narrow) const {
  const ValueInfo& info = k_.values[v];
  const Stmt& def = k_.stmts[info.def_stmt];
  const bool made_fp32 = computes_in_fp32(def.op, info.dtype);
  *wide = false;
  *narrow = false;
  for (const int use : info.uses) {
    if (std::find(u.ops.begin(), u.ops.end(), use) != u.ops.end() ||
        std::find(u.writes.begin(), u.writes.end(), use) != u.writes.end()) {
      continue;  // the group's own local tile
    }
    const bool w =
        made_fp32 &&
        std::find(info.wide_uses.begin(), info.wide_uses.end(), use) != info.wide_uses.end() &&
        reads_fp32(k_.stmts[use], v);
    (w ? *wide : *narrow) = true;
  }
  // A value no statement reads outside the group is stored for its own sake (a kernel result).
  if (!*wide) *narrow = true;
}

bool EmitContext::make_output(const Unit& u, int out) {
  vals_[out] = make_val(out);
  const bool need_out = k_.values[out].materialised;
  if (need_out) give_dense_storage(out, vals_[out]);
  return need_out || !u.writes.empty();
}

std::vector<std::int64_t> EmitContext::eval_offsets(const std::vector<ExprId>& offs) {
  std::vector<std::int64_t> out(offs.size());
  for (std::size_t i = 0; i < offs.size(); ++i) out[i] = eval(k_, offs[i], env_);
  return out;
}

std::vector<std::vector<std::int64_t>> EmitContext::write_offsets(const Unit& u) {
  std::vector<std::vector<std::int64_t>> woffs;
  for (const int w : u.writes) woffs.push_back(eval_offsets(k_.stmts[w].offsets));
  return woffs;
}

// ---------------------------------------------------------------------------------------------
// task emission helpers

void EmitContext::tile_sizes(const std::vector<std::int64_t>& vt, int rank, std::int64_t* out) {
  const int n = static_cast<int>(vt.size());
  // PyPTO's tilers read vecTile[d] for dimension d: a longer tile's extra sizes go unused.
  const int shift = std::min(0, n - rank);
  for (int k = 0; k < rank; ++k) {
    const int src = shift + k;
    out[k] = src >= 0 ? vt[src] : 1;
  }
}

void EmitContext::copy_tile_sizes(const RtVal& v, std::int64_t* out) {
  const std::int64_t es = model::dtype_bytes(v.region.dtype);
  std::int64_t budget = std::max<std::int64_t>(1, kCopyTileBytes / es);  // elements
  for (int k = v.rank - 1; k >= 0; --k) {
    out[k] = std::max<std::int64_t>(1, std::min(v.shape[k], budget));
    budget = std::max<std::int64_t>(1, budget / out[k]);
  }
}

GlobalRegion EmitContext::sub_region(const RtVal& v, const std::int64_t* off,
                                     const std::int64_t* ext, int rank) {
  GlobalRegion r = v.region;
  r.rank = static_cast<std::uint8_t>(rank);
  for (int k = 0; k < rank; ++k) {
    r.offset_elems += off[k] * v.region.stride[k];
    r.shape[k] = clamp0(ext[k]);
  }
  return r;
}

void EmitContext::check_bounds(const GlobalRegion& r, const Storage& st, const NameOf& name,
                               const std::string& loc, bool write) const {
  const std::int64_t es = model::dtype_bytes(r.dtype);
  std::int64_t last = r.offset_elems;
  for (int k = 0; k < r.rank; ++k) last += (r.shape[k] - 1) * r.stride[k];
  const std::int64_t lo = r.offset_elems * es;
  const std::int64_t hi = (last + 1) * es;
  const std::int64_t st_hi = st.base_bytes + static_cast<std::int64_t>(st.size_bytes);
  if (lo < st.base_bytes || hi > st_hi) {
    throw ConfigError(loc + ": " + (write ? "writes" : "reads") + " bytes [" +
                      std::to_string(lo - st.base_bytes) + ", " +
                      std::to_string(hi - st.base_bytes) + ") of " + value_name(name) +
                      ", which has " + std::to_string(st.size_bytes) +
                      " bytes; check the offsets and valid_shape that lead here");
  }
}

void EmitContext::load(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
                       const NameOf& name, const std::string& loc, double pad) {
  const LocalTile& lt = tb.p.locals[local];
  bool whole = r.rank == lt.rank;
  for (int k = 0; k < r.rank && whole; ++k) whole = r.shape[k] == lt.shape[k];
  if (!whole) {
    // Nothing (or only a prefix box) of this tile is valid: the rest of the local is `pad`.
    tb.clipped = true;
    TileInstr f;
    f.op = TileOpcode::kFill;
    f.dst = local;
    f.scalar_operand = 1;
    f.scalar[0] = pad;
    tb.p.instrs.push_back(f);
    if (region_empty(r)) return;
  }
  check_bounds(r, st, name, loc, false);
  TileInstr in;
  in.op = TileOpcode::kLoad;
  in.dst = local;
  in.region = r;
  tb.p.instrs.push_back(in);
  Access a{r, false};
  a.no_l2 = st.no_l2;
  tb.acc.push_back(a);
}

void EmitContext::store(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
                        const NameOf& name, const std::string& loc) {
  if (region_empty(r)) return;
  const LocalTile& lt = tb.p.locals[local];
  for (int k = 0; k < r.rank; ++k) tb.clipped = tb.clipped || r.shape[k] != lt.shape[k];
  check_bounds(r, st, name, loc, true);
  TileInstr in;
  in.op = TileOpcode::kStore;
  in.src[0] = local;
  in.region = r;
  tb.p.instrs.push_back(in);
  Access a{r, true};
  a.no_l2 = st.no_l2;
  tb.acc.push_back(a);
}

void EmitContext::check_write_span(const Stmt& w, int axis, std::int64_t o, std::int64_t n,
                                   std::int64_t size) const {
  if (n > 0 && (o < 0 || o + n > size)) {
    throw ConfigError(w.loc + ": the write covers [" + std::to_string(o) + ", " +
                      std::to_string(o + n) + ") on axis " + std::to_string(axis) + " of " +
                      value_name(w.dst) + ", which has size " + std::to_string(size));
  }
}

bool EmitContext::write_region(const Stmt& w, const std::int64_t* woff, const std::int64_t* off,
                               const std::int64_t* ext, GlobalRegion* out) {
  const RtVal& d = vals_[w.dst];
  NPU_CHECK(d.has_region, "write destination without storage");
  std::int64_t o[kMaxRank];
  for (int k = 0; k < d.rank; ++k) {
    o[k] = woff[k] + off[k];
    check_write_span(w, k, o[k], ext[k], d.shape[k]);
  }
  *out = sub_region(d, o, ext, d.rank);
  return !region_empty(*out);
}

void EmitContext::store_writes(TaskBuilder& tb, int local, const Unit& u,
                               const std::vector<std::vector<std::int64_t>>& woffs,
                               const std::int64_t* off, const std::int64_t* ext) {
  for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
    const Stmt& w = k_.stmts[u.writes[wi]];
    GlobalRegion wr;
    if (write_region(w, woffs[wi].data(), off, ext, &wr)) {
      store(tb, local, wr, vals_[w.dst].storage, named(w.dst), w.loc);
    }
  }
}

void EmitContext::check_ub(const TaskBuilder& tb, const Unit& u) const {
  // Every tile a vector task computes on lives in UB; one that alone exceeds it cannot run.
  const std::uint64_t cap = std::uint64_t{chip_.cores.ub_kib} * 1024;
  DType last_dtype = tb.p.locals.empty() ? DType::kFp32 : tb.p.locals.front().dtype;
  std::uint64_t last_bytes = model::dtype_bytes(last_dtype);  // a task's locals share few dtypes
  for (const LocalTile& t : tb.p.locals) {
    if (t.dtype != last_dtype) {
      last_dtype = t.dtype;
      last_bytes = model::dtype_bytes(t.dtype);
    }
    std::uint64_t bytes = last_bytes;
    for (int k = 0; k < t.rank; ++k) bytes *= static_cast<std::uint64_t>(t.shape[k]);
    if (bytes <= cap) continue;
    std::string shape;  // the message's text is built only for it
    for (int k = 0; k < t.rank; ++k) shape += (k ? "x" : "") + std::to_string(t.shape[k]);
    std::string ops;  // the unit's ops, for the message
    for (const int s : u.ops) {
      const std::string n = op_name(k_.stmts[s].op);
      if (ops.find(n) == std::string::npos) ops += (ops.empty() ? "" : "/") + n;
    }
    throw ConfigError(u.loc + ": " + (ops.empty() ? std::string() : ops + ": ") +
                      "vector tile does not fit UB: a " + shape + " " +
                      std::string(model::to_string(t.dtype)) + " tile is " + std::to_string(bytes) +
                      " bytes (" + std::to_string(bytes / 1024) + " KiB), UB holds " +
                      std::to_string(cap) + " bytes (" + std::to_string(cap / 1024) +
                      " KiB, cores.ub_kib of chip " + chip_.chip.name +
                      "); choose smaller pypto.set_vec_tile_shapes");
  }
}

void EmitContext::commit(TaskBuilder& tb, const Unit& u, common::CoreType core, bool full_tile,
                         std::uint16_t tiles) {
  TaskRec t;
  t.core = core;
  t.root = static_cast<std::uint32_t>(roots_.size());
  // A unit's tiles come one after another: its kernel name is looked up once for them all.
  if (kernel_names_.empty() || u.kernel != kernel_names_[last_kernel_id_]) {
    auto [it, inserted] =
        kernel_ids_.emplace(u.kernel, static_cast<std::uint32_t>(kernel_names_.size()));
    if (inserted) kernel_names_.push_back(u.kernel);
    last_kernel_id_ = it->second;
  }
  t.kernel = last_kernel_id_;
  if (core == common::CoreType::kAiv) check_ub(tb, u);
  for (const TileInstr& in : tb.p.instrs) tile_ops_ += is_priced(in.op) ? 1 : 0;
  // A leaf whose extents depend on symbols computes them at run time; with
  // valid_shape_optimize its full blocks run the static leaf instead.
  if (u.dynamic && !(opt_.runtime.valid_shape_optimize == 1 && full_tile && !tb.clipped)) {
    t.scalar_cycles = chip_.cost.dynamic_shape_overhead_cycles;
  }
  const Access* acc = tb.acc.data();
  t.cycles = leaf_cycles_.cycles(tb.p, leaf_traffic(acc, acc + tb.acc.size(), chip_), core, tiles,
                                 t.scalar_cycles);
  t.tiles = tiles;
  const Stmt& first = k_.stmts[u.ops.empty() ? u.stmt : u.ops.front()];
  t.sg_scope = first.sg_scope;
  t.sg_flags = first.sg_flags;
  if (!first.label.empty()) {
    const auto at = std::find(labels_.begin(), labels_.end(), first.label);
    t.label = static_cast<std::uint32_t>(at - labels_.begin()) + 1;
    if (at == labels_.end()) labels_.push_back(first.label);
  }
  t.acc_begin = static_cast<std::uint32_t>(acc_.size());
  acc_.insert(acc_.end(), tb.acc.begin(), tb.acc.end());
  t.acc_end = static_cast<std::uint32_t>(acc_.size());
  tasks_.push_back(t);
  TaskProgram& prog = progs_.emplace_back();
  prog.locals.assign(tb.p.locals.begin(), tb.p.locals.end());
  prog.instrs.assign(tb.p.instrs.begin(), tb.p.instrs.end());
}

// ---------------------------------------------------------------------------------------------
// units

void EmitContext::exec_unit(const Unit& u) {
  env_.loc = &u.loc;
  switch (u.kind) {
    case UnitKind::kAlloc: {
      const int out = k_.stmts[u.ops[0]].out;
      vals_[out] = make_val(out);
      give_dense_storage(out, vals_[out]);
      return;
    }
    case UnitKind::kView: return emit_view(u);
    case UnitKind::kReshape: return emit_reshape(u);
    case UnitKind::kEltwise: return emit_group(u);
    case UnitKind::kReduce: return emit_reduce(u);
    case UnitKind::kMatmul: return emit_matmul(u);
    case UnitKind::kIndexed: return emit_indexed(u);
    case UnitKind::kPermute: return emit_permute(u);
    case UnitKind::kConcat: return emit_concat(u);
    case UnitKind::kCopyWrite: return emit_copy_write(u);
    case UnitKind::kLoop: break;
  }
  NPU_CHECK(false, "exec_unit: unexpected unit kind");
}

}  // namespace pypto::compiler::detail
