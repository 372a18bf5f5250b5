// SPDX-License-Identifier: Apache-2.0
// append_task_ops(): a compiled task's tile ops as the native trace's `ops` field, priced by
// the same cost model that priced the task, so a dumped launch replays with the same
// durations. The records themselves are written by sim::write_native_trace, the format's one
// writer (frontend/launch's dump_trace joins the two).
#include <string>

#include "pypto/compiler/compile.h"
#include "task_cost.h"

namespace pypto::compiler {

std::uint64_t append_task_ops(const Launch& l, common::TaskId t, const model::ChipConfig& chip,
                              std::string& line) {
  if (t >= l.programs.size()) return 0;
  std::uint64_t cycles = 0;
  bool first = true;
  model::TileOp op;
  const TaskProgram& p = l.programs[t];
  for (const TileInstr& in : p.instrs) {
    if (!detail::priced_op(p, in, &op)) continue;
    cycles += model::tile_op_cycles(op, chip);
    line += first ? ",\"ops\":[" : ",";
    first = false;
    line += "[\"" + op.op + "\",\"" + std::string(model::to_string(op.dtype)) + "\",[";
    for (std::size_t i = 0; i < op.shape.size(); ++i) {
      if (i) line += ',';
      line += std::to_string(op.shape[i]);
    }
    line += "]]";
  }
  if (!first) line += ']';
  return cycles;
}

}  // namespace pypto::compiler
