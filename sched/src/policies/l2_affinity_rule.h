// SPDX-License-Identifier: Apache-2.0
// The L2-affinity rule shared by device_sched_mode 1 and 3 (private to sched/src/policies).
#pragma once

#include <vector>

#include "pypto/sched/policy.h"

namespace pypto::sched {

// Direct send: the most recently freed idle core of the thread (usually the producer's,
// whose output is hot in L2), else a pending slot of one of its busy cores, round-robin.
class L2AffinityRule {
 public:
  common::CoreId target(const ThreadContext& c, common::TaskId ready, bool allow_pending) {
    const MachineView& m = c.view();
    const common::ThreadId t = c.thread();
    const common::CoreType ct = m.graph().core_type[ready];
    const std::size_t idle = m.idle_count(t, ct);
    if (idle > 0) return m.idle_core(t, ct, idle - 1);
    if (!allow_pending) return common::kNoCore;
    const common::CoreId b = m.first_core(t, ct), e = m.end_core(t, ct);
    if (b == e) return common::kNoCore;
    if (cursor_.size() <= t) cursor_.resize(t + 1, 0);
    const common::CoreId n = e - b;
    for (common::CoreId k = 0; k < n; ++k) {
      const common::CoreId core = b + (cursor_[t] + k) % n;
      if (m.has_free_slot(core)) {
        cursor_[t] = (cursor_[t] + k + 1) % n;
        return core;
      }
    }
    return common::kNoCore;
  }
  // Newest ready first, except the thread's first batch of a device task.
  static std::size_t pick(const TaskListView& q, bool first_batch) {
    return first_batch ? 0 : q.size() - 1;
  }

 private:
  std::vector<common::CoreId> cursor_;  // per thread
};

}  // namespace pypto::sched
