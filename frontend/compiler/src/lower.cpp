// SPDX-License-Identifier: Apache-2.0
// Lowering: decides, once per compiled kernel, how statements become leaf tasks.
//  - views and reshapes alias their source unless copy semantics would differ (the view is
//    written, or its source is written while the view is live): then they copy;
//  - consecutive element-wise ops with one output shape and vec_tile form a fusion group
//    (one AIV task per output tile at launch); only values used outside the group are
//    stored;
//  - a Write of a value becomes an extra store of the unit that produced it (no copy task),
//    unless the unit itself, or a statement between the two, reads or writes the destination;
//  - values crossing root instances get a launch-lifetime workspace region, the others
//    live in the per-root pool.
#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "ir.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

std::string dtype_tag(DType d) {
  switch (d) {
    case DType::kFp32: return "f32";
    case DType::kFp16: return "f16";
    case DType::kBf16: return "bf16";
    case DType::kInt8: return "i8";
    case DType::kInt16: return "i16";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kBool: return "bool";
    case DType::kUInt8: return "u8";
  }
  return "x";
}

class Lowering {
 public:
  explicit Lowering(Kernel& k) : k_(k) {}

  void run() {
    index_bodies();
    decide_copy_views();
    for (ValueInfo& v : k_.values) {
      const auto idx = static_cast<int>(&v - k_.values.data());
      v.base = base_of(idx);
    }
    storage_classes();
    plan_variants(k_.variants);
    mark_materialised();
    decide_homes();
    finish_units();
  }

 private:
  // ---- program-order index ----

  struct Position {
    const std::vector<int>* body = nullptr;
    std::size_t pos = 0;
  };

  void index_bodies() {
    pos_.assign(k_.stmts.size(), Position{});
    std::function<void(const std::vector<Variant>&)> walk = [&](const std::vector<Variant>& vs) {
      for (const Variant& v : vs) {
        for (std::size_t i = 0; i < v.body.size(); ++i) {
          pos_[v.body[i]] = Position{&v.body, i};
          const Stmt& st = k_.stmts[v.body[i]];
          if (st.kind == StmtKind::kLoop) walk(k_.loops[st.loop].variants);
        }
      }
    };
    walk(k_.variants);
  }

  bool is_alias_op(int value) const {
    const ValueInfo& v = k_.values[value];
    if (v.def_stmt < 0) return false;
    const OpFamily f = op_info(k_.stmts[v.def_stmt].op).family;
    return f == OpFamily::kView || f == OpFamily::kReshape;
  }

  int base_of(int value) const {
    int v = value;
    while (is_alias_op(v) && !k_.values[v].copy_view)
      v = k_.stmts[k_.values[v].def_stmt].inputs[0].value;
    return v;
  }

  bool stmt_uses(int s, int value) const {
    const Stmt& st = k_.stmts[s];
    switch (st.kind) {
      case StmtKind::kOp:
        for (const Operand& o : st.inputs) {
          if (o.value == value) return true;
        }
        return false;
      case StmtKind::kWrite: return st.src == value || st.dst == value;
      case StmtKind::kLoop:
        for (const Variant& v : k_.loops[st.loop].variants) {
          for (const int b : v.body) {
            if (stmt_uses(b, value)) return true;
          }
        }
        return false;
    }
    return false;
  }

  bool stmt_writes_base(int s, int base) const {
    const Stmt& st = k_.stmts[s];
    if (st.kind == StmtKind::kWrite) return base_of(st.dst) == base;
    if (st.kind == StmtKind::kLoop) {
      for (const Variant& v : k_.loops[st.loop].variants) {
        for (const int b : v.body) {
          if (stmt_writes_base(b, base)) return true;
        }
      }
    }
    return false;
  }

