// SPDX-License-Identifier: Apache-2.0
// The benchmark's two reference models (pypto_bench_reference). They replay the same
// TaskGraph as the full model (pypto_sim) with the same agents and fixed per-task AICPU
// costs but nothing else (no L2, HBM, workspace, statistics or timeline):
//  - the bare SystemC ceiling: one SC_METHOD per schedule thread and per core, each with
//    its own event; its tasks per second bound any SystemC model of this chip;
//  - a plain C++ binary-heap event loop with identical semantics: the no-SystemC reference.
// They live outside the simulator library because only the benchmark suite (pypto_bench)
// and its tests need them.
//
// Example:
//   const pypto::bench::MinimalCosts costs = pypto::bench::minimal_costs(chip);
//   const pypto::bench::MinimalResult r = pypto::bench::run_heap_des(graph, costs);
//   double tasks_per_s = r.tasks_done / r.wall_s;
#pragma once

#include <cstdint>

#include "pypto/model/chip_config.h"
#include "pypto/sched/task_graph.h"

namespace pypto::bench {

// What the reference models charge (from the chip config) and how many agents they have.
struct MinimalCosts {
  common::TimePs poll_ps = 0;                // per busy core read in a poll round
  common::TimePs resolve_ps = 0;             // per successor edge resolved
  common::TimePs dispatch_ps = 0;            // per task sent to a core
  common::TimePs fixed_task_ps = 1'000'000;  // duration of a task without recorded time
                                             // or compute cycles (1 us)
  double aicore_ps_per_cycle = 0;
  std::uint32_t threads = 1;       // schedule threads
  std::uint32_t aic = 0, aiv = 0;  // cores; thread t owns a contiguous block of clusters
};

// The costs of `chip` with the schedule-thread count the full model uses by default
// (sched_thread_count(chip, 7)).
MinimalCosts minimal_costs(const model::ChipConfig& chip);

// Duration of task t in the reference models: its recorded time if it has one, else its
// compute cycles at the AICore clock, else costs.fixed_task_ps. HUB tasks take no time.
common::TimePs minimal_task_ps(const sched::TaskGraph& g, const MinimalCosts& costs,
                               common::TaskId t);

struct MinimalResult {
  std::uint64_t tasks_done = 0;   // every task of the graph, HUBs included
  std::uint64_t makespan_ps = 0;  // when the last task completed
  std::uint64_t activations = 0;  // process activations (SystemC) or events popped (heap)
  double wall_s = 0;              // model construction + run
};

// Both models run the same loop: device tasks one after another (the next one's
// zero-predecessor tasks become ready when the previous one's last task completes); a
// thread's round polls its busy cores (poll_ps each) and collects those whose task ended
// by its local time, resolves their successors (resolve_ps per edge; HUB and AICPU tasks
// complete inline), then fills its idle cores from one shared FIFO per core type
// (dispatch_ps each; the task runs from the local time it was sent). A thread wakes when
// one of its cores finishes or another thread leaves ready work behind; a round never
// starts before the previous one ended.
// Contract: throw ModelError if any task is left incomplete (so a result always means
// every task ran). run_ceiling installs a fresh SystemC context, like simulate().
MinimalResult run_ceiling(const sched::TaskGraph& g, const MinimalCosts& costs);
MinimalResult run_heap_des(const sched::TaskGraph& g, const MinimalCosts& costs);

}  // namespace pypto::bench
