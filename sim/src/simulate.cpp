// SPDX-License-Identifier: Apache-2.0
// simulate(): builds the SystemC model of the chip for one run (build), runs it to completion
// (run) and gathers the statistics (collect). Each run gets a fresh SystemC simulation
// context, so a process (the CLI's compare, the Python module) can run any number of
// simulations.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <systemc>

#include "machine/ai_core.h"
#include "machine/calendar.h"
#include "machine/control_flow.h"
#include "machine/hbm.h"
#include "machine/machine.h"
#include "machine/sched_thread.h"
#include "observe/replay_metrics.h"
#include "observe/timeline_recorder.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/sched/registry.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/sim/systemc_context.h"
#include "pypto/sim/workspace.h"

namespace pypto::sim {

void throw_past_time_limit(const std::string& agent, common::TimePs t_ps) {
  const std::string when =
      t_ps == common::kNever ? "beyond 2^64 ps" : "at " + std::to_string(t_ps) + " ps";
  throw ConfigError(agent + ": its next event " + when +
                    " is past the model's time limit of 2^62 ps (about 53 days of simulated "
                    "time): the clocks, bandwidths or the trace's costs make this run too slow "
                    "to simulate; check cores.freq_mhz, aicpu.freq_mhz, hbm.aggregate_gbps and "
                    "the trace's recorded durations and compute cycles");
}

// What every agent waits for, and how far the run got; for the end-of-events check (no agent
// has a wake-up pending, so each waits for another) and for the watchdog.
std::string describe_agents(const Machine& m) {
  const sched::TaskGraph& g = m.graph;
  const std::uint64_t admitted = m.control->admitted();
  std::string msg = std::to_string(admitted) + " of " + std::to_string(g.device_tasks.size()) +
                    " device tasks admitted";
  if (admitted > 0 && admitted <= g.device_tasks.size()) {
    msg += "; device task seqNo " + std::to_string(g.device_tasks[admitted - 1].seq_no) +
           " never completed";
  }
  msg += "; " + std::to_string(m.tasks_done) + " of " + std::to_string(g.num_tasks()) +
         " tasks done. Runtime state:" + m.scheduler->describe_state() + "\nAgents:";
  for (const SchedThread* t : m.threads) msg += "\n  " + t->describe();
  for (const AiCore* c : m.cores) {
    const std::string d = c->describe();
    if (!d.empty()) msg += "\n  " + d;
  }
  msg += "\n  control flow: " + std::to_string(admitted) + " device task(s) admitted";
  if (admitted < g.device_tasks.size()) {
    msg += ", waits for the active device task(s) to finish";
  }
  return msg;
}

void Machine::throw_watchdog() const {
  throw ModelError("watchdog: " + std::to_string(events - events_at_progress) +
                   " events without a task completing; the run makes no progress at " +
                   std::to_string(now_ps()) + " ps: " + describe_agents(*this));
}

namespace {

// True when the chip has no cores to run tasks of type ct on.
bool lacks_cores(common::CoreType ct, const model::ChipConfig& chip) {
  return (ct == common::CoreType::kAiv && chip.cores.aic * chip.cores.aiv_per_aic == 0) ||
         (ct == common::CoreType::kAic && chip.cores.aic == 0);
}

// A task type the chip has no cores for: name the trace, the first such task, and the key
// that gives the chip those cores (the scheduler's own check knows neither).
void check_core_types(const sched::TaskGraph& g, const model::ChipConfig& chip) {
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    const common::CoreType ct = g.core_type[t];
    if (!lacks_cores(ct, chip)) continue;
    std::size_t same = 0;
    for (common::TaskId u = t; u < g.num_tasks(); ++u) same += g.core_type[u] == ct;
    const std::string type(common::to_string(ct));
    throw ConfigError(
        g.source + ": task id " + std::to_string(g.orig_id[t]) + " (device task seqNo " +
        std::to_string(g.device_tasks[g.device_task[t]].seq_no) + ") is an " + type +
        " task, the first of " + std::to_string(same) + ", but chip '" + chip.chip.name +
        "' has no " + type + " cores" +
        (ct == common::CoreType::kAiv
             ? " (cores.aiv_per_aic = 0); set cores.aiv_per_aic to 1 or more, or pick a chip "
               "with vector cores"
             : " (cores.aic = 0)"));
  }
}

}  // namespace

