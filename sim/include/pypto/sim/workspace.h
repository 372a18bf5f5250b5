// SPDX-License-Identifier: Apache-2.0
// Workspace memory a graph needs (DESIGN.md "Workspace"), as stats.json reports it. A
// compiled launch carries its exact figures (TaskGraph::workspace, from the Stitcher that
// laid it out). A trace carries none, so we estimate: per root instance, the bytes written
// by tasks whose output another task consumes; a device task needs the sum over its roots.
// Both go through the one formula of sched/workspace.h; the estimate's model is {no fixed
// bytes, serial device tasks 1 copy, parallel ones `parallelism` copies, no rounding}, so
// the peak is the largest device task times its copies and the minimum the largest root.
#pragma once

#include <cstdint>

#include "pypto/sched/task_graph.h"

namespace pypto::sim {

using WorkspaceUsage = sched::WorkspaceFigures;

// g.workspace when set, else the estimate above (zero for graphs without memory ranges).
WorkspaceUsage workspace_usage(const sched::TaskGraph& g, std::uint32_t parallelism);

}  // namespace pypto::sim
