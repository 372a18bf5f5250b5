// SPDX-License-Identifier: Apache-2.0
// A task graph as a native trace (traces/FORMAT.md, version 1), optionally with the times of
// a simulation as recorded `start`/`end`: a replay written this way is a recording that our
// own model made with known parameters (what `pypto-sim calibrate` is tested on, and a way to
// hand a simulated schedule to any tool that reads recordings).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include <vector>

#include "pypto/sched/task_graph.h"

namespace pypto::trace {

// The times of every task of a run, in ps (a simulation's timeline, or a hardware run's).
struct TaskTimes {
  const std::vector<std::uint64_t>& start_ps;
  const std::vector<std::uint64_t>& end_ps;
};

// Writes g with its device tasks (`dt`, one device-task record each), kernels, roots, edges,
// memory ranges, tiles and compute cycles (as `cycles`: the tile ops are already priced).
// With `times` (of a simulation of g), every AIC/AIV/AICPU task gets `start` and
// `end` in ns, the simulated ones rounded down to the ns, the end as start plus the rounded
// duration; without it, a task keeps its recorded duration (`dur`) if it has one. `chip` is
// the header's chip hint, `generator` its free text.
// `extra`, if given, appends fields of its own to the record of every AIC/AIV/AICPU task, after
// its memory ranges (the compiler's dump adds the task's tile ops there), and returns the
// compute cycles those fields account for, which `cycles` then leaves out. This writer is the
// one owner of the format's records; extensions only add fields.
// Contract: times, if given, holds start_ps/end_ps for every task of g. Throws pypto::Error
// when the stream fails.
using TaskFieldWriter = std::function<std::uint64_t(sched::TaskId, std::string& line)>;
void write_native_trace(const sched::TaskGraph& g, const TaskTimes* times, const std::string& chip,
                        const std::string& generator, std::ostream& out,
                        const TaskFieldWriter& extra = {});

}  // namespace pypto::trace
