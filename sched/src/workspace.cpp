// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/workspace.h"

#include <algorithm>

#include "pypto/common/errors.h"

namespace pypto::sched {

std::uint64_t workspace_total(const WorkspaceModel& m, std::uint64_t largest_root_bytes,
                              std::uint64_t roots_per_device_task) {
  NPU_CHECK(m.align_bytes >= 1, "workspace alignment must be at least 1 byte");
  const std::uint64_t raw =
      m.fixed_bytes + m.serial_copies * roots_per_device_task * largest_root_bytes;
  return (raw + m.align_bytes - 1) / m.align_bytes * m.align_bytes;
}

WorkspaceFigures workspace_figures(const WorkspaceModel& m,
                                   const std::vector<DeviceTaskWorkspace>& device_tasks,
                                   std::uint64_t largest_root_bytes) {
  std::uint64_t pool = 0;
  for (const DeviceTaskWorkspace& d : device_tasks) {
    pool = std::max(pool, d.bytes * (d.parallel ? m.parallel_copies : m.serial_copies));
  }
  WorkspaceFigures f;
  f.peak_bytes = m.fixed_bytes + pool;
  f.minimum_bytes = workspace_total(m, largest_root_bytes, 1);
  return f;
}

}  // namespace pypto::sched
