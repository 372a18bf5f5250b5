// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/workspace.h"

#include <algorithm>

namespace pypto::sim {

WorkspaceUsage workspace_usage(const sched::TaskGraph& g, std::uint32_t parallelism) {
  WorkspaceUsage u;
  if (!g.has_memory()) return u;
  for (const auto& d : g.device_tasks) {
    std::uint64_t dt_bytes = 0, root_bytes = 0;
    std::uint32_t root = d.num_tasks > 0 ? g.root[d.first_task] : 0;
    for (sched::TaskId t = d.first_task; t < d.first_task + d.num_tasks; ++t) {
      if (g.root[t] != root) {
        u.minimum_bytes = std::max(u.minimum_bytes, root_bytes);
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
    u.minimum_bytes = std::max(u.minimum_bytes, root_bytes);
    const std::uint64_t copies = d.parallel_group != 0 ? parallelism : 1;
    u.peak_bytes = std::max(u.peak_bytes, dt_bytes * copies);
  }
  return u;
}

}  // namespace pypto::sim
