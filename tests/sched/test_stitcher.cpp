// SPDX-License-Identifier: Apache-2.0
// sched::Stitcher with roots that know their workspace (the compiler's use) and the
// workspace formula shared with the simulator's trace estimate. The per-task form used by
// trace importers (stitch_device_tasks) is tested in test_task_graph.cpp.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/sched/stitcher.h"
#include "pypto/sched/workspace.h"

using Catch::Matchers::Contains;
using pypto::ConfigError;
using namespace pypto::sched;

namespace {

StitchRoot serial(std::uint32_t tasks, std::uint64_t bytes, bool barrier = false) {
  StitchRoot r;
  r.num_tasks = tasks;
  r.workspace_bytes = bytes;
  r.barrier = barrier;
  return r;
}

// Roots per device task, in order.
std::vector<std::uint32_t> sizes(const std::vector<std::uint32_t>& device_task) {
  std::vector<std::uint32_t> n;
  for (const std::uint32_t d : device_task) {
    if (d == n.size()) n.push_back(0);
    ++n.back();
  }
  return n;
}

std::vector<StitchRoot> serial_roots(std::size_t n) {
  return std::vector<StitchRoot>(n, serial(1, 0));
}

StitchResult stitch_with(const RuntimeOptions& o, const std::vector<StitchRoot>& roots) {
  return Stitcher(o, WorkspaceModel{}, true).stitch(roots);
}

StitchRoot parallel(std::uint32_t group, std::uint32_t iter, std::uint64_t bytes,
                    std::uint32_t tasks = 1) {
  StitchRoot r = serial(tasks, bytes);
  r.parallel_group = group;
  r.parallel_iteration = iter;
  r.loc = "k.py:7";
  return r;
}

}  // namespace

TEST_CASE("workspace formula: fixed bytes, copies per device task, rounded minimum") {
  const WorkspaceModel m{1024, 2, 2, 1024};
  const WorkspaceFigures f = workspace_figures(m, {{3000, false}, {5000, true}}, 2500);
  CHECK(f.peak_bytes == 1024 + 2 * 5000);
  CHECK(f.minimum_bytes == 6144);               // align_up(1024 + 2 * 2500, 1024)
  CHECK(workspace_total(m, 2500, 4) == 21504);  // align_up(1024 + 2 * 4 * 2500, 1024)
  // The trace estimate's model: a serial device task is charged once, a parallel one per copy.
  const WorkspaceModel est{0, 1, 4, 1};
  const WorkspaceFigures e = workspace_figures(est, {{3000, false}, {500, true}}, 2500);
  CHECK(e.peak_bytes == 3000);
  CHECK(e.minimum_bytes == 2500);
  CHECK(workspace_figures(est, {}, 0).peak_bytes == 0);
}

TEST_CASE("Stitcher: root count, bases and figures (the header's example)") {
  RuntimeOptions o;
  o.stitch_function_max_num = 2;
  const StitchResult s =
      Stitcher(o, WorkspaceModel{}, true).stitch({serial(1, 100), serial(1, 100), serial(1, 100)});
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 0, 1});
  CHECK(s.base_bytes == std::vector<std::uint64_t>{0, 100, 0});
  CHECK(s.num_device_tasks == 2);
  CHECK(s.pool_slice_bytes == 200);
  CHECK(s.workspace.peak_bytes == 200);
  CHECK(s.workspace.minimum_bytes == 100);
  REQUIRE(s.log.size() == 2);
  CHECK(s.log[0] ==
        "Recommended: set max_workspace_kb near 0KB and above 0KB to activate memory-driven "
        "mode.");
  CHECK(s.log[1] ==
        "[workspaceSize] stitch depth: k_eff=2 stitchNumMax=2 stitch_1=100 max_workspace_kb=0 "
        "memory_driven=0");
  CHECK(Stitcher(o, WorkspaceModel{}, true).stitch({}).num_device_tasks == 0);
}

TEST_CASE("Stitcher: a barrier root (submit_before_loop) starts a device task") {
  const StitchResult s = Stitcher(RuntimeOptions{}, WorkspaceModel{}, true)
                             .stitch({serial(1, 0), serial(1, 0, true), serial(1, 0)});
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 1, 1});
}

TEST_CASE("Stitcher: memory-driven mode fills device tasks up to the budget") {
  RuntimeOptions o;
  o.max_workspace_kb = 4;  // 4096 bytes: fixed 1024, then 3072 of pool
  const WorkspaceModel m{1024, 1, 1, 1024};
  std::vector<StitchRoot> roots(5, serial(1, 1000));
  const StitchResult s = Stitcher(o, m, true).stitch(roots);
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 0, 0, 1, 1});
  CHECK(s.base_bytes == std::vector<std::uint64_t>{1024, 2024, 3024, 1024, 2024});
  CHECK(s.workspace.peak_bytes == 4024);
  CHECK(s.workspace.minimum_bytes == 2048);  // align_up(1024 + 1000, 1024)
  REQUIRE(s.log.size() == 1);                // no recommendation in memory-driven mode
  CHECK(s.log[0] ==
        "[workspaceSize] stitch depth: k_eff=3 stitchNumMax=128 stitch_1=2048 "
        "max_workspace_kb=4 memory_driven=1");
  // Traces (sizes unknown) ignore the budget and stitch by root count.
  CHECK(Stitcher(o, m, false).stitch(roots).num_device_tasks == 1);
}

