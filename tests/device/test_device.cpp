// SPDX-License-Identifier: Apache-2.0
// The hardware backend's runtime (device/): real threads drive the same Scheduler. Every
// task runs once, after its predecessors, on a core of its type; a policy sees the same
// decisions as under the SIM Hal when the completion order is the same; the recording is
// what the board reader replays.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "../sched/policy_harness.h"
#include "pypto/common/errors.h"
#include "pypto/device/device.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/registry.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/trace_loader.h"

namespace {

using namespace pypto;
using common::CoreType;
using common::TaskId;
using sched::testing::make_graph;
using sched::testing::TaskSpec;

sched::MachineShape shape_of(const model::ChipConfig& chip, std::int64_t threads) {
  sched::MachineShape s;
  s.aic = chip.cores.aic;
  s.aiv = chip.cores.aic * chip.cores.aiv_per_aic;
  s.threads = sim::sched_thread_count(chip, threads);
  s.staging_capacity = chip.aicpu.staging_buffer_tasks;
  return s;
}

// Layers of independent tasks, each layer depending on the whole previous one, over two
// device tasks; AIC and AIV mixed, and a HUB joining the layers of the first device task.
sched::TaskGraph layered_graph() {
  std::vector<TaskSpec> specs;
  const int width = 40, layers = 4;
  for (std::uint32_t dt = 0; dt < 2; ++dt) {
    const auto base = static_cast<TaskId>(specs.size());
    for (int l = 0; l < layers; ++l) {
      for (int i = 0; i < width; ++i) {
        TaskSpec s{(i % 3 == 0) ? CoreType::kAic : CoreType::kAiv, {}, dt, 1000 + 10u * i};
        if (l + 1 < layers) {
          for (int j = 0; j < width; ++j) {
            s.succ.push_back(base + static_cast<TaskId>((l + 1) * width + j));
          }
        }
        specs.push_back(s);
      }
    }
  }
  return make_graph(specs);
}

TEST_CASE("device runtime: every task runs once, after its predecessors, on its core type") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = layered_graph();
  std::vector<std::vector<TaskId>> preds(g.num_tasks());
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    for (std::uint32_t k = g.succ_first(t); k < g.succ_last(t); ++k) preds[g.succ[k]].push_back(t);
  }
  for (const char* policy : {"fifo", "l2_affinity", "fair", "l2_fair"}) {
    for (std::int64_t threads : {1, 2, 3}) {
      CAPTURE(policy, threads);
      const sched::MachineShape shape = shape_of(chip, threads);
      std::vector<std::atomic<int>> runs(g.num_tasks());
      std::vector<std::atomic<bool>> done(g.num_tasks());
      std::atomic<int> order_errors{0}, type_errors{0}, running{0}, max_running{0};
      device::RunOptions opt;
      opt.execute = [&](TaskId t, common::CoreId c) {
        const int now = ++running;
        int m = max_running.load();
        while (now > m && !max_running.compare_exchange_weak(m, now)) {
        }
        ++runs[t];
        for (TaskId p : preds[t]) order_errors += done[p].load() ? 0 : 1;
        const CoreType want = c < shape.aic ? CoreType::kAic : CoreType::kAiv;
        type_errors += g.core_type[t] == want ? 0 : 1;
        done[t] = true;
        --running;
      };
      auto p = sched::Registry::global().create(policy);
      const device::RunResult r = device::run(g, shape, *p, opt);
      for (TaskId t = 0; t < g.num_tasks(); ++t) REQUIRE(runs[t].load() == 1);
      CHECK(order_errors.load() == 0);
      CHECK(type_errors.load() == 0);
      CHECK(r.tasks == g.num_tasks());
      CHECK(r.makespan_ns >= r.last_end_ns);
      CHECK(r.last_end_ns >= r.first_start_ns);
      std::uint64_t on_cores = 0;
      for (auto n : r.core_tasks) on_cores += n;
      CHECK(on_cores == g.num_tasks());
      std::uint64_t dispatches = 0;
      for (const auto& ts : r.threads) dispatches += ts.dispatches;
      CHECK(dispatches == g.num_tasks());
      CHECK(r.threads.size() == shape.threads);
    }
  }
}

