// SPDX-License-Identifier: Apache-2.0
// device_sched_mode 3: direct send and newest-first pops of mode 1, under the pending-slot
// rule of mode 2 (a direct send may use a pending slot only while no other thread idles).
#include <memory>

#include "l2_affinity_rule.h"

namespace pypto::sched {
namespace {

class L2Fair final : public Policy {
 public:
  bool send_before_resolve(const MachineView&, ThreadId) const override { return false; }
  CoreId direct_send(const MachineView& m, ThreadId t, TaskId ready, CoreId) override {
    const CoreType ct = m.graph().core_type[ready];
    return rule_.target(m, t, ready, /*allow_pending=*/!m.other_thread_idle(t, ct));
  }
  std::size_t pick_shared(const MachineView&, ThreadId, CoreType, const ReadyQueueView& q,
                          bool first_batch) override {
    return L2AffinityRule::pick(q, first_batch);
  }
  bool may_prefill_pending(const MachineView& m, ThreadId t, CoreType ct) const override {
    return !m.other_thread_idle(t, ct);
  }
  bool fair() const override { return true; }

 private:
  L2AffinityRule rule_;
};

}  // namespace

std::unique_ptr<Policy> make_l2_fair() { return std::make_unique<L2Fair>(); }

}  // namespace pypto::sched
