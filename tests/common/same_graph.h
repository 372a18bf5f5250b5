// SPDX-License-Identifier: Apache-2.0
// Checks (Catch CHECKs) that two task graphs are the same column by column: for graphs made
// two ways (a whole read and device tasks cut and appended, say).
#pragma once

#include <catch2/catch.hpp>

#include "pypto/sched/task_graph.h"

namespace pypto::testing {

inline void check_same_graph(const sched::TaskGraph& a, const sched::TaskGraph& b) {
  CHECK(a.core_type == b.core_type);
  CHECK(a.device_task == b.device_task);
  CHECK(a.root == b.root);
  CHECK(a.kernel == b.kernel);
  CHECK(a.orig_id == b.orig_id);
  CHECK(a.succ_begin == b.succ_begin);
  CHECK(a.succ == b.succ);
  CHECK(a.pred_count == b.pred_count);
  CHECK(a.recorded_ns == b.recorded_ns);
  CHECK(a.recorded_start_ps == b.recorded_start_ps);
  CHECK(a.mem_begin == b.mem_begin);
  REQUIRE(a.mem.size() == b.mem.size());
  for (std::size_t i = 0; i < a.mem.size(); ++i) {
    CHECK(a.mem[i].addr == b.mem[i].addr);
    CHECK(a.mem[i].bytes == b.mem[i].bytes);
    CHECK(a.mem[i].is_write == b.mem[i].is_write);
  }
  CHECK(a.compute_cycles == b.compute_cycles);
  CHECK(a.tiles == b.tiles);
  CHECK(a.kernel_names == b.kernel_names);
  CHECK(a.recorded_makespan_ps == b.recorded_makespan_ps);
  REQUIRE(a.device_tasks.size() == b.device_tasks.size());
  for (std::size_t d = 0; d < a.device_tasks.size(); ++d) {
    const sched::DeviceTask &x = a.device_tasks[d], &y = b.device_tasks[d];
    CHECK(x.first_task == y.first_task);
    CHECK(x.num_tasks == y.num_tasks);
    CHECK(x.num_roots == y.num_roots);
    CHECK(x.seq_no == y.seq_no);
    CHECK(x.parallel_group == y.parallel_group);
    for (int c = 0; c < 4; ++c) CHECK(x.count[c] == y.count[c]);
  }
}

}  // namespace pypto::testing
