// SPDX-License-Identifier: Apache-2.0
// NativeWriter's header and write_native_trace(): written by hand rather than through a JSON
// DOM, because a graph may hold millions of tasks and only names need escaping.
#include "pypto/trace/native_writer.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pypto/common/errors.h"

namespace pypto::trace {

void NativeWriter::header(std::string_view chip, std::uint64_t tasks, std::string_view generator) {
  o_ << "{\"format\":\"pypto-sim-trace\",\"version\":1";
  if (!chip.empty()) o_ << ",\"chip\":" << nlohmann::json(std::string(chip)).dump();
  o_ << ",\"time_unit\":\"ns\",\"tasks\":";
  o_.u(tasks);
  if (!generator.empty()) o_ << ",\"generator\":" << nlohmann::json(std::string(generator)).dump();
  o_ << "}\n";
  o_.end_record();
}

void write_native_trace(const sched::TaskGraph& g, const TaskTimes* times, const std::string& chip,
                        const std::string& generator, std::ostream& out, const TaskOps& task_ops) {
  const std::size_t n = g.num_tasks();
  NPU_CHECK(times == nullptr || (times->start_ps.size() == n && times->end_ps.size() == n),
            "write_native_trace: the timeline is not one of this graph");
  const auto check = [&out] {
    if (!out) throw Error("error while writing the native trace");
  };
  NativeWriter w(out, check);
  w.header(chip, n, generator);
  std::vector<std::string> kernels;
  kernels.reserve(g.kernel_names.size());
  for (const std::string& k : g.kernel_names) kernels.push_back(nlohmann::json(k).dump());
  std::vector<model::TileOp> ops;  // the extension's tile ops of a task
  std::uint32_t last_dt = 0xFFFFFFFFu;
  for (std::size_t t = 0; t < n; ++t) {
    const sched::DeviceTask& d = g.device_tasks[g.device_task[t]];
    if (g.device_task[t] != last_dt) {
      last_dt = g.device_task[t];
      w.device_task(d.seq_no, d.parallel_group);
    }
    const common::CoreType core = g.core_type[t];
    w.begin_task(t, core, kernels[g.kernel[t]], g.root[t]);
    w.dt(d.seq_no);
    if (g.succ_first(t) != g.succ_last(t)) {
      w.succ(g.succ.begin() + g.succ_first(t), g.succ.begin() + g.succ_last(t));
    }
    if (core != common::CoreType::kHub) {
      if (times != nullptr) {
        // Round the start down and keep the duration: the replay of this file runs each task
        // for the time the simulation gave it, to the ns.
        const std::uint64_t start_ns = times->start_ps[t] / 1000;
        const std::uint64_t dur_ps = times->end_ps[t] - times->start_ps[t];
        const std::uint64_t dur_ns = (dur_ps + 500) / 1000;
        w.start_end(start_ns, start_ns + dur_ns);
      } else if (g.has_recorded(static_cast<common::TaskId>(t))) {
        w.dur(g.recorded_ns[t]);
      }
      if (g.has_memory() && g.mem_begin[t] != g.mem_begin[t + 1]) {
        w.mem_begin();
        for (std::uint32_t m = g.mem_begin[t]; m < g.mem_begin[t + 1]; ++m) {
          w.mem(g.mem[m].addr, g.mem[m].bytes, g.mem[m].is_write != 0, g.mem[m].burst_bytes,
                g.mem[m].no_l2 != 0);
        }
        w.mem_end();
      }
      std::uint64_t explained = 0;
      if (task_ops) {
        ops.clear();
        explained = task_ops(static_cast<common::TaskId>(t), ops);
        if (!ops.empty()) {
          w.ops_begin();
          for (const model::TileOp& op : ops) w.op(op.op, model::to_string(op.dtype), op.shape);
          w.ops_end();
        }
      }
      if (g.tiles[t] != 1) w.tiles(g.tiles[t]);
      // Compute the extension's ops do not explain (for a compiled task: the dynamic-shape
      // overhead of its leaf).
      if (g.compute_cycles[t] > explained) w.cycles(g.compute_cycles[t] - explained);
    }
    w.end_task();
  }
  w.finish();
  out.flush();
  check();
}

}  // namespace pypto::trace
