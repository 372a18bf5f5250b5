// SPDX-License-Identifier: Apache-2.0
// device_sched_mode 2 (fair): while another thread has a fully idle core of a type, a
// thread fills only its own idle cores (no pending prefill) and flushes its staging
// buffer as soon as the shared queue runs dry. Ties: FIFO queue order.
#include <memory>

#include "fair_rule.h"

namespace pypto::sched {
namespace {

class Fair final : public Policy {
 public:
  std::uint32_t fill_quota(ThreadContext& c, common::CoreType ct,
                           common::DeviceTaskId dt) override {
    return FairRule::quota(c, ct, dt);
  }
  bool publish_staged(ThreadContext&, common::CoreType, PublishPoint at,
                      std::size_t queued) override {
    return FairRule::publish(at, queued);
  }
  bool publish_idle(ThreadContext&, common::CoreType) override { return true; }
};

}  // namespace

std::unique_ptr<Policy> make_fair() { return std::make_unique<Fair>(); }

}  // namespace pypto::sched
