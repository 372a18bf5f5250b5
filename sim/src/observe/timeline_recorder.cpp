// SPDX-License-Identifier: Apache-2.0
#include "timeline_recorder.h"

namespace pypto::sim {

void TimelineRecorder::on_run_start(const RunInfo& run) {
  scheduler_ = &run.scheduler;
  control_thread_ = run.sched_threads;
  last_depth_.assign(run.sched_threads, {~0ull, ~0ull});
  if (task_times_) {
    const std::size_t n = run.graph.num_tasks();
    tl_.for_each_task_column([n](auto& column, auto unset) { column.assign(n, unset); });
  }
}

void TimelineRecorder::record_round(const ThreadRound& r) {
  if (tl_.aicpu.size() >= max_spans_) {
    tl_.aicpu_truncated = true;
    return;
  }
  tl_.aicpu.push_back({r.thread, r.start_ps, r.end_ps, r.completions, r.dispatches});
  const std::uint64_t aic = scheduler_->ready_depth(common::CoreType::kAic);
  const std::uint64_t aiv = scheduler_->ready_depth(common::CoreType::kAiv);
  auto& last = last_depth_[r.thread];
  if (aic != last[0] || aiv != last[1]) {
    tl_.depth.push_back(
        {r.end_ps, static_cast<std::uint32_t>(aic), static_cast<std::uint32_t>(aiv)});
    last = {aic, aiv};
  }
}

void TimelineRecorder::on_device_task_queued(common::DeviceTaskId) {
  // The build takes its place among the spans now; its times fill that place when it is
  // worked out, so that the spans come out in the order the builds begin.
  if (!aicpu_events_) return;
  if (tl_.aicpu.size() < max_spans_) {
    span_at_.push_back(tl_.aicpu.size());
    tl_.aicpu.push_back({control_thread_, 0, 0, 0, 0});
  } else {
    span_at_.push_back(kNoSpan);
  }
}

void TimelineRecorder::on_device_task_built(common::DeviceTaskId, common::TimePs start_ps,
                                            common::TimePs end_ps) {
  if (span_at_.empty()) return;
  if (span_at_.front() != kNoSpan) {
    AicpuSpan& span = tl_.aicpu[span_at_.front()];
    span.start_ps = start_ps;
    span.end_ps = end_ps;
  }
  span_at_.pop_front();
}

}  // namespace pypto::sim
