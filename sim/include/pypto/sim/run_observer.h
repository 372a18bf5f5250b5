// SPDX-License-Identifier: Apache-2.0
// What a run shows as it happens: the model calls a RunObserver at defined points (a task
// dispatched, started and finished, a schedule thread's round, a device task's build, a
// progress tick). The timeline, the replay metrics, the CLI's progress line and the SIM
// backend's executor are observers; none of them changes what the model computes.
//
// Example (count the tasks each core ran):
//   struct PerCore final : pypto::sim::RunObserver {
//     std::map<pypto::common::CoreId, int> n;
//     unsigned events() const override { return pypto::sim::kRunTaskFinished; }
//     void on_task_finished(pypto::common::TaskId, pypto::common::CoreId c, pypto::common::TimePs,
//                           pypto::common::TimePs) override { ++n[c]; }
//   } per_core;
//   pypto::sim::SimOptions opt;
//   opt.observers.push_back(&per_core);
//   pypto::sim::simulate(graph, chip, opt);
#pragma once

#include <cstdint>

#include "pypto/sched/scheduler.h"
#include "pypto/sched/task_graph.h"

namespace pypto::sim {

// The run an observer watches, valid from on_run_start to the end of simulate().
struct RunInfo {
  const sched::TaskGraph& graph;
  const sched::Scheduler& scheduler;  // the runtime's state (ready depths, thread stats)
  std::uint32_t sched_threads = 0;    // schedule threads 0..n-1; n names the control flow
};

// A schedule thread's poll round that completed or dispatched something, at its end.
struct ThreadRound {
  common::ThreadId thread = 0;
  common::TimePs start_ps = 0, end_ps = 0;  // the thread's local clock
  std::uint32_t completions = 0, dispatches = 0;
};

// The calls an observer subscribes to (RunObserver::events()); the model makes only those,
// so a per-task call no observer wants costs a test, not a call. on_run_start and on_run_end
// are always made.
enum RunEvent : unsigned {
  kRunTaskDispatched = 1u << 0,  // on_task_dispatched
  kRunTaskStarted = 1u << 1,     // on_task_started
  kRunTaskFinished = 1u << 2,    // on_task_finished
  kRunThreadRound = 1u << 3,     // on_thread_round
  kRunDeviceTasks = 1u << 4,     // on_device_task_queued, on_device_task_built
  kRunProgress = 1u << 5,        // on_progress
};

// Every method but events() has an empty default: an observer overrides what it watches. Calls come
// from the simulation's one thread, in simulated-time order per agent (a schedule thread's clock
// runs ahead of global time within a round). An observer may throw: the run stops with that error
// and simulate() rethrows it (no on_run_end then).
class RunObserver {
 public:
  virtual ~RunObserver() = default;

  // Contract: the RunEvent bits this observer wants; read once, at the run's start.
  virtual unsigned events() const = 0;

  // Contract: once, before the model's first event; `run` outlives the run.
  virtual void on_run_start(const RunInfo& run) {}
  // Contract: schedule thread `thread` wrote `task` into core `core`'s register at at_ps.
  virtual void on_task_dispatched(common::TaskId task, common::CoreId core, common::ThreadId thread,
                                  common::TimePs at_ps) {}
  // Contract: `task` began on `core` at start_ps (kNoCore: an AICPU task, inline on a
  // schedule thread); every dispatch and start comes before the task's on_task_finished.
  virtual void on_task_started(common::TaskId task, common::CoreId core, common::TimePs start_ps) {}
  // Contract: `task` completed (at most once per task, HUBs never), in the order the model
  // completes them: a topological order of the graph.
  virtual void on_task_finished(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                                common::TimePs end_ps) {}
  // Contract: thread state: a schedule thread ended a round that completed or dispatched
  // something (rounds that found nothing are not reported).
  virtual void on_thread_round(const ThreadRound& round) {}
  // Contract: the control flow took device task dt into its submit queue (its build is
  // worked out later: on_device_task_built follows, in the same order).
  virtual void on_device_task_queued(common::DeviceTaskId dt) {}
  // Contract: the control flow built device task dt over [start_ps, end_ps].
  virtual void on_device_task_built(common::DeviceTaskId dt, common::TimePs start_ps,
                                    common::TimePs end_ps) {}
  // Contract: about every SimOptions::progress_every_tasks completed tasks, with the tasks
  // done and the graph's total; where a client looks for an interruption (throwing stops).
  virtual void on_progress(std::uint64_t done, std::uint64_t total) {}
  // Contract: once, after the last event of a run that completed every task.
  virtual void on_run_end() {}
};

}  // namespace pypto::sim
