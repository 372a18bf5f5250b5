// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/stitcher.h"

#include <algorithm>
#include <string>

#include "pypto/sched/errors.h"

namespace pypto::sched {

std::vector<std::uint32_t> stitch_device_tasks(
    const std::vector<std::uint32_t>& task_root,
    const std::vector<std::uint32_t>& task_parallel_group, const RuntimeOptions& opts) {
  NPU_CHECK(task_root.size() == task_parallel_group.size(),
            "stitch_device_tasks: one root and one parallel group per task");
  check_runtime_option(spec_of(RuntimeOption::kStitchFunctionMaxNum), opts.stitch_function_max_num);
  const std::uint64_t root_cap =
      std::min<std::int64_t>(opts.stitch_function_max_num, RuntimeOptions::kMaxRootsPerDeviceTask);
  const std::uint64_t leaf_cap = RuntimeOptions::kMaxLeafTasksPerDeviceTask;

  const std::size_t n = task_root.size();
  std::vector<std::uint32_t> out(n);
  std::uint32_t dt = 0;
  std::uint64_t open_roots = 0, open_leaves = 0;
  std::uint32_t open_pg = 0;
  for (std::size_t i = 0; i < n;) {
    // One root instance: the run of tasks sharing task_root[i].
    const std::uint32_t root = task_root[i];
    const std::uint32_t pg = task_parallel_group[i];
    std::size_t j = i + 1;
    while (j < n && task_root[j] == root) {
      if (task_parallel_group[j] != pg) {
        throw TraceError("task " + std::to_string(j) + " of root " + std::to_string(root) +
                         " is in parallel group " + std::to_string(task_parallel_group[j]) +
                         " but task " + std::to_string(i) + " of the same root is in group " +
                         std::to_string(pg));
      }
      ++j;
    }
    if (j < n && task_root[j] < root) {
      throw TraceError("task " + std::to_string(j) + ": root " + std::to_string(task_root[j]) +
                       " follows root " + std::to_string(root) +
                       "; roots must be non-decreasing in task order");
    }
    const std::uint64_t leaves = j - i;
    if (open_roots > 0 &&
        (pg != open_pg || pg != 0 || open_roots >= root_cap || open_leaves + leaves > leaf_cap)) {
      ++dt;
      open_roots = 0;
      open_leaves = 0;
    }
    open_pg = pg;
    ++open_roots;
    open_leaves += leaves;
    std::fill(out.begin() + i, out.begin() + j, dt);
    i = j;
  }
  return out;
}

}  // namespace pypto::sched
