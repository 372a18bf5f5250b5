// SPDX-License-Identifier: Apache-2.0
// The synthetic graph written in every trace format (pypto_writers.h) reads back with the
// same tasks, and replays with the same makespan wherever the formats carry the same
// information: native and dyn_topo (device tasks, durations in whole board ticks), topo.json
// and the fixed-latency graph (one device task each).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "../common/temp_dir.h"
#include "pypto/common/errors.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/pypto_writers.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"

using namespace pypto;
using trace::TraceFormat;

namespace {

struct Replay {
  std::size_t tasks = 0, device_tasks = 0;
  std::uint64_t makespan_ps = 0;
};

Replay replay(const std::string& path, const std::string& prof, const model::ChipConfig& chip) {
  trace::LoadOptions lo;
  lo.prof_path = prof;
  const trace::LoadedTrace t = trace::load_trace(path, lo, chip);
  sim::SimOptions opt;
  const sim::SimResult r = sim::simulate(t.graph, chip, opt);
  return {t.graph.num_tasks(), t.graph.device_tasks.size(), r.stats.makespan_ps};
}

trace::SyntheticSpec spec_of(std::uint64_t tasks) {
  trace::SyntheticSpec s;
  s.tasks = tasks;
  s.recorded = true;
  s.memory = false;
  s.dur_step_ns = 20;  // one tick of the a2 board clock (50 MHz)
  return s;
}

}  // namespace

TEST_CASE("gen formats: every format replays the same tasks, makespans agree where they can") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  testing::TempDir dir;
  const std::string d = dir.path();
  // 70,000 tasks: more than one device task's 60,000, so dyn_topo holds several seqNos.
  const trace::SyntheticSpec s = spec_of(70'000);
  trace::write_synthetic_as(s, TraceFormat::kNative, chip, d + "/t.ndjson", "");
  trace::write_synthetic_as(s, TraceFormat::kDynTopo, chip, d + "/dyn_topo.txt", d + "/dyn.json");
  trace::write_synthetic_as(s, TraceFormat::kTopoJson, chip, d + "/topo.json",
                            d + "/topo_prof.json");
  trace::write_synthetic_as(s, TraceFormat::kFixedLatency, chip, d + "/fixed.json", "");

  CHECK(trace::detect_trace_format(d + "/dyn_topo.txt") == TraceFormat::kDynTopo);
  CHECK(trace::detect_trace_format(d + "/topo.json") == TraceFormat::kTopoJson);
  CHECK(trace::detect_trace_format(d + "/fixed.json") == TraceFormat::kFixedLatency);

  const Replay native = replay(d + "/t.ndjson", "", chip);
  const Replay dyn = replay(d + "/dyn_topo.txt", d + "/dyn.json", chip);
  const Replay topo = replay(d + "/topo.json", d + "/topo_prof.json", chip);
  const Replay fixed = replay(d + "/fixed.json", "", chip);
  for (const Replay* r : {&native, &dyn, &topo, &fixed}) CHECK(r->tasks == 70'000);
  CHECK(native.device_tasks >= 2);
  CHECK(dyn.device_tasks == native.device_tasks);
  CHECK(dyn.makespan_ps == native.makespan_ps);
  // One device task: nothing waits for a device task before it, so it runs no longer.
  CHECK(topo.device_tasks == 1);
  CHECK(fixed.device_tasks == 1);
  CHECK(topo.makespan_ps == fixed.makespan_ps);
  CHECK(topo.makespan_ps <= native.makespan_ps);
}

TEST_CASE("gen formats: the PyPTO formats need recorded durations and no memory") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  testing::TempDir dir;
  trace::SyntheticSpec s = spec_of(100);
  s.memory = true;
  CHECK_THROWS_AS(
      trace::write_synthetic_as(s, TraceFormat::kFixedLatency, chip, dir.path() + "/f.json", ""),
      ConfigError);
  s = spec_of(100);
  CHECK_THROWS_AS(
      trace::write_synthetic_as(s, TraceFormat::kDynTopo, chip, dir.path() + "/d.txt", ""),
      ConfigError);
  CHECK(!std::ifstream(dir.path() + "/f.json"));
  CHECK(!std::ifstream(dir.path() + "/d.txt"));
}

TEST_CASE("gen formats: dur_step_ns rounds recorded durations down to whole steps") {
  trace::SyntheticSpec s = spec_of(200);
  std::ostringstream a;
  trace::write_synthetic_trace(s, a);
  CHECK(a.str().find("dur_step_ns=20") != std::string::npos);
  std::istringstream in(a.str());
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    const auto p = line.find("\"dur\":");
    if (p == std::string::npos) continue;
    CHECK(std::stoul(line.substr(p + 6)) % 20 == 0);
    ++checked;
  }
  CHECK(checked == 200);
  s.dur_step_ns = 0;
  std::ostringstream b;
  CHECK_THROWS_AS(trace::write_synthetic_trace(s, b), ConfigError);
}
