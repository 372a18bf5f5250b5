// SPDX-License-Identifier: Apache-2.0
// A task's duration: the one place its formula lives. A task with a recorded duration takes
// it (TaskGraph::recorded_ps); any other takes the AICore cost model over its compute cycles
// (its tile ops priced for the chip) and its memory traffic in whole GM blocks. The cores price a
// task with the L2 as it is (misses go to HBM, ai_core.cpp); a policy's estimate assumes every read
// hits.
#pragma once

#include <algorithm>

#include "pypto/model/chip_config.h"
#include "pypto/sched/machine_view.h"
#include "pypto/sched/task_graph.h"

namespace pypto::sim {

class TaskCost final : public sched::DurationEstimator {
 public:
  // The cost model's parts of one task, in ps, unrounded.
  struct Parts {
    double pre_ps = 0;      // task overhead, and the MTE read latency when it reads
    double post_ps = 0;     // the MTE write latency when it writes
    double read_ps = 0;     // the reads served at L2 speed
    double write_ps = 0;    // the writes, at L2 speed
    double compute_ps = 0;  // compute cycles at the AICore clock
    bool overlap = false;   // several tiles: the pipes double-buffer
  };

  // Contract: all three outlive the TaskCost.
  TaskCost(const sched::TaskGraph& g, const model::ChipConfig& chip, const model::DerivedTiming& tm)
      : g_(g), chip_(chip), tm_(tm) {}

  // Contract: `task` reads read_bytes, of which l2_read_bytes at L2 speed (the rest is HBM
  // time, the caller's), and writes write_bytes.
  Parts parts(common::TaskId task, std::uint64_t read_bytes, std::uint64_t l2_read_bytes,
              std::uint64_t write_bytes) const {
    const double cyc = tm_.aicore_ps_per_cycle;
    const auto& cost = chip_.cost;
    Parts p;
    p.pre_ps =
        (cost.task_overhead_cycles + (read_bytes > 0 ? cost.mte_read_latency_cycles : 0)) * cyc;
    p.post_ps = (write_bytes > 0 ? cost.mte_write_latency_cycles : 0) * cyc;
    p.read_ps = static_cast<double>(l2_read_bytes) / tm_.l2_read_bytes_per_ps;
    p.write_ps = static_cast<double>(write_bytes) / tm_.l2_write_bytes_per_ps;
    p.compute_ps = g_.compute_cycles[task] * cyc;
    p.overlap = g_.tiles[task] > 1;
    return p;
  }

  // The body between pre and post: overlapped pipes take the slowest one, else their sum.
  template <class T>
  static T body(T read, T compute, T write, bool overlap) {
    return overlap ? std::max({read, compute, write}) : read + compute + write;
  }

  // The bytes the MTE moves for one memory range: every GM block (cost.mte_granule_bytes)
  // each of its bursts touches, whole.
  std::uint64_t moved_bytes(const sched::MemAccess& a) const {
    return model::mte_bytes(a.addr, a.bytes, chip_, a.burst_bytes);
  }

  // sched::DurationEstimator: the cost model with every read served from L2 (what a
  // scheduler could know in advance), for tasks without a recorded duration.
  common::TimePs estimate_ps(common::TaskId task) const override {
    if (!common::is_dispatchable(g_.core_type[task])) return 0;
    std::uint64_t read_bytes = 0, write_bytes = 0;
    if (g_.has_memory()) {
      for (std::uint32_t i = g_.mem_begin[task]; i < g_.mem_begin[task + 1]; ++i) {
        (g_.mem[i].is_write != 0 ? write_bytes : read_bytes) += moved_bytes(g_.mem[i]);
      }
    }
    const Parts p = parts(task, read_bytes, read_bytes, write_bytes);
    return static_cast<common::TimePs>(
        p.pre_ps + body(p.read_ps, p.compute_ps, p.write_ps, p.overlap) + p.post_ps + 0.5);
  }

 private:
  const sched::TaskGraph& g_;
  const model::ChipConfig& chip_;
  const model::DerivedTiming& tm_;
};

}  // namespace pypto::sim
