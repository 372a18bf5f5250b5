// SPDX-License-Identifier: Apache-2.0
// Replay metrics (traces/FORMAT.md "Replay metrics"), each worked out by hand on a graph
// small enough to check on paper.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "pypto/sched/task_graph.h"
#include "pypto/sim/report.h"

using pypto::common::CoreType;
using pypto::sched::TaskGraph;
using pypto::sched::TaskGraphBuilder;
using pypto::sim::replay_fidelity;
using pypto::sim::ReplayFidelity;

namespace {

constexpr std::uint64_t kNs = 1000;  // ps

// t0 -> {t1, t2} -> hub -> t3, one device task. Recorded (ns): t0 0..100, t1 150..350,
// t2 120..170, t3 400..410; the HUB has no record.
TaskGraph diamond() {
  TaskGraphBuilder b("hand");
  auto add = [&](CoreType core, std::uint32_t id, std::uint32_t dur_ns, std::uint64_t start_ns) {
    TaskGraphBuilder::Task t;
    t.core_type = core;
    t.orig_id = id;
    t.recorded_ns = dur_ns;
    t.recorded_start_ps = start_ns * kNs;
    b.add_task(t);
  };
  add(CoreType::kAiv, 0, 100, 0);
  b.add_successor(1);
  b.add_successor(2);
  add(CoreType::kAic, 1, 200, 150);
  b.add_successor(3);
  add(CoreType::kAiv, 2, 50, 120);
  b.add_successor(3);
  TaskGraphBuilder::Task hub;
  hub.core_type = CoreType::kHub;
  hub.orig_id = 3;
  hub.recorded_ns = 0;
  b.add_task(hub);
  b.add_successor(4);
  add(CoreType::kAiv, 4, 10, 400);
  return b.finish();
}

}  // namespace

TEST_CASE("replay metrics of a hand-worked diamond", "[report]") {
  const TaskGraph g = diamond();
  REQUIRE(g.num_tasks() == 5);
  REQUIRE_FALSE(g.has_recorded_start(3));  // the HUB
  // Simulated (ns), 1000 ns after the model's origin: t0 1000..1080, t1 1200..1400,
  // t2 1250..1330, hub (resolve time, not compared) 0, t3 1500..1510.
  const std::vector<std::uint64_t> start = {1000 * kNs, 1200 * kNs, 1250 * kNs, 0, 1500 * kNs};
  const std::vector<std::uint64_t> end = {1080 * kNs, 1400 * kNs, 1330 * kNs, 0, 1510 * kNs};
  const ReplayFidelity f = replay_fidelity(g, start, end);

  // Compared: t0 t1 t2 t3 (not the HUB). Starts from each side's first start:
  //   recorded 0 150 120 400, simulated 0 200 250 500 -> |error| 0 50 130 100 ns.
  CHECK(f.tasks == 4);
  // Sorted 0 50 100 130; nearest rank: median = rank ceil(0.5*4) = 2 -> 50 ns,
  // p90 = rank ceil(0.9*4) = 4 -> 130 ns.
  CHECK(f.start_error_median_us == Approx(0.050));
  CHECK(f.start_error_p90_us == Approx(0.130));
  // Ranks: recorded t0 1, t2 2, t1 3, t3 4; simulated t0 1, t1 2, t2 3, t3 4.
  // d = 0, 1, -1, 0 -> rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8.
  REQUIRE(f.has_spearman);
  CHECK(f.spearman == Approx(0.8));
  // Waits (start - latest predecessor end; through the HUB to t1 and t2; t0 has none):
  //   recorded t1 150-100 = 50, t2 120-100 = 20, t3 400-max(350,170) = 50 -> 20 50 50
  //   simulated t1 1200-1080 = 120, t2 1250-1080 = 170, t3 1500-max(1400,1330) = 100
  // p10/p50/p90 = ranks ceil(0.3) = 1, ceil(1.5) = 2, ceil(2.7) = 3.
  CHECK(f.wait_tasks == 3);
  CHECK(f.recorded_wait_us[0] == Approx(0.020));
  CHECK(f.recorded_wait_us[1] == Approx(0.050));
  CHECK(f.recorded_wait_us[2] == Approx(0.050));
  CHECK(f.simulated_wait_us[0] == Approx(0.100));
  CHECK(f.simulated_wait_us[1] == Approx(0.120));
  CHECK(f.simulated_wait_us[2] == Approx(0.170));
}

TEST_CASE("Spearman ranks ties by their mean rank and is undefined without spread", "[report]") {
  auto chain_free = [](const std::vector<std::uint64_t>& rec_ns) {
    TaskGraphBuilder b("ties");
    for (std::uint32_t i = 0; i < rec_ns.size(); ++i) {
      TaskGraphBuilder::Task t;
      t.orig_id = i;
      t.recorded_ns = 1;
      t.recorded_start_ps = rec_ns[i] * kNs;
      b.add_task(t);
    }
    return b.finish();
  };
  // Recorded 0 0 10 -> ranks 1.5 1.5 3; simulated 0 5 10 -> ranks 1 2 3.
  // Pearson of the ranks: 1.5 / sqrt(1.5 * 2) = 0.866025.
  const TaskGraph g = chain_free({0, 0, 10});
  const std::vector<std::uint64_t> start = {0, 5 * kNs, 10 * kNs};
  const std::vector<std::uint64_t> end = {kNs, 6 * kNs, 11 * kNs};
  ReplayFidelity f = replay_fidelity(g, start, end);
  REQUIRE(f.has_spearman);
  CHECK(f.spearman == Approx(0.866025).epsilon(1e-5));
  CHECK(f.wait_tasks == 0);  // no task has a predecessor

  // Every recorded start tied: no rank order to compare.
  const TaskGraph flat = chain_free({7, 7, 7});
  f = replay_fidelity(flat, start, end);
  CHECK_FALSE(f.has_spearman);
  CHECK(f.tasks == 3);
  // One task: no correlation either; its start error is 0 by definition (both start at 0).
  const TaskGraph one = chain_free({42});
  f = replay_fidelity(one, {9 * kNs}, {10 * kNs});
  CHECK_FALSE(f.has_spearman);
  CHECK(f.start_error_median_us == 0);
}
