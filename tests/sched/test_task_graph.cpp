// SPDX-License-Identifier: Apache-2.0
// TaskGraphBuilder (CSR, predecessor counts, device-task grouping, edge rules, cycles) and
// the stitcher.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/sched/stitcher.h"
#include "pypto/sched/task_graph.h"

using Catch::Matchers::Contains;
using pypto::ConfigError;
using pypto::TraceError;
using namespace pypto::common;
using namespace pypto::sched;

namespace {

struct Spec {
  std::uint32_t seq = 0;
  std::vector<TaskId> succ;
  CoreType core = CoreType::kAiv;
  std::uint32_t root = 0;
  std::uint32_t pg = 0;
};

// Task i of specs, with orig id i.
TaskGraphBuilder::Task task_of(const std::vector<Spec>& specs, std::size_t i) {
  TaskGraphBuilder::Task t;
  t.core_type = specs[i].core;
  t.device_task_seq = specs[i].seq;
  t.root = specs[i].root;
  t.orig_id = static_cast<std::uint32_t>(i);
  t.parallel_group = specs[i].pg;
  return t;
}

// Adds tasks with orig ids 0, 1, 2, ... (dense id == orig id before any reordering).
TaskGraphBuilder make_builder(const std::vector<Spec>& specs) {
  TaskGraphBuilder b("test");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    b.add_task(task_of(specs, i));
    for (const TaskId s : specs[i].succ) b.add_successor(s);
  }
  return b;
}

TaskGraph build(const std::vector<Spec>& specs) { return make_builder(specs).finish(); }

std::vector<TaskId> successors(const TaskGraph& g, TaskId t) {
  return std::vector<TaskId>(g.succ.begin() + g.succ_first(t), g.succ.begin() + g.succ_last(t));
}

}  // namespace

TEST_CASE("builder lays out successors as CSR and derives predecessor counts") {
  // Diamond 0 -> {1, 2} -> 3.
  const TaskGraph g = build({{0, {1, 2}, CoreType::kAiv},
                             {0, {3}, CoreType::kAic},
                             {0, {3}, CoreType::kAic},
                             {0, {}, CoreType::kHub}});
  REQUIRE(g.num_tasks() == 4);
  CHECK(g.succ_begin == std::vector<std::uint32_t>{0, 2, 3, 4, 4});
  CHECK(g.succ == std::vector<TaskId>{1, 2, 3, 3});
  CHECK(g.pred_count == std::vector<std::uint32_t>{0, 1, 1, 2});
  CHECK(g.num_edges() == 4);
  REQUIRE(g.device_tasks.size() == 1);
  const DeviceTask& d = g.device_tasks[0];
  CHECK(d.first_task == 0);
  CHECK(d.num_tasks == 4);
  CHECK(d.num_roots == 1);
  CHECK(d.seq_no == 0);
  CHECK(d.count[int(CoreType::kAiv)] == 1);
  CHECK(d.count[int(CoreType::kAic)] == 2);
  CHECK(d.count[int(CoreType::kHub)] == 1);
  CHECK(d.count[int(CoreType::kAicpu)] == 0);
  CHECK(g.device_task == std::vector<DeviceTaskId>{0, 0, 0, 0});
  CHECK_FALSE(g.has_memory());
  CHECK(g.mem_begin.empty());
  CHECK(g.source == "test");
}

TEST_CASE("builder interns kernel names and keeps per-task columns") {
  TaskGraphBuilder b("k");
  const std::uint32_t add = b.kernel_index("add");
  const std::uint32_t mm = b.kernel_index("matmul");
  CHECK(b.kernel_index("add") == add);
  CHECK(add != mm);
  TaskGraphBuilder::Task t;
  t.kernel = mm;
  t.orig_id = 1048577;
  t.recorded_ns = 6000;
  t.compute_cycles = 84;
  t.tiles = 3;
  b.add_task(t);
  const TaskGraph g = b.finish();
  CHECK(g.kernel_names == std::vector<std::string>{"add", "matmul"});
  CHECK(g.kernel[0] == mm);
  CHECK(g.orig_id[0] == 1048577);
  CHECK(g.recorded_ns[0] == 6000);
  CHECK(g.has_recorded(0));
  CHECK(g.compute_cycles[0] == 84);
  CHECK(g.tiles[0] == 3);
  CHECK(describe_task(g, 0) == "task 1048577 (seqNo 0)");
  CHECK(b.num_tasks() == 0);  // the builder is empty after finish()
  CHECK(g.memory_bytes() > 0);
}

