// SPDX-License-Identifier: Apache-2.0
// Dispatch order of each built-in policy on tiny graphs, worked out by hand from
// DESIGN.md's rules (see the comments in each case). Costs: poll = resolve = dispatch = 1
// tick; tasks run 100 ticks, so every AICPU decision happens while cores are busy.
#include <catch2/catch.hpp>

#include "policy_harness.h"
#include "pypto/common/errors.h"
#include "pypto/sched/registry.h"
#include "pypto/sched/runtime_options.h"

using namespace pypto::common;
using namespace pypto::sched;
using namespace pypto::sched::testing;

namespace {

constexpr CoreType V = CoreType::kAiv;
constexpr CoreType C = CoreType::kAic;

// Three chains A1->A2, B1->B2, C1->C2 (tasks 0..5) on ONE AIV core and one thread.
std::vector<TaskSpec> three_chains() {
  return {{V, {1}}, {V, {}}, {V, {3}}, {V, {}}, {V, {5}}, {V, {}}};
}

// T0 fans out to S1..S4 (tasks 1..4); two threads, each with one AIV core.
std::vector<TaskSpec> fan_out() { return {{V, {1, 2, 3, 4}}, {V, {}}, {V, {}}, {V, {}}, {V, {}}}; }

MachineShape one_core() { return {1, 1, 1, 256, 1}; }
MachineShape two_threads() { return {2, 2, 2, 256, 1}; }

}  // namespace

TEST_CASE("fifo runs chains breadth-first", "[policy][fifo]") {
  // Queue [A1 B1 C1]. A1 runs; send-before-resolve fills the pending slot with B1; when A1
  // ends, C1 is prefetched before A2 (resolved after) joins the tail: A1 B1 C1 A2 B2 C2.
  const TaskGraph g = make_graph(three_chains());
  PolicyHarness h(g, one_core(), "fifo");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 2, 4, 1, 3, 5});
}

TEST_CASE("l2_affinity runs chains depth-first", "[policy][l2_affinity]") {
  // First batch FIFO: A1. Then the queue is popped newest-first: C1 to the pending slot.
  // A2 is sent directly to the pending slot when A1 ends, C2 when C1 ends; only then B1
  // from the queue, and B2 straight after it: A1 C1 A2 C2 B1 B2.
  const TaskGraph g = make_graph(three_chains());
  PolicyHarness h(g, one_core(), "l2_affinity");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 4, 1, 5, 2, 3});
}

TEST_CASE("fifo fan-out: newest staged task to the idle core, last wave waits", "[policy][fifo]") {
  // Thread 0 (core 2) resolves T0: S1..S4 are staged; the newest, S4, goes to its idle
  // core, S1 S2 S3 to the shared queue. Core 2's pending slot takes nothing until a poll has
  // seen S4 acknowledged (PyPTO holds a task just sent as the core's pending one until its
  // ACK), so idle thread 1 takes S1. S2 and S3 are the last wave (unsent <= cores): each
  // waits for a fully idle core, S2 for core 3 after S1, S3 for core 2 after S4.
  const TaskGraph g = make_graph(fan_out());
  PolicyHarness h(g, two_threads(), "fifo");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 4, 1, 2, 3});
  CHECK(h.core_of(4) == 2);
  CHECK(h.core_of(1) == 3);
  CHECK(h.core_of(2) == 3);
  CHECK(h.core_of(3) == 2);
  CHECK(h.start_of(2) >= h.end_of(1));  // waited for the idle core, not a pending slot
  CHECK(h.start_of(3) >= h.end_of(4));
}

TEST_CASE("fifo at a device task's start: idle cores in queue order, pending slots after the ACK",
          "[policy][fifo]") {
  // Two threads (thread 0: AIC 0, AIV 2 3; thread 1: AIC 1, AIV 4 5); 4 AIC tasks (0..3) and
  // 8 AIV tasks (4..11), independent, 100 ticks each. PyPTO's first RunCoreTask of a device
  // task: each thread, AIC then AIV, dequeues oldest first as many tasks as it has cores with
  // an empty pending slot and sends them to its idle cores, the most recently freed first (at
  // the start the lowest): thread 0 takes 0 (core 0) and 4 5 (cores 2 3), thread 1 takes 1
  // and 6 7. A core just sent a task holds it as its pending one until a poll reads its ACK,
  // so the pending slots fill in the next round, after the polls: thread 0 puts 2 behind 0
  // and 8 9 behind 4 5, thread 1 puts 3 behind 1. That AIC round is no tail batch although
  // only 2 AIC tasks are unsent: PyPTO's tail batch counts the unsent tasks of every type
  // against the type's cores. The AIV tasks 10 and 11 are the tail batch: they wait for idle
  // cores, the most recently freed first (core 5, then core 4).
  std::vector<TaskSpec> specs(4, TaskSpec{C, {}});
  for (int i = 0; i < 8; ++i) specs.push_back(TaskSpec{V, {}});
  const TaskGraph g = make_graph(specs);
  PolicyHarness h(g, {2, 4, 2, 256, 1}, "fifo");
  h.run();
  const std::vector<CoreId> core{0, 1, 0, 1, 2, 3, 4, 5, 2, 3, 5, 4};
  for (TaskId t = 0; t < 12; ++t) CHECK(h.core_of(t) == core[t]);
  for (TaskId t : {0u, 1u, 4u, 5u, 6u, 7u}) CHECK(h.start_of(t) < 10);  // the first batch
  CHECK(h.start_of(2) == h.end_of(0));  // pending slots, filled after the ACK
  CHECK(h.start_of(3) == h.end_of(1));
  CHECK(h.start_of(8) == h.end_of(4));
  CHECK(h.start_of(9) == h.end_of(5));
  CHECK(h.start_of(10) > h.end_of(7));  // the tail batch waits for idle cores
  CHECK(h.start_of(11) > h.end_of(6));
}

