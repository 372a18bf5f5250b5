// SPDX-License-Identifier: Apache-2.0
// End-to-end checks of the SystemC model: timing worked out by hand from the config's
// costs, the analytical makespan of independent tasks, the sample board recording,
// determinism, and several simulations in one process.
#include <catch2/catch.hpp>
#include <cmath>

#include "graph_helpers.h"
#include "pypto/common/errors.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/trace_loader.h"

using namespace pypto;
using common::CoreType;
using common::TimePs;
using pypto::testing::aicpu_ps;
using pypto::testing::graph_of;
using pypto::testing::T;

TEST_CASE("a two-task chain: start and hand-over times from the AICPU costs", "[sim]") {
  // One cluster, one schedule thread, one AIV core in use.
  model::ChipConfig chip = model::load_chip_preset("a2");
  model::apply_override(chip, "cores.aic=1");
  model::apply_override(chip, "cores.aiv_per_aic=1");
  model::apply_override(chip, "cores.handshake_cores=1");
  model::validate(chip);
  const sched::TaskGraph g = graph_of({{CoreType::kAiv, 10000, {1}}, {CoreType::kAiv, 10000, {}}});
  sim::SimOptions opt;
  const sim::SimResult r = sim::simulate(g, chip, opt);
  const auto& tl = r.timeline;

  // A2 has no early launch: AICPU kernels start after the AICore kernel has started.
  const TimePs aicpu_start =
      TimePs{chip.cores.start_latency_ns} * 1000 + TimePs{chip.aicpu.launch_latency_ns} * 1000;
  const TimePs built = aicpu_start + aicpu_ps(chip, chip.aicpu.device_task_build_cycles) +
                       aicpu_ps(chip, chip.aicpu.stitch_cycles_per_task) * 2 +
                       aicpu_ps(chip, chip.aicpu.submit_cycles);
  // The admitting round takes T0 from the shared queue: one queue operation, one dispatch.
  const TimePs t0 = built + aicpu_ps(chip, chip.aicpu.queue_op_cycles) +
                    aicpu_ps(chip, chip.aicpu.dispatch_cycles);
  CHECK(tl.start_ps[0] == t0);
  CHECK(tl.end_ps[0] == t0 + 10'000'000);
  // T1 follows after: T0's completion reaches the AICPU (aicpu.completion_latency_ns), the
  // poll that sees it (within one poll period), one resolved edge, and the dispatch of the
  // staged task straight to the now idle core.
  const TimePs gap = tl.start_ps[1] - tl.end_ps[0];
  const TimePs fixed = TimePs{chip.aicpu.completion_latency_ns} * 1000 +
                       aicpu_ps(chip, chip.aicpu.resolve_cycles) +
                       aicpu_ps(chip, chip.aicpu.dispatch_cycles);
  CHECK(gap >= fixed);
  CHECK(gap < fixed + aicpu_ps(chip, chip.aicpu.poll_cycles));
  // PyPTO's AICore summary: the first AIC/AIV start to the last end, one lane busy for both.
  const auto aicore = sim::stats_json(r)["aicore"];
  CHECK(aicore["lanes"] == 1);
  CHECK(aicore["end_to_end_ns"] == double(tl.end_ps[1] - tl.start_ps[0]) / 1000.0);
  CHECK(double(aicore["utilization"]) ==
        Approx(20'000'000.0 / double(tl.end_ps[1] - tl.start_ps[0])).epsilon(1e-5));
  REQUIRE(r.stats.threads.size() == 1);
  CHECK(r.stats.threads[0].dispatches == 2);
  CHECK(r.stats.threads[0].resolves == 1);
  CHECK(r.stats.tasks == 2);
}

TEST_CASE("independent equal tasks finish within 2% of the analytical makespan", "[sim]") {
  // 9600 AIV tasks of 10 us on the 48 AIV cores of an A2: from the first dispatch, the
  // cores need N * d / K = 2000 us. (Before it, the control flow builds the device task.)
  const model::ChipConfig chip = model::load_chip_preset("a2");
  std::vector<T> tasks(9600, T{CoreType::kAiv, 10000, {}});
  const sched::TaskGraph g = graph_of(tasks);
  sim::SimOptions opt;
  const sim::SimResult r = sim::simulate(g, chip, opt);
  const double analytical_ps = 9600.0 / 48.0 * 10e6;
  const double span = static_cast<double>(r.stats.last_end_ps - r.stats.first_start_ps);
  CHECK(span >= analytical_ps);
  CHECK(span <= analytical_ps * 1.02);
  CHECK(r.stats.aiv.tasks == 9600);
}

