// SPDX-License-Identifier: Apache-2.0
// The simulator's public entry point: one call replays a TaskGraph on the SystemC model of
// a chip under a policy and returns the statistics (and, on request, the per-task
// timeline that the trace writers turn into trace.json and swim.json).
//
// Example:
//   auto chip = pypto::model::load_chip_preset("a2");
//   pypto::sim::SimOptions opt;            // runtime options default to PyPTO's
//   opt.runtime.policy = "l2_affinity";
//   pypto::sim::SimResult r = pypto::sim::simulate(graph, chip, opt);
//   std::cout << r.stats.makespan_ps;
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/sched/registry.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sched/task_graph.h"
#include "pypto/sim/memory/l2_cache.h"
#include "pypto/sim/run_observer.h"
#include "pypto/trace/swimlane_writer.h"

namespace pypto::sim {

// L2 contents carried from one simulate() call to the next, as consecutive kernels on a
// device share the L2. Lines are keyed by address: a launch's caller tensors sit at their
// host addresses and its workspace at a base that is the same every call, so "the same data"
// is the same address range passed again (the same tensor, or one the host allocator put at
// the same place: the model cannot tell fresh host data there from what the last call left,
// as a device cannot tell a buffer rewritten by a host-to-device copy that bypassed L2).
// Dirty lines stay dirty: their write-back is charged when a later call evicts them.
struct L2State {
  std::unique_ptr<L2Cache> cache;  // null: the next run starts cold
  // Contract: simulate() uses `cache` only if it has the chip's L2 geometry (size, line,
  // ways) and replaces it with a cold one otherwise.
  void clear() { cache.reset(); }
  bool warm() const { return cache != nullptr; }
};

struct SimOptions {
  sched::RuntimeOptions runtime;
  bool record_timeline = true;  // keep per-task start/end/core for trace outputs
  // Without record_timeline, still keep each task's start and end during the run (18 B per
  // task) for the statistics that need them: the task span and the replay metrics. They are
  // dropped before simulate() returns.
  bool record_task_times = true;
  bool record_aicpu_events = true;           // AICPU work spans and ready-queue depth counters
  std::size_t max_aicpu_events = 2'000'000;  // beyond this, AICPU spans are not kept
  // What else watches the run (not owned; each outlives simulate()), called in this order
  // after the run's own timeline: a progress line, a functional executor (run_observer.h).
  std::vector<RunObserver*> observers;
  std::uint64_t progress_every_tasks = 1 << 16;  // tasks between RunObserver::on_progress calls
  // In/out: the L2 to start from and to leave the run's contents in (not owned). Null: the
  // run starts with a cold L2 of its own (the CLI: one replay per process).
  L2State* l2_state = nullptr;
  // Watchdog: a run in which this many process activations pass without a task completing
  // is stopped with a ModelError naming every agent and what it waits for (a livelock: the
  // agents keep waking each other and nothing moves on). A healthy run needs a few per task.
  std::uint64_t watchdog_events = std::uint64_t{1} << 24;
};

struct CoreTypeStats {
  std::uint32_t count = 0;
  std::uint64_t busy_ps = 0;
  double utilization = 0;  // busy / (count * makespan)
  std::uint64_t tasks = 0;
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

// One replay of a recording under a device_sched_mode, probing which mode it ran under
// (infer_mode.h): its median start error and makespan error.
struct ModeTrial {
  std::string policy;
  double start_error_median_us = 0;
  double makespan_error_pct = 0;
};

// A declared parameter of the run's policy and the value the run used.
struct PolicyParamValue {
  std::string name;
  sched::ParamType type = sched::ParamType::kInt;
  double value = 0;
};

struct SimStats {
  std::string chip, policy, source;
  // Every parameter the policy declares, in declaration order, with its effective value
  // (given or default). Empty for a policy that declares none (stats.json leaves it out).
  std::vector<PolicyParamValue> policy_params;
  // When the policy was inferred from a recording's start times (infer_mode.h): every mode
  // probed; empty when it was given or defaulted.
  std::vector<ModeTrial> mode_trials;
  std::uint64_t makespan_ps = 0;  // kernel launch to the end of the last device task
  std::uint64_t first_start_ps = 0, last_end_ps = 0;  // task span (compared with a recording)
  bool has_task_span = false;  // the run kept task times (SimOptions::record_task_times)
  // AIC/AIV cores that ran a task: the lanes of PyPTO's swimlane summary, over which its
  // "AICore Utilization" divides the busy time (report.h: aicore_utilization).
  std::uint32_t aicore_lanes = 0;
  std::uint64_t tasks = 0, hub_tasks = 0, device_tasks = 0, edges = 0;
  std::uint32_t sched_threads = 0;
  CoreTypeStats aic, aiv;
  std::vector<sched::ThreadStats> threads;  // per schedule thread, as the runtime kept them
  std::uint64_t control_busy_ps = 0;
  L2Cache::Counters l2;                     // line counts of this run, reads and writes apart
  std::uint64_t l2_hit_bytes = 0;           // read bytes served from resident lines
  std::uint64_t l2_miss_bytes = 0;          // bytes filled from HBM (read misses, partial writes)
  std::uint64_t l2_dirty_bytes_at_end = 0;  // written, still in L2 when the run ends
  bool l2_warm_start = false;               // started from an earlier run's L2 contents
  std::uint64_t hbm_bytes = 0, hbm_busy_ps = 0;
  double hbm_peak_gbps = 0;       // configured aggregate (hbm.aggregate_gbps)
  double hbm_effective_gbps = 0;  // after refresh and turnaround losses
  std::uint64_t workspace_peak_bytes = 0, workspace_minimum_bytes = 0;
  std::uint64_t workspace_capacity_bytes = 0;
  bool has_recorded = false;
  std::uint64_t recorded_makespan_ps = 0;
  bool has_fidelity = false;  // the trace recorded start times, and the run kept task times
  ReplayFidelity fidelity;
  double wall_s = 0;
  std::uint64_t sim_events = 0;  // agent activations (diagnostic)
  // Distinct simulated times at which a process ran (diagnostic, for the benchmark; not
  // written to stats.json).
  std::uint64_t sim_timesteps = 0;
};

// A span of AICPU work (a poll round that did something, or a device-task build).
struct AicpuSpan {
  std::uint32_t thread;  // schedule threads 0..N-1; N = control flow
  std::uint64_t start_ps, end_ps;
  std::uint32_t completions, dispatches;
};
// Ready tasks waiting (shared queues + staging) at a moment of the run.
using DepthSample = trace::QueueDepth;

struct Timeline {
  std::vector<std::uint64_t> start_ps, end_ps;  // per task (HUBs: resolve time, zero length)
  std::vector<std::uint16_t> core;              // per task; common::kNoCore16 for HUB/AICPU
  std::vector<AicpuSpan> aicpu;
  std::vector<DepthSample> depth;
  bool aicpu_truncated = false;

  // Contract: calls f(column, value) for each per-task column, with the value a task holds
  // before the run sets it. The one list of them: a column added here is filled wherever
  // the run sizes the timeline.
  template <class F>
  void for_each_task_column(F&& f) {
    f(start_ps, std::uint64_t{0});
    f(end_ps, std::uint64_t{0});
    f(core, common::kNoCore16);
  }
};

struct SimResult {
  SimStats stats;
  Timeline timeline;  // empty unless SimOptions::record_timeline
};

// Number of schedule threads for a chip and launch_sched_aicpu_num (DESIGN.md: values
// <= 0 or above the chip's maximum fall back to the automatic count; the option's table
// in sched/runtime_options.h therefore accepts every integer).
std::uint32_t sched_thread_count(const model::ChipConfig& chip,
                                 std::int64_t launch_sched_aicpu_num);

// Runs one simulation (each in a fresh SystemC context, so a process may run many).
// Contract: with opt.l2_state the L2 starts from that state (cold if it is empty or of
// another geometry) and is left there; a run that throws leaves it empty (cold).
// ConfigError/TraceError/ModelError propagate to the caller.
SimResult simulate(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                   const SimOptions& opt);

}  // namespace pypto::sim