  // IR.md: a view is semantically a copy of a window. It is an alias here unless that would
  // show: the view is itself written, or its source is written while the view is still read.
  void decide_copy_views() {
    for (std::size_t s = 0; s < k_.stmts.size(); ++s) {
      const Stmt& st = k_.stmts[s];
      if (st.kind == StmtKind::kWrite && is_alias_op(st.dst)) k_.values[st.dst].copy_view = true;
    }
    for (std::size_t s = 0; s < k_.stmts.size(); ++s) {
      const Stmt& st = k_.stmts[s];
      if (st.kind != StmtKind::kOp || (st.op != OpKind::kView && st.op != OpKind::kReshape))
        continue;
      ValueInfo& v = k_.values[st.out];
      if (v.copy_view) continue;
      const int base = base_of(st.out);
      const Position& p = pos_[s];
      if (p.body == nullptr) continue;
      std::size_t last = p.pos;
      for (std::size_t q = p.pos + 1; q < p.body->size(); ++q) {
        if (stmt_uses((*p.body)[q], st.out)) last = q;
      }
      for (std::size_t q = p.pos + 1; q <= last; ++q) {
        if (stmt_writes_base((*p.body)[q], base)) {
          v.copy_view = true;
          break;
        }
      }
    }
  }

  void storage_classes() {
    for (ValueInfo& v : k_.values) {
      if (v.param >= 0 || v.def_stmt < 0) continue;
      const Stmt& def = k_.stmts[v.def_stmt];
      bool cross = false;
      for (const int u : v.uses) cross = cross || k_.stmts[u].segment != def.segment;
      v.storage = cross ? StorageClass::kLaunch : StorageClass::kRootInner;
      v.parallel_copies = cross && def.in_parallel;
    }
  }

  // ---- fusion planning ----

  bool expr_equal(ExprId a, ExprId b) const {
    if (a == b) return true;
    const ExprNode& x = k_.exprs[a];
    const ExprNode& y = k_.exprs[b];
    if (x.kind != y.kind || x.value != y.value || x.slot != y.slot || x.num_args != y.num_args) {
      return false;
    }
    for (std::int32_t i = 0; i < x.num_args; ++i) {
      if (!expr_equal(k_.expr_args[x.first_arg + i], k_.expr_args[y.first_arg + i])) return false;
    }
    return true;
  }

  // True when loading value u tile by tile reads exactly the elements write w stores from
  // the same tile, so the load and the store may share one task (in-place update).
  bool same_region(int u, const Stmt& w) const {
    const ValueInfo& uv = k_.values[u];
    if (uv.shape_key != k_.values[w.src].shape_key) return false;
    const int base = base_of(w.dst);
    if (u == base && w.dst == base) {
      for (const ExprId o : w.offsets) {
        if (!is_const(k_, o) || k_.exprs[o].value != 0) return false;
      }
      return true;
    }
    if (is_alias_op(u) && !uv.copy_view) {
      const Stmt& def = k_.stmts[uv.def_stmt];
      if (def.op != OpKind::kView || def.inputs[0].value != w.dst) return false;
      if (def.offsets.size() != w.offsets.size()) return false;
      for (std::size_t i = 0; i < w.offsets.size(); ++i) {
        if (!expr_equal(def.offsets[i], w.offsets[i])) return false;
      }
      return true;
    }
    return false;
  }

  struct Open {
    int unit = -1;           // unit that may still absorb writes
    int group = -1;          // open fusion group (a unit index), or -1
    std::set<int> produced;  // group: values made by its ops
    std::set<int> written;   // bases written by its absorbed writes
    std::vector<int> after;  // alias units that must follow the group
  };

  int new_unit(UnitKind kind, int stmt) {
    Unit u;
    u.kind = kind;
    u.stmt = stmt;
    u.loc = k_.stmts[stmt].loc;
    k_.units.push_back(std::move(u));
    return static_cast<int>(k_.units.size() - 1);
  }

  // Ends the open unit: its group and the aliases after it join the plan; with `done`, the
  // unit is kept there (moved) for writes that come later (absorb_late).
  void close(Open& o, std::vector<int>& plan, std::vector<Open>* done = nullptr) {
    if (o.group >= 0) {
      plan.push_back(o.group);
      plan.insert(plan.end(), o.after.begin(), o.after.end());
    }
    if (done != nullptr && o.unit >= 0) done->push_back(std::move(o));
    o = Open{};
  }

