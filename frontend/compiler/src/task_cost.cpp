// SPDX-License-Identifier: Apache-2.0
// The cost-model op of each tile instruction (task_cost.h) and a launched task's priced ops
// (compile.h's task_tile_ops).
#include "task_cost.h"

#include <algorithm>
#include <string>

#include "pypto/common/errors.h"
#include "pypto/compiler/compile.h"
#include "pypto/compiler/op_table.h"

namespace pypto::compiler::detail {

namespace {

void shape_of(const LocalTile& t, sim::TileOp* out) {
  out->shape.assign(t.shape, t.shape + t.rank);
}

}  // namespace

bool priced_op(const TaskProgram& p, const TileInstr& in, sim::TileOp* out) {
  const TileOpInfo* info = find_tile_op(in.op);
  NPU_CHECK(info != nullptr, "priced_op: not a tile opcode: " + std::to_string(int(in.op)));
  if (info->cost_op == nullptr) return false;  // data movement
  out->op = info->cost_op;
  if (info->exec == TileExec::kMatmul) {
    const LocalTile& a = p.locals[in.src[0]];
    const LocalTile& b = p.locals[in.src[1]];
    out->dtype = a.dtype;
    out->shape = {a.shape[a.rank - 2], a.shape[a.rank - 1], b.shape[b.rank - 1]};
    return true;
  }
  // Reductions and sorts are priced over their source (a top-k's dst is smaller).
  const bool reduce = info->exec == TileExec::kReduce || info->exec == TileExec::kSort;
  const LocalTile& dst = p.locals[reduce ? in.src[0] : in.dst];
  out->dtype = dst.dtype;
  shape_of(dst, out);
  if (info->exec == TileExec::kCast && in.src[0] >= 0) {
    // A conversion streams the wider of its two element types.
    const DType s = p.locals[in.src[0]].dtype;
    if (sim::dtype_bytes(s) > sim::dtype_bytes(out->dtype)) out->dtype = s;
  }
  return true;
}

}  // namespace pypto::compiler::detail

namespace pypto::compiler {

std::uint64_t task_tile_ops(const Launch& l, sched::TaskId t, const sim::ChipConfig& chip,
                            std::vector<sim::TileOp>* ops) {
  if (t >= l.programs.size()) return 0;
  std::uint64_t cycles = 0;
  sim::TileOp op;
  const TaskProgram& p = l.programs[t];
  for (const TileInstr& in : p.instrs) {
    if (!detail::priced_op(p, in, &op)) continue;
    cycles += sim::tile_op_cycles(op, chip);
    ops->push_back(op);
  }
  return cycles;
}

}  // namespace pypto::compiler