TEST_CASE("memory ranges: the CSR appears with the first range and stays empty otherwise") {
  TaskGraphBuilder b("m");
  TaskGraphBuilder::Task t;
  b.add_task(t);
  b.add_task(t);
  b.add_memory({4096, 512, 0});
  b.add_memory({8192, 512, 1});
  b.add_task(t);
  b.add_task(t);
  b.add_memory({0, 64, 1});
  const TaskGraph g = b.finish();
  REQUIRE(g.has_memory());
  CHECK(g.mem_begin == std::vector<std::uint32_t>{0, 0, 2, 2, 3});
  REQUIRE(g.mem.size() == 3);
  CHECK(g.mem[1].addr == 8192);
  CHECK(g.mem[1].is_write == 1);
}

TEST_CASE("memory ranges added as a run: the same CSR as one at a time") {
  const std::vector<MemAccess> two = {{4096, 512, 0}, {8192, 512, 1}};
  TaskGraphBuilder b("m");
  TaskGraphBuilder::Task t;
  b.add_task(t);
  b.add_memory(two.data(), 0);  // no range: the CSR is not made yet
  CHECK(b.graph().mem_begin.empty());
  b.add_task(t);
  b.add_memory(two.data(), two.size());
  b.add_task(t);
  b.add_memory(two.data() + 1, 1);
  const TaskGraph g = b.finish();
  CHECK(g.mem_begin == std::vector<std::uint32_t>{0, 0, 2, 3});
  REQUIRE(g.mem.size() == 3);
  CHECK(g.mem[0].addr == 4096);
  CHECK(g.mem[1].addr == 8192);
  CHECK(g.mem[2].addr == 8192);
  CHECK(g.mem[2].is_write == 1);
}

TEST_CASE("tasks are grouped by device task in first-appearance order, stably") {
  // seqNo 5 and 7 interleave: 0(5) 1(7) 2(5) 3(7) 4(5). Edges inside each device task.
  TaskGraphBuilder b = make_builder({{5, {2}, CoreType::kAiv, 0},
                                     {7, {3}, CoreType::kAic, 1},
                                     {5, {4}, CoreType::kAiv, 0},
                                     {7, {}, CoreType::kAiv, 1},
                                     {5, {}, CoreType::kAic, 2}});
  // The same with memory: it follows its task through the reorder (task i reads address i).
  const TaskGraph g = [&] {
    TaskGraphBuilder b2("m");
    const std::vector<std::uint32_t> seq = {5, 7, 5, 7, 5};
    const std::vector<std::vector<TaskId>> succ = {{2}, {3}, {4}, {}, {}};
    for (std::uint32_t i = 0; i < 5; ++i) {
      TaskGraphBuilder::Task t;
      t.device_task_seq = seq[i];
      t.orig_id = 100 + i;
      t.root = i < 4 ? i % 2 : 2;
      b2.add_task(t);
      for (const TaskId s : succ[i]) b2.add_successor(s);
      for (std::uint32_t k = 0; k <= i % 2; ++k) b2.add_memory({100 + i, 64 + k, 0});
    }
    return b2.finish();
  }();
  // New order: 100, 102, 104 (seqNo 5) then 101, 103 (seqNo 7).
  CHECK(g.orig_id == std::vector<std::uint32_t>{100, 102, 104, 101, 103});
  CHECK(g.device_task == std::vector<DeviceTaskId>{0, 0, 0, 1, 1});
  REQUIRE(g.device_tasks.size() == 2);
  CHECK(g.device_tasks[0].seq_no == 5);
  CHECK(g.device_tasks[0].first_task == 0);
  CHECK(g.device_tasks[0].num_tasks == 3);
  CHECK(g.device_tasks[0].num_roots == 2);  // roots 0 and 2
  CHECK(g.device_tasks[1].seq_no == 7);
  CHECK(g.device_tasks[1].first_task == 3);
  CHECK(g.device_tasks[1].num_tasks == 2);
  CHECK(g.device_tasks[1].num_roots == 1);
  // Successor ids are remapped: 100 -> 102 is now 0 -> 1, 102 -> 104 is 1 -> 2, 101 -> 103
  // is 3 -> 4.
  CHECK(successors(g, 0) == std::vector<TaskId>{1});
  CHECK(successors(g, 1) == std::vector<TaskId>{2});
  CHECK(successors(g, 2).empty());
  CHECK(successors(g, 3) == std::vector<TaskId>{4});
  CHECK(g.pred_count == std::vector<std::uint32_t>{0, 1, 1, 0, 1});
  // Memory: tasks with odd orig id have two ranges.
  CHECK(g.mem_begin == std::vector<std::uint32_t>{0, 1, 2, 3, 5, 7});
  CHECK(g.mem[0].addr == 100);
  CHECK(g.mem[2].addr == 104);
  CHECK(g.mem[3].addr == 101);
  CHECK(g.mem[4].bytes == 65);
  CHECK(g.mem[6].addr == 103);

  // The builder of the interleaved specs gives the same grouping.
  const TaskGraph g2 = b.finish();
  CHECK(g2.orig_id == std::vector<std::uint32_t>{0, 2, 4, 1, 3});
}