TEST_CASE("Stitcher: a budget at or below the minimum is PyPTO's ConfigError") {
  RuntimeOptions o;
  o.max_workspace_kb = 2;
  const WorkspaceModel m{1024, 1, 1, 1024};
  CHECK_THROWS_AS(Stitcher(o, m, true).stitch({serial(1, 1000)}), ConfigError);
  CHECK_THROWS_WITH(Stitcher(o, m, true).stitch({serial(1, 1000)}),
                    Contains("max_workspace_kb=2KB must be greater than the minimum runnable "
                             "workspace=2KB"));
}

TEST_CASE("Stitcher: one device task per parallel iteration, in its slice of the pool") {
  const WorkspaceModel m{0, 2, 2, 1};
  const StitchResult s = Stitcher(RuntimeOptions{}, m, true)
                             .stitch({serial(1, 50), parallel(1, 0, 10), parallel(1, 0, 20),
                                      parallel(1, 1, 30), parallel(1, 2, 40), serial(1, 5)});
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 1, 1, 2, 3, 4});
  // pool slice = 50 (the serial device task); iteration i lives in slice i % 2.
  CHECK(s.pool_slice_bytes == 50);
  CHECK(s.base_bytes == std::vector<std::uint64_t>{0, 0, 10, 50, 0, 0});
  CHECK(s.workspace.peak_bytes == 100);
}

TEST_CASE("Stitcher: a parallel iteration larger than one device task is a ConfigError") {
  std::vector<StitchRoot> roots{parallel(1, 0, 0, 40000), parallel(1, 0, 0, 30000)};
  CHECK_THROWS_AS(Stitcher(RuntimeOptions{}, WorkspaceModel{}, true).stitch(roots), ConfigError);
  CHECK_THROWS_WITH(Stitcher(RuntimeOptions{}, WorkspaceModel{}, true).stitch(roots),
                    Contains("k.py:7: one iteration of this parallel loop needs more than one "
                             "device task (2 roots, 70000 leaf tasks"));
}

TEST_CASE("Stitcher: a root above 60000 leaf tasks gets a device task and a log line") {
  const StitchResult s = Stitcher(RuntimeOptions{}, WorkspaceModel{}, true)
                             .stitch({serial(10, 0), serial(70000, 0), serial(10, 0)});
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 1, 2});
  REQUIRE(s.log.size() == 3);
  CHECK(s.log[2] ==
        "root 1 has 70000 leaf tasks, more than the 60000 of one device task; it gets a "
        "device task of its own");
}

TEST_CASE("Stitcher rejects stitch_function_max_num out of range") {
  RuntimeOptions o;
  o.stitch_function_max_num = 0;
  CHECK_THROWS_WITH(Stitcher(o, WorkspaceModel{}, true),
                    Contains("runtime.stitch_function_max_num: 0 is out of range [1, 1024]"));
}

TEST_CASE("Stitcher: legacy count mode, device task k holds min(1024, initial + k * step)") {
  RuntimeOptions o;
  set_runtime_option(o, "stitch_function_num_initial", std::int64_t{2});
  set_runtime_option(o, "stitch_function_num_step", std::int64_t{1});
  const StitchResult s = stitch_with(o, serial_roots(10));
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 0, 1, 1, 1, 2, 2, 2, 2, 3});
  // The most roots a device task can hold as the threshold grows: 1024 (outcast versions).
  CHECK_THAT(s.log[1], Contains("k_eff=1024 stitchNumMax=1024"));
  // Step 0 keeps the first count.
  o.stitch_function_num_step = 0;
  CHECK(sizes(stitch_with(o, serial_roots(7)).device_task) ==
        std::vector<std::uint32_t>{2, 2, 2, 1});
  CHECK(stitch_limits(o).max_roots == 2);
  // The threshold stops at 1024.
  o.stitch_function_num_initial = 1000;
  o.stitch_function_num_step = 100;
  CHECK(sizes(stitch_with(o, serial_roots(3000)).device_task) ==
        std::vector<std::uint32_t>{1000, 1024, 976});
}

TEST_CASE("Stitcher: a missing one of the older pair takes PyPTO's old default, 30") {
  RuntimeOptions o;
  o.stitch_function_num_step = 5;
  CHECK(sizes(stitch_with(o, serial_roots(70)).device_task) ==
        std::vector<std::uint32_t>{30, 35, 5});
  RuntimeOptions p;
  p.stitch_function_num_initial = 4;
  CHECK(sizes(stitch_with(p, serial_roots(40)).device_task) ==
        std::vector<std::uint32_t>{4, 34, 2});
}

