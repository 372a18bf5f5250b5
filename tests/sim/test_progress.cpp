// SPDX-License-Identifier: Apache-2.0
// Progress: at every AICPU cost inside the documented ranges, a run of serial device tasks
// completes. A poll round may be suspended at shared operations; a round that sends a
// device task's last task in a piece that is then suspended must still wake the idle
// threads so that they arrive at the barrier. That wake-up was once lost ("device task seqNo
// 0 never completed"): at 264 of these 480 points, at every poll value, and at poll
// 800..3000 cycles on the sample recording.
#include <catch2/catch.hpp>
#include <exception>
#include <string>

#include "graph_helpers.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sim/simulation.h"

using namespace pypto;
using pypto::testing::graph_of;
using pypto::testing::T;

namespace {

using common::CoreType;

// The shape of traces/samples/dyn_topo.txt: two device tasks, the first two AIV->AIC->AIV
// chains meeting at a HUB, the second one chain; a few hundred ns per task.
sched::TaskGraph two_device_tasks() {
  return graph_of({
      {CoreType::kAiv, 100, {1}, 0},
      {CoreType::kAic, 300, {2}, 0},
      {CoreType::kAiv, 80, {6}, 0},
      {CoreType::kAiv, 100, {4}, 0},
      {CoreType::kAic, 300, {5}, 0},
      {CoreType::kAiv, 80, {6}, 0},
      {CoreType::kHub, sched::kNoRecord, {}, 0},
      {CoreType::kAiv, 100, {8}, 1},
      {CoreType::kAic, 300, {9}, 1},
      {CoreType::kAiv, 80, {}, 1},
  });
}

model::ChipConfig chip_with(std::uint32_t poll, std::uint32_t barrier, std::uint32_t resolve) {
  return model::resolve_chip_config("a2", "",
                                    {"aicpu.poll_cycles=" + std::to_string(poll),
                                     "aicpu.barrier_cycles=" + std::to_string(barrier),
                                     "aicpu.resolve_cycles=" + std::to_string(resolve),
                                     "aicpu.dispatch_cycles=58", "aicpu.queue_op_cycles=37"});
}

}  // namespace

TEST_CASE("every poll/barrier cost completes the run (no lost barrier wake-up)", "[sim]") {
  const sched::TaskGraph g = two_device_tasks();
  int runs = 0;
  std::string failed;                       // every point that did not complete
  for (const std::int64_t mode : {0, 2}) {  // fifo, fair
    for (const std::uint32_t poll :
         {1u, 240u, 290u, 500u, 800u, 1001u, 1300u, 1700u, 2300u, 3000u}) {
      for (const std::uint32_t barrier : {0u, 300u, 400u, 546u, 650u, 1000u}) {
        for (const std::uint32_t resolve : {0u, 57u, 137u, 390u}) {
          sim::SimOptions opt;
          opt.runtime.policy = sched::policy_for_mode(mode);
          const std::string point = "mode " + std::to_string(mode) + " poll " +
                                    std::to_string(poll) + " barrier " + std::to_string(barrier) +
                                    " resolve " + std::to_string(resolve);
          try {
            const sim::SimResult r = sim::simulate(g, chip_with(poll, barrier, resolve), opt);
            if (r.stats.tasks != 9) failed += point + ": " + std::to_string(r.stats.tasks) + "\n";
          } catch (const std::exception& e) {
            failed += point + ": " + std::string(e.what()).substr(0, 120) + "\n";
          }
          ++runs;
        }
      }
    }
  }
  CHECK(runs == 480);
  INFO(failed);
  CHECK(failed.empty());
}