  bool can_join(const Open& o, const Stmt& st) const {
    if (o.group < 0 || !is_elementwise(st.op)) return false;
    const Stmt& first = k_.stmts[k_.units[o.group].ops.front()];
    if (k_.values[first.out].shape_key != k_.values[st.out].shape_key) return false;
    if (first.vec_tile != st.vec_tile || first.sg_scope != st.sg_scope ||
        first.combine_axis != st.combine_axis) {
      return false;
    }
    for (const Operand& in : st.inputs) {
      if (in.value < 0 || o.produced.count(in.value)) continue;
      const int b = k_.values[in.value].base;
      if (o.produced.count(b) || o.written.count(b)) return false;
    }
    return true;
  }

  std::vector<int> unit_inputs(const Unit& u) const {
    std::vector<int> in;
    for (const int s : u.ops) {
      for (const Operand& o : k_.stmts[s].inputs) {
        if (o.value >= 0) in.push_back(o.value);
      }
    }
    return in;
  }

  bool can_absorb(const Open& o, const Stmt& w) const {
    if (o.unit < 0) return false;
    const Unit& u = k_.units[o.unit];
    if (u.kind == UnitKind::kEltwise) {
      if (!o.produced.count(w.src) || o.produced.count(w.dst)) return false;
      const int base = k_.values[w.dst].base;
      if (o.produced.count(base)) return false;
      for (const int in : unit_inputs(u)) {
        if (o.produced.count(in)) continue;
        if (k_.values[in].base == base && !same_region(in, w)) return false;
      }
      return true;
    }
    const int out = k_.stmts[u.ops.front()].out;
    if (w.src != out || w.dst == out) return false;
    const int base = k_.values[w.dst].base;
    if (base == out) return false;
    for (const int in : unit_inputs(u)) {
      if (k_.values[in].base == base) return false;
    }
    return true;
  }

  void plan_variants(std::vector<Variant>& variants) {
    for (Variant& v : variants) plan_body(v);
  }

  // A write of a value made earlier in the body, not by the unit just before it, joins the
  // unit that made it (PyPTO glues a copy-out assemble to its producer), when nothing in
  // between reads or writes the destination or writes the value, so the earlier store
  // changes no value read or stored.
  bool absorb_late(std::vector<Open>& done, const std::vector<int>& body, int s) {
    const Stmt& w = k_.stmts[s];
    const int def = k_.values[w.src].def_stmt;
    if (def < 0 || pos_[def].body != &body || k_.stmts[def].segment != w.segment) return false;
    for (auto d = done.rbegin(); d != done.rend(); ++d) {
      const Unit& u = k_.units[d->unit];
      const bool made = u.kind == UnitKind::kEltwise ? d->produced.count(w.src) > 0
                                                     : k_.stmts[u.ops.front()].out == w.src;
      if (!made) continue;
      if (!can_absorb(*d, w)) return false;
      const int base = k_.values[w.dst].base;
      const int src_base = k_.values[w.src].base;
      for (std::size_t q = pos_[def].pos + 1; q < pos_[s].pos; ++q) {
        if (stmt_touches_base(body[q], base) || stmt_writes_base(body[q], src_base)) return false;
      }
      k_.units[d->unit].writes.push_back(s);
      d->written.insert(base);
      return true;
    }
    return false;
  }

