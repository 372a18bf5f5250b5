// SPDX-License-Identifier: Apache-2.0
// A native trace streamed into its run (GraphFeed, simulate(GraphFeed&)) gives what the
// whole read and simulate(graph) give: the graph, every statistic and every task's times,
// under every built-in policy; and the errors a whole read gives, in its order, even when
// the run has started and fails first on the part it has.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>

#include "../common/same_graph.h"
#include "../common/temp_dir.h"
#include "pypto/common/errors.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/registry.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/sim/trace/graph_feed.h"
#include "pypto/sim/trace/synthetic.h"
#include "pypto/sim/trace/trace_loader.h"

using namespace pypto;
using pypto::testing::TempDir;

namespace {

std::string synthetic(const TempDir& dir, const sim::SyntheticSpec& spec) {
  std::ostringstream text;
  sim::write_synthetic_trace(spec, text);
  return dir.write(spec.shape + ".ndjson", text.str());
}

sim::SimOptions options(const std::string& policy) {
  sim::SimOptions o;
  o.runtime.policy = policy;
  o.record_timeline = true;
  return o;
}

// The whole read and run against the streamed one; stats.json compared as written (its
// wall-clock fields aside) and the timeline task by task.
// The AICPU spans (control-flow builds and schedule-thread rounds, in the order kept) and
// the ready-queue samples, field by field.
void check_same_aicpu(const sim::Timeline& a, const sim::Timeline& b) {
  const auto span = [](const sim::AicpuSpan& s) {
    return std::make_tuple(s.thread, s.start_ps, s.end_ps, s.completions, s.dispatches);
  };
  const auto sample = [](const sim::DepthSample& d) {
    return std::make_tuple(d.time_ps, d.aic, d.aiv);
  };
  REQUIRE(a.aicpu.size() == b.aicpu.size());
  for (std::size_t i = 0; i < a.aicpu.size(); ++i) {
    INFO("AICPU span " << i);
    CHECK(span(a.aicpu[i]) == span(b.aicpu[i]));
  }
  CHECK(a.aicpu_truncated == b.aicpu_truncated);
  REQUIRE(a.depth.size() == b.depth.size());
  for (std::size_t i = 0; i < a.depth.size(); ++i) {
    INFO("ready-queue sample " << i);
    CHECK(sample(a.depth[i]) == sample(b.depth[i]));
  }
}

void check_streamed_equals_whole(
    const std::string& path, const std::string& policy, sched::RuntimeOptions runtime = {},
    std::size_t max_aicpu_events = sim::SimOptions{}.max_aicpu_events) {
  const sim::ChipConfig chip = cfg::load_chip_preset("a2");
  sim::LoadOptions lo;
  lo.runtime = runtime;
  runtime.policy = policy;
  sim::SimOptions opt = options(policy);
  opt.runtime = runtime;
  opt.max_aicpu_events = max_aicpu_events;
  const sim::LoadedTrace whole = sim::load_trace(path, lo, chip);
  const sim::SimResult a = sim::simulate(whole.graph, chip, opt);
  const std::unique_ptr<sim::GraphFeed> feed = sim::start_trace_feed(path, lo, chip);
  const sim::SimResult b = sim::simulate(*feed, chip, opt);
  REQUIRE(feed->ended());
  pypto::testing::check_same_graph(whole.graph, feed->graph());
  CHECK(whole.graph.source == feed->graph().source);
  CHECK(a.timeline.start_ps == b.timeline.start_ps);
  CHECK(a.timeline.end_ps == b.timeline.end_ps);
  CHECK(a.timeline.core == b.timeline.core);
  check_same_aicpu(a.timeline, b.timeline);
  sim::SimResult a2 = a, b2 = b;
  a2.stats.wall_s = b2.stats.wall_s = 0;
  CHECK(sim::stats_json(a2).dump() == sim::stats_json(b2).dump());
  CHECK(a.stats.makespan_ps == b.stats.makespan_ps);
  CHECK(a.stats.sim_events == b.stats.sim_events);
}

// The message of what `run` raises.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

std::string whole_error(const std::string& path, const sim::ChipConfig& chip,
                        const sched::RuntimeOptions& rt = {}) {
  return error_of([&] {
    sim::LoadOptions lo;
    lo.runtime = rt;
    const sim::LoadedTrace t = sim::load_trace(path, lo, chip);
    sim::SimOptions o = options("fifo");
    o.runtime = rt;
    sim::simulate(t.graph, chip, o);
  });
}

std::string streamed_error(const std::string& path, const sim::ChipConfig& chip,
                           const sched::RuntimeOptions& rt = {}) {
  return error_of([&] {
    sim::LoadOptions lo;
    lo.runtime = rt;
    const auto feed = sim::start_trace_feed(path, lo, chip);
    sim::SimOptions o = options("fifo");
    o.runtime = rt;
    sim::simulate(*feed, chip, o);
  });
}

// Root r has tasks 2r, 2r+1 (a chain inside the root); each root is a device task of its own
// (stitch_function_max_num 1). `extra` replaces the successors of chosen tasks.
std::string two_task_roots(int roots, const std::map<int, std::string>& succ_of) {
  std::string text =
      "{\"format\":\"pypto-sim-trace\",\"version\":1,\"tasks\":" + std::to_string(2 * roots) +
      "}\n";
  for (int t = 0; t < 2 * roots; ++t) {
    const auto it = succ_of.find(t);
    const std::string succ = it != succ_of.end() ? it->second
                             : t % 2 == 0        ? "[" + std::to_string(t + 1) + "]"
                                                 : "[]";
    text += "{\"id\":" + std::to_string(t) + ",\"core\":\"" + (t % 3 == 0 ? "AIC" : "AIV") +
            "\",\"root\":" + std::to_string(t / 2) + ",\"succ\":" + succ + ",\"dur\":100}\n";
  }
  return text;
}

}  // namespace

