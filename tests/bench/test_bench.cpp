// SPDX-License-Identifier: Apache-2.0
// The benchmark's reference models (bare SystemC ceiling and heap event loop): makespans
// worked out by hand from the fixed costs, the same answer from both on graphs without
// simultaneous events, the completion check, and run_bench's option errors.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/temp_dir.h"
#include "../sim/graph_helpers.h"
#include "pypto/bench/bench.h"
#include "pypto/bench/reference.h"
#include "pypto/common/errors.h"
#include "pypto/model/config_loader.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"

using namespace pypto;
using Catch::Matchers::Contains;
using common::CoreType;
using pypto::testing::graph_of;
using pypto::testing::T;

namespace {

// Round numbers so that the expected makespans can be added up by hand.
bench::MinimalCosts small_costs(std::uint32_t threads, std::uint32_t clusters) {
  bench::MinimalCosts c;
  c.poll_ps = 10;
  c.resolve_ps = 20;
  c.dispatch_ps = 30;
  c.fixed_task_ps = 1'000'000;
  c.aicore_ps_per_cycle = 500;
  c.threads = threads;
  c.aic = clusters;
  c.aiv = 2 * clusters;
  return c;
}

}  // namespace

TEST_CASE("reference models: a two-task chain costs dispatch, poll and resolve", "[bench]") {
  // A (AIC, 1 us) -> B (AIV, 2 us), one thread, one cluster.
  const auto g = graph_of({{CoreType::kAic, 1000, {1}, 0}, {CoreType::kAiv, 2000, {}, 0}});
  const auto costs = small_costs(1, 1);
  // Round at 0: dispatch A at 30, ends 1'000'030. Round at 1'000'030: poll (+10), collect A,
  // resolve A->B (+20), dispatch B (+30) at 1'000'090, ends 3'000'090.
  for (const auto& r : {bench::run_ceiling(g, costs), bench::run_heap_des(g, costs)}) {
    CHECK(r.tasks_done == 2);
    CHECK(r.makespan_ps == 3'000'090);
    CHECK(r.wall_s > 0);
  }
}

TEST_CASE("reference models: device tasks run one after another", "[bench]") {
  // Two independent AIC tasks in different device tasks: B becomes ready only when A is
  // collected. Round at 1'000'030: poll (+10) collects A, dispatch B (+30) at 1'000'070.
  const auto g = graph_of({{CoreType::kAic, 1000, {}, 0}, {CoreType::kAic, 1000, {}, 1}});
  const auto costs = small_costs(1, 1);
  for (const auto& r : {bench::run_ceiling(g, costs), bench::run_heap_des(g, costs)}) {
    CHECK(r.tasks_done == 2);
    CHECK(r.makespan_ps == 2'000'070);
  }
}

TEST_CASE("reference models: HUB tasks complete inline, tasks without time take 1 us", "[bench]") {
  // A (AIC, no record, no compute: 1 us) -> H (HUB) -> B (AIV, 2 us). Collect A at
  // 1'000'040, resolve A->H (+20), H inline, resolve H->B (+20), dispatch B (+30) at
  // 1'000'110, ends 3'000'110.
  const auto g = graph_of({{CoreType::kAic, sched::kNoRecord, {1}, 0},
                           {CoreType::kHub, sched::kNoRecord, {2}, 0},
                           {CoreType::kAiv, 2000, {}, 0}});
  const auto costs = small_costs(1, 1);
  CHECK(bench::minimal_task_ps(g, costs, 0) == 1'000'000);
  CHECK(bench::minimal_task_ps(g, costs, 1) == 0);
  for (const auto& r : {bench::run_ceiling(g, costs), bench::run_heap_des(g, costs)}) {
    CHECK(r.tasks_done == 3);
    CHECK(r.makespan_ps == 3'000'110);
  }
}

TEST_CASE("reference models: threads share one FIFO per core type", "[bench]") {
  // Four 1 us AIC tasks, two threads with one AIC each. Each thread dispatches one at 30
  // (whichever runs first leaves the rest and wakes the other); at 1'000'030 each polls
  // (+10), collects and dispatches the next (+30): two waves, makespan 2'000'070.
  const auto g = graph_of({{CoreType::kAic, 1000, {}, 0},
                           {CoreType::kAic, 1000, {}, 0},
                           {CoreType::kAic, 1000, {}, 0},
                           {CoreType::kAic, 1000, {}, 0}});
  const auto costs = small_costs(2, 2);
  for (const auto& r : {bench::run_ceiling(g, costs), bench::run_heap_des(g, costs)}) {
    CHECK(r.tasks_done == 4);
    CHECK(r.makespan_ps == 2'000'070);
  }
}

