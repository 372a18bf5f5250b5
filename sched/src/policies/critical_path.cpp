// SPDX-License-Identifier: Apache-2.0
// critical_path: longest remaining path first. Each task's priority is its bottom level,
// the longest chain of duration estimates (MachineView::duration_estimate_ps) from it to
// the end of its device task, computed once per device task when it is admitted. A
// thread takes the queued task of highest priority (ties: oldest) and sends the staged
// task of highest priority (ties: newest) to an idle core. Otherwise as fifo.
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
    if (level_.size() < e) level_.resize(e, 0);
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
      level_[t] = below + (unit_ ? (counts ? 1 : 0) : m.duration_estimate_ps(t));
    }
  }

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
    const std::size_t idle = c.view().idle_count(c.thread(), ct);
    if (idle == 0) return {};
    std::size_t best = staged.size() - 1;
    for (std::size_t i = best; i-- > 0;) {
      if (level_[staged[i]] > level_[staged[best]]) best = i;
    }
    return {best, c.view().idle_core(c.thread(), ct, idle - 1)};
  }

 private:
  bool unit_;
  std::vector<common::TimePs> level_;  // bottom level per task (valid for admitted device tasks)
};

}  // namespace

void register_critical_path(Registry& r) {
  r.add("critical_path", "longest remaining path (duration estimates) first",
        {{"unit_cost", ParamType::kBool, 0, 0, 1,
          "count tasks instead of summing duration estimates"}},
        [](const PolicyParams& p) { return std::make_unique<CriticalPath>(p); });
}

}  // namespace pypto::sched
