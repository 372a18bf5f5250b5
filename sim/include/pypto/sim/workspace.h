// SPDX-License-Identifier: Apache-2.0
// Workspace memory a graph needs (DESIGN.md "Workspace"). Intermediate tensors that cross
// leaf tasks live in workspace: we count, per root instance, the bytes written by tasks
// whose output another task consumes. A device task needs the sum over its roots; the
// peak is the largest device task times the parallelism of parallel loops; the minimum
// runnable workspace is the largest single root (total(k=1)).
#pragma once

#include <cstdint>

#include "pypto/sched/task_graph.h"

namespace pypto::sim {

struct WorkspaceUsage {
  std::uint64_t peak_bytes = 0;
  std::uint64_t minimum_bytes = 0;
};

WorkspaceUsage workspace_usage(const sched::TaskGraph& g, std::uint32_t parallelism);

}  // namespace pypto::sim
