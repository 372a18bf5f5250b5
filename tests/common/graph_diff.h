// SPDX-License-Identifier: Apache-2.0
// The columns in which two task graphs differ, by name: for graphs made two ways (a whole
// read and device tasks cut and appended, say). Plain C++, so that the unit tests
// (same_graph.h) and the fuzz targets compare the same fields.
#pragma once

#include <string>
#include <vector>

#include "pypto/sched/task_graph.h"

namespace pypto::testing {

inline std::vector<std::string> graph_differences(const sched::TaskGraph& a,
                                                  const sched::TaskGraph& b) {
  std::vector<std::string> diff;
  const auto column = [&diff](const char* name, bool same) {
    if (!same) diff.emplace_back(name);
  };
  column("core_type", a.core_type == b.core_type);
  column("device_task", a.device_task == b.device_task);
  column("root", a.root == b.root);
  column("kernel", a.kernel == b.kernel);
  column("orig_id", a.orig_id == b.orig_id);
  column("succ_begin", a.succ_begin == b.succ_begin);
  column("succ", a.succ == b.succ);
  column("pred_count", a.pred_count == b.pred_count);
  column("recorded_ns", a.recorded_ns == b.recorded_ns);
  column("recorded_start_ps", a.recorded_start_ps == b.recorded_start_ps);
  column("mem_begin", a.mem_begin == b.mem_begin);
  bool same_mem = a.mem.size() == b.mem.size();
  for (std::size_t i = 0; same_mem && i < a.mem.size(); ++i) {
    same_mem = a.mem[i].addr == b.mem[i].addr && a.mem[i].bytes == b.mem[i].bytes &&
               a.mem[i].is_write == b.mem[i].is_write;
  }
  column("mem", same_mem);
  column("compute_cycles", a.compute_cycles == b.compute_cycles);
  column("tiles", a.tiles == b.tiles);
  column("kernel_names", a.kernel_names == b.kernel_names);
  column("recorded_makespan_ps", a.recorded_makespan_ps == b.recorded_makespan_ps);
  bool same_dts = a.device_tasks.size() == b.device_tasks.size();
  for (std::size_t d = 0; same_dts && d < a.device_tasks.size(); ++d) {
    const sched::DeviceTask &x = a.device_tasks[d], &y = b.device_tasks[d];
    same_dts = x.first_task == y.first_task && x.num_tasks == y.num_tasks &&
               x.num_roots == y.num_roots && x.seq_no == y.seq_no &&
               x.parallel_group == y.parallel_group;
    for (int c = 0; same_dts && c < 4; ++c) same_dts = x.count[c] == y.count[c];
  }
  column("device_tasks", same_dts);
  return diff;
}

}  // namespace pypto::testing