TEST_CASE("the sample board recording replays close to its recorded makespan", "[sim][replay]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  trace::LoadOptions lo;
  lo.prof_path = std::string(PYPTO_SOURCE_DIR) + "/traces/samples/tilefwk_L1_prof_data.json";
  const auto trace =
      trace::load_trace(std::string(PYPTO_SOURCE_DIR) + "/traces/samples/dyn_topo.txt", lo, chip);
  sim::SimOptions opt;
  const sim::SimResult r = sim::simulate(trace.graph, chip, opt);
  const auto j = sim::stats_json(r);
  REQUIRE(j.contains("replay"));
  CHECK(j["replay"]["recorded_makespan_ns"].get<double>() == Approx(26600.0));
  // Every recorded task keeps its recorded duration.
  CHECK(r.timeline.end_ps[1] - r.timeline.start_ps[1] == 6'000'000);  // 300 ticks at 50 MHz
  CHECK(std::abs(j["replay"]["error_pct"].get<double>()) < 25.0);
  CHECK(r.stats.device_tasks == 2);
  CHECK(r.stats.tasks == 9);
  CHECK(r.stats.hub_tasks == 1);
}

TEST_CASE("the same input gives byte-identical stats apart from wall-clock fields", "[sim]") {
  const model::ChipConfig chip = model::load_chip_preset("a3");
  std::vector<T> tasks;
  for (std::uint32_t i = 0; i < 600; ++i) {
    std::vector<common::TaskId> succ;
    if (i + 3 < 600) succ.push_back(i + 3);
    tasks.push_back({i % 3 == 0 ? CoreType::kAic : CoreType::kAiv, 1000 + 37 * (i % 11), succ});
  }
  const sched::TaskGraph g = graph_of(tasks);
  sim::SimOptions opt;
  opt.runtime.policy = "l2_fair";
  auto a = sim::stats_json(sim::simulate(g, chip, opt));
  auto b = sim::stats_json(sim::simulate(g, chip, opt));
  for (auto* j : {&a, &b}) {
    j->erase("wall_s");
    j->erase("tasks_per_s");
  }
  CHECK(a.dump() == b.dump());
}

TEST_CASE("policies differ on a fan-out with more ready tasks than cores", "[sim]") {
  // One AIV producer releases 200 consumers on 48 AIV cores: the policies' pending-slot
  // rules change when the cores are filled, so the makespans differ, and every run ends.
  const model::ChipConfig chip = model::load_chip_preset("a2");
  std::vector<T> tasks;
  std::vector<common::TaskId> fan;
  for (common::TaskId i = 1; i <= 200; ++i) fan.push_back(i);
  tasks.push_back({CoreType::kAiv, 2000, fan});
  for (std::uint32_t i = 0; i < 200; ++i)
    tasks.push_back({CoreType::kAiv, 3000 + 10 * (i % 7), {}});
  const sched::TaskGraph g = graph_of(tasks);
  std::vector<std::uint64_t> makespans;
  for (const char* p : {"fifo", "l2_affinity", "fair", "l2_fair"}) {
    sim::SimOptions opt;
    opt.runtime.policy = p;
    const auto r = sim::simulate(g, chip, opt);
    CHECK(r.stats.tasks == 201);
    makespans.push_back(r.stats.makespan_ps);
  }
  CHECK(makespans[0] != makespans[2]);
}

TEST_CASE("a task type without cores on the chip is a configuration error", "[sim]") {
  model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = graph_of({{CoreType::kAic, 100, {}}});
  model::apply_override(chip, "cores.aic=1");
  sim::SimOptions opt;
  opt.runtime.policy = "nope";
  CHECK_THROWS_AS(sim::simulate(g, chip, opt), ConfigError);
}