TEST_CASE("fair fan-out: eager flush and no prefill while the other thread idles",
          "[policy][fair]") {
  // S1 is flushed to thread 0's idle core at once (shared queue dry); S2 S3 S4 go to the
  // shared queue; thread 0 may not prefill while thread 1 idles. Thread 1 takes S2, then
  // prefills S3 (thread 0 is no longer idle); thread 0 prefills S4.
  const TaskGraph g = make_graph(fan_out());
  PolicyHarness h(g, two_threads(), "fair");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 1, 2, 3, 4});
  CHECK(h.core_of(1) == 2);
  CHECK(h.core_of(2) == 3);
  CHECK(h.core_of(3) == 3);
  CHECK(h.core_of(4) == 2);
}

TEST_CASE("l2_affinity fan-out: direct send fills the producer core's slots",
          "[policy][l2_affinity]") {
  // S1 to the producer's idle core; its pending slot is not open before S1's ACK, so S2 S3
  // S4 are staged, then shared. Thread 1's first batch is FIFO: S2. S4 and S3 are the last
  // wave: newest first, each waits for a fully idle core (S4 core 3, S3 core 2).
  const TaskGraph g = make_graph(fan_out());
  PolicyHarness h(g, two_threads(), "l2_affinity");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 1, 2, 4, 3});
  CHECK(h.core_of(1) == 2);
  CHECK(h.core_of(2) == 3);
  CHECK(h.core_of(4) == 3);
  CHECK(h.core_of(3) == 2);
  CHECK(h.start_of(4) >= h.end_of(2));
  CHECK(h.start_of(3) >= h.end_of(1));
}

TEST_CASE("l2_affinity: a release shared by three threads, as a board swimlane shows it",
          "[policy][l2_affinity]") {
  // Three threads, two AIC cores each (thread 0: 0 1, thread 1: 2 3, thread 2: 4 5). At the
  // device task's start the AIC queue holds I0..I3 (tasks 1..4, 100 ticks): threads 0 and 1
  // take two each, their first batches; thread 2 takes none. Thread 0 also takes the AIV task
  // P (task 0, 200 ticks), which releases S1..S6 (tasks 5..10) in that order when it ends, all
  // AIC cores idle by then. Thread 0 sends S1 and S2 straight to its idle cores, the most
  // recently freed first (cores found idle in one poll round join in index order: core 1,
  // then 0); no pending slot is open before an ACK, so S3..S6 go to the shared queue in
  // release order. Thread 1 pops newest first: S6 to core 3, S5 to core 2; thread 2's pop is
  // its first batch, oldest first: S3 to core 4 (at the start the lowest core), S4 to core 5.
  // Whichever of threads 1 and 2 comes first, the split is the same. The public board
  // swimlane in docs/fidelity.md shows this order for 20 AIC tasks over 24 cores.
  std::vector<TaskSpec> specs{{V, {5, 6, 7, 8, 9, 10}, 0, 200}};
  for (int i = 0; i < 4; ++i) specs.push_back(TaskSpec{C, {}});
  for (int i = 0; i < 6; ++i) specs.push_back(TaskSpec{C, {}});
  const TaskGraph g = make_graph(specs);
  PolicyHarness h(g, {6, 12, 3, 256, 1}, "l2_affinity");
  h.run();
  const std::vector<CoreId> core{0, 0, 1, 2, 3, 1, 0, 4, 5, 2, 3};
  for (TaskId t = 1; t < 11; ++t) {
    INFO("task " << t);
    CHECK(h.core_of(t) == core[t]);
  }
  CHECK(h.core_of(0) == 6);  // thread 0's first AIV core
  for (TaskId t = 5; t < 11; ++t) CHECK(h.start_of(t) >= h.end_of(0));
}

