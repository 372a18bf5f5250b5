// SPDX-License-Identifier: Apache-2.0
// The duration estimate a policy reads through sched::MachineView for tasks without a
// recorded duration: the AICore cost model of ai_core.cpp with every read hitting L2 (what
// a scheduler could know in advance; the real time also pays L2 misses and HBM sharing).
#pragma once

#include <algorithm>

#include "machine.h"
#include "pypto/sched/machine_view.h"

namespace pypto::sim {

class CostModelEstimator final : public sched::DurationEstimator {
 public:
  explicit CostModelEstimator(const Machine& m) : m_(m) {}

  common::TimePs estimate_ps(common::TaskId task) const override {
    const auto& g = m_.graph;
    if (!common::is_dispatchable(g.core_type[task])) return 0;
    std::uint64_t read_bytes = 0, write_bytes = 0;
    if (g.has_memory()) {
      for (std::uint32_t i = g.mem_begin[task]; i < g.mem_begin[task + 1]; ++i) {
        (g.mem[i].is_write != 0 ? write_bytes : read_bytes) +=
            model::mte_bytes(g.mem[i].addr, g.mem[i].bytes, m_.chip, g.mem[i].burst_bytes);
      }
    }
    const auto& tm = m_.tm;
    const auto& cost = m_.chip.cost;
    const double cyc = tm.aicore_ps_per_cycle;
    const double pre =
        (cost.task_overhead_cycles + (read_bytes > 0 ? cost.mte_read_latency_cycles : 0)) * cyc;
    const double post = (write_bytes > 0 ? cost.mte_write_latency_cycles : 0) * cyc;
    const double read = static_cast<double>(read_bytes) / tm.l2_read_bytes_per_ps;
    const double write = static_cast<double>(write_bytes) / tm.l2_write_bytes_per_ps;
    const double compute = g.compute_cycles[task] * cyc;
    const double body =
        g.tiles[task] > 1 ? std::max({read, compute, write}) : read + compute + write;
    return static_cast<common::TimePs>(pre + body + post + 0.5);
  }

 private:
  const Machine& m_;
};

}  // namespace pypto::sim