namespace {

// n independent AIV tasks, each reading its own cold 512 KiB (all L2 misses, no compute).
sched::TaskGraph cold_readers(std::size_t n, std::uint32_t bytes) {
  sched::TaskGraphBuilder b("test");
  const auto k = b.kernel_index("k");
  for (std::size_t i = 0; i < n; ++i) {
    sched::TaskGraphBuilder::Task t;
    t.core_type = CoreType::kAiv;
    t.root = static_cast<std::uint32_t>(i);
    t.orig_id = static_cast<std::uint32_t>(i);
    t.kernel = k;
    b.add_task(t);
    b.add_memory(sched::MemAccess{(std::uint64_t{i} + 1) << 24, bytes, 0});
  }
  return b.finish();
}

}  // namespace

TEST_CASE("HBM ends known at the start stay exact, and are withdrawn when flows slow down",
          "[sim][hbm]") {
  // A2: per-core cap 32 B/cycle at 1850 MHz = 0.0592 B/ps, aggregate 1.6 B/ps, so up to
  // K = 27 transfers run at the cap. A 512 KiB read takes 8.86 us alone, longer than it
  // takes to dispatch 30 tasks, so all transfers overlap.
  // (Refresh and turnaround losses off: they scale the aggregate and would change K.)
  model::ChipConfig chip = model::load_chip_preset("a2");
  chip.hbm.refresh_overhead_pct = 0;
  chip.hbm.turnaround_overhead_pct = 0;
  const model::DerivedTiming tm = model::derive(chip);
  const std::uint32_t bytes = 512 * 1024;
  REQUIRE(std::floor(tm.hbm_bytes_per_ps / tm.hbm_core_bytes_per_ps) == 27);
  // Alone (or with at most 26 others): overhead + MTE read latency, the transfer at the cap,
  // the HBM latency; no compute, no L2 hits, no writes.
  const TimePs pre =
      static_cast<TimePs>((chip.cost.task_overhead_cycles + chip.cost.mte_read_latency_cycles) *
                              tm.aicore_ps_per_cycle +
                          0.5);
  const TimePs alone =
      pre + static_cast<TimePs>(std::ceil(bytes / tm.hbm_core_bytes_per_ps)) + tm.hbm_latency_ps;
  sim::SimOptions opt;

  SECTION("27 transfers: every one runs at the cap, its end is exact") {
    const sim::SimResult r = sim::simulate(cold_readers(27, bytes), chip, opt);
    REQUIRE(r.stats.tasks == 27);
    for (std::size_t i = 0; i < 27; ++i) {
      CHECK(r.timeline.end_ps[i] - r.timeline.start_ps[i] == alone);
    }
    CHECK(r.stats.hbm_bytes == 27ull * bytes);
  }

  SECTION("30 transfers: the 28th start slows every transfer in flight") {
    const sim::SimResult r = sim::simulate(cold_readers(30, bytes), chip, opt);
    REQUIRE(r.stats.tasks == 30);
    std::vector<TimePs> starts(r.timeline.start_ps.begin(), r.timeline.start_ps.end());
    std::sort(starts.begin(), starts.end());
    const TimePs crowded = starts[27];  // from here on 28 transfers share the aggregate
    REQUIRE(crowded < starts[0] + alone - tm.hbm_latency_ps);  // all 27 still in flight
    TimePs first = common::kNever, last = 0;
    for (std::size_t i = 0; i < 30; ++i) {
      const TimePs d = r.timeline.end_ps[i] - r.timeline.start_ps[i];
      // The first 27 were promised `alone` at their start; the promise was withdrawn and
      // the slower shared rate gives a later end. The last three never ran at the cap.
      CHECK(d > alone);
      first = std::min(first, r.timeline.start_ps[i]);
      last = std::max(last, r.timeline.end_ps[i]);
    }
    // All bytes went through the aggregate bandwidth.
    CHECK(static_cast<double>(last - first - pre - tm.hbm_latency_ps) >=
          30.0 * bytes / tm.hbm_bytes_per_ps);
    CHECK(r.stats.hbm_bytes == 30ull * bytes);
  }
}

