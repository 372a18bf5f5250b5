// SPDX-License-Identifier: Apache-2.0
// State shared by the SystemC modules of one simulation (internal to sim/). Modules call
// each other directly; their wake-ups go through the run's one Calendar (calendar.h), whose
// SystemC process advances time.
#pragma once

#include <exception>
#include <string>
#include <systemc>
#include <vector>

#include "calendar.h"
#include "observers.h"
#include "pypto/common/errors.h"
#include "pypto/model/chip_config.h"
#include "pypto/sched/scheduler.h"
#include "pypto/sched/task_graph.h"
#include "pypto/sim/memory/hbm_flow.h"
#include "pypto/sim/memory/l2_cache.h"
#include "pypto/sim/simulation.h"
#include "task_cost.h"

namespace pypto::sim {

class AiCore;
class SchedThread;
class ControlFlow;
class Hbm;

struct Machine;
// Where every agent stands, for a run that stopped before the end (simulate.cpp).
std::string describe_agents(const Machine& m);

// The run cannot go on: `agent` would act at `t_ps`, past common::kTimeLimitPs (kNever when
// the sum wrapped). Throws a ConfigError naming the agent and the settings that set the pace.
[[noreturn]] void throw_past_time_limit(const std::string& agent, common::TimePs t_ps);

// Every wake-up time an agent sets passes this check first.
inline void check_time_limit(const sc_core::sc_object& agent, common::TimePs t_ps) {
  if (t_ps > common::kTimeLimitPs) throw_past_time_limit(agent.name(), t_ps);
}

struct Machine {
  // l2_cache: the run's L2 (possibly warm from an earlier run), outliving the machine.
  Machine(const sched::TaskGraph& g, const model::ChipConfig& c, const SimOptions& o,
          L2Cache& l2_cache)
      : graph(g),
        chip(c),
        tm(model::derive(c)),
        cost(g, c, tm),
        opt(o),
        l2(l2_cache),
        hbm_model(tm.hbm_bytes_per_ps, tm.hbm_core_bytes_per_ps) {}

  const sched::TaskGraph& graph;
  const model::ChipConfig& chip;
  model::DerivedTiming tm;
  TaskCost cost;  // every task's duration (and the policies' estimate)
  const SimOptions& opt;
  RunObservers observers;
  L2Cache& l2;
  HbmFlowModel hbm_model;
  sched::Scheduler* scheduler = nullptr;
  Calendar* calendar = nullptr;  // made before every agent, which joins it

  // The model's time (the calendar's: SystemC's, or ahead of it within one activation).
  common::TimePs now_ps() const { return calendar->now(); }

  std::vector<AiCore*> cores;
  std::vector<SchedThread*> threads;
  ControlFlow* control = nullptr;
  Hbm* hbm = nullptr;

  common::TimePs dispatch_start_ps = 0;  // AICore handshake done: threads may dispatch
  std::uint64_t tasks_done = 0;
  std::uint64_t events = 0;
  std::uint64_t l2_hit_bytes = 0, l2_miss_bytes = 0;
  std::vector<std::uint64_t> l2_row_hits;  // a core's run of rows read through L2: hit bytes a row
  std::exception_ptr error;                // first exception raised inside a process
  std::uint64_t events_at_progress = 0;    // `events` when a task last completed

  std::uint64_t timesteps = 0;  // distinct simulated times at which some process ran
  common::TimePs last_event_ps = common::kNever;

  // Every agent's activation counts itself here (see SimOptions::watchdog_events).
  void count_event() {
    // The calendar runs every activation of one time before the next time: a new time is a
    // new timestep.
    const common::TimePs t = calendar->now();
    timesteps += t != last_event_ps;
    last_event_ps = t;
    if (++events - events_at_progress > opt.watchdog_events) throw_watchdog();
  }
  // Contract: `task` completed on `core` (kNoCore: an AICPU task) over [start_ps, end_ps];
  // the watchdog sees progress and the observers see the task.
  void task_done(common::TaskId task, common::CoreId core, common::TimePs start_ps,
                 common::TimePs end_ps) {
    ++tasks_done;
    events_at_progress = events;
    observers.task_finished(task, core, start_ps, end_ps, tasks_done);
  }
  [[noreturn]] void throw_watchdog() const;

  // Processes catch everything and stop the simulation; simulate() rethrows.
  void fail(std::exception_ptr e) {
    if (!error) error = e;
    calendar->stop();
  }
};

}  // namespace pypto::sim
