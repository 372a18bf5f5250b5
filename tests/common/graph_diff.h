// SPDX-License-Identifier: Apache-2.0
// The columns in which two task graphs differ, by name: for graphs made two ways (a whole
// read and device tasks cut and appended, say). Plain C++, so that the unit tests
// (same_graph.h) and the fuzz targets compare the same fields.
#pragma once

#include <algorithm>
#include <iterator>
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
  column("mem", std::equal(a.mem.begin(), a.mem.end(), b.mem.begin(), b.mem.end(),
                           [](const sched::MemAccess& x, const sched::MemAccess& y) {
                             return x.addr == y.addr && x.bytes == y.bytes &&
                                    x.is_write == y.is_write;
                           }));
  column("compute_cycles", a.compute_cycles == b.compute_cycles);
  column("tiles", a.tiles == b.tiles);
  column("kernel_names", a.kernel_names == b.kernel_names);
  column("recorded_makespan_ps", a.recorded_makespan_ps == b.recorded_makespan_ps);
  column(
      "device_tasks",
      std::equal(a.device_tasks.begin(), a.device_tasks.end(), b.device_tasks.begin(),
                 b.device_tasks.end(), [](const sched::DeviceTask& x, const sched::DeviceTask& y) {
                   return x.first_task == y.first_task && x.num_tasks == y.num_tasks &&
                          x.num_roots == y.num_roots && x.seq_no == y.seq_no &&
                          x.parallel_group == y.parallel_group &&
                          std::equal(std::begin(x.count), std::end(x.count), std::begin(y.count));
                 }));
  return diff;
}

}  // namespace pypto::testing