TEST_CASE("a streamed native trace runs as the whole one, under every built-in policy") {
  TempDir dir;
  sim::SyntheticSpec spec;
  spec.tasks = 30000;  // ~30 device tasks of 1024: the run starts long before the end
  const std::string mix = synthetic(dir, spec);
  for (const char* policy :
       {"fifo", "l2_affinity", "fair", "l2_fair", "critical_path", "work_stealing", "random"}) {
    INFO(policy);
    check_streamed_equals_whole(mix, policy);
  }
}

TEST_CASE("streamed: recorded times, other shapes, parallel groups and small device tasks") {
  TempDir dir;
  sim::SyntheticSpec spec;
  spec.tasks = 12000;
  spec.recorded = true;
  for (const char* shape : {"loops", "fanout", "chain", "independent"}) {
    INFO(shape);
    spec.shape = shape;
    sched::RuntimeOptions rt;
    rt.stitch_function_max_num = 3;  // many small device tasks
    check_streamed_equals_whole(synthetic(dir, spec), "l2_fair", rt);
  }
  // Native start/end (the replay metrics), HUBs, AICPU tasks, a parallel group, edges into
  // later device tasks (dropped) and a trace without a task count in its header.
  const std::string text =
      "{\"format\":\"pypto-sim-trace\",\"version\":1}\n"
      "{\"id\":0,\"core\":\"AIC\",\"root\":0,\"succ\":[1,5],\"start\":100,\"end\":300}\n"
      "{\"id\":1,\"core\":\"HUB\",\"root\":0,\"succ\":[2]}\n"
      "{\"id\":2,\"core\":\"AIV\",\"root\":1,\"start\":350,\"end\":500}\n"
      "{\"id\":3,\"core\":\"AICPU\",\"root\":2,\"pg\":1,\"succ\":[4],\"dur\":50}\n"
      "{\"id\":4,\"core\":\"AIV\",\"root\":2,\"pg\":1,\"start\":600,\"end\":700}\n"
      "{\"id\":5,\"core\":\"AIV\",\"root\":3,\"pg\":1,\"start\":650,\"end\":720}\n"
      "{\"id\":6,\"core\":\"AIC\",\"root\":4,\"start\":800,\"end\":900}\n";
  sched::RuntimeOptions rt;
  rt.stitch_function_max_num = 1;
  rt.device_sched_parallelism = 2;
  check_streamed_equals_whole(dir.write("mixed.ndjson", text), "fifo", rt);
}

