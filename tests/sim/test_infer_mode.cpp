// SPDX-License-Identifier: Apache-2.0
// The device_sched_mode a recording ran under, read from its start times (infer_mode.h): a
// recording made by the model under a mode is replayed best under that mode.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "pypto/model/config_loader.h"
#include "pypto/sim/infer_mode.h"
#include "pypto/trace/native_writer.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"

using namespace pypto;

namespace {

// A 600-task mix graph replayed on a2 under `policy`, written with the simulated times as a
// native trace and loaded back: a recording whose mode is known.
trace::LoadedTrace recording(const model::ChipConfig& chip, const std::string& policy) {
  trace::SyntheticSpec spec;
  spec.shape = "mix";
  spec.tasks = 600;
  spec.seed = 7;
  spec.memory = false;
  spec.recorded = true;
  const std::string stem = "/tmp/pypto_infer_mode_" + std::to_string(::getpid()) + "_" + policy;
  {
    std::ofstream f(stem + "_graph.ndjson");
    trace::write_synthetic_trace(spec, f);
  }
  const trace::LoadedTrace graph = trace::load_trace(stem + "_graph.ndjson", {}, chip);
  sim::SimOptions opt;
  opt.runtime.policy = policy;
  const sim::SimResult r = sim::simulate(graph.graph, chip, opt);
  {
    std::ofstream f(stem + "_rec.ndjson");
    const trace::TaskTimes times{r.timeline.start_ps, r.timeline.end_ps};
    trace::write_native_trace(graph.graph, &times, chip.chip.name, "test", f);
  }
  trace::LoadedTrace rec = trace::load_trace(stem + "_rec.ndjson", {}, chip);
  std::remove((stem + "_graph.ndjson").c_str());
  std::remove((stem + "_rec.ndjson").c_str());
  return rec;
}

}  // namespace

TEST_CASE("infer_sched_mode: a recording made under L2 affinity is replayed under it") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const trace::LoadedTrace rec = recording(chip, "l2_affinity");
  REQUIRE(sim::can_infer_sched_mode(rec.graph));
  const sim::ModeInference m = sim::infer_sched_mode(rec.graph, chip, sched::RuntimeOptions{});
  REQUIRE(m.trials.size() == 4);
  CHECK(m.trials[0].policy == "fifo");
  CHECK(m.trials[1].policy == "l2_affinity");
  // Its own mode replays it to the ns its starts were written in; fifo starts tasks elsewhere.
  CHECK(m.trials[1].start_error_median_us < 0.005);
  CHECK(m.trials[0].start_error_median_us > 0.1);
  CHECK(m.policy == "l2_affinity");
}

TEST_CASE("infer_sched_mode: a tie goes to the lowest mode, fifo") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const trace::LoadedTrace rec = recording(chip, "fifo");
  const sim::ModeInference m = sim::infer_sched_mode(rec.graph, chip, sched::RuntimeOptions{});
  CHECK(m.trials[0].start_error_median_us < 0.005);
  CHECK(m.policy == "fifo");
}

TEST_CASE("infer_sched_mode: only recordings with start times, up to the probe limit") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  trace::LoadedTrace rec = recording(chip, "fifo");
  CHECK(sim::can_infer_sched_mode(rec.graph));
  rec.graph.recorded_start_ps.clear();
  CHECK_FALSE(sim::can_infer_sched_mode(rec.graph));
}