TEST_CASE("L2 state carries contents from one simulate() call to the next", "[sim][l2]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = cold_readers(8, 64 * 1024);
  sim::L2State l2;
  sim::SimOptions opt;
  opt.l2_state = &l2;
  const sim::SimResult first = sim::simulate(g, chip, opt);
  CHECK_FALSE(first.stats.l2_warm_start);
  CHECK(first.stats.l2.read_hits == 0);
  CHECK(first.stats.l2.read_misses == 8 * 128);
  REQUIRE(l2.warm());
  // The same data again: every line is resident, nothing crosses HBM, the run is shorter.
  const sim::SimResult second = sim::simulate(g, chip, opt);
  CHECK(second.stats.l2_warm_start);
  CHECK(second.stats.l2.read_hits == 8 * 128);  // counters are per run
  CHECK(second.stats.l2.read_misses == 0);
  CHECK(second.stats.hbm_bytes == 0);
  CHECK(second.stats.makespan_ps < first.stats.makespan_ps);
  // Without a state (the CLI), or after clear(), every run is cold.
  const sim::SimResult cold = sim::simulate(g, chip, sim::SimOptions{});
  CHECK(cold.stats.l2.read_hits == 0);
  l2.clear();
  CHECK(sim::simulate(g, chip, opt).stats.l2.read_hits == 0);
  // Another L2 geometry does not reuse the contents.
  model::ChipConfig other = chip;
  other.l2.ways = 8;
  const sim::SimResult regeo = sim::simulate(g, other, opt);
  CHECK_FALSE(regeo.stats.l2_warm_start);
  CHECK(regeo.stats.l2.read_hits == 0);
}

TEST_CASE("output still dirty in L2 at the end is reported as pending write-back", "[sim][l2]") {
  // 8 writers of 64 KiB each: all of it stays in the 192 MiB L2, nothing is written back.
  sched::TaskGraphBuilder b("test");
  const auto k = b.kernel_index("k");
  for (std::uint32_t i = 0; i < 8; ++i) {
    sched::TaskGraphBuilder::Task t;
    t.core_type = CoreType::kAiv;
    t.root = i;
    t.orig_id = i;
    t.kernel = k;
    b.add_task(t);
    b.add_memory(sched::MemAccess{(std::uint64_t{i} + 1) << 24, 64 * 1024, 1});
  }
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sim::SimResult r = sim::simulate(b.finish(), chip, sim::SimOptions{});
  CHECK(r.stats.l2.write_allocations == 8 * 128);
  CHECK(r.stats.l2.read_hits + r.stats.l2.read_misses == 0);
  CHECK(r.stats.hbm_bytes == 0);
  CHECK(r.stats.l2_dirty_bytes_at_end == 8 * 64 * 1024);
  const auto j = sim::stats_json(r);
  CHECK(j["hbm"]["pending_writeback_bytes"] == 8 * 64 * 1024);
  CHECK(j["l2"]["hit_rate"] == 0.0);  // no reads: no hits, whatever the writes did
  CHECK(j["hbm"]["achieved_gbps"].get<double>() <= j["hbm"]["effective_peak_gbps"].get<double>());
  CHECK(j["hbm"]["effective_peak_gbps"].get<double>() < j["hbm"]["peak_gbps"].get<double>());
}

TEST_CASE("a run slower than the time limit stops with the setting to blame, never spins",
          "[sim][limits]") {
  // Both settings lie inside their documented ranges. The HBM case used to cap a finish
  // time and then never retire the transfer (an endless loop in the flow model).
  model::ChipConfig chip = model::load_chip_preset("a2");
  sim::SimOptions opt;
  SECTION("HBM bandwidth: a 512 KiB read at 1e-12 GB/s") {
    model::apply_override(chip, "hbm.aggregate_gbps=1e-12");
    model::validate(chip);
    CHECK_THROWS_AS(sim::simulate(cold_readers(2, 512 * 1024), chip, opt), ConfigError);
    CHECK_THROWS_WITH(sim::simulate(cold_readers(2, 512 * 1024), chip, opt),
                      Catch::Matchers::Contains("time limit of 2^62 ps") &&
                          Catch::Matchers::Contains("hbm.aggregate_gbps"));
  }
  SECTION("AICore clock: 1e-9 MHz makes one cycle 1e15 ps") {
    model::apply_override(chip, "cores.freq_mhz=1e-9");
    model::validate(chip);
    sched::TaskGraphBuilder b("test");
    sched::TaskGraphBuilder::Task t;
    t.core_type = CoreType::kAiv;
    t.kernel = b.kernel_index("k");
    t.compute_cycles = 100000;
    b.add_task(t);
    const sched::TaskGraph g = b.finish();
    CHECK_THROWS_AS(sim::simulate(g, chip, opt), ConfigError);
    CHECK_THROWS_WITH(sim::simulate(g, chip, opt), Catch::Matchers::Contains("time limit") &&
                                                       Catch::Matchers::Contains("task 0") &&
                                                       Catch::Matchers::Contains("cores.freq_mhz"));
  }
}

