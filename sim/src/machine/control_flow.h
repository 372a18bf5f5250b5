// SPDX-License-Identifier: Apache-2.0
// The control-flow AICPU: builds device tasks one after another (build cost plus a stitch
// cost per leaf task), working ahead of execution up to the submit-queue depth, and hands
// each to the schedule threads once it is built and the runtime admits it (serial device
// tasks after the previous one's barrier; parallel-loop ones up to the parallelism).
//
// A build's times are a running sum of build costs, the same whenever they are worked out,
// so the model works a device task's build out only when it admits it (build()). Observers
// hear of a build when the model starts it (its queue has room: on_device_task_queued) and
// of its times when it is worked out (on_device_task_built), in the same order.
#pragma once

#include <deque>
#include <systemc>

#include "machine.h"

namespace pypto::sim {

class ControlFlow : public sc_core::sc_module, private CalendarAgent {
 public:
  // start_ps: when the control-flow AICPU kernel starts running.
  ControlFlow(sc_core::sc_module_name name, Machine& m, common::TimePs start_ps);

  // Contract: called by a schedule thread when device task dt has finished at at_ps.
  void on_device_task_done(common::DeviceTaskId dt, common::TimePs at_ps);

  common::TimePs makespan_ps() const { return makespan_ps_; }
  common::TimePs busy_ps() const { return busy_ps_; }
  std::uint64_t admitted() const { return next_admit_; }

 private:
  void start_of_simulation() override;
  void act() override;
  // The model starts building device task next_started_ (it enters the submit queue).
  void start_build();
  // Works out the build of device task next_built_ (present in the graph).
  void build();
  static constexpr std::uint32_t kSubmitQueueDepth = 64;

  Machine& m_;
  std::uint32_t rank_;  // in the calendar
  common::TimePs start_ps_;
  common::TimePs clock_ps_;              // when the control flow is free to build the next one
  common::TimePs release_ps_;            // earliest admission of the next device task
  std::deque<common::TimePs> built_at_;  // submit times of [next_admit_, next_built_)
  // Device tasks [0, next_started_) the model has started building (next_started_ <=
  // next_admit_ + kSubmitQueueDepth); of those, [0, next_built_) are worked out.
  std::uint64_t next_started_ = 0, next_built_ = 0, next_admit_ = 0;
  common::TimePs makespan_ps_ = 0, busy_ps_ = 0;
};

}  // namespace pypto::sim