TEST_CASE("l2_fair fan-out: direct send without pending prefill, newest-first pops",
          "[policy][l2_fair]") {
  // S1 direct to the idle producer core; no pending slot while thread 1 idles, so S2 is
  // flushed to the dry queue, S3 S4 follow. Thread 1's first batch takes S2 (FIFO), then
  // pops newest first: S4 into its pending slot; thread 0 prefills S3.
  const TaskGraph g = make_graph(fan_out());
  PolicyHarness h(g, two_threads(), "l2_fair");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 1, 2, 4, 3});
  CHECK(h.core_of(1) == 2);
  CHECK(h.core_of(2) == 3);
  CHECK(h.core_of(4) == 3);
  CHECK(h.core_of(3) == 2);
}

TEST_CASE("HUB nodes are resolved inline and never dispatched", "[scheduler]") {
  // T0 -> HUB -> {T2, T3}; the HUB (task 1) never reaches a core. Resolving it stages
  // T2 then T3; the flush sends the newest (T3) to the idle core, T2 queues behind it.
  const TaskGraph g = make_graph({{V, {1}}, {CoreType::kHub, {2, 3}}, {V, {}}, {V, {}}});
  PolicyHarness h(g, one_core(), "fifo");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{0, 3, 2});
}

TEST_CASE("a zero-predecessor HUB is resolved when the device task is admitted", "[scheduler]") {
  const TaskGraph g = make_graph({{CoreType::kHub, {1, 2}}, {V, {}}, {C, {}}});
  PolicyHarness h(g, one_core(), "fifo");
  h.run();
  CHECK(h.order() == std::vector<TaskId>{2, 1});  // AIC is dispatched first in a round
}

TEST_CASE("device tasks run one after another", "[scheduler]") {
  // Device task 1's task may start only after device task 0 drained and the barrier passed,
  // although it has no dependency on it.
  const TaskGraph g = make_graph({{V, {}, 0, 100}, {V, {}, 0, 300}, {V, {}, 1, 100}});
  PolicyHarness h(g, two_threads(), "fifo");
  h.run();
  REQUIRE(h.done_device_tasks() == std::vector<DeviceTaskId>{0, 1});
  CHECK(h.start_of(2) >= h.end_of(1));
  CHECK(h.start_of(2) >= h.end_of(0));
}

TEST_CASE("parallel-loop device tasks overlap up to the parallelism", "[scheduler]") {
  // Two device tasks of parallel group 1, one task each: with parallelism 2 the second
  // starts before the first ends; with parallelism 1 it waits.
  const std::vector<TaskSpec> specs = {{V, {}, 0, 500, 1}, {V, {}, 1, 500, 1}};
  const TaskGraph g = make_graph(specs);
  MachineShape par = two_threads();
  par.parallelism = 2;
  PolicyHarness hp(g, par, "fifo");
  hp.run();
  CHECK(hp.start_of(1) < hp.end_of(0));
  PolicyHarness hs(g, two_threads(), "fifo");
  hs.run();
  CHECK(hs.start_of(1) >= hs.end_of(0));
}

TEST_CASE("cores of a type the chip lacks are a configuration error", "[scheduler]") {
  const TaskGraph g = make_graph({{C, {}}});
  auto p = Registry::global().create("fifo");
  CHECK_THROWS_WITH(Scheduler(g, MachineShape{0, 2, 1, 256, 1}, *p),
                    Catch::Matchers::Contains("has 1 AIC tasks but the chip has no AIC cores"));
}

TEST_CASE("registry: names, duplicates and suggestions", "[registry]") {
  Registry& r = Registry::global();
  for (const char* n : {"fifo", "l2_affinity", "fair", "l2_fair"}) CHECK(r.contains(n));
  CHECK_THROWS_WITH(r.create("l2_afinity"),
                    Catch::Matchers::Contains("did you mean 'l2_affinity'"));
  Registry local;
  register_builtin(local);
  CHECK_THROWS_WITH(local.add("fifo", "again", [&r] { return r.create("fifo"); }),
                    Catch::Matchers::Contains("already registered"));
}

TEST_CASE("runtime options: modes, names and ranges", "[options]") {
  CHECK(policy_for_mode(0) == "fifo");
  CHECK(policy_for_mode(3) == "l2_fair");
  CHECK(parse_policy("1") == "l2_affinity");
  CHECK(parse_policy("fair") == "fair");
  CHECK_THROWS_WITH(parse_policy("4"), Catch::Matchers::Contains("out of range [0, 3]"));
  CHECK_THROWS_WITH(parse_policy("1x"), Catch::Matchers::Contains("neither a number"));
  RuntimeOptions o;
  o.stitch_function_max_num = 0;
  CHECK_THROWS_WITH(
      validate(o),
      Catch::Matchers::Contains("runtime.stitch_function_max_num: 0 is out of range [1, 1024]"));
  o = RuntimeOptions{};
  o.device_sched_parallelism = 9;
  CHECK_THROWS_WITH(validate(o), Catch::Matchers::Contains("device_sched_parallelism: 9"));
  o = RuntimeOptions{};
  o.launch_early_mode = 3;
  CHECK_THROWS_WITH(validate(o), Catch::Matchers::Contains("launch_early_mode: 3"));
}
