// SPDX-License-Identifier: Apache-2.0
// compile(): the kernel IR JSON (frontend/pypto/IR.md) -> detail::Kernel, validated, then
// lowered (lower.cpp). Every rejection is a ConfigError that names the statement's "loc"
// (or the top-level key) and what the compiler expected.
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>

#include "ir.h"
#include "pypto/common/errors.h"

namespace pypto::compiler {

namespace detail {
namespace {

using Json = nlohmann::json;

// "supported: alloc, full, ..." of the unknown-op message: the op table's names in order.
std::string supported_ops() {
  std::string s;
  for (const OpInfo& e : kOpTable) {
    if (!s.empty()) s += ", ";
    s += e.name;
  }
  return s;
}

class Parser {
 public:
  explicit Parser(Kernel& k) : k_(k) {}

  void parse(const Json& root) {
    if (!root.is_object()) fail_top("the kernel IR must be a JSON object");
    const Json& format = need(root, "format", "kernel IR");
    if (!format.is_string() || format.get<std::string>() != "pypto-kernel-ir") {
      fail_top("\"format\" must be \"pypto-kernel-ir\", got " + format.dump());
    }
    const Json& version = need(root, "version", "kernel IR");
    if (!version.is_number_integer() || version.get<std::int64_t>() != 1) {
      fail_top("unsupported IR \"version\" " + version.dump() + "; this compiler reads version 1");
    }
    k_.name = need_string(root, "name", "kernel IR");
    const Json& symbols = need_array(root, "symbols", "kernel IR");
    for (const Json& s : symbols) {
      const std::string name = need_string(s, "name", "kernel IR symbols");
      declare_slot(name, "kernel IR symbols");
      k_.symbols.push_back(name);
    }
    const Json& params = need_array(root, "params", "kernel IR");
    for (const Json& p : params) parse_param(p);
    ParseScope top;
    k_.variants = parse_variants(need_array(root, "variants", "kernel IR"), top, "kernel body");
    finish();
  }

 private:
  struct ParseScope {
    bool in_parallel = false;
    std::vector<std::int64_t> vec_tile_none;
  };

  [[noreturn]] static void fail_top(const std::string& msg) {
    throw ConfigError("kernel IR: " + msg);
  }
  [[noreturn]] static void fail_at(const std::string& loc, const std::string& msg) {
    throw ConfigError(loc + ": " + msg);
  }

