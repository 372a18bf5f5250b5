// SPDX-License-Identifier: Apache-2.0
// The fairness rule shared by device_sched_mode 2 and 3 (private to sched/src/policies):
// threads publish their idle flags; a thread scans the others' flags (charged per flag
// read) and, while another thread has a fully idle core, fills only its own idle cores;
// staged tasks are published as soon as the shared queue runs dry.
#pragma once

#include "pypto/sched/policy.h"

namespace pypto::sched {

class FairRule {
 public:
  static std::uint32_t quota(ThreadContext& c, common::CoreType ct, common::DeviceTaskId dt) {
    const MachineView& m = c.view();
    const bool other_idle = m.other_thread_idle(c.thread(), ct);
    c.charge(AicpuOp::kFairScan, m.num_threads() > 1 ? m.num_threads() - 1 : 0);
    return Policy::last_wave_quota(c, ct, dt, /*allow_pending=*/!other_idle);
  }
  static bool publish(PublishPoint at, std::size_t shared_queued) {
    return at == PublishPoint::kRoundEnd || shared_queued == 0;
  }
};

}  // namespace pypto::sched
