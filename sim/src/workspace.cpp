// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/workspace.h"

#include <algorithm>
#include <vector>

#include "pypto/sched/workspace.h"

namespace pypto::sim {

WorkspaceUsage workspace_usage(const sched::TaskGraph& g, std::uint32_t parallelism) {
  if (g.workspace) return *g.workspace;
  if (!g.has_memory()) return WorkspaceUsage{};
  std::vector<sched::DeviceTaskWorkspace> use;
  use.reserve(g.device_tasks.size());
  std::uint64_t largest_root = 0;
  for (const auto& d : g.device_tasks) {
    std::uint64_t dt_bytes = 0, root_bytes = 0;
    std::uint32_t root = d.num_tasks > 0 ? g.root[d.first_task] : 0;
    for (common::TaskId t = d.first_task; t < d.first_task + d.num_tasks; ++t) {
      if (g.root[t] != root) {
        largest_root = std::max(largest_root, root_bytes);
        root_bytes = 0;
        root = g.root[t];
      }
      if (g.succ_first(t) == g.succ_last(t)) continue;  // output leaves the kernel
      for (std::uint32_t i = g.mem_begin[t]; i < g.mem_begin[t + 1]; ++i) {
        if (g.mem[i].is_write != 0) {
          dt_bytes += g.mem[i].bytes;
          root_bytes += g.mem[i].bytes;
        }
      }
    }
    largest_root = std::max(largest_root, root_bytes);
    use.push_back(sched::DeviceTaskWorkspace{dt_bytes, d.parallel_group != 0});
  }
  const sched::WorkspaceModel estimate{0, 1, std::max<std::uint32_t>(parallelism, 1), 1};
  return sched::workspace_figures(estimate, use, largest_root);
}

}  // namespace pypto::sim
