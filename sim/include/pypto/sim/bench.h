// SPDX-License-Identifier: Apache-2.0
// The benchmark suite behind `pypto-sim bench`: how fast the full model simulates compared
// with the fastest any SystemC model of the chip could be, measured side by side in one
// process (ratios stay honest on a noisy shared machine), how the cost per task grows from
// 10k to 10M tasks, what each policy costs, and the Python frontend's throughput.
//
// Two reference models replay the same TaskGraph with the same agents and fixed per-task
// AICPU costs but nothing else (no L2, HBM, workspace, statistics or timeline):
//  - the bare SystemC ceiling: one SC_METHOD per schedule thread and per core, each with
//    its own event; its tasks per second bound any SystemC model of this chip;
//  - a plain C++ binary-heap event loop with identical semantics: the no-SystemC reference.
//
// Example:
//   pypto::sim::BenchOptions o;
//   o.quick = true; o.out_dir = "out"; o.self_exe = "/path/to/pypto-sim";
//   nlohmann::ordered_json j = pypto::sim::run_bench(o, std::cerr);
//   std::cout << pypto::sim::bench_table(j);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "pypto/sched/task_graph.h"
#include "pypto/sim/config/chip_config.h"

namespace pypto::sim {

// ---- the two reference models ----------------------------------------------------------

// What the reference models charge (from the chip config) and how many agents they have.
struct MinimalCosts {
  sched::TimePs poll_ps = 0;                // per busy core read in a poll round
  sched::TimePs resolve_ps = 0;             // per successor edge resolved
  sched::TimePs dispatch_ps = 0;            // per task sent to a core
  sched::TimePs fixed_task_ps = 1'000'000;  // duration of a task without recorded time
                                            // or compute cycles (1 us)
  double aicore_ps_per_cycle = 0;
  std::uint32_t threads = 1;       // schedule threads
  std::uint32_t aic = 0, aiv = 0;  // cores; thread t owns a contiguous block of clusters
};

// The costs of `chip` with the schedule-thread count the full model uses by default
// (sched_thread_count(chip, 7)).
MinimalCosts minimal_costs(const ChipConfig& chip);

// Duration of task t in the reference models: its recorded time if it has one, else its
// compute cycles at the AICore clock, else costs.fixed_task_ps. HUB tasks take no time.
sched::TimePs minimal_task_ps(const sched::TaskGraph& g, const MinimalCosts& costs,
                              sched::TaskId t);

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

// ---- the suite ---------------------------------------------------------------------------

struct BenchOptions {
  bool quick = false;       // CI smoke test: small traces, fewer repetitions, < 1 minute
  std::string out_dir;      // bench.json, child run outputs; created if missing
  std::string trace_dir;    // synthetic traces (reused when present); empty: out_dir
  std::string self_exe;     // the pypto-sim binary that runs each scaling size
  std::string chip = "a2";  // preset name
  // Scaling sizes; empty: 10k, 100k, 1M, 10M (quick: 10k, 100k).
  std::vector<std::uint64_t> sizes;
  // Trace for the ceiling comparison and the policies; 0: 1M (quick: 100k).
  std::uint64_t headline_tasks = 0;
  int rounds = 0;  // interleaved repetitions (median taken); 0: 3 (quick: 1)
  // Repository root (tools/bench_frontend.py, .venv/bin/python); empty: $PYPTO_ROOT, else
  // the source tree this binary was built from.
  std::string repo_root;
  bool frontend = true;  // run tools/bench_frontend.py
};

// Runs the suite, writing progress lines to `progress`, and returns what bench.json holds
// (the caller writes it). Keys: model_tasks_per_s, ceiling_tasks_per_s, ratio_to_ceiling,
// heap_des_tasks_per_s, scaling [{tasks, wall_s, tasks_per_s, rss_bytes_per_task, ...}],
// scaling_flatness, policies {name: tasks_per_s}, compile_tile_ops_per_s, cached_call_ms,
// sim_us_per_task_python (null, with frontend_error saying why, when the frontend could not
// run; frontend holds all the script printed), targets, machine, all_tasks_completed.
// Throws ConfigError for bad options, Error if a child run fails and ModelError if a model
// leaves a task incomplete.
nlohmann::ordered_json run_bench(const BenchOptions& opt, std::ostream& progress);

// The human-readable table of a run_bench() result, targets next to measured numbers.
std::string bench_table(const nlohmann::ordered_json& result);

}  // namespace pypto::sim