TEST_CASE("reference models: a task no core can run is reported, not skipped", "[bench]") {
  const auto g = graph_of({{CoreType::kAic, 1000, {1}, 0}, {CoreType::kAiv, 1000, {}, 0}});
  auto costs = small_costs(1, 1);
  costs.aiv = 0;  // the AIV task can never be dispatched
  CHECK_THROWS_WITH(bench::run_ceiling(g, costs), Contains("completed 1 of 2 tasks"));
  CHECK_THROWS_WITH(bench::run_heap_des(g, costs), Contains("completed 1 of 2 tasks"));
}

TEST_CASE("reference models: A2 costs and agents", "[bench]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const bench::MinimalCosts c = bench::minimal_costs(chip);
  // launch_sched_aicpu_num 7 is above A2's maximum of 4: automatic, ceil(24 / 8) = 3.
  CHECK(c.threads == 3);
  CHECK(c.aic == 24);
  CHECK(c.aiv == 48);
  // 138, 57 and 17 cycles at 1800 MHz (configs/a2.yaml), to the nearest picosecond.
  CHECK(c.poll_ps == 76'667);
  CHECK(c.resolve_ps == 31'667);
  CHECK(c.dispatch_ps == 9'444);
}

TEST_CASE("reference models agree on a synthetic chain and complete a mix", "[bench]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const pypto::testing::TempDir tmp;
  const std::string& dir = tmp.path();
  const auto load = [&](const std::string& shape, std::uint64_t n) {
    trace::SyntheticSpec s;
    s.shape = shape;
    s.tasks = n;
    const std::string path = dir + "/" + shape + ".ndjson";
    {
      std::ofstream f(path);
      trace::write_synthetic_trace(s, f);
    }
    return trace::load_trace(path, trace::LoadOptions{}, chip).graph;
  };
  const bench::MinimalCosts costs = bench::minimal_costs(chip);
  // One chain: never two events at the same time, so the kernels cannot order ties
  // differently and both models give the same makespan.
  const auto chain = load("chain", 3000);
  const auto c1 = bench::run_ceiling(chain, costs);
  const auto h1 = bench::run_heap_des(chain, costs);
  CHECK(c1.tasks_done == 3000);
  CHECK(h1.tasks_done == 3000);
  CHECK(c1.makespan_ps == h1.makespan_ps);
  CHECK(c1.makespan_ps > 0);
  // A mix: every task completes in both; ties may be ordered differently, so the makespans
  // are only close.
  const auto mix = load("mix", 20000);
  const auto c2 = bench::run_ceiling(mix, costs);
  const auto h2 = bench::run_heap_des(mix, costs);
  CHECK(c2.tasks_done == 20000);
  CHECK(h2.tasks_done == 20000);
  CHECK(static_cast<double>(c2.makespan_ps) ==
        Approx(static_cast<double>(h2.makespan_ps)).epsilon(0.05));
}

TEST_CASE("run_bench rejects bad options with one clear line", "[bench]") {
  std::ostringstream progress;
  bench::BenchOptions o;
  const pypto::testing::TempDir tmp;
  o.out_dir = tmp.path();
  o.self_exe = "/nonexistent/pypto-sim";
  CHECK_THROWS_AS(bench::run_bench(o, progress), ConfigError);
  CHECK_THROWS_WITH(bench::run_bench(o, progress),
                    Contains("'/nonexistent/pypto-sim' is not executable"));
  o.self_exe = "/bin/true";
  o.sizes = {1000, 0};
  CHECK_THROWS_WITH(bench::run_bench(o, progress), Contains("--sizes: 0 is out of range"));
  o.out_dir.clear();
  CHECK_THROWS_WITH(bench::run_bench(o, progress), Contains("no output folder"));
}

TEST_CASE("runs_for: three runs a round up to 100k tasks, one up to 1M, one in all above",
          "[bench]") {
  bench::BenchOptions o;
  o.rounds = 3;
  CHECK(bench::runs_for(o, 10'000) == 9);
  CHECK(bench::runs_for(o, 100'000) == 9);
  CHECK(bench::runs_for(o, 100'001) == 3);
  CHECK(bench::runs_for(o, 1'000'000) == 3);
  CHECK(bench::runs_for(o, 1'000'001) == 1);
  CHECK(bench::runs_for(o, 10'000'000) == 1);
  o.rounds = 1;
  CHECK(bench::runs_for(o, 100'000) == 3);
  CHECK(bench::runs_for(o, 10'000'000) == 1);
  // The smoke test runs every point once, whatever its size and the rounds.
  o.quick = true;
  CHECK(bench::runs_for(o, 100'000) == 1);
  o.rounds = 4;
  CHECK(bench::runs_for(o, 10'000) == 1);
  CHECK(bench::runs_for(o, 10'000'000) == 1);
}
