// SPDX-License-Identifier: Apache-2.0
// write_native_trace(): a launch as a native trace (traces/FORMAT.md, version 1) that
// `pypto-sim run` replays with the same device tasks, edges, memory ranges and tile ops.
// Written by hand rather than through a JSON DOM: a launch may hold 60,000 tasks with
// dozens of ranges each, and only kernel names need escaping.
#include <nlohmann/json.hpp>
#include <string>

#include "pypto/compiler/compile.h"
#include "task_cost.h"

namespace pypto::compiler {

void write_native_trace(const Launch& l, const sim::ChipConfig& chip, std::ostream& out) {
  const sched::TaskGraph& g = l.graph;
  const std::size_t n = g.num_tasks();
  std::string line;
  line.reserve(4096);
  line = "{\"format\":\"pypto-sim-trace\",\"version\":1,\"chip\":" +
         nlohmann::json(chip.chip.name).dump() +
         ",\"time_unit\":\"ns\",\"tasks\":" + std::to_string(n) +
         ",\"generator\":" + nlohmann::json("pypto compiler: " + g.source).dump() + "}\n";
  out << line;
  std::vector<std::string> kernels;
  kernels.reserve(g.kernel_names.size());
  for (const std::string& k : g.kernel_names) kernels.push_back(nlohmann::json(k).dump());
  std::uint32_t last_dt = 0xFFFFFFFFu;
  sim::TileOp op;
  for (std::size_t t = 0; t < n; ++t) {
    const sched::DeviceTask& d = g.device_tasks[g.device_task[t]];
    if (g.device_task[t] != last_dt) {
      last_dt = g.device_task[t];
      out << "{\"device_task\":" << d.seq_no << ",\"parallel_group\":" << d.parallel_group << "}\n";
    }
    line.clear();
    line += "{\"id\":" + std::to_string(t) + ",\"core\":\"" +
            std::string(sched::to_string(g.core_type[t])) +
            "\",\"kernel\":" + kernels[g.kernel[t]] + ",\"root\":" + std::to_string(g.root[t]) +
            ",\"dt\":" + std::to_string(d.seq_no);
    if (g.succ_first(t) != g.succ_last(t)) {
      line += ",\"succ\":[";
      for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) {
        if (e != g.succ_first(t)) line += ',';
        line += std::to_string(g.succ[e]);
      }
      line += ']';
    }
    if (g.has_memory() && g.mem_begin[t] != g.mem_begin[t + 1]) {
      line += ",\"mem\":[";
      for (std::uint32_t m = g.mem_begin[t]; m < g.mem_begin[t + 1]; ++m) {
        const sched::MemAccess& a = g.mem[m];
        if (m != g.mem_begin[t]) line += ',';
        line += '[' + std::to_string(a.addr) + ',' + std::to_string(a.bytes) +
                (a.is_write ? ",\"w\"]" : ",\"r\"]");
      }
      line += ']';
    }
    std::uint64_t ops_cycles = 0;
    if (t < l.programs.size()) {
      bool first = true;
      const TaskProgram& p = l.programs[t];
      for (const TileInstr& in : p.instrs) {
        if (!detail::priced_op(p, in, &op)) continue;
        ops_cycles += sim::tile_op_cycles(op, chip);
        line += first ? ",\"ops\":[" : ",";
        first = false;
        line += "[\"" + op.op + "\",\"" + std::string(sim::to_string(op.dtype)) + "\",[";
        for (std::size_t i = 0; i < op.shape.size(); ++i) {
          if (i) line += ',';
          line += std::to_string(op.shape[i]);
        }
        line += "]]";
      }
      if (!first) line += ']';
    }
    if (g.tiles[t] != 1) line += ",\"tiles\":" + std::to_string(g.tiles[t]);
    // Compute the ops do not explain (the dynamic-shape overhead of the leaf).
    if (g.compute_cycles[t] > ops_cycles) {
      line += ",\"cycles\":" + std::to_string(g.compute_cycles[t] - ops_cycles);
    }
    line += "}\n";
    out << line;
  }
}

}  // namespace pypto::compiler
