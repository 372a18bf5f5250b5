// SPDX-License-Identifier: Apache-2.0
// Workspace accounting (DESIGN.md "Workspace"): the one formula for the workspace a launch
// needs, shared by the Stitcher (compiled kernels, whose roots know their bytes) and the
// simulator's estimate for traces (sim/workspace.h). Intermediate tensors that cross leaf
// tasks live in workspace: launch-lifetime regions once (fixed_bytes), then a pool in which
// each device task's roots are laid out one after another.
#pragma once

#include <cstdint>
#include <vector>

namespace pypto::sched {

// The explicit inputs of the figures. Two callers, two models of the pool:
//  - the compiler lays the pool out as `device_sched_parallelism` equal slices (one per
//    device task in flight) when the kernel has a parallel loop, so every device task is
//    charged that many copies, and rounds totals to 1 KiB as PyPTO's runtime does;
//  - the trace estimate knows no layout: a serial device task runs alone (1 copy), one of
//    a parallel loop overlaps with up to `parallelism` others, nothing is fixed or rounded.
struct WorkspaceModel {
  std::uint64_t fixed_bytes = 0;      // launch-lifetime regions, laid out before the pool
  std::uint32_t serial_copies = 1;    // pool copies a serial device task is charged for
  std::uint32_t parallel_copies = 1;  // pool copies a device task of a parallel loop is charged
  std::uint64_t align_bytes = 1;      // totals (minimum, memory-driven budget) round up to this
};

// What a launch needs: peak over its device tasks, and the minimum that runs at all (one
// root per device task).
struct WorkspaceFigures {
  std::uint64_t peak_bytes = 0;
  std::uint64_t minimum_bytes = 0;
};

// One device task's use of the pool: the sum of its roots' bytes.
struct DeviceTaskWorkspace {
  std::uint64_t bytes = 0;
  bool parallel = false;  // belongs to a pypto.loop(parallel=True)
};

// align_up(fixed + serial_copies * roots_per_device_task * largest_root, align): the
// workspace a launch needs when every device task holds `roots_per_device_task` roots of
// the largest size. total(1) is the minimum runnable workspace.
// Contract: m.align_bytes >= 1.
std::uint64_t workspace_total(const WorkspaceModel& m, std::uint64_t largest_root_bytes,
                              std::uint64_t roots_per_device_task);

// peak = fixed + max over device tasks of bytes * copies (copies by serial/parallel);
// minimum = workspace_total(m, largest_root_bytes, 1).
// Example: fixed 1024, copies 2/2, align 1024, device tasks {3000, 5000}, largest root 2500
// -> peak 1024 + 2 * 5000 = 11024, minimum align_up(1024 + 2 * 2500, 1024) = 6144.
WorkspaceFigures workspace_figures(const WorkspaceModel& m,
                                   const std::vector<DeviceTaskWorkspace>& device_tasks,
                                   std::uint64_t largest_root_bytes);

}  // namespace pypto::sched
