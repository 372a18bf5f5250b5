// SPDX-License-Identifier: Apache-2.0
// The default decisions of Policy (device_sched_mode 0), out of line.
#include "pypto/sched/policy.h"

namespace pypto::sched {

StagedPick Policy::pick_staged(ThreadContext& c, common::CoreType ct, const TaskListView& staged) {
  const std::size_t idle = c.view().idle_count(c.thread(), ct);
  if (idle == 0) return {};
  return {staged.size() - 1, c.view().idle_core(c.thread(), ct, idle - 1)};
}

std::uint32_t Policy::last_wave_quota(const ThreadContext& c, common::CoreType ct,
                                      common::DeviceTaskId dt, bool allow_pending) {
  const MachineView& m = c.view();
  const common::ThreadId t = c.thread();
  const auto idle = static_cast<std::uint32_t>(m.idle_count(t, ct));
  bool only_idle = !allow_pending;
  // The last wave (PyPTO's tail batch): the device task's unsent tasks of every type fit in
  // the chip's cores of ct, so a task parked in a pending slot here would wait while another
  // thread's core idles.
  const bool last_wave = m.num_threads() > 1 && m.unsent_tasks(dt) <= m.num_cores(ct);
  if (!only_idle && last_wave && m.other_thread_idle(t, ct)) only_idle = true;
  return only_idle ? idle : idle + m.free_pending_count(t, ct);
}

common::CoreId Policy::PendingRoundRobin::next(const MachineView& m, common::ThreadId t,
                                               common::CoreType ct) {
  const std::size_t slot =
      std::size_t{t} * common::kNumDispatchTypes + static_cast<std::size_t>(ct);
  if (cursor_.size() <= slot)
    cursor_.resize(std::size_t{m.num_threads()} * common::kNumDispatchTypes, 0);
  const common::CoreId b = m.first_core(t, ct);
  const std::uint32_t n = m.end_core(t, ct) - b;
  std::uint32_t& cur = cursor_[slot];
  for (std::uint32_t k = 0; k < n; ++k) {
    const common::CoreId c = b + (cur + k) % n;
    if (!m.is_idle(c) && m.has_free_slot(c)) {
      cur = (cur + k + 1) % n;
      return c;
    }
  }
  return common::kNoCore;
}

}  // namespace pypto::sched
