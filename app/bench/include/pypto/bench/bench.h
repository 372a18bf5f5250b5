// SPDX-License-Identifier: Apache-2.0
// The benchmark suite behind `pypto-sim bench`: how fast the full model simulates compared
// with the fastest any SystemC model of the chip could be, measured side by side in one
// process (ratios stay honest on a noisy shared machine), how the cost per task grows from
// 10k to 10M tasks, what each policy costs, and the Python frontend's throughput.
//
// The suite is a tool, not part of the simulator: it spawns pypto-sim child processes
// and runs a Python script. It drives the full model (pypto_sim) and the two reference
// models of pypto/bench/reference.h side by side.
//
// Example:
//   pypto::bench::BenchOptions o;
//   o.quick = true; o.out_dir = "out"; o.self_exe = "/path/to/pypto-sim";
//   nlohmann::ordered_json j = pypto::bench::run_bench(o, std::cerr);
//   std::cout << pypto::bench::bench_table(j);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace pypto::bench {

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
  // Input formats of the end-to-end table (native, dyn_topo, topo_json, fixed_latency; "none"
  // for no table); empty: all four. Each runs at every scaling size.
  std::vector<std::string> formats;
};

// Child runs of a size-`tasks` point (scaling and end to end) over opt.rounds rounds (opt as
// run_bench completes it: rounds > 0): three a round up to 100k tasks, one up to 1M, one in
// all above; --quick runs every point once.
int runs_for(const BenchOptions& opt, std::uint64_t tasks);

// Runs the suite, writing progress lines to `progress`, and returns what bench.json holds
// (the caller writes it). Keys: model_tasks_per_s, ceiling_tasks_per_s, ratio_to_ceiling,
// heap_des_tasks_per_s, scaling [{tasks, wall_s, tasks_per_s, rss_bytes_per_task, ...}],
// scaling_flatness, end_to_end {formats, points [{format, tasks, trace_bytes, no_trace
// {wall_s, tasks_per_s, us_per_task, sim_wall_s, cpu_s, tasks_per_cpu_s, rss_bytes_per_task,
// peak_rss_bytes, runs},
// with_trace {...}}], flatness {format: {no_trace, with_trace: {max_deviation_from_first,
// flat_within_25pct}}}}, policies {name: tasks_per_s}, compile_tile_ops_per_s, cached_call_ms,
// sim_us_per_task_python (null, with frontend_error saying why, when the frontend could not
// run; frontend holds all the script printed), targets, machine, all_tasks_completed.
// Throws ConfigError for bad options, Error if a child run fails and ModelError if a model
// leaves a task incomplete.
nlohmann::ordered_json run_bench(const BenchOptions& opt, std::ostream& progress);

// The human-readable table of a run_bench() result, targets next to measured numbers.
std::string bench_table(const nlohmann::ordered_json& result);

}  // namespace pypto::bench