TEST_CASE("edges into later device tasks are dropped, edges into earlier ones are errors") {
  // 0 -> 1 stays (same device task); 0 -> 2 and 1 -> 2 lead into seqNo 1: satisfied by the
  // serial order, dropped.
  const TaskGraph g = build({{0, {1, 2}}, {0, {2}}, {1, {}}});
  CHECK(g.num_edges() == 1);
  CHECK(successors(g, 0) == std::vector<TaskId>{1});
  CHECK(successors(g, 1).empty());
  CHECK(g.pred_count == std::vector<std::uint32_t>{0, 1, 0});
  CHECK(g.succ_begin == std::vector<std::uint32_t>{0, 1, 1, 1});

  CHECK_THROWS_WITH(build({{0, {}}, {1, {0}}}),
                    Contains("task 1 (seqNo 1): successor task 0 is in device task seqNo 0, "
                             "which runs earlier"));
}

TEST_CASE("a successor id that is not a task is an error naming the task") {
  CHECK_THROWS_AS(build({{0, {1}}, {0, {9}}}), TraceError);
  CHECK_THROWS_WITH(build({{0, {1}}, {3, {9}}}),
                    Contains("task 1 (seqNo 3): successor 9 is not a task of the trace"));
}

TEST_CASE("a dependency cycle is an error that prints the cycle") {
  // 0 -> 3 -> 5 -> 3 (the cycle), 5 -> 1; 2 and 4 are independent.
  CHECK_THROWS_WITH(build({{0, {3}}, {0, {}}, {0, {}}, {0, {5}}, {0, {}}, {0, {3, 1}}}),
                    Contains("dependency cycle in seqNo 0: task 3 -> task 5 -> task 3"));
  // A longer cycle, printed along the edges from its smallest task; device task 2 of 2.
  CHECK_THROWS_WITH(build({{1, {}}, {4, {2}}, {4, {3}}, {4, {1}}, {4, {}}}),
                    Contains("dependency cycle in seqNo 4: task 1 -> task 2 -> task 3 -> task 1"));
  // A self loop.
  CHECK_THROWS_WITH(build({{0, {1}}, {0, {1}}}),
                    Contains("dependency cycle in seqNo 0: task 1 -> task 1"));
}

TEST_CASE("edges to earlier tasks without a cycle are no error") {
  // 3 -> 1 -> 0 and 2 -> 0: every edge goes back, so the cycle check runs and finds none.
  const TaskGraph g = build({{0, {}}, {0, {0}}, {0, {0}}, {0, {1}}});
  CHECK(g.num_edges() == 3);
  CHECK(g.pred_count == std::vector<std::uint32_t>{2, 1, 0, 0});
}

