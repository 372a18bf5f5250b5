// SPDX-License-Identifier: Apache-2.0
// Evaluation of IR expressions (IR.md section 2): 64-bit integers with Python floor
// semantics for floordiv and mod; booleans as 0/1; `load` reads the host tensor.
#include <algorithm>
#include <cstring>
#include <string>

#include "ir.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

[[noreturn]] void fail(const Env& env, const std::string& msg) {
  throw ConfigError((env.loc != nullptr ? *env.loc : std::string("kernel IR")) + ": " + msg);
}

void check_overflow(bool overflow, const Env& env, const char* op) {
  if (overflow)
    fail(env, std::string("64-bit integer overflow in '") + op +
                  "' while evaluating a "
                  "run-time expression");
}

std::int64_t read_element(const Kernel& k, const ExprNode& n, const std::int64_t* idx, Env& env) {
  const Param& p = k.params[n.slot];
  if (env.tensors == nullptr || static_cast<std::size_t>(n.slot) >= env.tensors->size()) {
    fail(env, "load of tensor \"" + p.name + "\" without launch tensors");
  }
  const LaunchTensor& t = (*env.tensors)[n.slot];
  std::int64_t flat = 0;
  for (std::size_t a = 0; a < t.shape.size(); ++a) {
    if (idx[a] < 0 || idx[a] >= t.shape[a]) {
      fail(env, "load of \"" + p.name + "\" index " + std::to_string(idx[a]) + " on axis " +
                    std::to_string(a) + " is outside 0.." + std::to_string(t.shape[a] - 1));
    }
    flat = flat * t.shape[a] + idx[a];
  }
  const std::uint32_t es = model::dtype_bytes(t.dtype);
  if (t.data == nullptr || static_cast<std::uint64_t>(flat + 1) * es > t.size_bytes) {
    fail(env, "load of \"" + p.name + "\": the tensor has no host data for element " +
                  std::to_string(flat));
  }
  if (env.waits_for_aicore != nullptr) {
    const bool ready = env.ready_on_host != nullptr &&
                       std::find(env.ready_on_host->begin(), env.ready_on_host->end(), p.name) !=
                           env.ready_on_host->end();
    if (!ready) *env.waits_for_aicore = true;
  }
  const std::uint8_t* src = t.data + flat * es;
  switch (t.dtype) {
    case DType::kInt8: {
      std::int8_t v;
      std::memcpy(&v, src, 1);
      return v;
    }
    case DType::kUInt8: return src[0];
    case DType::kInt16: {
      std::int16_t v;
      std::memcpy(&v, src, 2);
      return v;
    }
    case DType::kInt32: {
      std::int32_t v;
      std::memcpy(&v, src, 4);
      return v;
    }
    case DType::kInt64: {
      std::int64_t v;
      std::memcpy(&v, src, 8);
      return v;
    }
    case DType::kBool: return src[0] != 0 ? 1 : 0;
    default: fail(env, "load of \"" + p.name + "\": expected an integer tensor");
  }
}

}  // namespace

bool is_const(const Kernel& k, ExprId e) { return k.exprs[e].kind == ExprKind::kConst; }

std::int64_t eval(const Kernel& k, ExprId e, Env& env) {
  const ExprNode& n = k.exprs[e];
  const ExprId* args = k.expr_args.data() + n.first_arg;
  switch (n.kind) {
    case ExprKind::kConst: return n.value;
    case ExprKind::kSym:
      if (!env.bound[n.slot]) {
        fail(env, "symbol \"" + k.slot_names[n.slot] +
                      "\" has no value here (a loop index used "
                      "outside its loop, or a dynamic dimension without a binding)");
      }
      return env.slot[n.slot];
    case ExprKind::kAdd:
    case ExprKind::kMul:
    case ExprKind::kMin:
    case ExprKind::kMax: {
      std::int64_t acc = eval(k, args[0], env);
      for (std::int32_t i = 1; i < n.num_args; ++i) {
        const std::int64_t b = eval(k, args[i], env);
        std::int64_t r = 0;
        switch (n.kind) {
          case ExprKind::kAdd:
            check_overflow(__builtin_add_overflow(acc, b, &r), env, "add");
            acc = r;
            break;
          case ExprKind::kMul:
            check_overflow(__builtin_mul_overflow(acc, b, &r), env, "mul");
            acc = r;
            break;
          case ExprKind::kMin: acc = std::min(acc, b); break;
          default: acc = std::max(acc, b); break;
        }
      }
      return acc;
    }
    case ExprKind::kSub: {
      const std::int64_t a = eval(k, args[0], env), b = eval(k, args[1], env);
      std::int64_t r = 0;
      check_overflow(__builtin_sub_overflow(a, b, &r), env, "sub");
      return r;
    }
    case ExprKind::kFloorDiv:
    case ExprKind::kMod: {
      const std::int64_t a = eval(k, args[0], env), b = eval(k, args[1], env);
      if (b == 0) fail(env, "division by zero in a run-time expression");
      check_overflow(a == INT64_MIN && b == -1, env, "floordiv");
      std::int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // Python rounds toward -inf
      return n.kind == ExprKind::kFloorDiv ? q : a - q * b;
    }
    case ExprKind::kEq: return eval(k, args[0], env) == eval(k, args[1], env);
    case ExprKind::kNe: return eval(k, args[0], env) != eval(k, args[1], env);
    case ExprKind::kLt: return eval(k, args[0], env) < eval(k, args[1], env);
    case ExprKind::kLe: return eval(k, args[0], env) <= eval(k, args[1], env);
    case ExprKind::kGt: return eval(k, args[0], env) > eval(k, args[1], env);
    case ExprKind::kGe: return eval(k, args[0], env) >= eval(k, args[1], env);
    case ExprKind::kAnd:
      for (std::int32_t i = 0; i < n.num_args; ++i) {
        if (!eval(k, args[i], env)) return 0;
      }
      return 1;
    case ExprKind::kOr:
      for (std::int32_t i = 0; i < n.num_args; ++i) {
        if (eval(k, args[i], env)) return 1;
      }
      return 0;
    case ExprKind::kNot: return eval(k, args[0], env) ? 0 : 1;
    case ExprKind::kInt: return eval(k, args[0], env) != 0 ? 1 : 0;
    case ExprKind::kLoad: {
      std::int64_t idx[kMaxRank + 4] = {};
      for (std::int32_t i = 0; i < n.num_args && i < kMaxRank + 4; ++i)
        idx[i] = eval(k, args[i], env);
      return read_element(k, n, idx, env);
    }
  }
  return 0;
}

}  // namespace pypto::compiler::detail
