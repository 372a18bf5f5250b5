// SPDX-License-Identifier: Apache-2.0
#include "hbm.h"

#include "ai_core.h"

namespace pypto::sim {

Hbm::Hbm(sc_core::sc_module_name name, Machine& m)
    : sc_module(name), m_(m), rank_(m.calendar->join(*this)) {}

common::TimePs Hbm::start(std::uint64_t bytes, common::CoreId core) {
  const common::TimePs end = m_.hbm_model.start(m_.now_ps(), bytes, core, /*promise=*/true);
  revoked_.clear();
  m_.hbm_model.take_revoked(revoked_);
  for (std::uint64_t c : revoked_) m_.cores[c]->on_flow_revoked();
  arm();
  return end;
}

void Hbm::arm() {
  // A new transfer usually delays the others: move the pending wake-up instead of letting
  // it fire early for nothing.
  const common::TimePs now = m_.now_ps();
  // Promised transfers need no wake-up: their cores already know when they end.
  common::TimePs t = m_.hbm_model.next_completion();
  if (t != common::kNever && t < now) t = now;
  m_.calendar->set(rank_, t);
}

void Hbm::act() {
  try {
    m_.count_event();
    done_.clear();
    m_.hbm_model.complete_until(m_.now_ps(), done_);
    for (std::uint64_t core : done_) m_.cores[core]->on_flow_done();
    arm();
  } catch (...) {
    m_.fail(std::current_exception());
  }
}

}  // namespace pypto::sim