TEST_CASE("the watchdog stops a run that makes no progress and names every agent",
          "[sim][limits]") {
  // A real livelock is a model bug we do not have; a watchdog bound of one event without a
  // completion stands in for it (the control flow and the thread wake before any task ends).
  model::ChipConfig chip = model::load_chip_preset("a2");
  sim::SimOptions opt;
  opt.watchdog_events = 1;
  const sched::TaskGraph g = graph_of({{CoreType::kAiv, 10000, {1}}, {CoreType::kAiv, 10000, {}}});
  CHECK_THROWS_AS(sim::simulate(g, chip, opt), ModelError);
  CHECK_THROWS_WITH(sim::simulate(g, chip, opt), Catch::Matchers::Contains("watchdog") &&
                                                     Catch::Matchers::Contains("Agents:") &&
                                                     Catch::Matchers::Contains("sched_0") &&
                                                     Catch::Matchers::Contains("control flow"));
  // The default bound leaves a healthy run alone.
  opt.watchdog_events = sim::SimOptions{}.watchdog_events;
  CHECK(sim::simulate(g, chip, opt).stats.tasks == 2);
}

TEST_CASE("a task type the chip lacks names the trace, the task and the key to fix",
          "[sim][limits]") {
  model::ChipConfig chip = model::load_chip_preset("a2");
  model::apply_override(chip, "cores.aiv_per_aic=0");
  model::validate(chip);
  const sched::TaskGraph g = graph_of({{CoreType::kAic, 100, {1}}, {CoreType::kAiv, 100, {}}});
  sim::SimOptions opt;
  CHECK_THROWS_AS(sim::simulate(g, chip, opt), ConfigError);
  CHECK_THROWS_WITH(sim::simulate(g, chip, opt),
                    Catch::Matchers::Contains("test: task id 1") &&
                        Catch::Matchers::Contains("AIV task, the first of 1") &&
                        Catch::Matchers::Contains("cores.aiv_per_aic"));
}

TEST_CASE("short rows at a large stride pay a whole GM block each", "[sim][mte]") {
  // One AIV task reading 64 rows warm in L2 (read twice: the second task's reads all hit).
  // Rows of 512 B move 32 KiB; rows of 32 B at a 4 KiB stride move one 512 B block each,
  // 16x their bytes (cost.mte_granule_bytes), so their L2 time equals the wide rows'.
  model::ChipConfig chip = model::load_chip_preset("a2");
  const model::DerivedTiming tm = model::derive(chip);
  const auto l2_time_ps = [&](std::uint32_t row_bytes) {
    sched::TaskGraphBuilder b("test");
    const auto k = b.kernel_index("k");
    for (std::uint32_t i = 0; i < 2; ++i) {
      sched::TaskGraphBuilder::Task t;
      t.core_type = CoreType::kAiv;
      t.orig_id = i;
      t.kernel = k;
      b.add_task(t);
      if (i == 0) b.add_successor(1);
      for (std::uint64_t r = 0; r < 64; ++r) {
        b.add_memory(sched::MemAccess{(std::uint64_t{1} << 24) + r * 4096, row_bytes, 0});
      }
    }
    const sim::SimResult res = sim::simulate(b.finish(), chip, sim::SimOptions{});
    return res.timeline.end_ps[1] - res.timeline.start_ps[1];
  };
  const TimePs fixed =
      static_cast<TimePs>((chip.cost.task_overhead_cycles + chip.cost.mte_read_latency_cycles) *
                              tm.aicore_ps_per_cycle +
                          0.5);
  const auto expect = static_cast<TimePs>(std::llround(64 * 512 / tm.l2_read_bytes_per_ps));
  CHECK(l2_time_ps(512) - fixed == expect);
  CHECK(l2_time_ps(32) - fixed == expect);
  CHECK(chip.cost.mte_granule_bytes == 512);
  // Aligned to 512 B the wide rows move exactly their bytes; a row straddling two blocks
  // moves both.
  CHECK(model::mte_bytes(4096, 512, chip) == 512);
  CHECK(model::mte_bytes(4096 + 480, 64, chip) == 1024);
  CHECK(model::mte_bytes(0, 0, chip) == 0);
}

