// SPDX-License-Identifier: Apache-2.0
// Stitching of root instances into device tasks, as the control-flow AICPU does it
// (DESIGN.md "Control-flow AICPU"; reference/pypto-runtime.md §1.3, §3). The one
// implementation of the rule: the compiler stitches the roots of a launch with it (roots
// know their workspace), and importers of traces that carry no device-task ids recover
// the device tasks the runtime would have built from the same sequence of roots.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/sched/runtime_options.h"
#include "pypto/sched/workspace.h"

namespace pypto::sched {

// One root instance, in launch order.
struct StitchRoot {
  std::uint32_t num_tasks = 0;           // leaf tasks
  std::uint64_t workspace_bytes = 0;     // root-inner workspace (0 when none or unknown)
  bool barrier = false;                  // submit_before_loop: starts a new device task
  std::uint32_t parallel_group = 0;      // pypto.loop(parallel=True) group; 0: serial
  std::uint32_t parallel_iteration = 0;  // roots of one iteration share a device task
  std::string_view loc;                  // the parallel loop, for messages (caller owns it)
};

struct StitchResult {
  std::vector<std::uint32_t> device_task;  // per root: 0, 1, 2, ... in root order
  std::vector<std::uint64_t> base_bytes;   // per root: workspace offset of its region
  std::uint32_t num_device_tasks = 0;
  std::uint64_t pool_slice_bytes = 0;  // largest device task's root-inner bytes
  WorkspaceFigures workspace;          // by the Stitcher's WorkspaceModel
  // PyPTO's runtime log: the "Recommended: set max_workspace_kb ..." line (root-count mode),
  // the "[workspaceSize] stitch depth ..." line, one line per root too large for a device
  // task, and a "warning: " line when stitch_function_max_num supersedes the older options.
  // Empty when the roots' sizes are unknown.
  std::vector<std::string> log;
};

// Contract: construction validates the options (ConfigError "runtime.stitch_function_max_num:
// N is out of range [1, 1024]", and likewise for the older options below); stitch() is a
// pure function of its roots.
//
// A root is appended to the open device task unless one of these closes it first:
//  - it is a barrier root (submit_before_loop);
//  - the open device task already holds its root threshold (never more than
//    kMaxRootsPerDeviceTask) or, memory-driven (max_workspace_kb > 0 and sizes known),
//    the root's bytes would take it above the pool capacity (budget - fixed) / copies;
//  - the root's tasks would take it above the leaf-task cap: stitch_function_size when
//    given, else kMaxLeafTasksPerDeviceTask (a root larger than that on its own gets a
//    device task of its own);
//  - the parallel group or iteration differs: a device task never mixes parallel groups,
//    and each iteration of a parallel loop is one device task (as PARALLEL_FOR_BEGIN/END).
//    An iteration that does not fit one device task is a ConfigError naming root.loc.
// Memory-driven mode also rejects a budget at or below the minimum runnable workspace with
// PyPTO's ConfigError ("max_workspace_kb=NKB must be greater than the minimum runnable
// workspace=MKB").
//
// The root threshold (count-driven mode) is stitch_function_max_num, except in legacy count
// mode: PyPTO's older stitch_function_num_initial and/or stitch_function_num_step given and
// stitch_function_max_num not given (it replaced them; given with them it rules, and the
// log says they are superseded). A missing one of the pair takes PyPTO's old default, 30.
// The threshold then starts at num_initial and grows by num_step, up to 1024, each time a
// serial root finds the open device task at its threshold or above the leaf-task cap (as
// PyPTO's control flow, which counts that check even when it finds no device task open:
// a first root above the cap). So with serial roots, device task k holds at most
// min(1024, initial + k * step) roots: 10 roots, initial 2, step 1 -> 2, 3, 4, 1 roots.
// Memory-driven mode takes precedence over both.
//
// Workspace: each root's region starts at fixed + slot * pool_slice + (bytes of the roots
// before it in its device task), slot = parallel_iteration % parallel_copies for parallel
// roots, else 0. The figures are workspace_figures() over the device tasks.
//
// Example: 3 serial roots of 100 bytes, stitch_function_max_num = 2, model {fixed 0, 1 copy}
//   -> device_task {0, 0, 1}, base_bytes {0, 100, 0}, peak 200, minimum 100.

// The count-driven limits of stitching under opts (the rule above), shared by the Stitcher
// and the compiler, which sizes its outcast slot versions by max_roots.
struct StitchLimits {
  std::uint64_t initial_roots = 0;  // root threshold of the first device task
  std::uint64_t step_roots = 0;     // its growth per count- or size-closed device task
  std::uint64_t max_roots = 0;      // the most roots a count-driven device task can hold
  std::uint64_t leaf_cap = 0;       // the most leaf tasks of one device task
  bool legacy = false;              // the threshold comes from num_initial / num_step
  bool superseded = false;          // the pair was given with stitch_function_max_num
};

// Contract: pure; throws ConfigError for an option out of its table range.
StitchLimits stitch_limits(const RuntimeOptions& opts);

// The rule above, one root at a time (Stitcher::stitch walks the roots with it).
class StitchCursor {
 public:
  // limits: the count-driven threshold and the leaf-task cap; memory_driven: a device task
  // holds roots while their bytes fit capacity_bytes instead (and at most
  // kMaxRootsPerDeviceTask), and the threshold is not used.
  StitchCursor(const StitchLimits& limits, bool memory_driven, std::uint64_t capacity_bytes);

