// SPDX-License-Identifier: Apache-2.0
// device_sched_mode 1 (L2 affinity): a successor is sent at once to the core that just
// freed (else a busy core's pending slot); no send-before-resolve; the shared queue is
// popped newest first except for a thread's first batch. Effect: depth-first chains.
#include <memory>

#include "l2_affinity_rule.h"

namespace pypto::sched {
namespace {

class L2Affinity final : public Policy {
 public:
  bool send_before_resolve(ThreadContext&, common::CoreType) override { return false; }
  common::CoreId direct_send(ThreadContext& c, common::TaskId ready, common::CoreId) override {
    return rule_.target(c, ready, /*allow_pending=*/true);
  }
  std::size_t pick_shared(ThreadContext&, common::CoreType, const TaskListView& q, bool first_batch,
                          bool) override {
    return L2AffinityRule::pick(q, first_batch);
  }

 private:
  L2AffinityRule rule_;
};

}  // namespace

std::unique_ptr<Policy> make_l2_affinity() { return std::make_unique<L2Affinity>(); }

}  // namespace pypto::sched