TEST_CASE("a long cycle is abbreviated in the message, and the walk is iterative") {
  // A ring of 200000 tasks: a recursive walk would overflow the stack.
  constexpr std::uint32_t kN = 200000;
  TaskGraphBuilder b("ring");
  for (std::uint32_t i = 0; i < kN; ++i) {
    TaskGraphBuilder::Task t;
    t.orig_id = i;
    b.add_task(t);
    b.add_successor((i + 1) % kN);
  }
  CHECK_THROWS_WITH(b.finish(),
                    Contains("dependency cycle in seqNo 0: task 0 -> task 1 -> task 2 -> task 3 "
                             "-> task 4 -> task 5 -> task 6 -> task 7 -> ... (199989 more "
                             "tasks) -> task 199997 -> task 199998 -> task 199999 -> task 0"));
}

TEST_CASE("a device task may not mix parallel groups") {
  CHECK_THROWS_WITH(
      build({{3, {}, CoreType::kAiv, 0, 1}, {3, {}, CoreType::kAiv, 1, 2}}),
      Contains("device task seqNo 3 mixes parallel groups 1 (task 0) and 2 (task 1)"));
  const TaskGraph g = build({{0, {}, CoreType::kAiv, 0, 2}, {1, {}, CoreType::kAiv, 1, 2}});
  CHECK(g.device_tasks[0].parallel_group == 2);
  CHECK(g.device_tasks[1].parallel_group == 2);
}

TEST_CASE("set_device_task re-keys tasks before finish") {
  TaskGraphBuilder b = make_builder({{0, {1}}, {0, {2}}, {0, {}}});
  b.set_device_task(2, 9, 0);
  const TaskGraph g = b.finish();
  REQUIRE(g.device_tasks.size() == 2);
  CHECK(g.device_tasks[1].seq_no == 9);
  CHECK(g.num_edges() == 1);  // 1 -> 2 now leads into a later device task
}

TEST_CASE("distinct roots are counted per device task, also for sparse root ids") {
  const TaskGraph g = build({{0, {}, CoreType::kAiv, 0},
                             {0, {}, CoreType::kAiv, 0},
                             {0, {}, CoreType::kAiv, 3},
                             {1, {}, CoreType::kAiv, 3},
                             {1, {}, CoreType::kAiv, 4}});
  CHECK(g.device_tasks[0].num_roots == 2);
  CHECK(g.device_tasks[1].num_roots == 2);
  const TaskGraph sparse = build({{0, {}, CoreType::kAiv, 4000000000u},
                                  {0, {}, CoreType::kAiv, 7},
                                  {0, {}, CoreType::kAiv, 4000000000u}});
  CHECK(sparse.device_tasks[0].num_roots == 2);
}

TEST_CASE("a 1M-task chain builds in linear time") {
  constexpr std::uint32_t kN = 1000000;
  TaskGraphBuilder b("chain");
  for (std::uint32_t i = 0; i < kN; ++i) {
    TaskGraphBuilder::Task t;
    t.orig_id = i;
    t.device_task_seq = i / 1000;
    b.add_task(t);
    if (i + 1 < kN) b.add_successor(i + 1);
  }
  const TaskGraph g = b.finish();
  CHECK(g.num_tasks() == kN);
  CHECK(g.device_tasks.size() == 1000);
  CHECK(g.num_edges() == kN - 1000);  // the edge out of each device task's last task is dropped
  CHECK(g.pred_count[0] == 0);
  CHECK(g.pred_count[1] == 1);
  CHECK(g.pred_count[1000] == 0);
}

// ---- stitcher ----

