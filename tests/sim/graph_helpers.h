// SPDX-License-Identifier: Apache-2.0
// Tiny task graphs for the simulator tests, written as lists of tasks.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/sched/task_graph.h"

namespace pypto::testing {

// AICPU cycles in ps, converted the way derive() does (nearest picosecond): the unit of every
// hand-worked expectation on schedule-thread timing.
inline common::TimePs aicpu_ps(const model::ChipConfig& c, double cycles) {
  return static_cast<common::TimePs>(std::llround(cycles * 1e6 / c.aicpu.freq_mhz));
}

// One task: core type, recorded duration in ns (sched::kNoRecord: none), successors, device
// task.
struct T {
  common::CoreType type;
  std::uint32_t ns;
  std::vector<common::TaskId> succ;
  std::uint32_t dt = 0;
};

// Task i gets root i and orig_id i; all share kernel "k".
inline sched::TaskGraph graph_of(const std::vector<T>& tasks) {
  sched::TaskGraphBuilder b("test");
  const auto k = b.kernel_index("k");
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    sched::TaskGraphBuilder::Task t;
    t.core_type = tasks[i].type;
    t.device_task_seq = tasks[i].dt;
    t.root = static_cast<std::uint32_t>(i);
    t.orig_id = static_cast<std::uint32_t>(i);
    t.kernel = k;
    t.recorded_ns = tasks[i].ns;
    b.add_task(t);
    for (auto s : tasks[i].succ) b.add_successor(s);
  }
  return b.finish();
}

}  // namespace pypto::testing