TEST_CASE("the control flow's builds: spans at the running sum of build costs, in build order") {
  // Three device tasks of 2, 1 and 3 tasks (one root each). The control flow builds all
  // three before anything is dispatched (its submit queue holds 64): the first three AICPU
  // spans are its builds, back to back, each the build cost plus the stitch cost per task;
  // the same when the trace is streamed and the builds are worked out at admission.
  const std::string text =
      "{\"format\":\"pypto-sim-trace\",\"version\":1,\"tasks\":6}\n"
      "{\"id\":0,\"core\":\"AIC\",\"root\":0,\"succ\":[1],\"dur\":100}\n"
      "{\"id\":1,\"core\":\"AIV\",\"root\":0,\"dur\":100}\n"
      "{\"id\":2,\"core\":\"AIV\",\"root\":1,\"dur\":100}\n"
      "{\"id\":3,\"core\":\"AIC\",\"root\":2,\"succ\":[4,5],\"dur\":100}\n"
      "{\"id\":4,\"core\":\"AIV\",\"root\":2,\"dur\":100}\n"
      "{\"id\":5,\"core\":\"AIV\",\"root\":2,\"dur\":100}\n";
  TempDir dir;
  const std::string path = dir.write("three.ndjson", text);
  const sim::ChipConfig chip = cfg::load_chip_preset("a2");
  const sim::DerivedTiming tm = sim::derive(chip);
  sim::LoadOptions lo;
  lo.runtime.stitch_function_max_num = 1;
  sim::SimOptions opt = options("fifo");
  opt.runtime = lo.runtime;
  const sim::LoadedTrace whole = sim::load_trace(path, lo, chip);
  REQUIRE(whole.graph.device_tasks.size() == 3);
  const sim::SimResult r = sim::simulate(whole.graph, chip, opt);
  const auto& spans = r.timeline.aicpu;
  REQUIRE(spans.size() > 3);
  const std::uint32_t control = r.stats.sched_threads;
  const std::uint64_t sizes[] = {2, 1, 3};
  for (int k = 0; k < 3; ++k) {
    INFO("build " << k);
    CHECK(spans[k].thread == control);
    CHECK(spans[k].end_ps - spans[k].start_ps ==
          tm.device_task_build_ps + sizes[k] * tm.stitch_per_task_ps);
    if (k > 0) CHECK(spans[k].start_ps == spans[k - 1].end_ps);
  }
  for (std::size_t i = 3; i < spans.size(); ++i) CHECK(spans[i].thread < control);
  CHECK(r.stats.control_busy_ps == spans[2].end_ps - spans[0].start_ps);
  check_streamed_equals_whole(path, "fifo", lo.runtime);
}

TEST_CASE("streamed: AICPU spans cut at the same place when the trace ends within the queue") {
  // Five device tasks. Streamed, the control flow starts building 64 before it knows the
  // trace has five, and keeps places for their spans; with room for 8 spans, the schedule
  // threads' spans find the places of the builds the trace does not have given back.
  TempDir dir;
  const std::string path = dir.write("five.ndjson", two_task_roots(5, {}));
  sched::RuntimeOptions rt;
  rt.stitch_function_max_num = 1;
  for (std::size_t room : {1, 4, 5, 6, 8, 70}) {
    INFO("room for " << room << " spans");
    check_streamed_equals_whole(path, "fifo", rt, room);
  }
}

TEST_CASE("a policy that reads ahead gets the whole graph before the run") {
  struct Ahead final : sched::Policy {
    std::size_t seen = 0;
    std::size_t* out;
    explicit Ahead(std::size_t* o) : out(o) {}
    void setup(const sched::MachineView& m) override { *out = m.graph().num_tasks(); }
  };
  static std::size_t seen = 0;
  sched::Registry::global().add("test_reads_ahead", "sizes its state by num_tasks()",
                                [] { return std::make_unique<Ahead>(&seen); });
  TempDir dir;
  sim::SyntheticSpec spec;
  spec.tasks = 20000;
  const std::string path = synthetic(dir, spec);
  check_streamed_equals_whole(path, "test_reads_ahead");
  CHECK(seen == 20000);  // at setup, in the streamed run too (the last one)
  sched::Registry::global().remove("test_reads_ahead");
}

