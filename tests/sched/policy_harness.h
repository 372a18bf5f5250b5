// SPDX-License-Identifier: Apache-2.0
// PolicyHarness: drives the sched/ runtime on tiny graphs with an exact, hand-checkable
// time model (no SystemC): a poll costs `poll`, a resolved edge `resolve`, a dispatch
// `dispatch` ticks of the thread's clock; a task runs `duration[task]` ticks from the
// moment it reaches an idle core, and a pending task starts when the running one ends. A
// poll sees a task finished only `latency` ticks after its end (the completion's way to the
// AICPU; 0 by default).
// Threads run rounds in time order (ties: lower thread id first).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pypto/sched/hal.h"
#include "pypto/sched/registry.h"
#include "pypto/sched/scheduler.h"

namespace pypto::sched::testing {

struct TaskSpec {
  common::CoreType type;
  std::vector<common::TaskId> succ;
  std::uint32_t device_task = 0;
  std::uint64_t duration = 100;
  std::uint32_t parallel_group = 0;
};

// Builds a TaskGraph directly (tasks must be listed grouped by device task).
inline TaskGraph make_graph(const std::vector<TaskSpec>& specs) {
  TaskGraph g;
  const auto n = static_cast<common::TaskId>(specs.size());
  g.succ_begin.push_back(0);
  g.pred_count.assign(n, 0);
  for (common::TaskId t = 0; t < n; ++t) {
    g.core_type.push_back(specs[t].type);
    g.device_task.push_back(specs[t].device_task);
    g.root.push_back(t);
    g.kernel.push_back(0);
    g.orig_id.push_back(t);
    g.recorded_ns.push_back(static_cast<std::uint32_t>(specs[t].duration));
    g.compute_cycles.push_back(0);
    g.tiles.push_back(1);
    for (common::TaskId s : specs[t].succ) {
      g.succ.push_back(s);
      ++g.pred_count[s];
    }
    g.succ_begin.push_back(static_cast<std::uint32_t>(g.succ.size()));
    const std::uint32_t dt = specs[t].device_task;
    if (g.device_tasks.size() <= dt) {
      g.device_tasks.resize(dt + 1);
      g.device_tasks[dt].first_task = t;
      g.device_tasks[dt].seq_no = dt;
      g.device_tasks[dt].parallel_group = specs[t].parallel_group;
    }
    ++g.device_tasks[dt].num_tasks;
    ++g.device_tasks[dt].num_roots;
    ++g.device_tasks[dt].count[static_cast<int>(specs[t].type)];
  }
  g.kernel_names.push_back("k");
  return g;
}

struct DispatchRecord {
  common::TaskId task;
  common::CoreId core;
  common::ThreadId thread;
  std::uint64_t time;
};

class PolicyHarness : public Hal {
 public:
  PolicyHarness(const TaskGraph& g, MachineShape shape, const std::string& policy,
                std::uint64_t poll = 1, std::uint64_t resolve = 1, std::uint64_t dispatch = 1,
                std::uint64_t latency = 0)
      : g_(g),
        policy_(Registry::global().create(policy)),
        sched_(g, shape, *policy_),
        poll_(poll),
        resolve_(resolve),
        dispatch_(dispatch),
        latency_(latency),
        cores_(shape.aic + shape.aiv),
        clock_(shape.threads, 0) {}

  // Runs until every device task is done (or max_time); returns the dispatch log.
  const std::vector<DispatchRecord>& run(std::uint64_t max_time = 1'000'000) {
    std::uint64_t admit_at = 0;
    common::DeviceTaskId next_dt = 0;
    while (!sched_.all_done()) {
      if (next_dt < g_.device_tasks.size() && sched_.admissible(next_dt)) {
        const std::uint64_t at =
            std::max(admit_at, *std::min_element(clock_.begin(), clock_.end()));
        for (auto& c : clock_) c = std::max(c, at);
        sched_.admit(next_dt++, *this);
        continue;
      }
      const auto t = static_cast<common::ThreadId>(std::min_element(clock_.begin(), clock_.end()) -
                                                   clock_.begin());
      cur_ = t;
      const std::uint64_t start = clock_[t];
      if (start > max_time) break;
      const RoundResult r = sched_.run_round(t, *this);
      for (const auto& f : r.finished_device_tasks) {
        admit_at = std::max(admit_at, f.time_ps);
        done_dt_.push_back(f.dt);
      }
      if (clock_[t] == start) clock_[t] = next_event_after(start);
    }
    return log_;
  }

