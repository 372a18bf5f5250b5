// SPDX-License-Identifier: Apache-2.0
#include "control_flow.h"

#include <algorithm>

#include "sched_thread.h"

namespace pypto::sim {

using common::TimePs;

ControlFlow::ControlFlow(sc_core::sc_module_name name, Machine& m, TimePs start_ps)
    : sc_module(name),
      m_(m),
      rank_(m.calendar->join(*this)),
      start_ps_(start_ps),
      clock_ps_(start_ps),
      release_ps_(std::max(start_ps, m.dispatch_start_ps)) {}

void ControlFlow::start_of_simulation() { m_.calendar->wake_at(rank_, start_ps_); }

void ControlFlow::on_device_task_done(common::DeviceTaskId dt, TimePs at_ps) {
  const auto& d = m_.graph.device_tasks[dt];
  const bool serial = d.parallel_group == 0 || m_.opt.runtime.device_sched_parallelism <= 1;
  const TimePs end = at_ps + (serial ? m_.tm.barrier_ps : 0);
  release_ps_ = std::max(release_ps_, end);
  check_time_limit(*this, release_ps_);
  makespan_ps_ = std::max(makespan_ps_, end);
  m_.calendar->wake_at(rank_, std::max(release_ps_, m_.now_ps()));
}

void ControlFlow::act() {
  try {
    m_.count_event();
    const TimePs now = m_.now_ps();
    const std::uint64_t device_tasks = m_.graph.device_tasks.size();
    for (;;) {
      // 1. Start builds while the submit queue has room.
      while (next_started_ < next_admit_ + kSubmitQueueDepth && next_started_ < device_tasks) {
        start_build();
      }
      // 2. Work out the build of the device task to admit next.
      if (next_built_ == next_admit_) {
        if (next_admit_ == device_tasks) return;
        build();
      }
      // 3. Admit it once built and released.
      const TimePs ready = std::max(built_at_.front(), release_ps_);
      if (ready > now) {
        m_.calendar->wake_at(rank_, ready);
        return;
      }
      if (!m_.scheduler->admissible(static_cast<common::DeviceTaskId>(next_admit_))) return;
      m_.scheduler->admit(static_cast<common::DeviceTaskId>(next_admit_),
                          m_.threads.front()->hal());
      built_at_.pop_front();
      ++next_admit_;
      for (auto* t : m_.threads) t->on_work(now);
    }
  } catch (...) {
    m_.fail(std::current_exception());
  }
}

void ControlFlow::start_build() {
  m_.observers.device_task_queued(static_cast<common::DeviceTaskId>(next_started_));
  ++next_started_;
}

void ControlFlow::build() {
  const auto& d = m_.graph.device_tasks[next_built_];
  const TimePs cost = common::add_ps(m_.tm.device_task_build_ps,
                                     common::mul_ps(m_.tm.stitch_per_task_ps, d.num_tasks));
  const TimePs begin = clock_ps_;
  clock_ps_ = common::add_ps(clock_ps_, cost);
  check_time_limit(*this, clock_ps_);
  busy_ps_ += cost;
  built_at_.push_back(clock_ps_ + m_.tm.submit_ps);
  m_.observers.device_task_built(static_cast<common::DeviceTaskId>(next_built_), begin, clock_ps_);
  ++next_built_;
}

}  // namespace pypto::sim