  static const Json& need(const Json& obj, const char* key, const std::string& ctx) {
    if (!obj.is_object()) fail_at(ctx, std::string("expected an object with \"") + key + "\"");
    const auto it = obj.find(key);
    if (it == obj.end()) fail_at(ctx, std::string("missing key \"") + key + "\"");
    return *it;
  }
  static const Json& need_array(const Json& obj, const char* key, const std::string& ctx) {
    const Json& v = need(obj, key, ctx);
    if (!v.is_array()) fail_at(ctx, std::string("\"") + key + "\" must be a list, got " + v.dump());
    return v;
  }
  static std::string need_string(const Json& obj, const char* key, const std::string& ctx) {
    const Json& v = need(obj, key, ctx);
    if (!v.is_string())
      fail_at(ctx, std::string("\"") + key + "\" must be a string, got " + v.dump());
    return v.get<std::string>();
  }
  static bool opt_bool(const Json& obj, const char* key, bool def, const std::string& ctx) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return def;
    if (!it->is_boolean())
      fail_at(ctx, std::string("\"") + key + "\" must be a bool, got " + it->dump());
    return it->get<bool>();
  }
  static std::int64_t need_int(const Json& v, const std::string& what, const std::string& ctx) {
    // A whole number past 64 bits arrives as a double (the JSON parser's fallback): say it
    // is too large, not that it is no integer.
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) >= 9.2233720368547758e18) {
        fail_at(ctx, what + " is an integer too large for 64-bit signed (about " + v.dump() + ")");
      }
    }
    if (!v.is_number_integer()) fail_at(ctx, what + " must be an integer, got " + v.dump());
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0x7FFFFFFFFFFFFFFFull) {
      fail_at(ctx, what + " " + v.dump() + " does not fit in 64-bit signed");
    }
    return v.get<std::int64_t>();
  }

  static DType parse_dtype(const Json& v, const std::string& ctx) {
    if (!v.is_string()) fail_at(ctx, "dtype must be a string such as \"DT_FP32\", got " + v.dump());
    const std::string s = v.get<std::string>();
    static const std::pair<const char*, DType> kMap[] = {
        {"DT_FP32", DType::kFp32},   {"DT_FP16", DType::kFp16},   {"DT_BF16", DType::kBf16},
        {"DT_INT8", DType::kInt8},   {"DT_INT16", DType::kInt16}, {"DT_INT32", DType::kInt32},
        {"DT_INT64", DType::kInt64}, {"DT_BOOL", DType::kBool},   {"DT_UINT8", DType::kUInt8},
    };
    for (const auto& [name, d] : kMap) {
      if (s == name) return d;
    }
    fail_at(ctx, "dtype " + s +
                     " is not supported by the compiler (supported: DT_FP32, DT_FP16, "
                     "DT_BF16, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8)");
  }

  void declare_slot(const std::string& name, const std::string& ctx) {
    if (!slot_of_.emplace(name, static_cast<int>(k_.slot_names.size())).second) {
      fail_at(ctx, "symbol \"" + name +
                       "\" is declared twice (symbol and loop index names must "
                       "be unique)");
    }
    k_.slot_names.push_back(name);
  }

  // ---- expressions ----

  ExprId add_node(const ExprNode& n) {
    k_.exprs.push_back(n);
    return static_cast<ExprId>(k_.exprs.size() - 1);
  }

  ExprId parse_expr(const Json& j, const std::string& ctx, bool want_bool = false) {
    const ExprId e = parse_expr_any(j, ctx);
    if (want_bool != k_.exprs[e].is_bool) {
      fail_at(ctx, std::string("expected ") + (want_bool ? "a boolean" : "an integer") +
                       " expression, got " + j.dump());
    }
    return e;
  }

  ExprId parse_expr_any(const Json& j, const std::string& ctx) {
    ExprNode n;
    if (j.is_boolean()) {
      n.is_bool = true;
      n.value = j.get<bool>() ? 1 : 0;
      return add_node(n);
    }
    if (j.is_number_integer()) {
      n.value = need_int(j, "an expression constant", ctx);
      return add_node(n);
    }
    if (!j.is_object()) fail_at(ctx, "not an expression: " + j.dump());
    if (const auto it = j.find("sym"); it != j.end()) {
      if (!it->is_string()) fail_at(ctx, "\"sym\" must be a string, got " + it->dump());
      const auto s = slot_of_.find(it->get<std::string>());
      if (s == slot_of_.end()) {
        fail_at(ctx, "unknown symbol \"" + it->get<std::string>() +
                         "\" (expected a dynamic dimension from \"symbols\" or a loop index)");
      }
      n.kind = ExprKind::kSym;
      n.slot = s->second;
      return add_node(n);
    }
    const std::string op = need_string(j, "op", ctx);
    const Json& args = need_array(j, "args", ctx);
    static const std::pair<const char*, ExprKind> kKinds[] = {
        {"add", ExprKind::kAdd}, {"sub", ExprKind::kSub},
        {"mul", ExprKind::kMul}, {"floordiv", ExprKind::kFloorDiv},
        {"mod", ExprKind::kMod}, {"min", ExprKind::kMin},
        {"max", ExprKind::kMax}, {"eq", ExprKind::kEq},
        {"ne", ExprKind::kNe},   {"lt", ExprKind::kLt},
        {"le", ExprKind::kLe},   {"gt", ExprKind::kGt},
        {"ge", ExprKind::kGe},   {"and", ExprKind::kAnd},
        {"or", ExprKind::kOr},   {"not", ExprKind::kNot},
        {"int", ExprKind::kInt}, {"load", ExprKind::kLoad},
    };
    bool found = false;
    for (const auto& [name, kind] : kKinds) {
      if (op == name) {
        n.kind = kind;
        found = true;
      }
    }
    if (!found) fail_at(ctx, "unknown expression op \"" + op + "\" in " + j.dump());
    std::vector<ExprId> arg_ids;
    for (const Json& a : args) arg_ids.push_back(parse_expr_any(a, ctx));
    const auto count_is = [&](bool ok) {
      if (!ok) fail_at(ctx, "wrong number of arguments for \"" + op + "\" in " + j.dump());
    };
    const auto all_are = [&](bool want_bool) {
      for (const ExprId a : arg_ids) {
        if (k_.exprs[a].is_bool != want_bool) {
          fail_at(ctx, std::string("\"") + op + "\" needs " + (want_bool ? "boolean" : "integer") +
                           " arguments in " + j.dump());
        }
      }
    };
    switch (n.kind) {
      case ExprKind::kAdd:
      case ExprKind::kMul:
      case ExprKind::kMin:
      case ExprKind::kMax:
        count_is(arg_ids.size() >= 2);
        all_are(false);
        break;
      case ExprKind::kSub:
      case ExprKind::kFloorDiv:
      case ExprKind::kMod:
        count_is(arg_ids.size() == 2);
        all_are(false);
        break;
      case ExprKind::kEq:
      case ExprKind::kNe:
        count_is(arg_ids.size() == 2);
        n.is_bool = true;
        if (k_.exprs[arg_ids[0]].is_bool != k_.exprs[arg_ids[1]].is_bool) all_are(false);
        break;
      case ExprKind::kLt:
      case ExprKind::kLe:
      case ExprKind::kGt:
      case ExprKind::kGe:
        count_is(arg_ids.size() == 2);
        all_are(false);
        n.is_bool = true;
        break;
      case ExprKind::kAnd:
      case ExprKind::kOr:
        count_is(arg_ids.size() >= 2);
        all_are(true);
        n.is_bool = true;
        break;
      case ExprKind::kNot:
        count_is(arg_ids.size() == 1);
        all_are(true);
        n.is_bool = true;
        break;
      case ExprKind::kInt:  // the one bool-to-int conversion; arithmetic stays integer-only
        count_is(arg_ids.size() == 1);
        all_are(true);
        break;
      case ExprKind::kLoad: {
        all_are(false);
        const std::string param = need_string(j, "param", ctx);
        int p = -1;
        for (std::size_t i = 0; i < k_.params.size(); ++i) {
          if (k_.params[i].name == param) p = static_cast<int>(i);
        }
        if (p < 0) fail_at(ctx, "\"load\" reads unknown tensor parameter \"" + param + "\"");
        const Param& pr = k_.params[p];
        if (pr.dtype == DType::kFp32 || pr.dtype == DType::kFp16 || pr.dtype == DType::kBf16) {
          fail_at(ctx, "\"load\" reads tensor \"" + param +
                           "\" of a floating-point dtype; "
                           "expected an integer tensor");
        }
        if (arg_ids.size() != pr.shape.size()) {
          fail_at(ctx, "\"load\" of \"" + param + "\" needs " + std::to_string(pr.shape.size()) +
                           " indices, got " + std::to_string(arg_ids.size()));
        }
        n.slot = p;
        loads_.emplace_back(p, ctx);
        break;
      }
      default: break;
    }
    n.first_arg = static_cast<std::int32_t>(k_.expr_args.size());
    n.num_args = static_cast<std::int32_t>(arg_ids.size());
    k_.expr_args.insert(k_.expr_args.end(), arg_ids.begin(), arg_ids.end());
    return add_node(n);
  }

  std::vector<ExprId> parse_expr_list(const Json& j, const std::string& what,
                                      const std::string& ctx) {
    if (!j.is_array()) fail_at(ctx, what + " must be a list, got " + j.dump());
    std::vector<ExprId> out;
    for (const Json& e : j) out.push_back(parse_expr(e, ctx));
    return out;
  }

  // ---- values ----

  int add_value(const Json& v, const std::string& ctx) {
    ValueInfo info;
    info.ir_id = need_int(need(v, "id", ctx), "value \"id\"", ctx);
    info.shape = parse_expr_list(need(v, "shape", ctx), "value \"shape\"", ctx);
    if (info.shape.empty() || info.shape.size() > static_cast<std::size_t>(kMaxRank)) {
      fail_at(ctx, "value %" + std::to_string(info.ir_id) + " has rank " +
                       std::to_string(info.shape.size()) + "; the compiler supports ranks 1.." +
                       std::to_string(kMaxRank));
    }
    info.dtype = parse_dtype(need(v, "dtype", ctx), ctx);
    info.no_l2 = opt_bool(v, "no_l2_cache", false, ctx);
    if (const auto it = v.find("valid_shape"); it != v.end() && !it->is_null()) {
      info.valid = parse_expr_list(*it, "\"valid_shape\"", ctx);
      if (info.valid.size() != info.shape.size()) {
        fail_at(ctx, "value %" + std::to_string(info.ir_id) + ": valid_shape has " +
                         std::to_string(info.valid.size()) + " entries for rank " +
                         std::to_string(info.shape.size()));
      }
    }
    std::string key;
    for (const Json& d : need(v, "shape", ctx)) key += d.dump() + ";";
    info.shape_key = key;
    for (const ExprId e : info.shape) info.static_extent = info.static_extent && is_const(k_, e);
    for (const ExprId e : info.valid) info.static_extent = info.static_extent && is_const(k_, e);
    const auto idx = static_cast<int>(k_.values.size());
    if (!value_of_.emplace(info.ir_id, idx).second) {
      fail_at(ctx, "value id " + std::to_string(info.ir_id) + " is defined twice");
    }
    k_.values.push_back(std::move(info));
    return idx;
  }

  int value_ref(const Json& id, const std::string& ctx) {
    const std::int64_t v = need_int(id, "a value reference", ctx);
    const auto it = value_of_.find(v);
    if (it == value_of_.end()) fail_at(ctx, "refers to undefined value %" + std::to_string(v));
    return it->second;
  }

  void parse_param(const Json& p) {
    const std::string ctx = "kernel IR param";
    Param pr;
    pr.name = need_string(p, "name", ctx);
    const std::string pctx = "kernel IR param \"" + pr.name + "\"";
    pr.dtype = parse_dtype(need(p, "dtype", pctx), pctx);
    pr.shape = parse_expr_list(need(p, "shape", pctx), "\"shape\"", pctx);
    for (const Param& q : k_.params) {
      if (q.name == pr.name) fail_at(pctx, "parameter name is used twice");
    }
    Json v = {{"id", need(p, "value", pctx)},
              {"shape", need(p, "shape", pctx)},
              {"dtype", need(p, "dtype", pctx)},
              {"valid_shape", nullptr},
              {"no_l2_cache", opt_bool(p, "no_l2_cache", false, pctx)}};
    pr.value = add_value(v, pctx);
    if (const auto it = p.find("format"); it != p.end()) {
      if (!it->is_string() || (*it != "TILEOP_ND" && *it != "TILEOP_NZ")) {
        fail_at(pctx, "\"format\" must be \"TILEOP_ND\" or \"TILEOP_NZ\", got " + it->dump());
      }
      k_.values[pr.value].nz = *it == "TILEOP_NZ";
    }
    k_.values[pr.value].param = static_cast<int>(k_.params.size());
    pr.written = opt_bool(p, "is_output_written", false, pctx);
    k_.params.push_back(std::move(pr));
  }

  // ---- statements ----

  std::vector<Variant> parse_variants(const Json& arr, const ParseScope& scope,
                                      const std::string& ctx) {
    if (arr.empty()) fail_at(ctx, "a body needs at least one variant");
    std::vector<Variant> out;
    for (const Json& v : arr) {
      Variant var;
      var.guard = parse_expr(need(v, "guard", ctx), ctx + " guard", true);
      ++segment_;
      for (const Json& s : need_array(v, "body", ctx)) var.body.push_back(parse_stmt(s, scope));
      out.push_back(std::move(var));
    }
    return out;
  }

  // An op's or write's sg_set_scope id (-1 when it names none) and merge flags.
  void parse_sg_scope(const Json& s, const std::string& loc, Stmt& st) {
    const auto it = s.find("sg_scope");
    if (it == s.end() || it->is_null()) return;
    const std::int64_t id = need_int(*it, "\"sg_scope\"", loc);
    if (id < 0 || id > 0x7FFFFFFF) {
      fail_at(loc, "\"sg_scope\" must be a scope id in [0, 2^31), got " + it->dump());
    }
    st.sg_scope = static_cast<std::int32_t>(id);
    const auto f = s.find("sg_scope_flags");
    if (f == s.end() || f->is_null()) return;
    if (!f->is_array() || f->size() != 2 || !(*f)[0].is_boolean() || !(*f)[1].is_boolean()) {
      fail_at(loc,
              "\"sg_scope_flags\" must be [allow_parallel_merge, allow_cross_scope_merge] "
              "(two booleans), got " +
                  f->dump());
    }
    st.sg_flags = static_cast<std::uint8_t>(((*f)[0].get<bool>() ? kSgParallelMerge : 0) |
                                            ((*f)[1].get<bool>() ? kSgCrossScopeMerge : 0));
  }

  std::vector<std::int64_t> parse_vec_tile(const Json& s, const std::string& loc) {
    std::vector<std::int64_t> t;
    const auto it = s.find("vec_tile");
    if (it == s.end() || it->is_null()) return t;
    if (!it->is_array() || it->empty() || it->size() > static_cast<std::size_t>(kMaxRank)) {
      fail_at(loc, "\"vec_tile\" must be null or 1.." + std::to_string(kMaxRank) +
                       " positive ints, got " + it->dump());
    }
    for (const Json& d : *it) {
      const std::int64_t x = need_int(d, "a vec_tile size", loc);
      if (x <= 0) fail_at(loc, "\"vec_tile\" sizes must be positive, got " + it->dump());
      t.push_back(x);
    }
    return t;
  }

  int parse_stmt(const Json& s, const ParseScope& scope) {
    const std::string kind = need_string(s, "kind", "kernel IR statement");
    const auto loc_it = s.find("loc");
    const std::string loc =
        (loc_it != s.end() && loc_it->is_string() && !loc_it->get<std::string>().empty())
            ? loc_it->get<std::string>()
            : "kernel IR statement";
    Stmt st;
    st.loc = loc;
    st.segment = segment_;
    st.in_parallel = scope.in_parallel;
    if (kind == "op") {
      st.kind = StmtKind::kOp;
      parse_op(s, st);
    } else if (kind == "write") {
      st.kind = StmtKind::kWrite;
      st.vec_tile = parse_vec_tile(s, loc);
      parse_sg_scope(s, loc, st);
      st.dst = value_ref(need(s, "dst", loc), loc);
      st.src = value_ref(need(s, "src", loc), loc);
      st.offsets = parse_expr_list(need(s, "offsets", loc), "\"offsets\"", loc);
      const ValueInfo& d = k_.values[st.dst];
      const ValueInfo& r = k_.values[st.src];
      if (d.shape.size() != r.shape.size() || st.offsets.size() != d.shape.size()) {
        fail_at(loc, "write of a rank-" + std::to_string(r.shape.size()) + " value into a rank-" +
                         std::to_string(d.shape.size()) + " destination with " +
                         std::to_string(st.offsets.size()) + " offsets; expected equal ranks");
      }
      if (d.dtype != r.dtype) fail_at(loc, "write source and destination dtypes differ");
      if (d.param >= 0) k_.params[d.param].written = true;
    } else if (kind == "loop") {
      st.kind = StmtKind::kLoop;
      const auto idx = static_cast<int>(k_.stmts.size());
      k_.stmts.push_back(st);  // reserve the slot so loops number in program order
      parse_loop(s, idx, scope);
      ++segment_;  // statements after the loop form a new root
      return idx;
    } else {
      fail_at(loc, "unknown statement kind \"" + kind + "\" (expected op, write or loop)");
    }
    k_.stmts.push_back(std::move(st));
    return static_cast<int>(k_.stmts.size() - 1);
  }

  void parse_loop(const Json& s, int stmt_idx, const ParseScope& scope) {
    const std::string loc = k_.stmts[stmt_idx].loc;
    LoopInfo L;
    L.stmt = stmt_idx;
    L.start = parse_expr(need(s, "start", loc), loc);
    L.stop = parse_expr(need(s, "stop", loc), loc);
    L.step = parse_expr(need(s, "step", loc), loc);
    if (is_const(k_, L.step) && k_.exprs[L.step].value <= 0) {
      fail_at(loc, "loop step " + std::to_string(k_.exprs[L.step].value) +
                       " is not positive (expected a positive int)");
    }
    L.parallel = opt_bool(s, "parallel", false, loc);
    L.submit_before_loop = opt_bool(s, "submit_before_loop", false, loc);
    if (const auto it = s.find("unroll_list"); it != s.end() && !it->is_null()) {
      if (!it->is_array()) fail_at(loc, "\"unroll_list\" must be a list of positive ints");
      for (const Json& f : *it) {
        const std::int64_t x = need_int(f, "an unroll factor", loc);
        if (x <= 0) fail_at(loc, "unroll factors must be positive, got " + it->dump());
        L.unroll.push_back(x);
      }
    }
    std::sort(L.unroll.begin(), L.unroll.end(), std::greater<>());
    L.unroll.erase(std::unique(L.unroll.begin(), L.unroll.end()), L.unroll.end());
    if (L.unroll.empty() || L.unroll.back() != 1) L.unroll.push_back(1);
    const std::string index = need_string(s, "index", loc);
    declare_slot(index, loc);
    L.index_slot = static_cast<std::int32_t>(k_.slot_names.size() - 1);
    if (L.parallel) k_.has_parallel_loop = true;
    const int loop_idx = static_cast<int>(k_.loops.size());
    k_.loops.push_back(LoopInfo{});
    k_.stmts[stmt_idx].loop = loop_idx;
    ParseScope inner = scope;
    inner.in_parallel = scope.in_parallel || L.parallel;
    L.variants = parse_variants(need_array(s, "variants", loc), inner, loc);
    for (const Variant& v : L.variants) {
      for (const int b : v.body) {
        if (k_.stmts[b].kind == StmtKind::kLoop) L.has_nested_loop = true;
      }
    }
    k_.loops[loop_idx] = std::move(L);
  }

  Operand parse_operand(const Json& in, const std::string& loc) {
    Operand o;
    if (in.contains("value")) {
      o.value = value_ref(in["value"], loc);
    } else if (in.contains("const")) {
      const Json& c = in["const"];
      if (c.is_boolean()) {
        o.constant = c.get<bool>() ? 1.0 : 0.0;
      } else if (c.is_number()) {
        o.constant = c.get<double>();
      } else if (c.is_string() && (c == "inf" || c == "-inf" || c == "nan")) {
        // JSON has no infinities or NaN: the IR spells them as strings (IR.md).
        const std::string t = c.get<std::string>();
        o.constant = t == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                : (t == "inf" ? 1 : -1) * std::numeric_limits<double>::infinity();
      } else {
        fail_at(loc, "scalar \"const\" must be a number, bool, \"inf\", \"-inf\" or \"nan\", got " +
                         c.dump());
      }
    } else if (in.contains("expr")) {
      o.expr = parse_expr(in["expr"], loc);
    } else {
      fail_at(loc, "an op input must be {\"value\"}, {\"const\"} or {\"expr\"}, got " + in.dump());
    }
    return o;
  }

  void parse_op(const Json& s, Stmt& st) {
    const std::string& loc = st.loc;
    const std::string name = need_string(s, "op", loc);
    const OpInfo* info = find_op(name.c_str());
    if (info != nullptr) st.op = info->kind;
    if (info == nullptr) {
      fail_at(loc, "op \"" + name +
                       "\" is not supported by the compiler (supported: " + supported_ops() + ")");
    }
    for (const Json& in : need_array(s, "inputs", loc)) st.inputs.push_back(parse_operand(in, loc));
    const Json empty = Json::object();
    const auto attrs_it = s.find("attrs");
    const Json& attrs = (attrs_it != s.end() && attrs_it->is_object()) ? *attrs_it : empty;
    st.vec_tile = parse_vec_tile(s, loc);
    if (const auto it = s.find("label"); it != s.end() && !it->is_null()) {
      if (!it->is_string()) fail_at(loc, "\"label\" must be null or a string, got " + it->dump());
      st.label = it->get<std::string>();
    }
    parse_sg_scope(s, loc, st);
    if (const auto it = s.find("combine_axis"); it != s.end() && !it->is_null()) {
      if (!it->is_boolean()) fail_at(loc, "\"combine_axis\" must be a boolean, got " + it->dump());
      st.combine_axis = it->get<bool>();
    }
    if (const auto it = s.find("cube_tile"); it != s.end() && !it->is_null()) {
      const auto read = [&](const char* key, std::int64_t* dst, std::size_t min_n,
                            std::size_t max_n) {
        const Json& a = need(*it, key, loc);
        if (!a.is_array() || a.size() < min_n || a.size() > max_n) {
          fail_at(loc, std::string("cube_tile \"") + key + "\" must list " + std::to_string(min_n) +
                           ".." + std::to_string(max_n) + " sizes, got " + a.dump());
        }
        for (std::size_t i = 0; i < a.size(); ++i) {
          dst[i] = need_int(a[i], "a cube tile size", loc);
          if (dst[i] <= 0)
            fail_at(loc, std::string("cube_tile \"") + key + "\" sizes must be positive");
        }
        if (a.size() < max_n) dst[max_n - 1] = dst[max_n - 2];
      };
      read("m", st.cube.m, 2, 2);
      read("k", st.cube.k, 2, 3);
      read("n", st.cube.n, 2, 2);
      st.has_cube = true;
    }
    st.out = add_value(need(s, "out", loc), loc);
    k_.values[st.out].def_stmt = static_cast<int>(k_.stmts.size());
    check_op(st, attrs);
  }

  const ValueInfo& tensor_input(const Stmt& st, std::size_t i) {
    if (i >= st.inputs.size() || st.inputs[i].value < 0) {
      fail_at(st.loc,
              std::string(op_name(st.op)) + ": input " + std::to_string(i) + " must be a tensor");
    }
    return k_.values[st.inputs[i].value];
  }

  std::vector<int> parse_axes(const Json& attrs, const char* key, const Stmt& st) {
    const Json& d = need(attrs, key, st.loc);
    std::vector<int> out;
    if (d.is_number_integer()) {
      out.push_back(static_cast<int>(need_int(d, "an axis", st.loc)));
    } else if (d.is_array()) {
      for (const Json& a : d) out.push_back(static_cast<int>(need_int(a, "an axis", st.loc)));
    } else {
      fail_at(st.loc, std::string(op_name(st.op)) + ": attrs \"" + key + "\" must be axes, got " +
                          d.dump());
    }
    return out;
  }

  static void need_inputs(const Stmt& st, std::size_t n) {
    if (st.inputs.size() != n) {
      fail_at(st.loc, std::string(op_name(st.op)) + " takes " + std::to_string(n) +
                          " inputs, got " + std::to_string(st.inputs.size()));
    }
  }

  // Operands and attributes of a concat (OpForm::kVariadic).
  void check_concat(Stmt& st, const Json& attrs) {
    const std::string& loc = st.loc;
    const std::size_t rank = k_.values[st.out].shape.size();
    if (st.inputs.empty()) fail_at(loc, "concat needs at least one input");
    for (std::size_t i = 0; i < st.inputs.size(); ++i) {
      if (tensor_input(st, i).shape.size() != rank)
        fail_at(loc, "concat: inputs must have the output's rank");
    }
    const Json& d = need(attrs, "dim", loc);
    st.concat_dim = static_cast<int>(need_int(d, "concat \"dim\"", loc));
    if (st.concat_dim < 0 || static_cast<std::size_t>(st.concat_dim) >= rank) {
      fail_at(loc, "concat: dim " + std::to_string(st.concat_dim) + " is outside 0.." +
                       std::to_string(rank - 1));
    }
  }

  // Operands and attributes of a matmul (OpForm::kMatmul, DTypeRule::kMatmul).
  void check_matmul(Stmt& st, const Json& attrs) {
    const std::string& loc = st.loc;
    const std::size_t rank = k_.values[st.out].shape.size();
    std::size_t n_in = 2;
    if (opt_bool(attrs, "bias", false, loc)) st.bias_input = static_cast<int>(n_in++);
    if (opt_bool(attrs, "scale_tensor", false, loc))
      st.scale_tensor_input = static_cast<int>(n_in++);
    need_inputs(st, n_in);
    if (const auto it = attrs.find("scale"); it != attrs.end() && !it->is_null()) {
      if (!it->is_number()) fail_at(loc, "matmul: attrs \"scale\" must be a number");
      st.scale = it->get<double>();
    }
    st.relu = opt_bool(attrs, "relu", false, loc);
    if (const auto it = attrs.find("conv"); it != attrs.end() && !it->is_null()) {
      if (!it->is_object()) fail_at(loc, "matmul: attrs \"conv\" must be an object");
      ConvTile& c = st.conv;
      const std::pair<const char*, std::int64_t*> fields[] = {
          {"hw_l0", &c.hw_l0},   {"k_l0", &c.k_l0},     {"n_l0", &c.n_l0},
          {"hin_l1", &c.hin_l1}, {"win_l1", &c.win_l1}, {"k_al1", &c.k_al1},
          {"k_bl1", &c.k_bl1},   {"n_l1", &c.n_l1},     {"c0", &c.c0}};
      for (const auto& [key, dst] : fields) {
        *dst = need_int(need(*it, key, loc), std::string("conv \"") + key + "\"", loc);
        if (*dst <= 0) fail_at(loc, std::string("matmul: conv \"") + key + "\" must be > 0");
      }
      c.backward_input = opt_bool(*it, "backward_input", false, loc);
    }
    if (const auto it = attrs.find("trans_mode"); it != attrs.end() && !it->is_null()) {
      const std::string m = it->is_string() ? it->get<std::string>() : "";
      if (m == "CAST_NONE") {
        st.trans_mode = 0;
      } else if (m == "CAST_RINT") {
        st.trans_mode = 1;
      } else if (m == "CAST_ROUND") {
        st.trans_mode = 2;
      } else {
        fail_at(loc, "matmul: unknown trans_mode " + it->dump());
      }
    }
    const bool extended = st.bias_input >= 0 || st.scale_tensor_input >= 0 || st.scale != 0 ||
                          st.relu || st.trans_mode != 0;
    if (extended && rank != 2) fail_at(loc, "matmul: extend_params apply to 2-D matmuls only");
    for (const int i : {st.bias_input, st.scale_tensor_input}) {
      if (i < 0) continue;
      const ValueInfo& t = tensor_input(st, static_cast<std::size_t>(i));
      if (t.shape.size() != 2) fail_at(loc, "matmul: bias and scale tensors must be [1, N]");
    }
    const ValueInfo& a = tensor_input(st, 0);
    const ValueInfo& b = tensor_input(st, 1);
    if (a.shape.size() != rank || b.shape.size() != rank || rank < 2) {
      fail_at(loc, "matmul: operands and output need equal ranks 2.." + std::to_string(kMaxRank));
    }
    if (!st.has_cube) fail_at(loc, "matmul has no cube_tile; call pypto.set_cube_tile_shapes");
    st.a_trans = opt_bool(attrs, "a_trans", false, loc);
    st.b_trans = opt_bool(attrs, "b_trans", false, loc);
    if (a.dtype != b.dtype) fail_at(loc, "matmul: operand dtypes differ");
    if (!is_cube_dtype(a.dtype)) {
      fail_at(loc, "matmul: operand dtype " + std::string(model::to_string(a.dtype)) +
                       " is not supported (expected fp16, bf16, fp32 or int8)");
    }
  }

  // Operands and attributes of gather, scatter, scatter_update and load (OpForm::kIndexed).
  void check_indexed(Stmt& st, const Json& attrs) {
    const std::string& loc = st.loc;
    const std::string name = op_name(st.op);
    const std::size_t rank = k_.values[st.out].shape.size();
    const bool two = st.op == OpKind::kGather || st.op == OpKind::kLoadElems;
    need_inputs(st, two ? 2 : 3);
    const ValueInfo& x = tensor_input(st, 0);
    const ValueInfo& ix = tensor_input(st, 1);
    const bool ok_index = ix.dtype == DType::kInt32 || ix.dtype == DType::kInt64 ||
                          (st.op == OpKind::kScatterUpdate && ix.dtype == DType::kInt16);
    if (!ok_index) fail_at(loc, name + ": the index must be an integer tensor (DT_INT32/DT_INT64)");
    if (x.dtype == DType::kBool) fail_at(loc, name + ": DT_BOOL tensors are not supported");
    if (k_.values[st.out].dtype != x.dtype)
      fail_at(loc, name + ": the result keeps the input dtype");
    if (st.op == OpKind::kLoadElems) {
      if (k_.values[st.out].shape.size() != ix.shape.size()) {
        fail_at(loc, name + ": the result has the offsets' shape");
      }
      return;
    }
    if (!two && st.inputs[2].value >= 0 && k_.values[st.inputs[2].value].dtype != x.dtype) {
      fail_at(loc, name + ": the source must have the input's dtype");
    }
    if (st.op == OpKind::kScatterUpdate) {
      if (st.inputs[2].value < 0) fail_at(loc, name + ": the source must be a tensor");
      if (ix.shape.size() != 2) fail_at(loc, name + ": the index must be 2-D");
      if (rank != x.shape.size()) fail_at(loc, name + ": output rank differs from input");
      return;
    }
    st.dims = parse_axes(attrs, "dims", st);
    if (st.dims.size() != 1 || st.dims[0] < 0 || static_cast<std::size_t>(st.dims[0]) >= rank) {
      fail_at(loc, name + ": \"dims\" must be one axis of the input");
    }
    if (x.shape.size() != rank || ix.shape.size() != rank) {
      fail_at(loc, name + ": input, index and output need equal ranks");
    }
    if (st.op == OpKind::kScatter) {
      const auto it = attrs.find("reduce");
      const std::string r = (it != attrs.end() && it->is_string()) ? it->get<std::string>() : "";
      if (r.empty() || r == "none") {
        st.scatter_reduce = 0;
      } else if (r == "add") {
        st.scatter_reduce = 1;
      } else if (r == "multiply") {
        st.scatter_reduce = 2;
      } else {
        fail_at(loc, name + ": reduce must be none, add or multiply, got \"" + r + "\"");
      }
      if (st.inputs[2].value >= 0 && k_.values[st.inputs[2].value].shape.size() != rank) {
        fail_at(loc, name + ": the source needs the input's rank");
      }
    }
  }

  // Attributes and output rank of a one-tensor op (OpForm::kUnary), by family.
  void check_unary(Stmt& st, const Json& attrs) {
    const std::string& loc = st.loc;
    const std::size_t rank = k_.values[st.out].shape.size();
    need_inputs(st, 1);
    const ValueInfo& in = tensor_input(st, 0);
    const OpFamily family = op_info(st.op).family;
    if (family == OpFamily::kReduce || family == OpFamily::kScan) {
      st.dims = parse_axes(attrs, "dims", st);
      st.keepdim = opt_bool(attrs, "keepdim", false, loc);
      std::sort(st.dims.begin(), st.dims.end());
      for (const int d : st.dims) {
        if (d < 0 || static_cast<std::size_t>(d) >= in.shape.size()) {
          fail_at(loc, std::string(op_name(st.op)) + ": axis " + std::to_string(d) +
                           " is outside 0.." + std::to_string(in.shape.size() - 1));
        }
      }
      const DTypeRule rule = op_info(st.op).dtype;
      if ((family == OpFamily::kScan || rule == DTypeRule::kIndex) && st.dims.size() != 1) {
        fail_at(loc, std::string(op_name(st.op)) + ": needs exactly one axis in \"dims\"");
      }
      if (st.op == OpKind::kSort || st.op == OpKind::kArgsort) {
        st.descending = opt_bool(attrs, "descending", false, loc);
        const auto it = attrs.find("k");
        if (it == attrs.end() || !it->is_number_integer()) {
          fail_at(loc, std::string(op_name(st.op)) + ": needs an integer attribute \"k\"");
        }
        st.sort_k = it->get<std::int64_t>();
        if (st.sort_k < 1) {
          fail_at(loc, std::string(op_name(st.op)) + ": k must be at least 1, got " +
                           std::to_string(st.sort_k));
        }
      }
      const std::size_t kept = in.shape.size() - st.dims.size();
      std::size_t want = st.keepdim ? in.shape.size() : std::max<std::size_t>(kept, 1);
      if (family == OpFamily::kScan) want = in.shape.size();
      if (rank != want) {
        fail_at(loc, std::string(op_name(st.op)) + ": output rank " + std::to_string(rank) +
                         " does not match the reduction (expected " + std::to_string(want) + ")");
      }
    } else if (st.op == OpKind::kCast) {
      const auto it = attrs.find("mode");
      const std::string mode =
          (it != attrs.end() && it->is_string()) ? it->get<std::string>() : "CAST_NONE";
      static const std::pair<const char*, CastMode> kModes[] = {
          {"CAST_NONE", CastMode::kNone},   {"CAST_RINT", CastMode::kRint},
          {"CAST_ROUND", CastMode::kRound}, {"CAST_FLOOR", CastMode::kFloor},
          {"CAST_CEIL", CastMode::kCeil},   {"CAST_TRUNC", CastMode::kTrunc},
          {"CAST_ODD", CastMode::kOdd}};
      bool ok = false;
      for (const auto& [n, m] : kModes) {
        if (mode == n) {
          st.cast_mode = m;
          ok = true;
        }
      }
      if (!ok) fail_at(loc, "cast: unknown mode \"" + mode + "\"");
      const auto sat = attrs.find("satmode");
      const std::string satmode =
          (sat != attrs.end() && sat->is_string()) ? sat->get<std::string>() : "OFF";
      if (satmode != "OFF" && satmode != "ON") {
        fail_at(loc, "cast: satmode must be OFF or ON, got \"" + satmode + "\"");
      }
      st.saturate = satmode == "ON";
      if (in.shape.size() != rank) fail_at(loc, "cast: output rank differs from input");
    } else if (family == OpFamily::kView) {
      st.offsets = parse_expr_list(need(attrs, "offsets", loc), "view \"offsets\"", loc);
      if (st.offsets.size() != in.shape.size() || rank != in.shape.size()) {
        fail_at(loc, "view: offsets and output need the input's rank " +
                         std::to_string(in.shape.size()));
      }
    } else if (family == OpFamily::kPermute) {
      const std::vector<int> d = parse_axes(attrs, "dims", st);
      if (in.shape.size() != rank) {
        fail_at(loc, "transpose/permute: output rank differs from input");
      }
      std::vector<int> perm(rank);
      for (std::size_t i = 0; i < rank; ++i) perm[i] = static_cast<int>(i);
      if (st.op == OpKind::kTranspose) {
        if (d.size() != 2 || d[0] < 0 || d[1] < 0 || static_cast<std::size_t>(d[0]) >= rank ||
            static_cast<std::size_t>(d[1]) >= rank) {
          fail_at(loc, "transpose: dims must be two axes of the input");
        }
        std::swap(perm[d[0]], perm[d[1]]);
      } else {
        std::vector<int> sorted = d;
        std::sort(sorted.begin(), sorted.end());
        if (sorted != perm)
          fail_at(loc, "permute: dims is not a permutation of 0.." + std::to_string(rank - 1));
        perm = d;
      }
      st.dims = perm;
    } else if (family == OpFamily::kEltwise && in.shape.size() != rank) {
      // Copies and the element-wise math ops keep the input's rank (reshape need not).
      fail_at(loc, std::string(op_name(st.op)) + ": output rank differs from input");
    }
  }

  void check_op(Stmt& st, const Json& attrs) {
    const std::string& loc = st.loc;
    const OpInfo& info = op_info(st.op);
    const std::size_t rank = k_.values[st.out].shape.size();
    if (info.needs_vec_tile && st.vec_tile.empty()) {
      fail_at(loc, std::string(info.name) +
                       " has no vec_tile; call "
                       "pypto.set_vec_tile_shapes before compute ops");
    }
    switch (info.form) {
      case OpForm::kNullary: need_inputs(st, 0); break;
      case OpForm::kFill:
        need_inputs(st, 1);
        if (st.inputs[0].value >= 0) {
          fail_at(loc, std::string(info.name) + ": the fill value must be a scalar");
        }
        break;
      case OpForm::kBinary:
        need_inputs(st, 2);
        tensor_input(st, 0);
        break;
      case OpForm::kRange:
        need_inputs(st, 2);
        if (st.inputs[0].value >= 0 || st.inputs[1].value >= 0) {
          fail_at(loc, std::string(info.name) + ": the start and step must be scalars");
        }
        if (rank != 1) fail_at(loc, std::string(info.name) + ": the result must be 1-D");
        break;
      case OpForm::kSelect:
        need_inputs(st, 3);
        if (tensor_input(st, 0).dtype != DType::kBool) {
          fail_at(loc, std::string(info.name) + ": the condition must be DT_BOOL");
        }
        break;
      case OpForm::kVariadic: check_concat(st, attrs); break;
      case OpForm::kPair:
      case OpForm::kMatmul: check_matmul(st, attrs); break;
      case OpForm::kIndexed: check_indexed(st, attrs); break;
      case OpForm::kUnary: check_unary(st, attrs); break;
      case OpForm::kParam:
        need_inputs(st, 2);
        if (tensor_input(st, 0).shape.size() != rank) {
          fail_at(loc, std::string(info.name) + ": output rank differs from input");
        }
        if (st.inputs[1].value >= 0) {
          fail_at(loc, std::string(info.name) + ": input 1 must be a scalar parameter");
        }
        if ((st.op == OpKind::kTriu || st.op == OpKind::kTril) && rank < 2) {
          fail_at(loc, std::string(info.name) + ": needs a tensor of rank 2 or more");
        }
        break;
    }
    if (is_elementwise(st.op)) {
      for (const Operand& o : st.inputs) {
        if (o.value >= 0 && k_.values[o.value].shape.size() > rank) {
          fail_at(loc,
                  std::string(op_name(st.op)) + ": an input has a higher rank than the output");
        }
      }
    }
  }

  void finish() {
    // The control flow evaluates `load` when the launch is built, before any task ran, so it
    // sees the tensor as passed in. A tensor the kernel writes would be read too early.
    for (const auto& [p, ctx] : loads_) {
      if (k_.params[p].written) {
        fail_at(ctx,
                "the control flow reads tensor \"" + k_.params[p].name +
                    "\" (a load), which "
                    "the kernel also writes; loads are evaluated before the kernel's tasks run, "
                    "so only tensors the kernel does not write may be read");
      }
    }
    // Uses of every value.
    for (std::size_t s = 0; s < k_.stmts.size(); ++s) {
      const Stmt& st = k_.stmts[s];
      if (st.kind == StmtKind::kOp) {
        for (const Operand& o : st.inputs) {
          if (o.value >= 0) k_.values[o.value].uses.push_back(static_cast<int>(s));
        }
      } else if (st.kind == StmtKind::kWrite) {
        k_.values[st.src].uses.push_back(static_cast<int>(s));
        if (st.dst != st.src) k_.values[st.dst].uses.push_back(static_cast<int>(s));
      }
    }
  }

  Kernel& k_;
  std::unordered_map<std::string, int> slot_of_;
  std::unordered_map<std::int64_t, int> value_of_;
  std::vector<std::pair<int, std::string>> loads_;  // (parameter, loc) of every `load`
  int segment_ = 0;
};

}  // namespace
}  // namespace detail

std::shared_ptr<const CompiledKernel> compile(const std::string& ir_json) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(ir_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(std::string("kernel IR: malformed JSON: ") + e.what());
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double (e.g. 1e999): nlohmann reports it as out_of_range 406.
    throw ConfigError(std::string("kernel IR: a number is too large for a double: ") + e.what());
  }
  auto ck = std::make_shared<CompiledKernel>();
  try {
    detail::Parser(ck->k).parse(root);
  } catch (const nlohmann::json::exception& e) {
    // A wrong JSON type somewhere the parser did not check explicitly.
    throw ConfigError(std::string("kernel IR: unexpected JSON shape: ") + e.what());
  }
  detail::lower(ck->k);
  return ck;
}

std::string kernel_name(const CompiledKernel& k) { return k.k.name; }

}  // namespace pypto::compiler
