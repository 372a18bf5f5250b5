// SPDX-License-Identifier: Apache-2.0
// Stitching of root instances into device tasks, as the control-flow AICPU does it
// (DESIGN.md "Control-flow AICPU"; reference/pypto-runtime.md §1.3, §3). Importers of
// traces that carry no device-task ids use it to recover the device tasks the runtime
// would have built from the same sequence of roots.
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/sched/runtime_options.h"

namespace pypto::sched {

// Assigns every task a device-task index (0, 1, 2, ... in task order).
//
// Contract: task_root[i] is the root-instance index of task i and must be non-decreasing
// in task order (the tasks of one root are contiguous); task_parallel_group[i] is the
// pypto.loop(parallel=True) group of task i's root (0: serial) and is the same for all
// tasks of a root. Both vectors have one entry per task. Pure function; throws TraceError
// for decreasing roots or a root whose tasks disagree on the parallel group, ConfigError if
// opts.stitch_function_max_num is outside 1..1024.
//
// A root is appended to the open device task unless one of these closes it first:
//  - the open device task already holds stitch_function_max_num roots (and never more
//    than kMaxRootsPerDeviceTask);
//  - the root's tasks would take the device task above kMaxLeafTasksPerDeviceTask leaf
//    tasks (a root larger than that on its own gets a device task of its own);
//  - the root's parallel group differs from the open device task's, or is not 0: a
//    device task never mixes parallel groups, and each root of a parallel loop is a device
//    task of its own (one loop iteration per device task, as PARALLEL_FOR_BEGIN/END do).
// Memory-driven stitching (max_workspace_kb > 0) needs workspace sizes that traces do not
// carry; this function applies the root-count rule regardless, and the caller decides
// whether that is acceptable.
//
// Example: roots {0,0,1,1,1,2} with stitch_function_max_num = 2 -> {0,0,0,0,0,1}.
std::vector<std::uint32_t> stitch_device_tasks(
    const std::vector<std::uint32_t>& task_root,
    const std::vector<std::uint32_t>& task_parallel_group, const RuntimeOptions& opts);

}  // namespace pypto::sched