std::uint32_t sched_thread_count(const model::ChipConfig& chip, std::int64_t requested) {
  const std::uint32_t max_threads = std::min(chip.aicpu.max_sched_threads, chip.cores.aic);
  const std::uint32_t per = std::max<std::uint32_t>(chip.aicpu.cores_per_thread, 1);
  const std::uint32_t automatic =
      std::max<std::uint32_t>(1, std::min(max_threads, (chip.cores.aic + per - 1) / per));
  if (requested <= 0 || requested > static_cast<std::int64_t>(max_threads)) return automatic;
  return static_cast<std::uint32_t>(requested);
}

namespace {

// One run's model: what build() makes, run() drives and collect() reads. Members are
// destroyed in reverse order: the SystemC modules before the machine they point into.
struct Model {
  Model(const sched::TaskGraph& g, const model::ChipConfig& c, const SimOptions& o)
      : graph(g), chip(c), opt(o) {}
  const sched::TaskGraph& graph;
  const model::ChipConfig& chip;
  // The caller's options, with per-task times kept whenever the statistics need them.
  SimOptions opt;
  sched::MachineShape shape;
  std::unique_ptr<sched::Policy> policy;
  std::unique_ptr<Machine> machine;
  std::unique_ptr<sched::Scheduler> scheduler;
  std::unique_ptr<TimelineRecorder> timeline;  // null: no per-task times and no AICPU spans
  std::unique_ptr<ReplayMetrics> replay;       // null: nothing recorded to compare with
  std::unique_ptr<RunInfo> info;
  std::unique_ptr<Calendar> calendar;
  std::vector<std::unique_ptr<AiCore>> cores;
  std::unique_ptr<Hbm> hbm;
  std::vector<std::unique_ptr<SchedThread>> threads;
  std::unique_ptr<ControlFlow> control;
};

// Makes the machine, the runtime and the observers, and elaborates the SystemC modules.
// `timeline`: where the run's timeline goes (the result's).
std::unique_ptr<Model> build(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                             const SimOptions& opt, L2Cache& l2, Timeline& timeline) {
  auto model = std::make_unique<Model>(graph, chip, opt);
  Model& md = *model;
  md.opt.record_timeline = opt.record_timeline || opt.record_task_times;
  md.policy = sched::Registry::global().create(opt.runtime.policy, opt.runtime.policy_params);
  md.machine = std::make_unique<Machine>(graph, chip, md.opt, l2);
  Machine& m = *md.machine;
  sched::MachineShape& shape = md.shape;
  shape.aic = chip.cores.aic;
  shape.aiv = chip.cores.aic * chip.cores.aiv_per_aic;
  shape.threads = sched_thread_count(chip, opt.runtime.launch_sched_aicpu_num);
  shape.staging_capacity = chip.aicpu.staging_buffer_tasks;
  shape.parallelism = static_cast<std::uint32_t>(opt.runtime.device_sched_parallelism);
  check_core_types(graph, chip);
  md.scheduler = std::make_unique<sched::Scheduler>(graph, shape, *md.policy);
  md.scheduler->set_estimator(&m.cost);
  m.scheduler = md.scheduler.get();

  // The observers: the run's own timeline and replay metrics, then the caller's.
  if (md.opt.record_timeline || md.opt.record_aicpu_events) {
    md.timeline = std::make_unique<TimelineRecorder>(
        timeline, md.opt.record_timeline, md.opt.record_aicpu_events, md.opt.max_aicpu_events);
  }
  std::vector<RunObserver*> others;
  if (md.opt.record_timeline && !graph.recorded_start_ps.empty()) {
    md.replay = std::make_unique<ReplayMetrics>(timeline);
    others.push_back(md.replay.get());
  }
  others.insert(others.end(), opt.observers.begin(), opt.observers.end());
  m.observers.attach(md.timeline.get(), others, opt.progress_every_tasks);
  md.info = std::make_unique<RunInfo>(RunInfo{graph, *md.scheduler, shape.threads});

  // Start-up (DESIGN.md launch_early_mode): without early launch the AICPU kernels start
  // only after the AICore kernel has started; dispatch waits for the core handshake.
  const std::int64_t early_mode = opt.runtime.launch_early_mode >= 0
                                      ? opt.runtime.launch_early_mode
                                      : chip.chip.launch_early_mode_default;
  const bool early = early_mode == 1;
  const common::TimePs aicore_start = m.tm.aicore_start_ps;
  const common::TimePs aicpu_start =
      early ? m.tm.aicpu_launch_ps : aicore_start + m.tm.aicpu_launch_ps;
  m.dispatch_start_ps = std::max(aicpu_start, aicore_start);
  // Value-dependent control flow waits for the first AICore handshake (WaitAicoreStart).
  const common::TimePs control_start =
      graph.control_waits_for_aicore ? std::max(aicpu_start, aicore_start) : aicpu_start;

  // The agents join the calendar in the model's tie order: cores by id, HBM, schedule
  // threads by id, control flow (calendar.h).
  md.calendar = std::make_unique<Calendar>("calendar");
  m.calendar = md.calendar.get();
  md.cores.reserve(shape.aic + shape.aiv);
  for (common::CoreId c = 0; c < shape.aic + shape.aiv; ++c) {
    const bool aic = c < shape.aic;
    const std::string name =
        aic ? "aic_" + std::to_string(c) : "aiv_" + std::to_string(c - shape.aic);
    md.cores.push_back(std::make_unique<AiCore>(name.c_str(), m, c));
    m.cores.push_back(md.cores.back().get());
  }
  md.hbm = std::make_unique<Hbm>("hbm", m);
  m.hbm = md.hbm.get();
  for (common::ThreadId t = 0; t < shape.threads; ++t) {
    const std::string name = "sched_" + std::to_string(t);
    md.threads.push_back(std::make_unique<SchedThread>(name.c_str(), m, t));
    m.threads.push_back(md.threads.back().get());
  }
  md.control = std::make_unique<ControlFlow>("control_flow", m, control_start);
  m.control = md.control.get();
  return model;
}

// Runs the model to the end of its last task; the observers see the run start and end.
void run(Model& md) {
  Machine& m = *md.machine;
  m.observers.run_start(*md.info);
  sc_core::sc_start();
  // A policy's bad answer names the policy; a stall under a policy of the user's (registered
  // from Python or a plug-in) is that policy's doing, told in one line, not a model bug.
  const std::string& name = md.opt.runtime.policy;
  const std::string policy_name = "scheduling policy '" + name + "'";
  const bool users_policy = !sched::Registry::global().find(name).builtin;
  const auto stalled = [&](const std::string& what) {
    const std::string state = describe_agents(m);
    throw PolicyError(policy_name + " (not a built-in policy) " + what + " at " +
                      std::to_string(m.now_ps()) +
                      " ps: " + state.substr(0, state.find(". Runtime state:")) +
                      "; its hooks left the ready tasks unsent (pypto-sim policies lists the "
                      "built-in ones to compare with)");
  };
  if (m.error) {
    try {
      std::rethrow_exception(m.error);
    } catch (const PolicyError& e) {
      throw PolicyError(policy_name + ": " + e.what());
    } catch (const ModelError& e) {
      if (users_policy && std::string(e.what()).rfind("watchdog:", 0) == 0) {
        stalled("made no progress");
      }
      throw;
    }
  }
  if (!md.scheduler->all_done()) {
    if (users_policy) stalled("stopped the run before its end");
    throw ModelError("simulation stopped before the end at " + std::to_string(m.now_ps()) +
                     " ps: " + describe_agents(m));
  }
  {
    // Promised HBM transfers leave the flow model lazily: retire those still held so that
    // its busy time covers them (every one ended before the last task did).
    std::vector<std::uint64_t> unreported;
    m.hbm_model.complete_until(m.now_ps(), unreported);
  }
  m.observers.run_end();
}

// The statistics of a run that ended (res.timeline holds what the timeline recorded).
void collect(const Model& md, SimResult& res) {
  const sched::TaskGraph& graph = md.graph;
  const model::ChipConfig& chip = md.chip;
  const Machine& m = *md.machine;
  const sched::MachineShape& shape = md.shape;
  const std::size_t n = graph.num_tasks();
  SimStats& s = res.stats;
  s.chip = chip.chip.name;
  s.policy = md.opt.runtime.policy;
  {
    const auto& specs = sched::Registry::global().find(md.opt.runtime.policy).params;
    const sched::PolicyParams values =
        sched::Registry::global().resolve(md.opt.runtime.policy, md.opt.runtime.policy_params);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      s.policy_params.push_back({specs[i].name, specs[i].type, values.values()[i].second});
    }
  }
  s.source = graph.source;
  s.makespan_ps = md.control->makespan_ps();
  s.device_tasks = graph.device_tasks.size();
  s.edges = graph.num_edges();
  s.sched_threads = shape.threads;
  for (std::size_t t = 0; t < n; ++t) {
    if (graph.core_type[t] == common::CoreType::kHub) ++s.hub_tasks;
  }
  s.tasks = n - s.hub_tasks;
  s.first_start_ps = common::kNever;
  for (std::size_t c = 0; c < md.cores.size(); ++c) {
    CoreTypeStats& ct = c < shape.aic ? s.aic : s.aiv;
    ++ct.count;
    ct.busy_ps += md.cores[c]->busy_ps();
    ct.tasks += md.cores[c]->tasks();
    s.aicore_lanes += md.cores[c]->tasks() > 0 ? 1 : 0;
  }
  for (CoreTypeStats* ct : {&s.aic, &s.aiv}) {
    ct->utilization = ct->count == 0 || s.makespan_ps == 0
                          ? 0.0
                          : static_cast<double>(ct->busy_ps) / (static_cast<double>(ct->count) *
                                                                static_cast<double>(s.makespan_ps));
  }
  const bool task_times = md.opt.record_timeline;
  if (task_times) {
    for (std::size_t t = 0; t < n; ++t) {
      if (!common::is_dispatchable(graph.core_type[t])) continue;
      s.first_start_ps = std::min(s.first_start_ps, res.timeline.start_ps[t]);
      s.last_end_ps = std::max(s.last_end_ps, res.timeline.end_ps[t]);
    }
  }
  if (s.first_start_ps == common::kNever) s.first_start_ps = 0;
  s.has_task_span = task_times;
  for (common::ThreadId t = 0; t < shape.threads; ++t) s.threads.push_back(md.scheduler->stats(t));
  s.control_busy_ps = md.control->busy_ps();
  s.l2 = m.l2.counters();
  s.l2_hit_bytes = m.l2_hit_bytes;
  s.l2_miss_bytes = m.l2_miss_bytes;
  s.l2_dirty_bytes_at_end = m.l2.dirty_lines() * m.l2.line_bytes();
  s.hbm_bytes = m.hbm_model.total_bytes();
  s.hbm_busy_ps = m.hbm_model.busy_ps();
  s.hbm_peak_gbps = chip.hbm.aggregate_gbps;
  s.hbm_effective_gbps = m.tm.hbm_bytes_per_ps * 1e3;  // bytes/ps -> GB/s
  const WorkspaceUsage ws = workspace_usage(graph, shape.parallelism);
  s.workspace_peak_bytes = ws.peak_bytes;
  s.workspace_minimum_bytes = ws.minimum_bytes;
  s.workspace_capacity_bytes = chip.workspace.capacity_mib * 1024 * 1024;
  if (graph.recorded_makespan_ps) {
    s.has_recorded = true;
    s.recorded_makespan_ps = *graph.recorded_makespan_ps;
  }
  if (md.replay != nullptr) {
    s.has_fidelity = true;
    s.fidelity = md.replay->result();
  }
  s.sim_events = m.events;
  s.sim_timesteps = m.timesteps;
}

}  // namespace

