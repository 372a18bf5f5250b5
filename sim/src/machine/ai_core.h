// SPDX-License-Identifier: Apache-2.0
// One AICore (AIC or AIV) of the persistent AICore kernel: a running and a pending slot.
// The core starts the pending task as soon as the running one ends; a task's duration is
// its recorded one, or the cost model over its memory traffic (through L2 and, for
// misses, the shared HBM) and compute.
#pragma once

#include <algorithm>
#include <string>
#include <systemc>

#include "machine.h"

namespace pypto::sim {

class SchedThread;

class AiCore : public sc_core::sc_module, private CalendarAgent {
 public:
  AiCore(sc_core::sc_module_name name, Machine& m, common::CoreId id);

  // Contract: called by the owning schedule thread; `task` reaches the core's register at
  // `at_ps` (>= now). At most one running and one pending task are ever outstanding.
  void assign(common::TaskId task, common::TimePs at_ps);

  // Contract: called by the owning thread's poll at its local time t_ps. Appends tasks
  // whose completion is known, can no longer change and is at or before t_ps, in order,
  // and forgets them.
  // Inline: most polls find nothing, which this tells without a call.
  void collect(common::TimePs t_ps, std::vector<common::TaskId>& out) {
    if (done_n_ == 0 &&
        (run_.task == common::kNoTask || run_.collected || run_.finish == common::kNever ||
         run_.finish + m_.tm.completion_latency_ps > t_ps)) {
      return;
    }
    collect_some(t_ps, out);
  }

  // When the earliest completion not yet collected becomes visible to a poll (its end plus
  // aicpu.completion_latency_ns; kNever if none is known). final_from is set to the time from
  // which it can no longer change (a promised HBM transfer's end; 0 if it is final already):
  // a poll before that time does not collect it.
  // Inline: a thread entering its polling mode asks each of its busy cores.
  common::TimePs earliest_known_finish(common::TimePs& final_from) const {
    common::TimePs t = common::kNever;
    final_from = 0;
    for (int i = 0; i < done_n_; ++i) t = std::min(t, done_[i].end);
    // Done tasks ended before the running one started: they come first when present.
    if (t == common::kNever && run_.task != common::kNoTask && !run_.collected &&
        run_.finish != common::kNever) {
      t = run_.finish;
      final_from = run_.final_from;
    }
    return t == common::kNever ? t : visible(t);
  }

  // Contract: called by Hbm when this core's transfer has completed at now.
  void on_flow_done();
  // Contract: called by Hbm at now when the promised end of this core's transfer (returned
  // by Hbm::start) was withdrawn; on_flow_done() follows when it completes.
  void on_flow_revoked();

  // Contract: diagnostics only; empty for an idle core, else what it holds and waits for.
  std::string describe() const;

  std::uint64_t busy_ps() const { return busy_ps_; }
  std::uint64_t tasks() const { return tasks_; }

 private:
  void act() override;
  void collect_some(common::TimePs t_ps, std::vector<common::TaskId>& out);  // collect()'s body
  void start(common::TaskId task, common::TimePs t0);
  void finish_running();
  void arm();
  common::TimePs combine(common::TimePs read_ps) const;
  common::TimePs finish_after_flow(common::TimePs flow_end_ps) const;
  common::TimePs earliest_end() const;  // lower bound of the running task's end
  // When a completion at end_ps becomes readable by a poll.
  common::TimePs visible(common::TimePs end_ps) const {
    return common::add_ps(end_ps, m_.tm.completion_latency_ps);
  }
  SchedThread* owner();  // the schedule thread that owns this core

  Machine& m_;
  common::CoreId id_;
  SchedThread* owner_ = nullptr;  // resolved on first use (threads are built after cores)
  std::uint32_t rank_;            // in the calendar

  struct Running {
    common::TaskId task = common::kNoTask;
    common::TimePs start = 0, finish = common::kNever;
    bool collected = false;  // the thread saw the completion before it happened in SystemC
    // finish comes from a promised HBM end and may still be revoked before this time
    common::TimePs final_from = 0;
    // cost-model pieces while an HBM transfer is in flight
    common::TimePs flow_start = 0, pre = 0, post = 0, l2_read = 0, compute = 0, write = 0;
    bool overlap = false;
  } run_;
  // run_ = Running{}, a field at a time: the assignment zeroed a temporary on the stack and
  // copied it, twice a task.
  void clear_run() {
    run_.task = common::kNoTask;
    run_.start = 0;
    run_.finish = common::kNever;
    run_.collected = false;
    run_.final_from = 0;
    run_.flow_start = run_.pre = run_.post = run_.l2_read = run_.compute = run_.write = 0;
    run_.overlap = false;
  }
  common::TaskId pending_ = common::kNoTask;
  struct Inbox {
    common::TaskId task;
    common::TimePs at;
  } inbox_[2];
  int inbox_n_ = 0;
  struct Done {
    common::TaskId task;
    common::TimePs end;
  } done_[2];
  int done_n_ = 0;
  std::uint64_t busy_ps_ = 0, tasks_ = 0;
};

}  // namespace pypto::sim
