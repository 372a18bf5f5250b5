// SPDX-License-Identifier: Apache-2.0
// write_native_trace(): written by hand rather than through a JSON DOM, because a graph may
// hold millions of tasks and only names need escaping.
#include "pypto/trace/native_writer.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pypto/common/errors.h"

namespace pypto::trace {

void write_native_trace(const sched::TaskGraph& g, const TaskTimes* times, const std::string& chip,
                        const std::string& generator, std::ostream& out,
                        const TaskFieldWriter& extra) {
  const std::size_t n = g.num_tasks();
  NPU_CHECK(times == nullptr || (times->start_ps.size() == n && times->end_ps.size() == n),
            "write_native_trace: the timeline is not one of this graph");
  std::string line;
  line.reserve(4096);
  line = "{\"format\":\"pypto-sim-trace\",\"version\":1";
  if (!chip.empty()) line += ",\"chip\":" + nlohmann::json(chip).dump();
  line += ",\"time_unit\":\"ns\",\"tasks\":" + std::to_string(n);
  if (!generator.empty()) line += ",\"generator\":" + nlohmann::json(generator).dump();
  line += "}\n";
  out << line;
  std::vector<std::string> kernels;
  kernels.reserve(g.kernel_names.size());
  for (const std::string& k : g.kernel_names) kernels.push_back(nlohmann::json(k).dump());
  std::uint32_t last_dt = 0xFFFFFFFFu;
  for (std::size_t t = 0; t < n; ++t) {
    const sched::DeviceTask& d = g.device_tasks[g.device_task[t]];
    if (g.device_task[t] != last_dt) {
      last_dt = g.device_task[t];
      out << "{\"device_task\":" << d.seq_no << ",\"parallel_group\":" << d.parallel_group << "}\n";
    }
    const sched::CoreType core = g.core_type[t];
    line.clear();
    line += "{\"id\":" + std::to_string(t) + ",\"core\":\"" + std::string(sched::to_string(core)) +
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
    if (core != sched::CoreType::kHub) {
      if (times != nullptr) {
        // Round the start down and keep the duration: the replay of this file runs each task
        // for the time the simulation gave it, to the ns.
        const std::uint64_t start_ns = times->start_ps[t] / 1000;
        const std::uint64_t dur_ps = times->end_ps[t] - times->start_ps[t];
        const std::uint64_t dur_ns = (dur_ps + 500) / 1000;
        line += ",\"start\":" + std::to_string(start_ns) +
                ",\"end\":" + std::to_string(start_ns + dur_ns);
      } else if (g.has_recorded(static_cast<sched::TaskId>(t))) {
        line += ",\"dur\":" + std::to_string(g.recorded_ns[t]);
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
      const std::uint64_t explained = extra ? extra(static_cast<sched::TaskId>(t), line) : 0;
      if (g.tiles[t] != 1) line += ",\"tiles\":" + std::to_string(g.tiles[t]);
      // Compute the extension's fields do not explain (for a compiled task: the dynamic-shape
      // overhead of its leaf).
      if (g.compute_cycles[t] > explained) {
        line += ",\"cycles\":" + std::to_string(g.compute_cycles[t] - explained);
      }
    }
    line += "}\n";
    out << line;
  }
  out.flush();
  if (!out) throw Error("error while writing the native trace");
}

}  // namespace pypto::trace