SimResult simulate(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                   const SimOptions& opt) {
  sched::validate(opt.runtime);
  fresh_systemc_context();
  const auto wall0 = std::chrono::steady_clock::now();

  SimResult res;
  // The L2: the caller's, warm from its last run when the geometry matches, or a cold one.
  const std::uint64_t l2_bytes = chip.l2.size_kib * 1024;
  std::unique_ptr<L2Cache> own_l2;
  std::unique_ptr<L2Cache>& l2_slot = opt.l2_state != nullptr ? opt.l2_state->cache : own_l2;
  const bool warm = l2_slot != nullptr && l2_slot->size_bytes() == l2_bytes &&
                    l2_slot->line_bytes() == chip.l2.line_bytes && l2_slot->ways() == chip.l2.ways;
  if (!warm) l2_slot = std::make_unique<L2Cache>(l2_bytes, chip.l2.line_bytes, chip.l2.ways);
  L2Cache& l2 = *l2_slot;
  l2.reset_counters();
  res.stats.l2_warm_start = warm;
  // A run that fails leaves contents no later run should trust.
  struct DropOnError {
    std::unique_ptr<L2Cache>& slot;
    bool ok = false;
    ~DropOnError() {
      if (!ok) slot.reset();
    }
  } drop{l2_slot};

  const std::unique_ptr<Model> model = build(graph, chip, opt, l2, res.timeline);
  run(*model);
  collect(*model, res);
  if (!opt.record_timeline) res.timeline = Timeline{};  // kept only for the statistics
  res.stats.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  drop.ok = true;
  return res;
}

}  // namespace pypto::sim
