// SPDX-License-Identifier: Apache-2.0
// The run's timeline as an observer: fills a Timeline (simulation.h) with each task's start,
// end and core, the AICPU spans (schedule-thread rounds that did something and the control
// flow's device-task builds, in the order they begin) and the ready-queue depth after each
// round. The model holds it by its type, so that its per-task calls stay direct.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "pypto/sim/run_observer.h"
#include "pypto/sim/simulation.h"

namespace pypto::sim {

static_assert(static_cast<std::uint16_t>(common::kNoCore) == common::kNoCore16);

class TimelineRecorder final : public RunObserver {
 public:
  // task_times: the per-task columns; aicpu_events: the spans and depths, up to
  // max_aicpu_events spans (then Timeline::aicpu_truncated). Contract: tl outlives the run.
  TimelineRecorder(Timeline& tl, bool task_times, bool aicpu_events, std::size_t max_aicpu_events)
      : tl_(tl),
        task_times_(task_times),
        aicpu_events_(aicpu_events),
        max_spans_(max_aicpu_events) {}

  unsigned events() const override { return kRunTaskFinished | kRunThreadRound | kRunDeviceTasks; }
  bool task_times() const { return task_times_; }

  // Sizes the per-task columns; keeps the scheduler for the ready depths.
  void on_run_start(const RunInfo& run) override;

  // Contract: a hint, changing nothing: `task` was just dispatched; fetches its entries into
  // the host's caches ahead of its completion (the graph is far larger than the caches).
  void prefetch(common::TaskId task) const {
    if (!task_times_) return;
    __builtin_prefetch(&tl_.start_ps[task], 1);
    __builtin_prefetch(&tl_.end_ps[task], 1);
    __builtin_prefetch(&tl_.core[task], 1);
  }
  // on_task_finished without the test: only with task_times().
  void record_task(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                   common::TimePs end_ps) {
    tl_.start_ps[task] = start_ps;
    tl_.end_ps[task] = end_ps;
    tl_.core[task] = static_cast<std::uint16_t>(core);  // kNoCore (AICPU) becomes kNoCore16
  }
  void on_task_finished(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                        common::TimePs end_ps) override {
    if (task_times_) record_task(task, core, start_ps, end_ps);
  }

  void on_thread_round(const ThreadRound& r) override {
    if (aicpu_events_) record_round(r);
  }
  void on_device_task_queued(common::DeviceTaskId dt) override;
  void on_device_task_built(common::DeviceTaskId dt, common::TimePs start_ps,
                            common::TimePs end_ps) override;

 private:
  void record_round(const ThreadRound& r);
  static constexpr std::size_t kNoSpan = ~std::size_t{0};
  Timeline& tl_;
  bool task_times_, aicpu_events_;
  std::size_t max_spans_;
  const sched::Scheduler* scheduler_ = nullptr;
  std::uint32_t control_thread_ = 0;  // the control flow's span thread (after the schedulers)
  // Per schedule thread: the ready depths (AIC, AIV) of its last sample; a round adds a
  // sample only when they changed since.
  std::vector<std::array<std::uint64_t, 2>> last_depth_;
  // The places among the spans of device tasks queued and not yet built (kNoSpan: the spans
  // were full), in queue order.
  std::deque<std::size_t> span_at_;
};

}  // namespace pypto::sim
