// SPDX-License-Identifier: Apache-2.0
// PyPTO's merged swimlane (merged_swimlane.json, its "Machine View"): a Chrome trace of every
// placed task on its core's lane (a second lane where tasks overlap), with PyPTO's hints
// (task name seqNo-funcId-opIdx, per-leaf duration statistics, merge classes), the
// dependency arrows and the ready-queue depth counters. The simulator's reports write it
// (sim/report.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <vector>

#include "pypto/sched/task_graph.h"

namespace pypto::trace {

// Ready tasks waiting at a moment of the run (shared queues and staging), per core type.
struct QueueDepth {
  std::uint64_t time_ps;
  std::uint32_t aic, aiv;
};

// PyPTO's merge hints of a compiled leaf task: its isomorphism class within its root
// (hashOrder) and the class size before each breadth merge that merged it (0: that merge did
// not). Traces carry none.
struct LeafMergeHint {
  std::int32_t hash_order = -1;
  std::uint32_t vec_count = 0, l1_count = 0, cube_count = 0;
};

// What the swimlane shows of a run of `graph`.
struct SwimlaneRun {
  const sched::TaskGraph& graph;
  const std::vector<std::uint64_t>& start_ps;  // per task
  const std::vector<std::uint64_t>& end_ps;
  const std::vector<std::uint16_t>& core;  // per task; common::kNoCore16: not on a core
  // Per core (AICs first, `aic_cores` of them), its placed tasks in start order.
  const std::vector<std::vector<common::TaskId>>& per_core;
  std::uint32_t aic_cores = 0;
  const std::vector<QueueDepth>& depth;
  const std::vector<LeafMergeHint>& leaf_hints;  // per task; empty: none
  std::size_t max_flow_edges = 0;                // dependency arrows beyond this are left out
};

// Writes the swimlane of `run` to `os`; `every_records` is called once every
// TextOut::kCheckEvery events (a writer's Ctrl-C and stream checks).
void write_merged_swimlane(std::ostream& os, const SwimlaneRun& run,
                           const std::function<void()>& every_records = {});

// Writes PyPTO's bubble analysis of `run` (bubble_analysis.log, which PyPTO's
// draw_swim_lane.py writes beside its merged swimlane, and which PyPTO's analyzers and docs
// read the kernel time from) to `os`, as that tool defines each figure: per core that ran
// tasks, in core order (named as the swimlane's lanes), its task count; "Core Total Work
// Time", its last end minus the run's first start (the largest over the cores is the kernel
// time); "Total Wait Time", its idle time from the run's first start; "Wait Schedule Time",
// the part of it while its next task was ready (start minus the later of the core's previous
// end and the task's last predecessor's end); "Wait Predecessor Time", the rest; then its
// three tasks that waited longest while ready. The run's ten longest such waits come first.
// Times in microseconds with three decimals; ties keep the lower task id first.
void write_bubble_analysis(std::ostream& os, const SwimlaneRun& run);

}  // namespace pypto::trace
