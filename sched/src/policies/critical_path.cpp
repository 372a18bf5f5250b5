// SPDX-License-Identifier: Apache-2.0
// critical_path: longest remaining path first (list scheduling by bottom level). Each task's
// priority is its bottom level, the longest chain of duration estimates
// (MachineView::duration_estimate_ps) from it to the end of its device task, computed once
// per device task when it is admitted. A thread resolves before it refills (so that tasks
// just released compete with the queued ones), takes the queued task of highest priority
// (ties: oldest) and sends the staged task of highest priority (ties: newest) to an idle
// core. Pending slots: a queued task goes into a busy core's pending slot only if the path
// below the core's running task is no longer than the task's own; otherwise the slot is kept
// free, so that the running task's successor starts on that core as soon as it is released
// instead of behind a shorter task (the cost: the core idles for one AICPU round trip).
// Idle cores: the task of highest priority gets the thread's highest idle core. A poll round
// reads the thread's busy cores in ascending id and resolves only after the last read, so a
// completion on the last core read is resolved at once, one on the first after the reads of
// all the others (16 AIV cores: about 1.2 us on the A2); a chain kept on that core gains it
// at every step.
#include <algorithm>
#include <memory>
#include <vector>

#include "pypto/sched/registry.h"

namespace pypto::sched {
namespace {

class CriticalPath final : public Policy {
 public:
  explicit CriticalPath(const PolicyParams& p) : unit_(p.get_bool("unit_cost")) {}

  unsigned events() const override { return kEventDeviceTask; }

  void on_device_task_admitted(const MachineView& m, common::DeviceTaskId dt,
                               common::TimePs) override {
    // Successors lie in the same device task; walk it in reverse topological order.
    const TaskGraph& g = m.graph();
    const DeviceTask& d = g.device_tasks[dt];
    const common::TaskId b = d.first_task, e = d.first_task + d.num_tasks;
    // Sized as device tasks come (not by num_tasks() at setup): the graph may still be read.
    if (level_.size() < e) {
      level_.resize(e, 0);
      below_.resize(e, 0);
    }
    std::vector<std::uint32_t> pred(g.pred_count.begin() + b, g.pred_count.begin() + e);
    std::vector<common::TaskId> order;
    order.reserve(d.num_tasks);
    for (common::TaskId t = b; t < e; ++t) {
      if (pred[t - b] == 0) order.push_back(t);
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (std::uint32_t k = g.succ_first(order[i]); k < g.succ_last(order[i]); ++k) {
        if (--pred[g.succ[k] - b] == 0) order.push_back(g.succ[k]);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const common::TaskId t = *it;
      common::TimePs below = 0;
      for (std::uint32_t k = g.succ_first(t); k < g.succ_last(t); ++k) {
        below = std::max(below, level_[g.succ[k]]);
      }
      const bool counts = common::is_dispatchable(g.core_type[t]);
      below_[t] = below;
      level_[t] = below + (unit_ ? (counts ? 1 : 0) : m.duration_estimate_ps(t));
    }
  }

  bool send_before_resolve(ThreadContext&, common::CoreType) override { return false; }

  std::size_t pick_shared(ThreadContext&, common::CoreType, const TaskListView& q, bool,
                          bool) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < q.size(); ++i) {
      if (level_[q[i]] > level_[q[best]]) best = i;
    }
    return best;
  }

  StagedPick pick_staged(ThreadContext& c, common::CoreType ct,
                         const TaskListView& staged) override {
    if (c.view().idle_count(c.thread(), ct) == 0) return {};
    std::size_t best = staged.size() - 1;
    for (std::size_t i = best; i-- > 0;) {
      if (level_[staged[i]] > level_[staged[best]]) best = i;
    }
    return {best, last_polled_idle(c.view(), c.thread(), ct)};
  }

  // The highest idle core (the last one a poll round reads), else the free pending slot whose
  // core runs the task with the shortest path below it (ties: the lowest core). Tasks come
  // in priority order, so the most critical one gets the core polled last.
  common::CoreId pick_core(ThreadContext& c, common::CoreType ct, common::TaskId) override {
    const MachineView& m = c.view();
    if (m.idle_count(c.thread(), ct) > 0) return last_polled_idle(m, c.thread(), ct);
    common::CoreId best = common::kNoCore;
    for (common::CoreId k = m.first_core(c.thread(), ct); k < m.end_core(c.thread(), ct); ++k) {
      if (!m.has_free_slot(k)) continue;
      if (best == common::kNoCore || below_[m.running(k)] < below_[m.running(best)]) best = k;
    }
    return best;
  }

  // Keeps the slot free for what the running task releases when that is more critical.
  bool fill_pending_slot(ThreadContext& c, common::CoreType, common::CoreId core,
                         common::TaskId task) override {
    return below_[c.view().running(core)] <= level_[task];
  }

 private:
  // The thread's idle core of type ct with the highest id (idle_count must be > 0).
  static common::CoreId last_polled_idle(const MachineView& m, common::ThreadId t,
                                         common::CoreType ct) {
    const std::size_t idle = m.idle_count(t, ct);
    common::CoreId best = m.idle_core(t, ct, 0);
    for (std::size_t i = 1; i < idle; ++i) best = std::max(best, m.idle_core(t, ct, i));
    return best;
  }

  bool unit_;
  std::vector<common::TimePs> level_;  // bottom level per task (valid for admitted device tasks)
  std::vector<common::TimePs> below_;  // the longest path of its successors (level_ less its own)
};

}  // namespace

void register_critical_path(Registry& r) {
  r.add("critical_path", "longest remaining path (duration estimates) first",
        {{"unit_cost", ParamType::kBool, 0, 0, 1,
          "count tasks instead of summing duration estimates"}},
        [](const PolicyParams& p) { return std::make_unique<CriticalPath>(p); });
}

}  // namespace pypto::sched