TEST_CASE("a task's rows priced as runs match its rows priced one at a time", "[sim][mte]") {
  // A chain of AIV tasks, each a run of rows through L2: odd pitches and whole-block ones,
  // rows of several lines that hit in part, bursts, whole-line writes. The same ranges with a
  // zero-byte read after each row (which touches nothing and moves nothing) break every run,
  // so each row goes to L2 alone; times, L2 and HBM totals must agree.
  const model::ChipConfig chip = model::load_chip_preset("a2");
  struct Rows {
    std::uint64_t addr, pitch;
    std::uint32_t bytes, burst;
    bool write;
  };
  const std::uint64_t x = std::uint64_t{1} << 24;
  const std::vector<Rows> tasks = {
      {x, 3000, 700, 0, true},           // sparse writes: lines with gaps between them
      {x + 400, 3000, 1400, 0, false},   // reads of several lines, some resident, odd pitch
      {x + 400, 3072, 1400, 0, false},   // a pitch of whole GM blocks
      {x + 40, 3000, 1400, 256, false},  // bursts shorter than the row
      {x + 65536, 1536, 512, 0, true},   // whole-line writes
      {x + 65536 + 100, 1536, 600, 0, false},
  };
  const auto run = [&](bool apart) {
    sched::TaskGraphBuilder b("test");
    const auto k = b.kernel_index("k");
    for (std::uint32_t i = 0; i < tasks.size(); ++i) {
      sched::TaskGraphBuilder::Task t;
      t.core_type = CoreType::kAiv;
      t.orig_id = i;
      t.kernel = k;
      b.add_task(t);
      if (i + 1 < tasks.size()) b.add_successor(i + 1);
      const Rows& r = tasks[i];
      for (std::uint64_t row = 0; row < 12; ++row) {
        sched::MemAccess m{r.addr + row * r.pitch, r.bytes, r.write ? 1u : 0u};
        m.burst_bytes = r.burst;
        b.add_memory(m);
        if (apart) b.add_memory(sched::MemAccess{r.addr + row * r.pitch, 0, 0});
      }
    }
    return sim::simulate(b.finish(), chip, sim::SimOptions{});
  };
  const sim::SimResult runs = run(false), rows = run(true);
  CHECK(runs.stats.l2_hit_bytes > 0);
  CHECK(runs.stats.l2_miss_bytes > 0);
  CHECK(runs.stats.l2_hit_bytes == rows.stats.l2_hit_bytes);
  CHECK(runs.stats.l2_miss_bytes == rows.stats.l2_miss_bytes);
  CHECK(runs.stats.hbm_bytes == rows.stats.hbm_bytes);
  CHECK(runs.stats.l2.read_hits == rows.stats.l2.read_hits);
  CHECK(runs.stats.l2.write_fills == rows.stats.l2.write_fills);
  CHECK(runs.stats.l2.write_allocations == rows.stats.l2.write_allocations);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    INFO("task " << i);
    CHECK(runs.timeline.start_ps[i] == rows.timeline.start_ps[i]);
    CHECK(runs.timeline.end_ps[i] == rows.timeline.end_ps[i]);
  }
}

TEST_CASE("a device task ending with an AICPU task finishes: every thread hears it is sent",
          "[sim]") {
  // The AICPU task runs inline on the thread that resolves it; that thread then holds the
  // device task's last send, and the idle threads must still go to the barrier.
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = graph_of({{CoreType::kAiv, 1000, {1}}, {CoreType::kAicpu, 500, {}}});
  sim::SimOptions opt;
  const sim::SimResult r = sim::simulate(g, chip, opt);
  CHECK(r.stats.tasks == 2);
  CHECK(r.timeline.start_ps[1] >= r.timeline.end_ps[0]);
  CHECK(r.timeline.end_ps[1] == r.timeline.start_ps[1] + 500'000);
}