  void plan_body(Variant& var) {
    Open o;
    std::vector<Open> done;  // closed units of this body, in plan order
    std::vector<int>& plan = var.plan;
    const auto close_open = [&] { close(o, plan, &done); };
    for (const int s : var.body) {
      Stmt& st = k_.stmts[s];
      if (st.kind == StmtKind::kLoop) {
        close_open();
        plan.push_back(new_unit(UnitKind::kLoop, s));
        plan_variants(k_.loops[st.loop].variants);
        continue;
      }
      if (st.kind == StmtKind::kWrite) {
        if (can_absorb(o, st)) {
          k_.units[o.unit].writes.push_back(s);
          o.written.insert(k_.values[st.dst].base);
          continue;
        }
        if (absorb_late(done, var.body, s)) continue;
        close_open();
        plan.push_back(new_unit(UnitKind::kCopyWrite, s));
        continue;
      }
      const ValueInfo& out = k_.values[st.out];
      if (st.op == OpKind::kAlloc || (st.op == OpKind::kView && !out.copy_view)) {
        // Pure aliases move no data. While a group is open they go before it (a later op of
        // the group may read them), unless they alias a value the group makes.
        const int u = new_unit(st.op == OpKind::kAlloc ? UnitKind::kAlloc : UnitKind::kView, s);
        k_.units[u].ops.push_back(s);
        const bool after = st.op == OpKind::kView && o.group >= 0 &&
                           o.produced.count(k_.values[st.inputs[0].value].base);
        if (o.group >= 0 && after) {
          o.after.push_back(u);
        } else {
          plan.push_back(u);
        }
        continue;
      }
      if (is_elementwise(st.op)) {
        if (can_join(o, st)) {
          k_.units[o.group].ops.push_back(s);
          o.produced.insert(st.out);
          continue;
        }
        close_open();
        o.group = o.unit = new_unit(UnitKind::kEltwise, s);
        k_.units[o.group].ops.push_back(s);
        o.produced.insert(st.out);
        continue;
      }
      close_open();
      UnitKind kind = UnitKind::kView;
      switch (op_info(st.op).family) {
        case OpFamily::kReduce:
        case OpFamily::kScan: kind = UnitKind::kReduce; break;  // one emitter (emit_reduce.cpp)
        case OpFamily::kMatmul: kind = UnitKind::kMatmul; break;
        case OpFamily::kIndexed: kind = UnitKind::kIndexed; break;
        case OpFamily::kPermute: kind = UnitKind::kPermute; break;
        case OpFamily::kConcat: kind = UnitKind::kConcat; break;
        case OpFamily::kReshape: kind = UnitKind::kReshape; break;
        case OpFamily::kView: kind = UnitKind::kView; break;  // a copying view
        default: break;
      }
      const int u = new_unit(kind, s);
      k_.units[u].ops.push_back(s);
      plan.push_back(u);
      if (kind != UnitKind::kView && kind != UnitKind::kReshape) o.unit = u;
    }
    close(o, plan);
  }

  // ---- in-place assembles ----

  bool stmt_touches_base(int s, int base) const {
    const Stmt& st = k_.stmts[s];
    switch (st.kind) {
      case StmtKind::kOp:
        for (const Operand& o : st.inputs) {
          if (o.value >= 0 && k_.values[o.value].base == base) return true;
        }
        return st.out >= 0 && k_.values[st.out].base == base;
      case StmtKind::kWrite:
        return k_.values[st.src].base == base || k_.values[st.dst].base == base;
      case StmtKind::kLoop:
        for (const Variant& v : k_.loops[st.loop].variants) {
          for (const int b : v.body) {
            if (stmt_touches_base(b, base)) return true;
          }
        }
        return false;
    }
    return false;
  }

