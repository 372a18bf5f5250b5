// SPDX-License-Identifier: Apache-2.0
// The loop the benchmark's two reference models share (internal to pypto_bench_reference):
// the SystemC ceiling and the plain binary-heap event loop differ only in how time
// advances, so they run this one piece of code through a Backend and do exactly the same
// work. The semantics are documented at run_ceiling() in pypto/bench/reference.h.
//
// Backend contract:
//   common::TimePs now() const;                         current simulated time
//   void notify_core(common::CoreId c, common::TimePs at);   core c's event at `at` (>= now);
//                                                      an earlier pending one is kept
//   void wake_thread(common::ThreadId t, common::TimePs at); thread t's round at `at`;
//                                                      an earlier pending one is kept
// and calls start() once before time 0, thread_round(t) when thread t's wake-up fires
// (after dropping its pending wake-ups) and core_event(c) when core c's event fires.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pypto/bench/reference.h"
#include "pypto/common/errors.h"

namespace pypto::bench::detail {

using common::CoreId;
using common::CoreType;
using common::kNoTask;
using common::TaskId;
using common::ThreadId;
using common::TimePs;

// A FIFO of task ids that reuses its storage: the shared ready queues drain often.
class TaskFifo {
 public:
  bool empty() const { return head_ == buf_.size(); }
  void push(TaskId t) { buf_.push_back(t); }
  TaskId pop() {
    const TaskId t = buf_[head_++];
    if (head_ == buf_.size()) {
      buf_.clear();
      head_ = 0;
    } else if (head_ >= 4096 && head_ * 2 >= buf_.size()) {
      buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return t;
  }

 private:
  std::vector<TaskId> buf_;
  std::size_t head_ = 0;
};

template <class Backend>
class MinimalRuntime {
 public:
  MinimalRuntime(const sched::TaskGraph& g, const MinimalCosts& costs, Backend& backend)
      : g_(g), c_(costs), b_(backend), pred_(g.pred_count) {
    NPU_CHECK(costs.threads > 0 && costs.aic > 0 && costs.aiv % costs.aic == 0 &&
                  costs.threads <= costs.aic,
              "reference model: bad machine shape");
    cores_.resize(costs.aic + costs.aiv);
    threads_.resize(costs.threads);
    const std::uint32_t per_aic = costs.aiv / costs.aic;
    for (ThreadId t = 0; t < costs.threads; ++t) {
      // The runtime's partition: thread t owns a contiguous block of clusters.
      const std::uint32_t k0 = t * costs.aic / costs.threads;
      const std::uint32_t k1 = (t + 1) * costs.aic / costs.threads;
      Thread& th = threads_[t];
      th.begin[0] = k0;
      th.end[0] = k1;
      th.begin[1] = costs.aic + k0 * per_aic;
      th.end[1] = costs.aic + k1 * per_aic;
      for (int ct = 0; ct < 2; ++ct) {
        th.idle[ct] = th.end[ct] - th.begin[ct];
        for (CoreId c = th.begin[ct]; c < th.end[ct]; ++c) cores_[c].owner = t;
      }
    }
  }

  // Makes the first device task's zero-predecessor tasks ready at time 0.
  void start() {
    TimePs local = 0;
    next_device_task(local);
    drain(local);
  }

  void thread_round(ThreadId tid) {
    ++activations_;
    const TimePs now = b_.now();
    Thread& th = threads_[tid];
    TimePs local = now;
    wake_all_ = false;
    // Poll every busy core; collect the tasks that ended by the time of the read.
    for (int ct = 0; ct < 2; ++ct) {
      for (CoreId c = th.begin[ct]; c < th.end[ct]; ++c) {
        Core& co = cores_[c];
        if (co.task == kNoTask) continue;
        local += c_.poll_ps;
        if (co.end > local) continue;
        const TaskId t = co.task;
        co.task = kNoTask;
        ++th.idle[ct];
        makespan_ = std::max(makespan_, co.end);
        stack_.push_back(t);
        drain(local);
      }
    }
    // Fill idle cores from the shared FIFOs, lowest core id first.
    for (int ct = 0; ct < 2; ++ct) {
      for (CoreId c = th.begin[ct]; c < th.end[ct] && th.idle[ct] > 0 && !ready_[ct].empty(); ++c) {
        Core& co = cores_[c];
        if (co.task != kNoTask) continue;
        const TaskId t = ready_[ct].pop();
        local += c_.dispatch_ps;
        co.task = t;
        co.end = local + minimal_task_ps(g_, c_, t);
        --th.idle[ct];
        b_.notify_core(c, co.end);
      }
    }
    th.busy_until = local;
    // Ready work this thread could not place, or a new device task: other threads with
    // idle cores see it from the end of this round.
    for (ThreadId o = 0; o < threads_.size(); ++o) {
      if (o == tid) continue;
      const Thread& ot = threads_[o];
      if (wake_all_ || (ot.idle[0] > 0 && !ready_[0].empty()) ||
          (ot.idle[1] > 0 && !ready_[1].empty())) {
        wake(o, local);
      }
    }
  }