TEST_CASE("device runtime: an executor's exception ends the run and is rethrown") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = layered_graph();
  device::RunOptions opt;
  opt.execute = [&](TaskId t, common::CoreId) {
    if (t == 45) throw ModelError("task 45 failed");
  };
  auto p = sched::Registry::global().create("fifo");
  CHECK_THROWS_WITH(device::run(g, shape_of(chip, 3), *p, opt), "task 45 failed");
}

TEST_CASE("device runtime: a graph needing a core type the machine lacks is a ConfigError") {
  const sched::TaskGraph g = make_graph({{CoreType::kAic, {}}});
  sched::MachineShape shape;
  shape.aic = 0;
  shape.aiv = 0;
  auto p = sched::Registry::global().create("fifo");
  CHECK_THROWS_AS(device::run(g, shape, *p, {}), ConfigError);
}

// ---- the same decisions under both Hals ----------------------------------------------------
// A policy that delegates to a built-in one and logs every question and its answer.
// `lines` names threads and cores; `relative` names a core by its place in its thread's
// partition and no thread, which is what stays the same when another thread wins a race.
struct DecisionLog {
  std::mutex mu;
  std::vector<std::string> lines, relative;
  void add(std::string s, std::string rel) {
    const std::lock_guard<std::mutex> lock(mu);
    lines.push_back(std::move(s));
    relative.push_back(std::move(rel));
  }
};
DecisionLog* g_log = nullptr;

class LoggingPolicy final : public sched::Policy {
 public:
  explicit LoggingPolicy(std::unique_ptr<sched::Policy> inner) : inner_(std::move(inner)) {}
  // Every hook delegates (so the wrapped policy behaves exactly as itself); direct_send,
  // pick_shared and pick_core are logged. The per-round questions (send_before_resolve,
  // publish_idle, fill_quota ...) are not: how many rounds a thread runs is timing.
  unsigned events() const override { return inner_->events(); }
  void setup(const sched::MachineView& m) override { inner_->setup(m); }
  void on_ready(sched::ThreadContext& c, TaskId task) override { inner_->on_ready(c, task); }
  void on_dispatch(sched::ThreadContext& c, TaskId task, common::CoreId core) override {
    inner_->on_dispatch(c, task, core);
  }
  void on_done(sched::ThreadContext& c, TaskId task, common::CoreId core) override {
    inner_->on_done(c, task, core);
  }
  void on_device_task_admitted(const sched::MachineView& m, common::DeviceTaskId dt,
                               common::TimePs t) override {
    inner_->on_device_task_admitted(m, dt, t);
  }
  void on_device_task_finished(const sched::MachineView& m, common::DeviceTaskId dt,
                               common::TimePs t) override {
    inner_->on_device_task_finished(m, dt, t);
  }
  bool send_before_resolve(sched::ThreadContext& c, CoreType ct) override {
    return inner_->send_before_resolve(c, ct);
  }
  common::CoreId direct_send(sched::ThreadContext& c, TaskId ready,
                             common::CoreId producer) override {
    const common::CoreId core = inner_->direct_send(c, ready, producer);
    const sched::MachineView& m = c.view();
    const std::string tail = " task " + std::to_string(ready) + " from core ";
    g_log->add("direct_send t" + std::to_string(c.thread()) + tail + std::to_string(producer) +
                   " -> " + std::to_string(core),
               "direct_send" + tail + rel(m, producer) + " -> " + rel(m, core));
    return core;
  }
  sched::StagedPick pick_staged(sched::ThreadContext& c, CoreType ct,
                                const sched::TaskListView& staged) override {
    return inner_->pick_staged(c, ct, staged);
  }
  bool publish_staged(sched::ThreadContext& c, CoreType ct, sched::PublishPoint at,
                      std::size_t shared_queued) override {
    return inner_->publish_staged(c, ct, at, shared_queued);
  }
  std::size_t pick_device_task(sched::ThreadContext& c, CoreType ct,
                               const std::vector<common::DeviceTaskId>& candidates) override {
    return inner_->pick_device_task(c, ct, candidates);
  }
  std::uint32_t fill_quota(sched::ThreadContext& c, CoreType ct, common::DeviceTaskId dt) override {
    return inner_->fill_quota(c, ct, dt);
  }
  std::size_t pick_shared(sched::ThreadContext& c, CoreType ct, const sched::TaskListView& q,
                          bool first_batch, bool before_resolve) override {
    const std::size_t i = inner_->pick_shared(c, ct, q, first_batch, before_resolve);
    std::string queue;
    for (std::size_t k = 0; k < q.size(); ++k) queue += " " + std::to_string(q[k]);
    const std::string tail = std::string(common::to_string(ct)) + (first_batch ? " first" : "") +
                             " [" + queue + " ] -> " + std::to_string(q[i]);
    g_log->add("pick_shared t" + std::to_string(c.thread()) + " " + tail, "pick_shared " + tail);
    return i;
  }
  common::CoreId pick_core(sched::ThreadContext& c, CoreType ct, TaskId task) override {
    const common::CoreId core = inner_->pick_core(c, ct, task);
    const std::string tail = " task " + std::to_string(task) + " -> ";
    g_log->add("pick_core t" + std::to_string(c.thread()) + tail + std::to_string(core),
               "pick_core" + tail + rel(c.view(), core));
    return core;
  }
  bool publish_idle(sched::ThreadContext& c, CoreType ct) override {
    return inner_->publish_idle(c, ct);
  }
  common::ThreadId steal_victim(const sched::MachineView& m, common::ThreadId t,
                                CoreType ct) const override {
    return inner_->steal_victim(m, t, ct);
  }
  std::size_t pick_stolen(sched::ThreadContext& c, CoreType ct, common::ThreadId victim,
                          const sched::TaskListView& staged) override {
    return inner_->pick_stolen(c, ct, victim, staged);
  }

