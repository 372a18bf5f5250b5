// SPDX-License-Identifier: Apache-2.0
// launch_sched_aicpu_num on the simulator: 1..the chip's maximum is taken as given; <= 0 or
// above the maximum falls back to the automatic count min(max, ceil(aic / cores_per_thread)).
#include <catch2/catch.hpp>

#include "graph_helpers.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/simulation.h"

using namespace pypto;
using pypto::testing::graph_of;
using pypto::testing::T;

TEST_CASE("launch_sched_aicpu_num: <=0 or above the chip's maximum -> automatic", "[sim]") {
  const model::ChipConfig a2 = model::load_chip_preset("a2");     // max 4, automatic 3
  const model::ChipConfig pr = model::load_chip_preset("950pr");  // max 6, automatic 4
  for (std::int64_t v : {0, -1, 99, 7, 5}) CHECK(sim::sched_thread_count(a2, v) == 3);
  for (std::int64_t v : {0, -1, 99, 7}) CHECK(sim::sched_thread_count(pr, v) == 4);
  for (std::int64_t v : {1, 2, 3, 4}) CHECK(sim::sched_thread_count(a2, v) == v);
  for (std::int64_t v : {1, 3, 5, 6}) CHECK(sim::sched_thread_count(pr, v) == v);
}

TEST_CASE("launch_sched_aicpu_num reaches the run: 0 and 99 pass validation", "[sim]") {
  const model::ChipConfig chip = model::load_chip_preset("950pr");
  const sched::TaskGraph g =
      graph_of({{common::CoreType::kAiv, 1000, {1}}, {common::CoreType::kAiv, 1000, {}}});
  for (const auto& [requested, threads] :
       std::vector<std::pair<std::int64_t, std::uint32_t>>{{0, 4}, {-1, 4}, {99, 4}, {3, 3}}) {
    sim::SimOptions opt;
    opt.runtime.launch_sched_aicpu_num = requested;
    CHECK(sim::simulate(g, chip, opt).stats.sched_threads == threads);
  }
}