  void core_event(CoreId c) {
    ++activations_;
    const Core& co = cores_[c];
    if (co.task == kNoTask) return;  // collected early by a poll that ran ahead
    const TimePs now = b_.now();
    if (co.end > now) {
      // A later task was sent while this event was pending for the previous one.
      b_.notify_core(c, co.end);
      return;
    }
    wake(co.owner, now);
  }

  std::uint64_t tasks_done() const { return done_; }
  TimePs makespan_ps() const { return makespan_; }
  std::uint64_t activations() const { return activations_; }
  std::uint32_t num_threads() const { return static_cast<std::uint32_t>(threads_.size()); }
  std::uint32_t num_cores() const { return static_cast<std::uint32_t>(cores_.size()); }

 private:
  struct Core {
    TaskId task = kNoTask;
    TimePs end = 0;
    ThreadId owner = 0;
  };
  struct Thread {
    CoreId begin[2] = {0, 0}, end[2] = {0, 0};
    std::uint32_t idle[2] = {0, 0};
    TimePs busy_until = 0;
  };

  void wake(ThreadId t, TimePs at) { b_.wake_thread(t, std::max(at, threads_[t].busy_until)); }

  // Completes the tasks on the stack: resolves their successors (HUB and AICPU tasks run
  // inline and join the stack) and moves to the next device task when one is done. A
  // stack, not recursion: chains of HUBs must not grow the call stack.
  void drain(TimePs& local) {
    while (!stack_.empty()) {
      const TaskId t = stack_.back();
      stack_.pop_back();
      ++done_;
      for (std::uint32_t i = g_.succ_first(t); i < g_.succ_last(t); ++i) {
        local += c_.resolve_ps;
        const TaskId s = g_.succ[i];
        if (--pred_[s] == 0) make_ready(s, local);
      }
      if (--dt_left_ == 0) next_device_task(local);
    }
  }

  void make_ready(TaskId t, TimePs& local) {
    const CoreType ct = g_.core_type[t];
    if (common::is_dispatchable(ct)) {
      ready_[static_cast<int>(ct)].push(t);
    } else {
      local += minimal_task_ps(g_, c_, t);
      makespan_ = std::max(makespan_, local);
      stack_.push_back(t);
    }
  }

  void next_device_task(TimePs& local) {
    // Loops over empty device tasks (a graph may have none left).
    while (dt_left_ == 0 && next_dt_ < g_.device_tasks.size()) {
      const sched::DeviceTask& d = g_.device_tasks[next_dt_++];
      dt_left_ = d.num_tasks;
      wake_all_ = true;
      for (TaskId t = d.first_task; t < d.first_task + d.num_tasks; ++t) {
        if (pred_[t] == 0) make_ready(t, local);
      }
    }
  }

  const sched::TaskGraph& g_;
  const MinimalCosts& c_;
  Backend& b_;
  std::vector<std::uint32_t> pred_;
  std::vector<Core> cores_;
  std::vector<Thread> threads_;
  TaskFifo ready_[2];
  std::vector<TaskId> stack_;
  std::size_t next_dt_ = 0;
  std::uint64_t dt_left_ = 0;
  bool wake_all_ = false;
  std::uint64_t done_ = 0, activations_ = 0;
  TimePs makespan_ = 0;
};

}  // namespace pypto::bench::detail
