// SPDX-License-Identifier: Apache-2.0
#include "sched_thread.h"

#include <algorithm>

#include "ai_core.h"
#include "control_flow.h"

namespace pypto::sim {

using common::kNever;
using common::TimePs;

SchedThread::SchedThread(sc_core::sc_module_name name, Machine& m, common::ThreadId id)
    : sc_module(name), m_(m), id_(id), rank_(m.calendar->join(*this)) {
  poll_offset_.assign(m.cores.size(), 0);
}

// ---- sched::Hal ----------------------------------------------------------------------------
void SchedThread::poll(common::ThreadId, common::CoreId c, std::vector<common::TaskId>& finished) {
  local_ = common::add_ps(local_, m_.tm.poll_ps);
  m_.cores[c]->collect(local_, finished);
}

void SchedThread::send(common::ThreadId, common::TaskId task, common::CoreId c) {
  local_ = common::add_ps(local_, m_.tm.dispatch_ps);
  m_.observers.task_dispatched(task, c, id_, local_);
  m_.cores[c]->assign(task, local_);
}

void SchedThread::run_inline(common::ThreadId, common::TaskId task) {
  const TimePs start = local_;
  m_.observers.task_started(task, common::kNoCore, start);
  if (m_.graph.has_recorded(task)) local_ += m_.graph.recorded_ps(task);
  m_.task_done(task, common::kNoCore, start, local_);
}

void SchedThread::charge(common::ThreadId, sched::AicpuOp op, std::uint32_t n) {
  switch (op) {
    case sched::AicpuOp::kResolveEdge:
      local_ = common::add_ps(local_, common::mul_ps(m_.tm.resolve_ps, n));
      break;
    case sched::AicpuOp::kQueueOp:
      queue_op_ps_ = local_;
      local_ = common::add_ps(local_, common::mul_ps(m_.tm.queue_op_ps, n));
      break;
    case sched::AicpuOp::kFairScan:
      local_ = common::add_ps(local_, common::mul_ps(m_.tm.fair_scan_per_thread_ps, n));
      break;
  }
}

bool SchedThread::yield_before_shared(common::ThreadId) {
  // Ahead of global time: let every other agent act up to this thread's clock first. When
  // none is due before the thread would resume, and the piece leaves none a note to wake
  // it (delivered when the piece returns), the round goes on at once instead.
  if (local_ <= m_.now_ps()) return false;
  if (m_.calendar->due_before(local_, rank_) || m_.scheduler->piece_has_results(id_)) return true;
  m_.calendar->advance_to(local_);
  return false;
}

std::string SchedThread::describe() const {
  std::string s = std::string(name()) + " (local clock " + std::to_string(local_) + " ps): ";
  switch (mode_) {
    case Mode::kIdle: s += "idle, waits for new work"; break;
    case Mode::kPolling:
      s += "polling " + std::to_string(polled_cores_) + " busy core(s) every " +
           std::to_string(period_) + " ps from " + std::to_string(grid0_) +
           " ps, waits for a completion to become known";
      break;
    case Mode::kActive:
      s += m_.scheduler->in_round(id_) ? "in a suspended round" : "between rounds";
      break;
  }
  if (armed_ps_ != kNever) s += "; a wake-up at " + std::to_string(armed_ps_) + " ps never came";
  return s;
}

// ---- waking ----------------------------------------------------------------------------------
void SchedThread::wake_at(TimePs t) {
  // A thread is one AICPU: its next round cannot begin before the last one ended.
  const TimePs now = m_.now_ps();
  t = std::max({t, local_, now});
  check_time_limit(*this, t);  // local_ saturates at kNever: a wrapped clock stops here
  // The calendar keeps only the earlier of two wake-ups; track it so that a withdrawn
  // finish can tell whether it was the reason for the pending one, and skip the call when
  // an earlier wake-up is already pending.
  if (t >= armed_ps_) return;
  armed_ps_ = t;
  m_.calendar->wake_at(rank_, t);
}

TimePs SchedThread::known_finish_wake() const {
  TimePs wake = kNever;
  for (std::uint32_t i = 0; i < polled_cores_; ++i) {
    const common::CoreId c = busy_[i];
    TimePs final_from = 0;
    const TimePs f = m_.cores[c]->earliest_known_finish(final_from);
    if (f != kNever) wake = std::min(wake, finish_wake(c, f, final_from));
  }
  return wake;
}

void SchedThread::enter_polling(TimePs round_start) {
  const std::size_t busy = m_.scheduler->in_flight_cores(id_, busy_);
  if (busy == 0) {
    mode_ = Mode::kIdle;
    return;
  }
  mode_ = Mode::kPolling;
  grid0_ = round_start;
  polled_cores_ = static_cast<std::uint32_t>(busy);
  period_ = TimePs{polled_cores_} * m_.tm.poll_ps;
  // One pass: a core's place in the round, then its first round that sees a known finish
  // (known_finish_wake's minimum, which needs the place).
  TimePs wake = kNever;
  for (std::uint32_t i = 0; i < polled_cores_; ++i) {
    const common::CoreId c = busy_[i];
    poll_offset_[c] = i;
    TimePs final_from = 0;
    const TimePs f = m_.cores[c]->earliest_known_finish(final_from);
    if (f != kNever) wake = std::min(wake, finish_wake(c, f, final_from));
  }
  if (wake != kNever) wake_at(wake);
}

void SchedThread::on_finish_known(common::CoreId core, TimePs finish_ps, TimePs final_from_ps) {
  if (mode_ == Mode::kPolling) wake_at(finish_wake(core, finish_ps, final_from_ps));
}

void SchedThread::on_finish_revoked(common::CoreId core, TimePs finish_ps, TimePs final_from_ps) {
  if (mode_ != Mode::kPolling) return;  // an active thread re-arms after its round anyway
  const TimePs w = std::max({finish_wake(core, finish_ps, final_from_ps), local_, m_.now_ps()});
  if (w != armed_ps_) return;  // something earlier wakes the thread: that round re-arms
  // The withdrawn finish may be the only reason for the pending wake-up: re-arm from the
  // remaining ones so that no round runs for it (a round the event path would not run).
  m_.calendar->set(rank_, kNever);
  armed_ps_ = kNever;
  const TimePs wake = std::min(work_wake_ps_, known_finish_wake());
  if (wake != kNever) wake_at(wake);
}

void SchedThread::on_work(TimePs at_ps) {
  if (mode_ == Mode::kActive) {
    work_seen_ = true;  // the round's end looks at the queues again
  } else if (mode_ == Mode::kIdle) {
    wake_at(at_ps);
  } else if (mode_ == Mode::kPolling) {
    const TimePs k = at_ps > grid0_ ? (at_ps - grid0_ + period_ - 1) / period_ : 0;
    const TimePs t = grid0_ + k * period_;
    work_wake_ps_ = std::min(work_wake_ps_, t);
    wake_at(t);
  }
}

// ---- one poll round ------------------------------------------------------------------------
void SchedThread::act() {
  try {
    m_.count_event();
    // The calendar dropped the wake-up that ran this: this round (or piece) re-arms from
    // scratch.
    armed_ps_ = kNever;
    const TimePs now = m_.now_ps();
    if (!m_.scheduler->in_round(id_)) {
      work_wake_ps_ = kNever;
      if (mode_ == Mode::kPolling && period_ > 0 && now >= grid0_ + period_) {
        // The rounds skipped since grid0_ polled every busy core and found nothing.
        m_.scheduler->count_skipped_rounds(id_, (now - grid0_) / period_, polled_cores_);
      }
      local_ = now;
      round_start_ = now;
      round_completions_ = 0;
      round_dispatches_ = 0;
      work_seen_ = false;
      round_all_sent_ = false;
      mode_ = Mode::kActive;  // callbacks during the round only leave notes
    }
    queue_op_ps_ = kNever;
    const sched::RoundResult r = m_.scheduler->run_round(id_, *this);
    round_completions_ += r.completions;
    round_dispatches_ += r.dispatches;
    // A result describes only its piece: the last send may come in a piece that was then
    // suspended, and the idle threads must still hear of it when the round ends.
    round_all_sent_ = round_all_sent_ || r.all_sent;
    for (const auto& f : r.finished_device_tasks) m_.control->on_device_task_done(f.dt, f.time_ps);
    if (r.pushed_shared[0] || r.pushed_shared[1]) {
      // Idle threads spin on the shared queue: they see the push when it is made.
      const TimePs pushed = std::max(now, queue_op_ps_ == kNever ? now : queue_op_ps_);
      for (auto* t : m_.threads) {
        if (t != this) t->on_work(pushed);
      }
    }
    if (r.suspended) {
      wake_at(local_);  // continue at the local clock
      return;
    }
    end_round();
    if (round_all_sent_) {
      // Idle threads drain and go to the barrier.
      for (auto* t : m_.threads) {
        if (t != this) t->on_work(local_);
      }
    }
  } catch (...) {
    m_.fail(std::current_exception());
  }
}

void SchedThread::end_round() {
  const bool work = round_completions_ > 0 || round_dispatches_ > 0;
  if (work) {
    // Busy: the rounds that completed or dispatched something (sched::ThreadStats::busy_ps).
    m_.scheduler->add_busy_ps(id_, local_ - round_start_);
    m_.observers.thread_round({id_, round_start_, local_, round_completions_, round_dispatches_});
    if (m_.scheduler->shared_work_left()) {
      for (auto* t : m_.threads) {
        if (t != this) t->on_work(local_);
      }
    }
  }
  if ((work || work_seen_) && m_.scheduler->has_dispatchable_work(id_)) {
    mode_ = Mode::kActive;
    wake_at(local_);
  } else {
    enter_polling(local_);
  }
}

}  // namespace pypto::sim
