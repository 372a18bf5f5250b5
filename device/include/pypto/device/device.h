// SPDX-License-Identifier: Apache-2.0
// The hardware backend's runtime (issue 11): the same sched::Scheduler that the simulator
// drives, driven in wall-clock time by a second sched::Hal. The control-flow AICPU and every
// schedule AICPU thread are host threads (std::thread); each schedule thread owns its
// partition of cores as on the device (MachineShape); each core is a device stream, a
// worker thread that executes the tasks written into its running and pending slots in order.
// Time is the host's steady clock; nothing is modelled.
//
// Example:
//   sched::MachineShape shape{.aic = 24, .aiv = 48, .threads = 3};
//   auto policy = sched::Registry::global().create("fifo");
//   device::RunOptions opt;
//   opt.execute = [&](common::TaskId t, common::CoreId) { executor.execute(t); };
//   device::RunResult r = device::run(graph, shape, *policy, opt);
//   // r.makespan_ns, r.timeline.start_ns[t], ...
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pypto/sched/policy.h"
#include "pypto/sched/scheduler.h"
#include "pypto/sched/task_graph.h"

namespace pypto::device {

using common::kNoCore16;

struct RunOptions {
  // Performs task t's effect. Called once per AIC/AIV/AICPU task of the graph, on the
  // stream of core `c` (kNoCore for AICPU tasks, on the schedule thread that resolves them),
  // only after every predecessor's call has returned. Calls for different cores run
  // concurrently: the callback must be safe for that. An exception ends the run: run()
  // rethrows the first one after every thread has stopped. Empty: tasks do nothing.
  std::function<void(common::TaskId t, common::CoreId c)> execute;
  // A run in which no task completes for this long, with work left, is a runtime bug:
  // ModelError naming the scheduler's state.
  double stall_timeout_s = 60;
};

// Times are nanoseconds of the host's steady clock since the launch: the moment every
// thread of the run exists (their creation is RunResult::startup_ns, before it).
struct Timeline {
  std::vector<std::uint64_t> start_ns, end_ns;  // per task; HUBs: 0, 0
  std::vector<std::uint16_t> core;              // per task; kNoCore16 for AICPU and HUB
  std::vector<std::uint16_t> thread;            // schedule thread that sent or ran it
};

// The scheduler's record of the thread (busy_ps: host time inside every poll round, the
// scheduler's lock held), and what only this backend has.
struct ThreadStats : sched::ThreadStats {
  std::uint64_t waits = 0;  // times it slept waiting for a completion or new work
};

struct RunResult {
  std::uint64_t makespan_ns = 0;  // the launch to the end of the last device task
  std::uint64_t first_start_ns = 0, last_end_ns = 0;    // span of the tasks on cores
  std::uint64_t tasks = 0;                              // tasks executed (HUBs excluded)
  std::vector<std::uint64_t> core_busy_ns, core_tasks;  // per core
  std::vector<ThreadStats> threads;
  Timeline timeline;
  std::uint64_t startup_ns = 0;  // creating the threads, before the launch
  double wall_s = 0;             // run() as a whole, thread start-up and join included
};

// Runs `graph` to completion. Device tasks are admitted in order by the control-flow
// thread (serial ones alone, parallel groups up to shape.parallelism at once); schedule
// thread t runs poll rounds of `policy` through the scheduler whenever one of its cores
// completed a task or new work was published, and sleeps otherwise. The scheduler is not
// thread-safe, so one lock serialises the threads' rounds (a round is atomic; the device
// locks its shared queues instead, with the same effect on what a round sees).
// Contract: graph and policy outlive the call; shape as for sched::Scheduler (ConfigError
// when the graph needs a core type the shape lacks).
RunResult run(const sched::TaskGraph& graph, const sched::MachineShape& shape,
              sched::Policy& policy, const RunOptions& opt);

// PyPTO's board recording of a run, in board-counter ticks of `board_clock_mhz` (the
// steady-clock nanoseconds scaled): what `pypto-sim run` replays.
//   tilefwk_L1_prof_data.json  one block per core that ran tasks ({blockIdx, coreType,
//                              tasks: [{seqNo, taskId, subGraphId, execStart, execEnd}]})
//   topo.json                  PyPTO's board topology of device task 0 (seqNo 0):
//                              [{taskId, funcName, coreType, successors}]
//   dyn_topo.txt               every device task (seqNo, taskId, rootIndex, ..., successors)
// taskId is the task's id within its device task (TaskGraph::orig_id), blockIdx the core id
// (AIC first, then AIV), as in SIM's swim.json. A task's execStart is floored and its
// execEnd rounded up to a tick, so that no recorded duration is shorter than measured.
// Returns the paths written. Throws pypto::Error if a file cannot be written.
struct RecordingPaths {
  std::string prof, topo, dyn_topo;
};
RecordingPaths write_recording(const std::string& dir, const sched::TaskGraph& graph,
                               const sched::MachineShape& shape, const RunResult& r,
                               double board_clock_mhz);

}  // namespace pypto::device
