// SPDX-License-Identifier: Apache-2.0
// trace.json as viewers read it: every event has a cat, flow events sit on their slices'
// (cat, pid, tid, ts) so that Chrome DevTools binds the arrows, times are whole ns, and
// back-to-back slices meet exactly when ts + dur is added in doubles. What is left out is
// said (trace_notes). tools/check_viewers.sh runs the real viewers on the same output.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "../common/temp_dir.h"
#include "graph_helpers.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"

using namespace pypto;
using pypto::testing::graph_of;
using pypto::testing::T;
using sched::CoreType;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// A fan-out and a chain over both core types, recorded durations in odd ns.
sched::TaskGraph mixed_graph() {
  return graph_of({{CoreType::kAic, 1237, {1, 2, 3}},
                   {CoreType::kAiv, 2011, {4}},
                   {CoreType::kAiv, 733, {4}},
                   {CoreType::kAiv, 1999, {4}},
                   {CoreType::kAic, 3001, {5}},
                   {CoreType::kAiv, 457, {}}});
}

}  // namespace

TEST_CASE("trace.json events carry a cat and arrows bind to their slices", "[sim][report]") {
  const sim::ChipConfig chip = cfg::load_chip_preset("a2");
  const sched::TaskGraph g = mixed_graph();
  const sim::SimResult r = sim::simulate(g, chip, sim::SimOptions{});
  pypto::testing::TempDir dir;
  sim::write_reports(dir.path(), g, chip, r, sim::ReportOptions{});
  const auto j = read_json(dir.path() + "/trace.json");
  // (cat, pid, tid, ts) of every slice: the key Chrome DevTools binds a flow event by.
  std::map<std::tuple<std::string, int, int, double>, int> slices;
  std::map<int, std::pair<double, double>> ends;  // flow id -> (s ts, f ts)
  int flows_s = 0, flows_f = 0;
  for (const auto& e : j["traceEvents"]) {
    REQUIRE(e.contains("cat"));
    const std::string ph = e["ph"];
    if (ph == "X") {
      slices[{e["cat"], e["pid"], e["tid"], e["ts"]}]++;
      // Whole ns: ts * 1000 is an integer up to float noise.
      const double ns = e["ts"].get<double>() * 1000;
      CHECK(std::abs(ns - std::round(ns)) < 1e-6);
    }
  }
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph != "s" && ph != "f") continue;
    CHECK(e["cat"] == "task");
    CHECK(slices.count({e["cat"], e["pid"], e["tid"], e["ts"]}) == 1);
    (ph == "s" ? flows_s : flows_f)++;
  }
  // Six placed tasks with 7 edges between them: every one an arrow.
  CHECK(flows_s == 7);
  CHECK(flows_f == 7);
  CHECK(j["metadata"]["dependency_arrows"] == 7);
  CHECK(sim::trace_notes(g, r, sim::ReportOptions{}).empty());
}

TEST_CASE("back-to-back slices meet exactly when a viewer adds ts and dur in doubles",
          "[sim][report]") {
  // Many short tasks on one AIV core: each starts the instant-ish its predecessor's poll
  // hands over, and the schedule thread's poll rounds run back to back.
  sim::ChipConfig chip = cfg::load_chip_preset("a2");
  cfg::apply_override(chip, "cores.aic=1");
  cfg::apply_override(chip, "cores.aiv_per_aic=1");
  cfg::apply_override(chip, "cores.handshake_cores=1");
  cfg::validate(chip);
  std::vector<T> tasks;
  for (int i = 0; i < 200; ++i) tasks.push_back({CoreType::kAiv, 97u + 13u * (i % 7), {}});
  const sched::TaskGraph g = graph_of(tasks);
  const sim::SimResult r = sim::simulate(g, chip, sim::SimOptions{});
  pypto::testing::TempDir dir;
  sim::write_reports(dir.path(), g, chip, r, sim::ReportOptions{});
  const auto j = read_json(dir.path() + "/trace.json");
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") tracks[{e["pid"], e["tid"]}].push_back({e["ts"], e["dur"]});
  }
  int touching = 0;
  for (auto& [track, v] : tracks) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) {
      const double end = v[i - 1].first + v[i - 1].second;  // as a viewer computes it
      CHECK(end <= v[i].first);                              // never overlaps the next
      touching += end == v[i].first;
    }
  }
  // The poll rounds of the one schedule thread follow each other without a gap.
  CHECK(touching > 10);
}

TEST_CASE("trace_notes says when arrows are left out of trace.json", "[sim][report]") {
  const sim::ChipConfig chip = cfg::load_chip_preset("a2");
  const sched::TaskGraph g = mixed_graph();
  const sim::SimResult r = sim::simulate(g, chip, sim::SimOptions{});
  sim::ReportOptions ro;
  ro.max_flow_edges = 3;
  const auto notes = sim::trace_notes(g, r, ro);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "trace.json: 3 of 7 dependency arrows written (the first, in task order; "
                    "viewers slow down beyond)");
  pypto::testing::TempDir dir;
  sim::write_reports(dir.path(), g, chip, r, ro);
  const auto j = read_json(dir.path() + "/trace.json");
  CHECK(j["metadata"]["dependency_arrows"] == 3);
  CHECK(j["metadata"]["dependency_arrows_truncated"] == true);
}
