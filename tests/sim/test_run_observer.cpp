// SPDX-License-Identifier: Apache-2.0
// RunObserver's contract (run_observer.h): which calls come, in what order, with what times,
// and that they agree with the run's own timeline and statistics; the one duration formula
// (TaskCost) behind both the cores and the policies' estimate.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph_helpers.h"
#include "machine/task_cost.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/run_observer.h"
#include "pypto/sim/simulation.h"

using namespace pypto;
using common::CoreType;
using common::TaskId;
using common::TimePs;
using pypto::testing::graph_of;
using pypto::testing::T;

namespace {

constexpr TimePs kUnseen = common::kNever;

// Records every call it subscribed to.
struct Recorder final : sim::RunObserver {
  explicit Recorder(unsigned e) : mask(e) {}
  unsigned events() const override { return mask; }
  void on_run_start(const sim::RunInfo& run) override {
    log.push_back("start");
    const std::size_t n = run.graph.num_tasks();
    dispatched.assign(n, kUnseen);
    started.assign(n, kUnseen);
    finished_end.assign(n, kUnseen);
    finished_start.assign(n, kUnseen);
    core.assign(n, common::kNoCore - 1);
    threads = run.sched_threads;
  }
  void on_task_dispatched(TaskId t, common::CoreId c, common::ThreadId, TimePs at) override {
    CHECK(dispatched[t] == kUnseen);
    dispatched[t] = at;
    core[t] = c;
  }
  void on_task_started(TaskId t, common::CoreId c, TimePs at) override {
    CHECK(started[t] == kUnseen);
    if (common::is_dispatchable(graph_type(t))) CHECK(c == core[t]);
    started[t] = at;
  }
  void on_task_finished(TaskId t, common::CoreId c, TimePs s, TimePs e) override {
    CHECK(finished_end[t] == kUnseen);
    if ((mask & sim::kRunTaskStarted) != 0) CHECK(started[t] == s);
    finished_start[t] = s;
    finished_end[t] = e;
    order.push_back(t);
    if (c == common::kNoCore) ++aicpu_finished;
  }
  void on_thread_round(const sim::ThreadRound& r) override {
    CHECK(r.thread < threads);
    CHECK(r.start_ps <= r.end_ps);
    CHECK(r.completions + r.dispatches > 0);
    round_ps += r.end_ps - r.start_ps;
    ++rounds;
  }
  void on_device_task_queued(common::DeviceTaskId dt) override { queued.push_back(dt); }
  void on_device_task_built(common::DeviceTaskId dt, TimePs s, TimePs e) override {
    CHECK(s <= e);
    built.push_back(dt);
  }
  void on_progress(std::uint64_t done, std::uint64_t total) override {
    ticks.push_back(done);
    CHECK(done <= total);
  }
  void on_run_end() override { log.push_back("end"); }

  CoreType graph_type(TaskId t) const { return types[t]; }

  unsigned mask;
  std::vector<CoreType> types;
  std::vector<std::string> log;
  std::vector<TimePs> dispatched, started, finished_start, finished_end;
  std::vector<common::CoreId> core;
  std::vector<TaskId> order;
  std::vector<common::DeviceTaskId> queued, built;
  std::vector<std::uint64_t> ticks;
  std::uint32_t threads = 0;
  std::uint64_t rounds = 0, aicpu_finished = 0;
  TimePs round_ps = 0;
};

// Two device tasks: AIV -> AIC -> AICPU -> AIV chains meeting at a HUB, and a fan-out.
sched::TaskGraph mixed_graph() {
  return graph_of({
      {CoreType::kAiv, 100, {1}, 0},
      {CoreType::kAic, 300, {2}, 0},
      {CoreType::kAicpu, 50, {3}, 0},
      {CoreType::kAiv, 80, {4}, 0},
      {CoreType::kHub, sched::kNoRecord, {}, 0},
      {CoreType::kAiv, 100, {6, 7, 8, 9}, 1},
      {CoreType::kAic, 300, {}, 1},
      {CoreType::kAiv, 200, {}, 1},
      {CoreType::kAiv, 200, {}, 1},
      {CoreType::kAiv, 200, {}, 1},
  });
}

constexpr unsigned kEverything = sim::kRunTaskDispatched | sim::kRunTaskStarted |
                                 sim::kRunTaskFinished | sim::kRunThreadRound |
                                 sim::kRunDeviceTasks | sim::kRunProgress;

}  // namespace

