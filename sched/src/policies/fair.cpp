// SPDX-License-Identifier: Apache-2.0
// device_sched_mode 2 (fair): while another thread has a fully idle core of a type, a
// thread fills only its own idle cores (no pending prefill) and flushes its staging
// buffer as soon as the shared queue runs dry. Ties: FIFO queue order.
#include <memory>

#include "pypto/sched/policy.h"

namespace pypto::sched {
namespace {

class Fair final : public Policy {
 public:
  bool may_prefill_pending(const MachineView& m, ThreadId t, CoreType ct) const override {
    return !m.other_thread_idle(t, ct);
  }
  bool fair() const override { return true; }
};

}  // namespace

std::unique_ptr<Policy> make_fair() { return std::make_unique<Fair>(); }

}  // namespace pypto::sched