 private:
  static std::string rel(const sched::MachineView& m, common::CoreId c) {
    if (c == common::kNoCore) return "none";
    return std::string(common::to_string(m.core_type(c))) + "+" +
           std::to_string(c - m.first_core(m.owner(c), m.core_type(c)));
  }
  std::unique_ptr<sched::Policy> inner_;
};

// A chain through both core types and a HUB, in two device tasks: exactly one task is in
// flight at any time, so the order in which tasks complete is the same on both backends
// whatever their durations. With one schedule thread that makes every question the policy
// is asked, and so every answer, the same. With several, which thread takes a device task's
// first task from the shared queue is a race (on the board as here; SIM settles it by its
// threads' clocks); from there on the same decisions follow, on the same cores of the
// winner's partition.
sched::TaskGraph chain_graph() {
  std::vector<TaskSpec> specs;
  for (std::uint32_t dt = 0; dt < 2; ++dt) {
    const auto base = static_cast<TaskId>(specs.size());
    const int n = 30;
    for (int i = 0; i < n; ++i) {
      const CoreType ct = i == 10 ? CoreType::kHub : (i % 4 == 1 ? CoreType::kAic : CoreType::kAiv);
      TaskSpec s{ct, {}, dt, 500 + 37u * static_cast<unsigned>(i)};
      if (i + 1 < n) s.succ.push_back(base + static_cast<TaskId>(i + 1));
      specs.push_back(s);
    }
  }
  return make_graph(specs);
}

