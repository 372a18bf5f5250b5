// SPDX-License-Identifier: Apache-2.0
// Where the model reports to the run's observers (run_observer.h): the agents call these at
// the points the interface names. The run's own timeline is held by its type, so that its
// per-task calls stay direct (no virtual call per task); every other observer gets the calls
// it subscribed to (RunObserver::events()), in SimOptions::observers order.
#pragma once

#include <vector>

#include "../observe/timeline_recorder.h"
#include "pypto/sim/run_observer.h"

namespace pypto::sim {

class RunObservers {
 public:
  // Contract: called once, before the run. timeline: null when the run keeps no timeline;
  // the others in call order; all outlive the run.
  void attach(TimelineRecorder* timeline, const std::vector<RunObserver*>& others,
              std::uint64_t progress_every_tasks);

  // Calls on_run_start of every observer.
  void run_start(const RunInfo& run);
  void run_end();

  // Contract: a hint, changing nothing (TimelineRecorder::prefetch).
  void prefetch(common::TaskId task) const {
    if (timeline_ != nullptr) timeline_->prefetch(task);
  }
  // The calls to the caller's observers go out of line when someone listens: a run without
  // them pays a test per event and keeps its registers (no virtual call per task).
  void task_dispatched(common::TaskId task, common::CoreId core, common::ThreadId thread,
                       common::TimePs at_ps) {
    if (__builtin_expect(!dispatched_.empty(), 0)) tell_dispatched(task, core, thread, at_ps);
  }
  void task_started(common::TaskId task, common::CoreId core, common::TimePs start_ps) {
    if (__builtin_expect(!started_.empty(), 0)) tell_started(task, core, start_ps);
  }
  // done: the tasks completed so far, this one included (for the progress ticks).
  void task_finished(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                     common::TimePs end_ps, std::uint64_t done) {
    if (task_times_ != nullptr) task_times_->record_task(task, core, start_ps, end_ps);
    if (__builtin_expect(!finished_.empty(), 0)) tell_finished(task, core, start_ps, end_ps);
    if (--until_progress_ == 0) progress(done);
  }
  void thread_round(const ThreadRound& r) {
    if (timeline_ != nullptr) timeline_->on_thread_round(r);
    if (__builtin_expect(!rounds_.empty(), 0)) tell_round(r);
  }
  void device_task_queued(common::DeviceTaskId dt);
  void device_task_built(common::DeviceTaskId dt, common::TimePs start_ps, common::TimePs end_ps);

 private:
  void tell_dispatched(common::TaskId task, common::CoreId core, common::ThreadId thread,
                       common::TimePs at_ps);
  void tell_started(common::TaskId task, common::CoreId core, common::TimePs start_ps);
  void tell_finished(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                     common::TimePs end_ps);
  void tell_round(const ThreadRound& r);
  void progress(std::uint64_t done);

  TimelineRecorder* timeline_ = nullptr;
  TimelineRecorder* task_times_ = nullptr;  // timeline_ when it keeps per-task times
  std::vector<RunObserver*> all_, dispatched_, started_, finished_, rounds_, builds_, progress_;
  std::uint64_t total_tasks_ = 0;
  std::uint64_t progress_every_ = 0;
  std::uint64_t until_progress_ = ~std::uint64_t{0};  // completions to the next tick
};

}  // namespace pypto::sim
