// SPDX-License-Identifier: Apache-2.0
// Concurrency of the schedule AICPU threads (DESIGN.md "Beyond PyPTO"): what one thread
// pushes to a shared ready queue is taken by an idle thread at the time it is pushed, not
// when the pusher's poll round ends. The fan-out times are worked out by hand from the
// config's AICPU costs; the chip is the board's A2-family part with 20 clusters and three
// schedule threads owning clusters {0-6}, {7-13}, {14-19}.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "graph_helpers.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/simulation.h"

using namespace pypto;
using common::CoreType;
using common::TimePs;
using pypto::testing::aicpu_ps;
using pypto::testing::graph_of;
using pypto::testing::T;

namespace {

model::ChipConfig board_chip() {
  model::ChipConfig chip = model::load_chip_preset("a2");
  model::apply_override(chip, "cores.aic=20");
  model::validate(chip);
  return chip;
}

// Task 0 (AIC, 10 us) releases tasks 1..12 (AIC, 500 us each); each of those releases two
// short follow-ups (13..36), so that the fan-out is not the device task's last wave (29
// unsent tasks > 20 cores), where every thread would fill only idle cores anyway.
sched::TaskGraph fan_out() {
  std::vector<T> tasks{{CoreType::kAic, 10'000, {}}};
  for (common::TaskId i = 1; i <= 12; ++i) {
    tasks[0].succ.push_back(i);
    tasks.push_back({CoreType::kAic, 500'000, {12 + i, 24 + i}});
  }
  for (int i = 0; i < 24; ++i) tasks.push_back({CoreType::kAic, 10'000, {}});
  return graph_of(tasks);
}

sim::SimResult run(const sched::TaskGraph& g, const model::ChipConfig& chip,
                   const std::string& policy) {
  sim::SimOptions opt;
  opt.runtime.policy = policy;
  opt.runtime.launch_sched_aicpu_num = 3;
  return sim::simulate(g, chip, opt);
}

// The board's partition of 20 clusters over 3 threads.
int thread_of(std::uint16_t core) { return core < 7 ? 0 : core < 14 ? 1 : 2; }
std::uint32_t cores_of(int thread) { return thread < 2 ? 7 : 6; }

}  // namespace

TEST_CASE("fan-out of 12 under fifo: the idle thread takes the pushed half at once", "[sim]") {
  const model::ChipConfig chip = board_chip();
  const sched::TaskGraph g = fan_out();
  const sim::SimResult r = run(g, chip, "fifo");
  const auto& tl = r.timeline;
  REQUIRE(r.stats.sched_threads == 3);
  const TimePs P = aicpu_ps(chip, chip.aicpu.poll_cycles);
  const TimePs R = aicpu_ps(chip, chip.aicpu.resolve_cycles);
  const TimePs D = aicpu_ps(chip, chip.aicpu.dispatch_cycles);
  const TimePs Q = aicpu_ps(chip, chip.aicpu.queue_op_cycles);

  // The admitted queue holds task 0; the first thread to run (thread A) takes it onto its
  // first core and then polls that core every P: the first read at or after the task's
  // completion is visible (its end plus the completion latency L) sees it finished.
  const TimePs L = TimePs{chip.aicpu.completion_latency_ns} * 1000;
  const int a = thread_of(tl.core[0]);
  const std::uint32_t n_a = cores_of(a);
  const TimePs s0 = tl.start_ps[0];
  const TimePs e0 = tl.end_ps[0];
  const TimePs seen = s0 + (e0 + L - s0 + P - 1) / P * P;
  // A resolves the 12 edges (12 R), sends the n_a newest to its n_a idle cores (D each)
  // and pushes the other 12 - n_a to the shared queue at X = seen + 12 R + n_a D. It would
  // take them back into its own pending slots after the queue operation, at X + Q; but
  // the other threads are idle and spin on the queue, so one of them (B) takes all of them
  // at X (one queue operation, then a dispatch each) onto its own idle cores.
  const TimePs walked = seen + 12 * R;
  const TimePs X = walked + n_a * D;
  std::vector<TimePs> start_a, start_b;
  std::set<std::uint16_t> cores;
  std::set<int> b_threads;
  for (common::TaskId i = 1; i <= 12; ++i) {
    cores.insert(tl.core[i]);
    if (thread_of(tl.core[i]) == a) {
      start_a.push_back(tl.start_ps[i]);
    } else {
      start_b.push_back(tl.start_ps[i]);
      b_threads.insert(thread_of(tl.core[i]));
    }
  }
  CHECK(cores.size() == 12);  // 12 distinct cores: no successor waits in a pending slot
  CHECK(b_threads.size() == 1);
  REQUIRE(start_a.size() == n_a);
  REQUIRE(start_b.size() == 12 - n_a);
  std::sort(start_a.begin(), start_a.end());
  std::sort(start_b.begin(), start_b.end());
  for (std::uint32_t k = 0; k < n_a; ++k) CHECK(start_a[k] == walked + (k + 1) * D);
  for (std::uint32_t k = 0; k < 12 - n_a; ++k) CHECK(start_b[k] == X + Q + (k + 1) * D);
  // All 12 start within 11 dispatches and one queue operation of each other, and the
  // whole run is one 500 us wave plus the short tasks around it (not two long waves).
  CHECK(start_b.back() - start_a.front() == 11 * D + Q);
  CHECK(r.stats.makespan_ps < 600'000'000);
}

TEST_CASE("fan-out of 12 under fair and l2_fair: 12 distinct cores, started together", "[sim]") {
  const model::ChipConfig chip = board_chip();
  const sched::TaskGraph g = fan_out();
  const TimePs R = aicpu_ps(chip, chip.aicpu.resolve_cycles);
  const TimePs D = aicpu_ps(chip, chip.aicpu.dispatch_cycles);
  const TimePs Q = aicpu_ps(chip, chip.aicpu.queue_op_cycles);
  for (const char* policy : {"fair", "l2_fair"}) {
    INFO(policy);
    const sim::SimResult r = run(g, chip, policy);
    const auto& tl = r.timeline;
    std::set<std::uint16_t> cores;
    TimePs lo = common::kNever, hi = 0;
    for (common::TaskId i = 1; i <= 12; ++i) {
      cores.insert(tl.core[i]);
      lo = std::min<TimePs>(lo, tl.start_ps[i]);
      hi = std::max<TimePs>(hi, tl.start_ps[i]);
    }
    CHECK(cores.size() == 12);
    // Bound: the whole resolve walk plus every dispatch and a few queue operations.
    CHECK(hi - lo <= 12 * R + 12 * D + 4 * Q);
    CHECK(r.stats.makespan_ps < 600'000'000);
  }
}

TEST_CASE("fan-out of 12 under l2_affinity: direct send fills the thread's idle cores", "[sim]") {
  // Mode 1 (PyPTO's TrySendTaskDirectly): a released successor goes at once to the resolving
  // thread's most recently freed idle core, else to a free pending slot of its busy cores.
  // A core just sent a successor holds it as its pending one until a poll reads its ACK, so
  // its pending slot is not free: the successors beyond the thread's idle cores are staged
  // and published, and the idle threads take them. One 500 us wave, as under fifo.
  const model::ChipConfig chip = board_chip();
  const sim::SimResult r = run(fan_out(), chip, "l2_affinity");
  const int a = thread_of(r.timeline.core[0]);
  std::set<std::uint16_t> cores;
  std::uint32_t on_a = 0;
  for (common::TaskId i = 1; i <= 12; ++i) {
    cores.insert(r.timeline.core[i]);
    on_a += thread_of(r.timeline.core[i]) == a ? 1 : 0;
  }
  CHECK(on_a == cores_of(a));
  CHECK(cores.size() == 12);
  CHECK(r.stats.makespan_ps < 600'000'000);
}

TEST_CASE("dispatch balance on a wide graph: no thread takes a lion's share", "[sim]") {
  // 1,020 AIC tasks in 17 layers of 60 (three per cluster); each task depends on two of
  // the previous layer, durations 20..59 us: every thread's partition stays busy.
  const model::ChipConfig chip = board_chip();
  std::vector<T> tasks;
  const int layers = 17, width = 60;
  for (int l = 0; l < layers; ++l) {
    for (int w = 0; w < width; ++w) {
      T t{CoreType::kAic, static_cast<std::uint32_t>(20'000 + (l * 7 + w * 13) % 40 * 1'000), {}};
      if (l + 1 < layers) {
        const auto next = static_cast<common::TaskId>((l + 1) * width);
        t.succ = {next + static_cast<common::TaskId>(w),
                  next + static_cast<common::TaskId>((w + 7) % width)};
      }
      tasks.push_back(t);
    }
  }
  const sched::TaskGraph g = graph_of(tasks);
  for (const char* policy : {"fifo", "fair"}) {
    INFO(policy);
    const sim::SimResult r = run(g, chip, policy);
    std::uint64_t total = 0;
    for (const auto& t : r.stats.threads) total += t.dispatches;
    REQUIRE(total == 1020);
    // Cores 7/7/6: a share by cores is 357/357/306; each thread stays within 20% of it.
    for (std::size_t k = 0; k < r.stats.threads.size(); ++k) {
      const double share = 1020.0 * cores_of(static_cast<int>(k)) / 20;
      CHECK(r.stats.threads[k].dispatches >= 0.8 * share);
      CHECK(r.stats.threads[k].dispatches <= 1.2 * share);
    }
  }
}