TEST_CASE(
    "device runtime: a policy sees the same decisions as under SIM for the same completions") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = chain_graph();
  for (const char* base : {"fifo", "l2_affinity", "fair", "l2_fair"}) {
    for (std::int64_t threads : {1, 3}) {
      CAPTURE(base, threads);
      const std::string name = std::string("logged_") + base;
      if (!sched::Registry::global().contains(name)) {
        const std::string inner = base;
        sched::Registry::global().add(name, "test", [inner] {
          return std::make_unique<LoggingPolicy>(sched::Registry::global().create(inner));
        });
      }
      DecisionLog sim_log, dev_log;
      g_log = &sim_log;
      sim::SimOptions so;
      so.runtime.policy = name;
      so.runtime.launch_sched_aicpu_num = threads;
      const sim::SimResult sr = sim::simulate(g, chip, so);
      g_log = &dev_log;
      auto p = sched::Registry::global().create(name);
      const device::RunResult dr = device::run(g, shape_of(chip, threads), *p, {});
      g_log = nullptr;
      REQUIRE(!sim_log.lines.empty());
      if (threads == 1) {
        CHECK(dev_log.lines == sim_log.lines);
      } else {
        CHECK(dev_log.relative == sim_log.relative);
      }
      // The same cores ran the same tasks (threads > 1: the same place in a partition).
      const sched::MachineShape shape = shape_of(chip, threads);
      const std::uint32_t per = shape.aic / shape.threads;  // a2: 24 clusters share evenly
      auto place = [&](std::uint32_t c) {
        return c < shape.aic ? c % per : (c - shape.aic) % (2 * per);
      };
      for (TaskId t = 0; t < g.num_tasks(); ++t) {
        if (!common::is_dispatchable(g.core_type[t])) continue;
        CAPTURE(t);
        if (threads == 1) {
          CHECK(dr.timeline.core[t] == sr.timeline.core[t]);
        } else {
          CHECK(place(dr.timeline.core[t]) == place(sr.timeline.core[t]));
        }
      }
    }
  }
}

// ---- the recording ---------------------------------------------------------------------------
TEST_CASE("device runtime: the recording is what the board reader replays") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = layered_graph();
  const sched::MachineShape shape = shape_of(chip, 3);
  auto p = sched::Registry::global().create("fifo");
  const device::RunResult r = device::run(g, shape, *p, {});
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("device_rec_" + std::to_string(::getpid())))
          .string();
  const device::RecordingPaths paths =
      device::write_recording(dir, g, shape, r, chip.chip.board_clock_mhz);

  trace::LoadOptions lo;
  lo.prof_path = paths.prof;
  // dyn_topo.txt: every device task, every task timed.
  const trace::LoadedTrace all = trace::load_trace(paths.dyn_topo, lo, chip);
  CHECK(all.graph.num_tasks() == g.num_tasks());
  CHECK(all.graph.device_tasks.size() == 2);
  CHECK(all.graph.num_edges() == g.num_edges());
  CHECK(all.unrecorded_tasks == 0);
  const double tick_ns = 1e3 / chip.chip.board_clock_mhz;
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    CAPTURE(t);
    REQUIRE(all.graph.has_recorded(t));
    const double measured = static_cast<double>(r.timeline.end_ns[t] - r.timeline.start_ns[t]);
    CHECK(all.graph.recorded_ns[t] + 0.0 >= measured - 1.0);
    CHECK(all.graph.recorded_ns[t] <= measured + 2 * tick_ns + 1.0);
  }
  const double span_ns = static_cast<double>(r.last_end_ns - r.first_start_ns);
  CHECK(static_cast<double>(*all.graph.recorded_makespan_ps) / 1e3 ==
        Approx(span_ns).margin(2 * tick_ns));
  // topo.json: device task 0; the records of device task 1 are skipped.
  const trace::LoadedTrace first = trace::load_trace(paths.topo, lo, chip);
  CHECK(first.graph.num_tasks() == g.device_tasks[0].num_tasks);
  CHECK(first.ignored_prof_records == g.device_tasks[1].num_tasks);
  // And the replay runs.
  sim::SimOptions so;
  const sim::SimResult replay = sim::simulate(all.graph, chip, so);
  CHECK(replay.stats.has_fidelity);
  CHECK(replay.stats.tasks == g.num_tasks());
  std::filesystem::remove_all(dir);
}

}  // namespace
