// SPDX-License-Identifier: Apache-2.0
// Private to the compiler: which cost-model tile op a tile instruction is. instantiate()
// prices tasks with it and task_tile_ops() lists the same ops, so a dumped trace
// replays with the compute cycles the in-process graph has.
#pragma once

#include "pypto/compiler/program.h"
#include "pypto/model/cost_model.h"

namespace pypto::compiler::detail {

// Fills *out with the cost-model op of a compute instruction (shape: its output tile; the
// input tile for reductions; {M, K, N} for matmul) and returns true; returns false for data
// movement (kLoad, kStore), which the simulator prices through L2 and HBM.
bool priced_op(const TaskProgram& p, const TileInstr& in, sim::TileOp* out);

}  // namespace pypto::compiler::detail