  // Order of tasks as dispatched.
  std::vector<common::TaskId> order() const {
    std::vector<common::TaskId> v;
    for (const auto& d : log_) v.push_back(d.task);
    return v;
  }
  common::CoreId core_of(common::TaskId t) const {
    for (const auto& d : log_) {
      if (d.task == t) return d.core;
    }
    return common::kNoCore;
  }
  std::uint64_t start_of(common::TaskId t) const { return start_[t]; }
  std::uint64_t end_of(common::TaskId t) const { return start_[t] + g_.recorded_ns[t]; }
  const std::vector<common::DeviceTaskId>& done_device_tasks() const { return done_dt_; }
  Scheduler& scheduler() { return sched_; }

  // ---- Hal ----
  void poll(common::ThreadId t, common::CoreId c, std::vector<common::TaskId>& finished) override {
    clock_[t] += poll_;
    advance(c, clock_[t]);
    auto& done = cores_[c].done;
    std::size_t seen = 0;
    while (seen < done.size() && done[seen].second + latency_ <= clock_[t]) {
      finished.push_back(done[seen++].first);
    }
    done.erase(done.begin(), done.begin() + static_cast<std::ptrdiff_t>(seen));
  }
  void send(common::ThreadId t, common::TaskId task, common::CoreId c) override {
    clock_[t] += dispatch_;
    log_.push_back({task, c, t, clock_[t]});
    advance(c, clock_[t]);
    Core& co = cores_[c];
    if (co.running == common::kNoTask) {
      start(c, task, clock_[t]);
    } else {
      co.pending = task;
    }
  }
  void run_inline(common::ThreadId t, common::TaskId task) override {
    clock_[t] += g_.recorded_ns[task];
  }
  void charge(common::ThreadId t, AicpuOp op, std::uint32_t n) override {
    if (op == AicpuOp::kResolveEdge) clock_[t] += resolve_ * n;
  }
  common::TimePs now(common::ThreadId t) const override { return clock_[t]; }

 private:
  struct Core {
    common::TaskId running = common::kNoTask, pending = common::kNoTask;
    std::uint64_t finish = 0;
    std::vector<std::pair<common::TaskId, std::uint64_t>> done;  // (task, its end)
  };
  void start(common::CoreId c, common::TaskId task, std::uint64_t at) {
    if (start_.size() < g_.num_tasks()) start_.assign(g_.num_tasks(), 0);
    cores_[c].running = task;
    cores_[c].finish = at + g_.recorded_ns[task];
    start_[task] = at;
  }
  void advance(common::CoreId c, std::uint64_t t) {
    Core& co = cores_[c];
    while (co.running != common::kNoTask && co.finish <= t) {
      const std::uint64_t f = co.finish;
      co.done.emplace_back(co.running, f);
      co.running = common::kNoTask;
      if (co.pending != common::kNoTask) {
        const common::TaskId p = co.pending;
        co.pending = common::kNoTask;
        start(c, p, f);
      }
    }
  }
  std::uint64_t next_event_after(std::uint64_t t) const {
    std::uint64_t best = t + 1000000;
    for (const auto& co : cores_) {
      if (co.running != common::kNoTask && co.finish > t) best = std::min(best, co.finish);
      for (const auto& d : co.done) {
        if (d.second + latency_ > t) best = std::min(best, d.second + latency_);
      }
    }
    for (auto c : clock_) {
      if (c > t) best = std::min(best, c);
    }
    return std::max(best, t + 1);
  }

  const TaskGraph& g_;
  std::unique_ptr<Policy> policy_;
  Scheduler sched_;
  std::uint64_t poll_, resolve_, dispatch_, latency_;
  std::vector<Core> cores_;
  std::vector<std::uint64_t> clock_;
  std::vector<std::uint64_t> start_;
  std::vector<DispatchRecord> log_;
  std::vector<common::DeviceTaskId> done_dt_;
  common::ThreadId cur_ = 0;
};

}  // namespace pypto::sched::testing
