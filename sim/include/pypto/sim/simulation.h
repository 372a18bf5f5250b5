// SPDX-License-Identifier: Apache-2.0
// The simulator's public entry point: one call replays a TaskGraph on the SystemC model of
// a chip under a policy and returns the statistics (and, on request, the per-task
// timeline that the trace writers turn into trace.json and swim.json).
//
// Example:
//   auto chip = pypto::cfg::load_chip_preset("a2");
//   pypto::sim::SimOptions opt;            // runtime options default to PyPTO's
//   opt.runtime.policy = "l2_affinity";
//   pypto::sim::SimResult r = pypto::sim::simulate(graph, chip, opt);
//   std::cout << r.stats.makespan_ps;
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sched/task_graph.h"

namespace pypto::sim {

struct SimOptions {
  sched::RuntimeOptions runtime;
  bool record_timeline = true;  // keep per-task start/end/core for trace outputs
  // Without record_timeline, still keep each task's start and end during the run (18 B per
  // task) for the statistics that need them: the task span and the replay metrics. They are
  // dropped before simulate() returns.
  bool record_task_times = true;
  bool record_aicpu_events = true;           // AICPU work spans and ready-queue depth counters
  std::size_t max_aicpu_events = 2'000'000;  // beyond this, AICPU spans are not kept
  // Called about every `progress_every_tasks` completed tasks with (done, total).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  std::uint64_t progress_every_tasks = 1 << 16;
  // Called as each task completes in simulated order (functional execution hook).
  std::function<void(sched::TaskId)> on_task_done;
};

struct CoreTypeStats {
  std::uint32_t count = 0;
  std::uint64_t busy_ps = 0;
  double utilization = 0;  // busy / (count * makespan)
  std::uint64_t tasks = 0;
};

struct ThreadStatsOut {
  std::uint64_t rounds = 0, polls = 0, resolves = 0, dispatches = 0;
  std::uint64_t busy_ps = 0;  // time in rounds that observed or dispatched something
};

// How a replay compares with the recorded times task by task (traces/FORMAT.md "Replay
// metrics" defines each figure). Times in microseconds.
struct ReplayFidelity {
  std::uint64_t tasks = 0;  // compared: tasks with a recorded start (never HUBs)
  double start_error_median_us = 0, start_error_p90_us = 0;
  bool has_spearman = false;     // false: fewer than 2 tasks, or all starts tied on one side
  double spearman = 0;           // rank correlation of recorded and simulated start order
  std::uint64_t wait_tasks = 0;  // tasks with a timed predecessor on both sides
  double recorded_wait_us[3] = {0, 0, 0};   // p10, p50, p90
  double simulated_wait_us[3] = {0, 0, 0};  // p10, p50, p90
};

struct SimStats {
  std::string chip, policy, source;
  std::uint64_t makespan_ps = 0;  // kernel launch to the end of the last device task
  std::uint64_t first_start_ps = 0, last_end_ps = 0;  // task span (compared with a recording)
  std::uint64_t tasks = 0, hub_tasks = 0, device_tasks = 0, edges = 0;
  std::uint32_t sched_threads = 0;
  CoreTypeStats aic, aiv;
  std::vector<ThreadStatsOut> threads;
  std::uint64_t control_busy_ps = 0;
  std::uint64_t l2_hit_lines = 0, l2_miss_lines = 0;
  std::uint64_t l2_hit_bytes = 0, l2_miss_bytes = 0;
  std::uint64_t hbm_bytes = 0, hbm_busy_ps = 0;
  std::uint64_t workspace_peak_bytes = 0, workspace_minimum_bytes = 0;
  std::uint64_t workspace_capacity_bytes = 0;
  bool has_recorded = false;
  std::uint64_t recorded_makespan_ps = 0;
  bool has_fidelity = false;  // the trace recorded start times, and the run kept task times
  ReplayFidelity fidelity;
  double wall_s = 0;
  std::uint64_t sim_events = 0;  // SystemC process activations (diagnostic)
};

// A span of AICPU work (a poll round that did something, or a device-task build).
struct AicpuSpan {
  std::uint32_t thread;  // schedule threads 0..N-1; N = control flow
  std::uint64_t start_ps, end_ps;
  std::uint32_t completions, dispatches;
};
struct DepthSample {
  std::uint64_t time_ps;
  std::uint32_t aic, aiv;  // ready tasks waiting (shared queues + staging)
};

struct Timeline {
  std::vector<std::uint64_t> start_ps, end_ps;  // per task (HUBs: resolve time, zero length)
  std::vector<std::uint16_t> core;              // per task; 0xFFFF for HUB/AICPU
  std::vector<AicpuSpan> aicpu;
  std::vector<DepthSample> depth;
  bool aicpu_truncated = false;
};

struct SimResult {
  SimStats stats;
  Timeline timeline;  // empty unless SimOptions::record_timeline
};

// Number of schedule threads for a chip and launch_sched_aicpu_num (DESIGN.md: values
// <= 0 or above the chip's maximum fall back to the automatic count; the option's table
// in sched/runtime_options.h therefore accepts every integer).
std::uint32_t sched_thread_count(const ChipConfig& chip, std::int64_t launch_sched_aicpu_num);

// Runs one simulation. Contract: SystemC allows one elaboration per process, so a process
// calls simulate() once. ConfigError/TraceError/ModelError propagate to the caller.
SimResult simulate(const sched::TaskGraph& graph, const ChipConfig& chip, const SimOptions& opt);

}  // namespace pypto::sim