  // Contract: called once per root, in launch order. Returns true when r opens a new
  // device task (always for the first root); afterwards device_task() is r's. Throws
  // ConfigError naming r.loc when one iteration of a parallel loop needs more than one
  // device task.
  bool next(const StitchRoot& r);
  std::uint32_t device_task() const { return dt_; }
  // Root-inner bytes of the open device task before the root just passed to next().
  std::uint64_t bytes_before() const { return used_ - last_bytes_; }

 private:
  std::uint64_t threshold_;
  std::uint64_t step_;
  std::uint64_t leaf_cap_;
  bool memory_driven_;
  std::uint64_t capacity_;
  bool open_ = false;
  std::uint32_t dt_ = 0, pg_ = 0, pi_ = 0;
  std::uint64_t nroots_ = 0, ntasks_ = 0, used_ = 0, last_bytes_ = 0;
};

// The note a user gets when stitch_function_max_num supersedes PyPTO's older
// num_initial / num_step ("" when it does not): the Stitcher's log (the pypto logger) and
// the pypto-sim CLI (stderr) both print this text.
std::string superseded_note(const RuntimeOptions& opts);

class Stitcher {
 public:
  // sizes_known: the roots carry their workspace bytes (compiled kernels). Traces do not:
  // they stitch by root count regardless of max_workspace_kb and get no log.
  Stitcher(const RuntimeOptions& opts, const WorkspaceModel& model, bool sizes_known);

  StitchResult stitch(const std::vector<StitchRoot>& roots) const;

 private:
  RuntimeOptions opts_;
  WorkspaceModel model_;
  bool sizes_known_;
};

// Trace importers' form: one entry per task instead of per root. Assigns every task a
// device-task index by Stitcher (sizes unknown; each root of a parallel group is an
// iteration of its own, so it gets a device task of its own).
//
// Contract: task_root[i] is the root-instance index of task i and must be non-decreasing
// in task order (the tasks of one root are contiguous); task_parallel_group[i] is the
// pypto.loop(parallel=True) group of task i's root (0: serial) and is the same for all
// tasks of a root. Both vectors have one entry per task. Pure function; throws TraceError
// for decreasing roots or a root whose tasks disagree on the parallel group, ConfigError if
// a stitching option is outside its range. Legacy count mode and stitch_function_size apply
// as in Stitcher.
//
// Example: roots {0,0,1,1,1,2} with stitch_function_max_num = 2 -> {0,0,0,0,0,1}.
std::vector<std::uint32_t> stitch_device_tasks(
    const std::vector<std::uint32_t>& task_root,
    const std::vector<std::uint32_t>& task_parallel_group, const RuntimeOptions& opts);

}  // namespace pypto::sched
