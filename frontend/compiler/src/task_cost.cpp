// SPDX-License-Identifier: Apache-2.0
#include "task_cost.h"

#include <algorithm>

namespace pypto::compiler::detail {

namespace {

void shape_of(const LocalTile& t, sim::TileOp* out) {
  out->shape.assign(t.shape, t.shape + t.rank);
}

}  // namespace

bool priced_op(const TaskProgram& p, const TileInstr& in, sim::TileOp* out) {
  const char* name = nullptr;
  switch (in.op) {
    case TileOpcode::kLoad:
    case TileOpcode::kStore: return false;
    case TileOpcode::kFill: name = "full"; break;
    case TileOpcode::kCopy: name = "clone"; break;
    case TileOpcode::kPermute: name = "transpose"; break;
    case TileOpcode::kCast: name = "cast"; break;
    case TileOpcode::kAdd: name = "add"; break;
    case TileOpcode::kSub: name = "sub"; break;
    case TileOpcode::kMul: name = "mul"; break;
    case TileOpcode::kDiv: name = "div"; break;
    case TileOpcode::kMaximum: name = "maximum"; break;
    case TileOpcode::kMinimum: name = "minimum"; break;
    // The cost table has no rows for these; they are priced as the op of the same class:
    // remainder is a division plus a correction, floor a rounding conversion, the logical
    // ops one compare-like pass.
    case TileOpcode::kRemainder: name = "div"; break;
    case TileOpcode::kFloor: name = "cast"; break;
    case TileOpcode::kLogicalAnd:
    case TileOpcode::kLogicalOr:
    case TileOpcode::kLogicalNot: name = "eq"; break;
    case TileOpcode::kPow: name = "pow"; break;
    case TileOpcode::kEq: name = "eq"; break;
    case TileOpcode::kNe: name = "ne"; break;
    case TileOpcode::kLt: name = "lt"; break;
    case TileOpcode::kLe: name = "le"; break;
    case TileOpcode::kGt: name = "gt"; break;
    case TileOpcode::kGe: name = "ge"; break;
    case TileOpcode::kNeg: name = "neg"; break;
    case TileOpcode::kAbs: name = "abs"; break;
    case TileOpcode::kRelu: name = "relu"; break;
    case TileOpcode::kExp: name = "exp"; break;
    case TileOpcode::kLog: name = "log"; break;
    case TileOpcode::kSqrt: name = "sqrt"; break;
    case TileOpcode::kRsqrt: name = "rsqrt"; break;
    case TileOpcode::kReciprocal: name = "reciprocal"; break;
    case TileOpcode::kSigmoid: name = "sigmoid"; break;
    case TileOpcode::kTanh: name = "tanh"; break;
    case TileOpcode::kWhere: name = "where"; break;
    case TileOpcode::kReduceSum: name = "sum"; break;
    case TileOpcode::kReduceMax: name = "amax"; break;
    case TileOpcode::kReduceMin: name = "amin"; break;
    case TileOpcode::kMatmul: {
      const LocalTile& a = p.locals[in.src[0]];
      const LocalTile& b = p.locals[in.src[1]];
      out->op = "mmad";
      out->dtype = a.dtype;
      out->shape = {a.shape[a.rank - 2], a.shape[a.rank - 1], b.shape[b.rank - 1]};
      return true;
    }
  }
  out->op = name;
  const bool reduce = in.op == TileOpcode::kReduceSum || in.op == TileOpcode::kReduceMax ||
                      in.op == TileOpcode::kReduceMin;
  const LocalTile& dst = p.locals[reduce ? in.src[0] : in.dst];
  out->dtype = dst.dtype;
  shape_of(dst, out);
  if (in.op == TileOpcode::kCast && in.src[0] >= 0) {
    // A conversion streams the wider of its two element types.
    const DType s = p.locals[in.src[0]].dtype;
    if (sim::dtype_bytes(s) > sim::dtype_bytes(out->dtype)) out->dtype = s;
  }
  return true;
}

}  // namespace pypto::compiler::detail
