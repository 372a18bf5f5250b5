// SPDX-License-Identifier: Apache-2.0
// One schedule AICPU thread. A poll round of the sched/ runtime runs with the thread's
// local clock advancing by every charged operation (poll, resolve, dispatch, queue and
// fairness costs); tasks reach the cores at the local time they were sent. Before each
// operation on state the threads share (a shared ready queue, the idle flags, predecessor
// counts, the barrier) the round yields to the calendar and resumes when global time has
// reached its local clock (at once when no other agent is due before then), so the threads'
// shared operations happen in the order of their local times: what one thread pushes is taken by an
// idle one at the time it is pushed, as on the device, where idle threads spin on the shared
// queues. Rounds that would find nothing are skipped: the thread sleeps until the round, on its
// polling grid, in which a known completion is seen, or until new work is pushed.
#pragma once

#include <algorithm>
#include <string>
#include <systemc>
#include <vector>

#include "machine.h"
#include "pypto/sched/hal.h"

namespace pypto::sim {

class SchedThread : public sc_core::sc_module, private sched::Hal, private CalendarAgent {
 public:
  SchedThread(sc_core::sc_module_name name, Machine& m, common::ThreadId id);

  // Contract: a core of this thread learned its current task's completion is readable from
  // finish_ps on (its end plus aicpu.completion_latency_ns); a poll sees it only from
  // final_from_ps on (before that a later HBM start may still delay it).
  void on_finish_known(common::CoreId core, common::TimePs finish_ps, common::TimePs final_from_ps);
  // Contract: the finish a core announced with on_finish_known is withdrawn (it is unknown
  // until announced again); the core has already forgotten it.
  void on_finish_revoked(common::CoreId core, common::TimePs finish_ps,
                         common::TimePs final_from_ps);
  // Contract: new work may be available for this thread from at_ps on.
  void on_work(common::TimePs at_ps);

  // Contract: diagnostics only; what the thread waits for (mode, clock, pending wake-up).
  std::string describe() const;

  sched::Hal& hal() { return *this; }

 private:
  // sched::Hal
  void poll(common::ThreadId t, common::CoreId c, std::vector<common::TaskId>& finished) override;
  void send(common::ThreadId t, common::TaskId task, common::CoreId c) override;
  void run_inline(common::ThreadId t, common::TaskId task) override;
  void charge(common::ThreadId t, sched::AicpuOp op, std::uint32_t n) override;
  common::TimePs now(common::ThreadId t) const override { return local_; }
  bool yield_before_shared(common::ThreadId t) override;

  void act() override;
  void wake_at(common::TimePs t);
  // Inline, both: entering the polling mode asks them for every busy core.
  common::TimePs grid_wake(common::CoreId core, common::TimePs finish_ps) const {
    // Round k reads this core at grid0_ + k*period_ + (offset+1)*poll; wake for the first
    // round whose read is not earlier than the completion.
    const common::TimePs base = grid0_ + common::TimePs{poll_offset_[core] + 1} * m_.tm.poll_ps;
    const common::TimePs k = finish_ps > base ? (finish_ps - base + period_ - 1) / period_ : 0;
    return grid0_ + k * period_;
  }
  common::TimePs finish_wake(common::CoreId core, common::TimePs finish_ps,
                             common::TimePs final_from_ps) const {
    // A promised finish is seen by the first round on the grid that reads it, but not before
    // it is final: the same round as when the finish becomes known only then.
    return std::max(grid_wake(core, finish_ps), final_from_ps);
  }
  common::TimePs known_finish_wake() const;
  void enter_polling(common::TimePs round_start);
  void end_round();

  Machine& m_;
  common::ThreadId id_;
  std::uint32_t rank_;  // in the calendar
  common::TimePs local_ = 0;
  enum class Mode { kActive, kPolling, kIdle } mode_ = Mode::kIdle;
  common::TimePs grid0_ = 0, period_ = 0;   // polling grid: rounds start at grid0_ + k*period_
  std::vector<std::uint32_t> poll_offset_;  // per core (global id): position in a poll round
  std::uint32_t polled_cores_ = 0;
  std::vector<common::CoreId> busy_;  // cores polled while kPolling: the first polled_cores_
  common::TimePs armed_ps_ = common::kNever;      // pending wake-up (the earliest asked for)
  common::TimePs work_wake_ps_ = common::kNever;  // earliest wake-up asked for by on_work
  // The round in progress (it may span several activations).
  common::TimePs round_start_ = 0;
  std::uint32_t round_completions_ = 0, round_dispatches_ = 0;
  bool work_seen_ = false;                       // on_work arrived during the round
  bool round_all_sent_ = false;                  // a piece of the round sent a device task's last
  common::TimePs queue_op_ps_ = common::kNever;  // start of the piece's last queue operation
};

}  // namespace pypto::sim