  // PyPTO assembles a tile result into a GM tensor by writing it at its final place, and a
  // reshape of dense data is an alias: a value written whole, at offset 0, into a parameter
  // through reshapes only is computed in that parameter's storage. Conditions that keep the
  // semantics: the same straight-line run, nothing in between (nor the producer) touching the
  // parameter, nothing after writing it again, and the value written nowhere else.
  void decide_homes() {
    for (std::size_t w = 0; w < k_.stmts.size(); ++w) {
      const Stmt& ws = k_.stmts[w];
      if (ws.kind != StmtKind::kWrite) continue;
      const ValueInfo& dst = k_.values[ws.dst];
      if (dst.param < 0) continue;
      bool zero = true;
      for (const ExprId o : ws.offsets) zero = zero && is_const(k_, o) && k_.exprs[o].value == 0;
      if (!zero) continue;
      int b = ws.src;
      bool reshapes_only = true;
      while (is_alias_op(b) && !k_.values[b].copy_view) {
        const Stmt& def = k_.stmts[k_.values[b].def_stmt];
        reshapes_only = reshapes_only && def.op == OpKind::kReshape;
        b = def.inputs[0].value;
      }
      ValueInfo& bv = k_.values[b];
      if (!reshapes_only || bv.param >= 0 || bv.def_stmt < 0 || bv.home >= 0 ||
          bv.dtype != dst.dtype || bv.storage != StorageClass::kRootInner || !bv.materialised) {
        continue;
      }
      const Stmt& def = k_.stmts[bv.def_stmt];
      if (def.kind != StmtKind::kOp || def.op == OpKind::kAlloc || is_alias_op(b)) continue;
      const Position& pd = pos_[bv.def_stmt];
      const Position& pw = pos_[w];
      if (pd.body == nullptr || pd.body != pw.body || pd.pos >= pw.pos) continue;
      if (def.segment != ws.segment) continue;
      // scatter_update into the tensor it updates is PyPTO's in-place row write: its first
      // input may be the destination itself.
      bool clear = !stmt_touches_base(bv.def_stmt, ws.dst);
      if (!clear && def.op == OpKind::kScatterUpdate && def.inputs[0].value == ws.dst) {
        clear = true;
        for (std::size_t i = 1; i < def.inputs.size(); ++i) {
          const int v = def.inputs[i].value;
          clear = clear && (v < 0 || k_.values[v].base != ws.dst);
        }
      }
      for (std::size_t q = pd.pos + 1; clear && q < pw.pos; ++q) {
        clear = !stmt_touches_base((*pd.body)[q], ws.dst);
      }
      for (std::size_t q = pw.pos + 1; clear && q < pd.body->size(); ++q) {
        clear = !stmt_writes_base((*pd.body)[q], ws.dst);
      }
      // The value is written only by this statement (no other write has it as source base
      // into another tensor, and nothing writes into it).
      for (std::size_t q = 0; clear && q < k_.stmts.size(); ++q) {
        const Stmt& o = k_.stmts[q];
        if (q == w || o.kind != StmtKind::kWrite) continue;
        clear = k_.values[o.dst].base != b && k_.values[o.src].base != b;
      }
      if (clear) bv.home = ws.dst;
    }
  }

  // ---- materialisation ----

  // ValueInfo::wide_uses of bf16 value v, made by statement `def` and read by the statements
  // `inside` from a local tile: the element-wise ops and reductions of def's root (its body's
  // straight-line segment) that read it from memory. AutoCast runs per PyPTO function; a
  // loop body (RecordLoopFunc) is a function of its own, whose inputs keep their dtype.
  void collect_wide_uses(ValueInfo& v, int def, const std::set<int>& inside) {
    if (v.dtype != DType::kBf16) return;
    for (const int use : v.uses) {
      const Stmt& us = k_.stmts[use];
      if (inside.count(use) || us.kind != StmtKind::kOp || pos_[use].body != pos_[def].body ||
          us.segment != k_.stmts[def].segment) {
        continue;
      }
      if (is_elementwise(us.op) || op_info(us.op).family == OpFamily::kReduce) {
        v.wide_uses.push_back(use);
      }
    }
  }

