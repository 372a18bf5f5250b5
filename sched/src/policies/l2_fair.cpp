// SPDX-License-Identifier: Apache-2.0
// device_sched_mode 3: direct send and newest-first pops of mode 1, under the pending-slot
// rule of mode 2 (a direct send may use a pending slot only while no other thread idles).
#include <memory>

#include "fair_rule.h"
#include "l2_affinity_rule.h"

namespace pypto::sched {
namespace {

class L2Fair final : public Policy {
 public:
  bool send_before_resolve(ThreadContext&, common::CoreType) override { return false; }
  common::CoreId direct_send(ThreadContext& c, common::TaskId ready, common::CoreId) override {
    const common::CoreType ct = c.view().graph().core_type[ready];
    return rule_.target(c, ready, /*allow_pending=*/!c.view().other_thread_idle(c.thread(), ct));
  }
  std::size_t pick_shared(ThreadContext&, common::CoreType, const TaskListView& q, bool first_batch,
                          bool) override {
    return L2AffinityRule::pick(q, first_batch);
  }
  std::uint32_t fill_quota(ThreadContext& c, common::CoreType ct,
                           common::DeviceTaskId dt) override {
    return FairRule::quota(c, ct, dt);
  }
  bool publish_staged(ThreadContext&, common::CoreType, PublishPoint at,
                      std::size_t queued) override {
    return FairRule::publish(at, queued);
  }
  bool publish_idle(ThreadContext&, common::CoreType) override { return true; }

 private:
  L2AffinityRule rule_;
};

}  // namespace

std::unique_ptr<Policy> make_l2_fair() { return std::make_unique<L2Fair>(); }

}  // namespace pypto::sched
