// SPDX-License-Identifier: Apache-2.0
#include "observers.h"

namespace pypto::sim {

void RunObservers::attach(TimelineRecorder* timeline, const std::vector<RunObserver*>& others,
                          std::uint64_t progress_every_tasks) {
  timeline_ = timeline;
  task_times_ = timeline != nullptr && timeline->task_times() ? timeline : nullptr;
  for (RunObserver* o : others) {
    all_.push_back(o);
    const unsigned e = o->events();
    if ((e & kRunTaskDispatched) != 0) dispatched_.push_back(o);
    if ((e & kRunTaskStarted) != 0) started_.push_back(o);
    if ((e & kRunTaskFinished) != 0) finished_.push_back(o);
    if ((e & kRunThreadRound) != 0) rounds_.push_back(o);
    if ((e & kRunDeviceTasks) != 0) builds_.push_back(o);
    if ((e & kRunProgress) != 0) progress_.push_back(o);
  }
  // Without a progress observer (or a period) the countdown never reaches zero in a run.
  progress_every_ = progress_.empty() ? 0 : progress_every_tasks;
  until_progress_ = progress_every_ == 0 ? ~std::uint64_t{0} : progress_every_;
}

void RunObservers::run_start(const RunInfo& run) {
  total_tasks_ = run.graph.num_tasks();
  if (timeline_ != nullptr) timeline_->on_run_start(run);
  for (RunObserver* o : all_) o->on_run_start(run);
}

void RunObservers::run_end() {
  if (timeline_ != nullptr) timeline_->on_run_end();
  for (RunObserver* o : all_) o->on_run_end();
}

void RunObservers::tell_dispatched(common::TaskId task, common::CoreId core,
                                   common::ThreadId thread, common::TimePs at_ps) {
  for (RunObserver* o : dispatched_) o->on_task_dispatched(task, core, thread, at_ps);
}

void RunObservers::tell_started(common::TaskId task, common::CoreId core, common::TimePs start_ps) {
  for (RunObserver* o : started_) o->on_task_started(task, core, start_ps);
}

void RunObservers::tell_finished(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                                 common::TimePs end_ps) {
  for (RunObserver* o : finished_) o->on_task_finished(task, core, start_ps, end_ps);
}

void RunObservers::tell_round(const ThreadRound& r) {
  for (RunObserver* o : rounds_) o->on_thread_round(r);
}

void RunObservers::device_task_queued(common::DeviceTaskId dt) {
  if (timeline_ != nullptr) timeline_->on_device_task_queued(dt);
  for (RunObserver* o : builds_) o->on_device_task_queued(dt);
}

void RunObservers::device_task_built(common::DeviceTaskId dt, common::TimePs start_ps,
                                     common::TimePs end_ps) {
  if (timeline_ != nullptr) timeline_->on_device_task_built(dt, start_ps, end_ps);
  for (RunObserver* o : builds_) o->on_device_task_built(dt, start_ps, end_ps);
}

void RunObservers::progress(std::uint64_t done) {
  until_progress_ = progress_every_;
  for (RunObserver* o : progress_) o->on_progress(done, total_tasks_);
}

}  // namespace pypto::sim