TEST_CASE("an observer sees every task dispatched, started and finished, as the timeline has it",
          "[sim][observer]") {
  const sched::TaskGraph g = mixed_graph();
  const model::ChipConfig chip = model::load_chip_preset("a2");
  Recorder rec(kEverything);
  rec.types = g.core_type;
  sim::SimOptions opt;
  opt.observers.push_back(&rec);
  opt.progress_every_tasks = 2;
  const sim::SimResult r = sim::simulate(g, chip, opt);

  CHECK(rec.log == std::vector<std::string>{"start", "end"});
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    INFO("task " << t);
    switch (g.core_type[t]) {
      case CoreType::kHub:  // resolved, never run
        CHECK(rec.started[t] == kUnseen);
        CHECK(rec.finished_end[t] == kUnseen);
        break;
      case CoreType::kAicpu:  // inline on a schedule thread: never dispatched
        CHECK(rec.dispatched[t] == kUnseen);
        CHECK(rec.finished_start[t] == r.timeline.start_ps[t]);
        CHECK(rec.finished_end[t] == r.timeline.end_ps[t]);
        CHECK(rec.finished_end[t] - rec.finished_start[t] == g.recorded_ps(t));
        break;
      default:
        CHECK(rec.dispatched[t] <= rec.started[t]);
        CHECK(rec.core[t] == r.timeline.core[t]);
        CHECK(rec.finished_start[t] == r.timeline.start_ps[t]);
        CHECK(rec.finished_end[t] == r.timeline.end_ps[t]);
        CHECK(rec.finished_end[t] - rec.finished_start[t] == g.recorded_ps(t));
    }
  }
  CHECK(rec.aicpu_finished == 1);
  // Completion order is a topological order: every task after its predecessors.
  std::vector<std::size_t> pos(g.num_tasks(), 0);
  for (std::size_t i = 0; i < rec.order.size(); ++i) pos[rec.order[i]] = i + 1;
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
      const TaskId s = g.succ[i];
      if (pos[t] != 0 && pos[s] != 0) CHECK(pos[t] < pos[s]);
    }
  }
  // Nine tasks complete (the HUB does not): a tick after every second.
  CHECK(rec.order.size() == 9);
  CHECK(rec.ticks == std::vector<std::uint64_t>{2, 4, 6, 8});
  CHECK(rec.queued == std::vector<common::DeviceTaskId>{0, 1});
  CHECK(rec.built == std::vector<common::DeviceTaskId>{0, 1});
}

TEST_CASE("thread rounds add up to the threads' busy time and match the AICPU spans",
          "[sim][observer]") {
  const sched::TaskGraph g = mixed_graph();
  const model::ChipConfig chip = model::load_chip_preset("a2");
  Recorder rec(sim::kRunThreadRound);
  sim::SimOptions opt;
  opt.observers.push_back(&rec);
  const sim::SimResult r = sim::simulate(g, chip, opt);
  TimePs busy = 0;
  std::uint64_t dispatches = 0;
  for (const auto& t : r.stats.threads) {
    busy += t.busy_ps;
    dispatches += t.dispatches;
  }
  CHECK(rec.round_ps == busy);
  CHECK(dispatches == 8);  // every AIC/AIV task once
  std::uint64_t thread_spans = 0;
  for (const auto& s : r.timeline.aicpu) thread_spans += s.thread < r.stats.sched_threads;
  CHECK(rec.rounds == thread_spans);
  // Only the rounds were asked for.
  CHECK(rec.order.empty());
  CHECK(rec.ticks.empty());
  CHECK(rec.queued.empty());
}

TEST_CASE("an observer that throws stops the run with its error", "[sim][observer]") {
  struct Stop final : sim::RunObserver {
    unsigned events() const override { return sim::kRunTaskFinished; }
    void on_task_finished(TaskId, common::CoreId, TimePs, TimePs) override {
      throw std::runtime_error("stop here");
    }
    void on_run_end() override { ended = true; }
    bool ended = false;
  } stop;
  sim::SimOptions opt;
  opt.observers.push_back(&stop);
  CHECK_THROWS_WITH(sim::simulate(mixed_graph(), model::load_chip_preset("a2"), opt), "stop here");
  CHECK_FALSE(stop.ended);
}

TEST_CASE("the cores and the policies' estimate share one duration formula", "[sim][cost]") {
  // One AIV task without a recorded duration: compute cycles only (no memory, so nothing
  // misses L2). At 1000 MHz every part is a whole number of ps: no rounding between the two.
  model::ChipConfig chip = model::load_chip_preset("a2");
  model::apply_override(chip, "cores.freq_mhz=1000");
  model::validate(chip);
  const model::DerivedTiming tm = model::derive(chip);
  sched::TaskGraphBuilder b("test");
  sched::TaskGraphBuilder::Task t;
  t.core_type = CoreType::kAiv;
  t.kernel = b.kernel_index("k");
  t.compute_cycles = 5000;
  b.add_task(t);
  t.compute_cycles = 7000;
  t.tiles = 4;
  t.orig_id = 1;
  t.root = 1;
  b.add_task(t);
  const sched::TaskGraph g = b.finish();
  const sim::TaskCost cost(g, chip, tm);
  for (TaskId task : {0u, 1u}) {
    const sim::TaskCost::Parts p = cost.parts(task, 0, 0, 0);
    CHECK(p.pre_ps == chip.cost.task_overhead_cycles * 1000.0);
    CHECK(p.post_ps == 0);
    CHECK(p.compute_ps == g.compute_cycles[task] * 1000.0);
    CHECK(p.overlap == (task == 1));
  }
  const sim::SimResult r = sim::simulate(g, chip, sim::SimOptions{});
  for (TaskId task : {0u, 1u}) {
    INFO("task " << task);
    CHECK(r.timeline.end_ps[task] - r.timeline.start_ps[task] == cost.estimate_ps(task));
  }
  CHECK(cost.estimate_ps(0) == (chip.cost.task_overhead_cycles + 5000) * TimePs{1000});
  // Reads at L2 speed and writes add their latencies; several tiles take the slowest pipe.
  const sim::TaskCost::Parts p = cost.parts(1, 4096, 4096, 2048);
  CHECK(p.pre_ps == (chip.cost.task_overhead_cycles + chip.cost.mte_read_latency_cycles) * 1000.0);
  CHECK(p.post_ps == chip.cost.mte_write_latency_cycles * 1000.0);
  CHECK(sim::TaskCost::body(1.0, 5.0, 2.0, true) == 5.0);
  CHECK(sim::TaskCost::body(1.0, 5.0, 2.0, false) == 8.0);
}