TEST_CASE("stitcher closes a device task at stitch_function_max_num roots") {
  RuntimeOptions o;
  o.stitch_function_max_num = 2;
  CHECK(stitch_device_tasks({0, 0, 1, 1, 1, 2}, {0, 0, 0, 0, 0, 0}, o) ==
        std::vector<std::uint32_t>{0, 0, 0, 0, 0, 1});
  o.stitch_function_max_num = 1;
  CHECK(stitch_device_tasks({0, 0, 1, 1, 1, 2}, {0, 0, 0, 0, 0, 0}, o) ==
        std::vector<std::uint32_t>{0, 0, 1, 1, 1, 2});
  o.stitch_function_max_num = 128;
  CHECK(stitch_device_tasks({0, 0, 1, 1, 1, 2}, {0, 0, 0, 0, 0, 0}, o) ==
        std::vector<std::uint32_t>{0, 0, 0, 0, 0, 0});
  // Root ids need not be dense, only non-decreasing.
  CHECK(stitch_device_tasks({3, 9, 9, 40}, {0, 0, 0, 0}, o) ==
        std::vector<std::uint32_t>{0, 0, 0, 0});
  CHECK(stitch_device_tasks({}, {}, o).empty());
}

TEST_CASE("stitcher keeps a device task at or below 60000 leaf tasks") {
  RuntimeOptions o;  // 128 roots
  // Roots of 30000, 30000 and 30000 tasks: the first two fill 60000 exactly.
  std::vector<std::uint32_t> roots;
  for (std::uint32_t r = 0; r < 3; ++r) roots.insert(roots.end(), 30000, r);
  const std::vector<std::uint32_t> pg(roots.size(), 0);
  const auto dt = stitch_device_tasks(roots, pg, o);
  CHECK(dt[0] == 0);
  CHECK(dt[59999] == 0);
  CHECK(dt[60000] == 1);
  CHECK(dt[89999] == 1);

  // A root larger than the limit on its own gets a device task of its own.
  std::vector<std::uint32_t> big(10, 0);
  big.insert(big.end(), 70000, 1);
  big.insert(big.end(), 10, 2);
  const auto dt2 = stitch_device_tasks(big, std::vector<std::uint32_t>(big.size(), 0), o);
  CHECK(dt2[9] == 0);
  CHECK(dt2[10] == 1);
  CHECK(dt2[70009] == 1);
  CHECK(dt2[70010] == 2);
}

TEST_CASE("stitcher never puts more than 1024 roots in a device task") {
  RuntimeOptions o;
  o.stitch_function_max_num = 1024;
  std::vector<std::uint32_t> roots(2000);
  for (std::uint32_t i = 0; i < 2000; ++i) roots[i] = i;
  const auto dt = stitch_device_tasks(roots, std::vector<std::uint32_t>(2000, 0), o);
  CHECK(dt[1023] == 0);
  CHECK(dt[1024] == 1);
  CHECK(dt[1999] == 1);
}

TEST_CASE("stitcher: parallel-group roots get a device task each, groups never mix") {
  RuntimeOptions o;
  // roots 0,1 serial; 2,3 in parallel group 1; 4 serial again.
  const auto dt = stitch_device_tasks({0, 1, 1, 2, 3, 3, 4}, {0, 0, 0, 1, 1, 1, 0}, o);
  CHECK(dt == std::vector<std::uint32_t>{0, 0, 0, 1, 2, 2, 3});
}

TEST_CASE("stitcher rejects decreasing roots, split groups and a bad option") {
  RuntimeOptions o;
  CHECK_THROWS_WITH(stitch_device_tasks({0, 1, 0}, {0, 0, 0}, o),
                    Contains("task 2: root 0 follows root 1; roots must be non-decreasing"));
  CHECK_THROWS_AS(stitch_device_tasks({0, 1, 0}, {0, 0, 0}, o), TraceError);
  CHECK_THROWS_WITH(stitch_device_tasks({0, 0}, {0, 1}, o),
                    Contains("task 1 of root 0 is in parallel group 1 but task 0 of the same root "
                             "is in group 0"));
  o.stitch_function_max_num = 0;
  CHECK_THROWS_AS(stitch_device_tasks({0}, {0}, o), ConfigError);
  CHECK_THROWS_WITH(stitch_device_tasks({0}, {0}, o),
                    Contains("runtime.stitch_function_max_num: 0 is out of range [1, 1024]"));
  o.stitch_function_max_num = 1025;
  CHECK_THROWS_AS(stitch_device_tasks({0}, {0}, o), ConfigError);
}
