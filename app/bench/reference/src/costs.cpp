// SPDX-License-Identifier: Apache-2.0
// What the reference models charge: the full model's derived timing of the chip, so that
// the ceiling comparison prices the same work the same way.
#include <cmath>

#include "pypto/bench/reference.h"
#include "pypto/sim/simulation.h"

namespace pypto::bench {

MinimalCosts minimal_costs(const model::ChipConfig& chip) {
  const model::DerivedTiming tm = model::derive(chip);
  MinimalCosts c;
  c.poll_ps = tm.poll_ps;
  c.resolve_ps = tm.resolve_ps;
  c.dispatch_ps = tm.dispatch_ps;
  c.aicore_ps_per_cycle = tm.aicore_ps_per_cycle;
  c.threads = sim::sched_thread_count(chip, 7);
  c.aic = chip.cores.aic;
  c.aiv = chip.cores.aic * chip.cores.aiv_per_aic;
  return c;
}

common::TimePs minimal_task_ps(const sched::TaskGraph& g, const MinimalCosts& costs,
                               common::TaskId t) {
  if (g.core_type[t] == common::CoreType::kHub) return 0;
  if (g.has_recorded(t)) return g.recorded_ps(t);
  if (g.compute_cycles[t] > 0) {
    return static_cast<common::TimePs>(
        std::llround(g.compute_cycles[t] * costs.aicore_ps_per_cycle));
  }
  return costs.fixed_task_ps;
}

}  // namespace pypto::bench