TEST_CASE("streamed: the reading reserves the run's graph apart and hands it over") {
  // The run looks at its graph (empty) before its first device task arrives, so the
  // reading thread must not write that graph: it reserves another, which the run takes with
  // the first device task (the reservation saves growing by doubling). A write to the run's
  // graph there was a data race (ThreadSanitizer, simulate(GraphFeed&) called at once).
  TempDir dir;
  sim::SyntheticSpec spec;
  spec.tasks = 20000;  // 20 device tasks of ~1,000 tasks: reserved for the header's count
  const std::string path = synthetic(dir, spec);
  const sim::ChipConfig chip = cfg::load_chip_preset("a2");
  const std::unique_ptr<sim::GraphFeed> feed = sim::start_trace_feed(path, {}, chip);
  REQUIRE(feed->streams());  // returns once the first device task is queued
  CHECK(feed->graph().core_type.capacity() == 0);
  CHECK(feed->graph().succ.capacity() == 0);
  REQUIRE(feed->append_next());
  CHECK(feed->graph().num_tasks() > 0);
  CHECK(feed->graph().core_type.capacity() >= 20000);
  feed->complete();
  CHECK(feed->graph().num_tasks() == 20000);
}

TEST_CASE("streamed: the errors of a whole read, in its order, even after the run started") {
  TempDir dir;
  const sim::ChipConfig chip = cfg::load_chip_preset("a2");
  sched::RuntimeOptions one;
  one.stitch_function_max_num = 1;
  // A cycle in device task 1 and an edge back in time in device task 30: a whole read names
  // the edge back (finish() checks edges before cycles).
  const std::string both =
      dir.write("both.ndjson", two_task_roots(40, {{2, "[3]"}, {3, "[2]"}, {61, "[0]"}}));
  const std::string e1 = whole_error(both, chip, one);
  CHECK_THAT(e1, Catch::Matchers::Contains("task 61 (seqNo 30): successor task 0 is in device "
                                           "task seqNo 0, which runs earlier"));
  CHECK(streamed_error(both, chip, one) == e1);
  // The cycle alone.
  const std::string cycle = dir.write("cycle.ndjson", two_task_roots(40, {{2, "[3]"}, {3, "[2]"}}));
  const std::string e2 = whole_error(cycle, chip, one);
  CHECK_THAT(e2,
             Catch::Matchers::Contains("dependency cycle in seqNo 1: task 2 -> task 3 -> task 2"));
  CHECK(streamed_error(cycle, chip, one) == e2);
  // A successor beyond the last task, a bad line near the end, and a truncated file: the
  // run has simulated the device tasks before them by then.
  std::string text = two_task_roots(3000, {{5, "[999999]"}});
  const std::string range = dir.write("range.ndjson", text);
  CHECK_THAT(whole_error(range, chip), Catch::Matchers::Contains("lists successor 999999"));
  CHECK(streamed_error(range, chip) == whole_error(range, chip));
  text = two_task_roots(3000, {});
  const std::string bad = dir.write("bad.ndjson", text + "{\"id\":6000,\"core\":\"XYZ\"}\n");
  CHECK_THAT(whole_error(bad, chip), Catch::Matchers::Contains("bad.ndjson:6002:"));
  CHECK(streamed_error(bad, chip) == whole_error(bad, chip));
  const std::string cut = dir.write("cut.ndjson", text.substr(0, text.size() / 2));
  CHECK(streamed_error(cut, chip) == whole_error(cut, chip));
  // A chip without vector cores: the message counts the whole trace's AIV tasks.
  sim::ChipConfig no_aiv = chip;
  no_aiv.cores.aiv_per_aic = 0;
  const std::string ok = dir.write("ok.ndjson", text);
  const std::string e3 = whole_error(ok, no_aiv);
  CHECK_THAT(e3, Catch::Matchers::Contains("the first of 4000"));
  CHECK(streamed_error(ok, no_aiv) == e3);
  // A missing file.
  CHECK(streamed_error(dir.path() + "/none.ndjson", chip) ==
        whole_error(dir.path() + "/none.ndjson", chip));
}