TEST_CASE("Stitcher: stitch_function_max_num given supersedes the older pair, with a warning") {
  RuntimeOptions o;
  set_runtime_option(o, "stitch_function_num_initial", std::int64_t{2});
  set_runtime_option(o, "stitch_function_num_step", std::int64_t{1});
  set_runtime_option(o, "stitch_function_max_num", std::int64_t{3});
  const StitchResult s = stitch_with(o, serial_roots(10));
  CHECK(sizes(s.device_task) == std::vector<std::uint32_t>{3, 3, 3, 1});
  const std::string note =
      "runtime_options: stitch_function_num_initial=2, stitch_function_num_step=1 superseded "
      "by stitch_function_max_num=3 (PyPTO replaced the older options with it); device tasks "
      "hold up to 3 roots";
  CHECK(superseded_note(o) == note);
  REQUIRE(s.log.size() == 3);
  CHECK(s.log[2] == "warning: " + note);
  // Not given together: no note.
  o.stitch_function_max_num_given = false;
  CHECK(superseded_note(o).empty());
  CHECK(superseded_note(RuntimeOptions{}).empty());
}

TEST_CASE("Stitcher: stitch_function_size caps a device task's leaf tasks") {
  RuntimeOptions o;
  o.stitch_function_size = 8;
  const StitchResult s =
      stitch_with(o, {serial(3, 0), serial(3, 0), serial(3, 0), serial(3, 0), serial(5, 0)});
  CHECK(s.device_task == std::vector<std::uint32_t>{0, 0, 1, 1, 2});
  // A root larger than the cap on its own gets a device task of its own.
  const StitchResult big = stitch_with(o, {serial(2, 0), serial(10, 0), serial(2, 0)});
  CHECK(big.device_task == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(big.log.back() ==
        "root 1 has 10 leaf tasks, more than the 8 of one device task; it gets a device task "
        "of its own");
  // Not given: the runtime's 60000.
  CHECK(stitch_with(RuntimeOptions{}, {serial(3, 0), serial(30000, 0), serial(29997, 0)})
            .device_task == std::vector<std::uint32_t>{0, 0, 0});
}

TEST_CASE("Stitcher: in legacy mode a size-closed device task grows the threshold too") {
  RuntimeOptions o;
  o.stitch_function_num_initial = 2;
  o.stitch_function_num_step = 1;
  o.stitch_function_size = 5;
  // dt0 closes by count (threshold 2 -> 3), dt1 by size at 2 roots (3 -> 4).
  CHECK(stitch_with(o, {serial(1, 0), serial(1, 0), serial(1, 0), serial(4, 0), serial(1, 0),
                        serial(1, 0), serial(1, 0), serial(1, 0)})
            .device_task == std::vector<std::uint32_t>{0, 0, 1, 1, 2, 2, 2, 2});
  // A first root above the cap counts as a close even though no device task was open
  // (threshold 1 -> 2 before it, 2 -> 3 after it).
  o.stitch_function_num_initial = 1;
  CHECK(stitch_with(o, {serial(9, 0), serial(1, 0), serial(1, 0), serial(1, 0)}).device_task ==
        std::vector<std::uint32_t>{0, 1, 1, 1});
}

TEST_CASE("Stitcher: memory-driven mode takes precedence over the older pair") {
  RuntimeOptions o;
  o.max_workspace_kb = 1;  // 1024 bytes: 4 roots of 256
  const std::vector<StitchRoot> roots(10, serial(1, 256));
  const std::vector<std::uint32_t> plain = stitch_with(o, roots).device_task;
  CHECK(sizes(plain) == std::vector<std::uint32_t>{4, 4, 2});
  o.stitch_function_num_initial = 1;
  o.stitch_function_num_step = 1;
  CHECK(stitch_with(o, roots).device_task == plain);
}

TEST_CASE("stitch_device_tasks: traces follow the legacy rule and the size cap") {
  RuntimeOptions o;
  o.stitch_function_num_initial = 1;
  o.stitch_function_num_step = 1;
  CHECK(stitch_device_tasks({0, 1, 2, 2, 3, 4}, {0, 0, 0, 0, 0, 0}, o) ==
        std::vector<std::uint32_t>{0, 1, 1, 1, 2, 2});
  RuntimeOptions p;
  p.stitch_function_size = 2;
  CHECK(stitch_device_tasks({0, 1, 2, 2, 3}, {0, 0, 0, 0, 0}, p) ==
        std::vector<std::uint32_t>{0, 0, 1, 1, 2});
  p.stitch_function_num_initial = 0;
  CHECK_THROWS_WITH(stitch_device_tasks({0}, {0}, p),
                    Contains("runtime.stitch_function_num_initial: 0 is out of range [1, 1024]"));
}