  void mark_materialised() {
    for (ValueInfo& v : k_.values) {
      if (v.param >= 0) v.materialised = true;
    }
    for (const Stmt& st : k_.stmts) {
      if (st.kind == StmtKind::kWrite) k_.values[st.dst].materialised = true;
    }
    for (Unit& u : k_.units) {
      switch (u.kind) {
        case UnitKind::kAlloc: k_.values[k_.stmts[u.ops[0]].out].materialised = true; break;
        case UnitKind::kView:
        case UnitKind::kReshape: {
          ValueInfo& v = k_.values[k_.stmts[u.ops[0]].out];
          if (v.copy_view) v.materialised = true;
          break;
        }
        case UnitKind::kEltwise: {
          std::set<int> inside(u.ops.begin(), u.ops.end());
          inside.insert(u.writes.begin(), u.writes.end());
          std::set<int> produced;
          for (const int s : u.ops) produced.insert(k_.stmts[s].out);
          for (const int s : u.ops) {
            const int out = k_.stmts[s].out;
            ValueInfo& v = k_.values[out];
            bool outside = v.materialised;
            for (const int use : v.uses) outside = outside || !inside.count(use);
            if (outside) {
              v.materialised = true;
              u.stores.push_back(out);
              collect_wide_uses(v, s, inside);
            }
            for (const Operand& o : k_.stmts[s].inputs) {
              if (o.value >= 0 && !produced.count(o.value) &&
                  std::find(u.ext_inputs.begin(), u.ext_inputs.end(), o.value) ==
                      u.ext_inputs.end()) {
                u.ext_inputs.push_back(o.value);
              }
            }
          }
          break;
        }
        case UnitKind::kReduce:
        case UnitKind::kMatmul:
        case UnitKind::kIndexed:
        case UnitKind::kPermute:
        case UnitKind::kConcat: {
          ValueInfo& v = k_.values[k_.stmts[u.ops[0]].out];
          std::set<int> inside(u.writes.begin(), u.writes.end());
          for (const int use : v.uses) v.materialised = v.materialised || !inside.count(use);
          if (v.materialised && u.kind == UnitKind::kReduce &&
              op_info(k_.stmts[u.ops[0]].op).family == OpFamily::kReduce) {
            collect_wide_uses(v, u.ops[0], inside);
          }
          break;
        }
        default: break;
      }
    }
    for (ValueInfo& v : k_.values) {
      if (v.param >= 0) continue;
      const bool maybe =
          v.materialised || (v.def_stmt >= 0 && k_.stmts[v.def_stmt].op == OpKind::kReshape);
      if (maybe && v.storage == StorageClass::kLaunch) v.launch_slot = k_.num_launch_slots++;
    }
    // After all others, so that adding fp32 copies renumbers no existing region.
    for (ValueInfo& v : k_.values) {
      if (!v.wide_uses.empty() && v.launch_slot >= 0) v.wide_slot = k_.num_launch_slots++;
    }
  }

  void finish_units() {
    for (Unit& u : k_.units) {
      if (u.kind == UnitKind::kLoop) continue;
      std::vector<int> involved;
      for (const int s : u.ops) {
        involved.push_back(k_.stmts[s].out);
        for (const Operand& o : k_.stmts[s].inputs) {
          if (o.value >= 0) involved.push_back(o.value);
        }
      }
      for (const int w : u.writes) involved.push_back(k_.stmts[w].src);
      if (u.kind == UnitKind::kCopyWrite) involved.push_back(k_.stmts[u.stmt].src);
      for (const int v : involved) u.dynamic = u.dynamic || !k_.values[v].static_extent;
      switch (u.kind) {
        case UnitKind::kEltwise: {
          std::string name;
          for (const int s : u.ops) {
            if (!name.empty()) name += "_";
            name += op_name(k_.stmts[s].op);
          }
          u.kernel = name + "_" + dtype_tag(k_.values[k_.stmts[u.ops.back()].out].dtype);
          break;
        }
        case UnitKind::kReduce:
        case UnitKind::kIndexed:
        case UnitKind::kPermute:
        case UnitKind::kConcat: {
          const Stmt& st = k_.stmts[u.ops[0]];
          u.kernel = std::string(op_name(st.op)) + "_" + dtype_tag(k_.values[st.out].dtype);
          break;
        }
        case UnitKind::kMatmul: {
          const Stmt& st = k_.stmts[u.ops[0]];
          u.kernel = "matmul_" + dtype_tag(k_.values[st.inputs[0].value].dtype);
          break;
        }
        case UnitKind::kCopyWrite:
          u.kernel = "copy_" + dtype_tag(k_.values[k_.stmts[u.stmt].src].dtype);
          break;
        case UnitKind::kView:
        case UnitKind::kReshape:
          u.kernel = "copy_" + dtype_tag(k_.values[k_.stmts[u.ops[0]].out].dtype);
          break;
        default: break;
      }
    }
  }

  Kernel& k_;
  std::vector<Position> pos_;
};

}  // namespace

void lower(Kernel& k) { Lowering(k).run(); }

}  // namespace pypto::compiler::detail
