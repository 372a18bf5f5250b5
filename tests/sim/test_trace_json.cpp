// SPDX-License-Identifier: Apache-2.0
// trace.json as viewers read it: every event has a cat, flow events sit on their slices'
// (cat, pid, tid, ts) so that Chrome DevTools binds the arrows, times are whole ns, and
// back-to-back slices meet exactly when ts + dur is added in doubles. What is left out is
// said (trace_notes). tools/check_viewers.sh runs the real viewers on the same output.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "../common/temp_dir.h"
#include "graph_helpers.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/text_out.h"

using namespace pypto;
using common::CoreType;
using pypto::testing::graph_of;
using pypto::testing::T;

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
  const model::ChipConfig chip = model::load_chip_preset("a2");
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
  model::ChipConfig chip = model::load_chip_preset("a2");
  model::apply_override(chip, "cores.aic=1");
  model::apply_override(chip, "cores.aiv_per_aic=1");
  model::apply_override(chip, "cores.handshake_cores=1");
  // Completions seen at once and a poll longer than the gaps between them: the thread's
  // rounds then follow each other without a sleep.
  model::apply_override(chip, "aicpu.completion_latency_ns=0");
  model::apply_override(chip, "aicpu.poll_cycles=290");
  model::validate(chip);
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
      CHECK(end <= v[i].first);                             // never overlaps the next
      touching += end == v[i].first;
    }
  }
  // The poll rounds of the one schedule thread follow each other without a gap.
  CHECK(touching > 10);
}

TEST_CASE("trace_notes says when arrows are left out of trace.json", "[sim][report]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = mixed_graph();
  const sim::SimResult r = sim::simulate(g, chip, sim::SimOptions{});
  sim::ReportOptions ro;
  ro.max_flow_edges = 3;
  const auto notes = sim::trace_notes(g, r, ro);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] ==
        "trace.json: 3 of 7 dependency arrows written (the first, in task order; "
        "viewers slow down beyond)");
  pypto::testing::TempDir dir;
  sim::write_reports(dir.path(), g, chip, r, ro);
  const auto j = read_json(dir.path() + "/trace.json");
  CHECK(j["metadata"]["dependency_arrows"] == 3);
  CHECK(j["metadata"]["dependency_arrows_truncated"] == true);
}

TEST_CASE("topo.json and aicpu.data have the shapes PyPTO's profiling tools read",
          "[sim][report]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  // Two device tasks: the second's ids collide with the first's unless seqNo is in the key.
  const sched::TaskGraph g = graph_of({{CoreType::kAic, 1000, {1}},
                                       {CoreType::kAiv, 2000, {}},
                                       {CoreType::kAiv, 1500, {3}, 1},
                                       {CoreType::kAiv, 700, {}, 1}});
  const sim::SimResult r = sim::simulate(g, chip, sim::SimOptions{});
  pypto::testing::TempDir dir;
  sim::write_reports(dir.path(), g, chip, r, sim::ReportOptions{});

  // topo.json: taskId = seqNo << 32 | id, successors in the same encoding, sorted by key.
  const auto topo = read_json(dir.path() + "/topo.json");
  REQUIRE(topo.size() == 4);
  std::vector<std::uint64_t> keys;
  for (const auto& t : topo) keys.push_back(t["taskId"]);
  CHECK(keys == std::vector<std::uint64_t>{0, 1, (1ull << 32) | 2, (1ull << 32) | 3});
  CHECK(topo[0]["successors"] == nlohmann::json::array({1}));
  CHECK(topo[2]["successors"] == nlohmann::json::array({(1ull << 32) | 3}));
  CHECK(topo[2]["oriSeqNo"] == 1);
  CHECK(topo[2]["oriTaskId"] == 2);
  CHECK(topo[0]["coreType"] == "AIC");
  CHECK(topo[0]["funcName"] == "k");
  // swim.json carries subGraphId per task (the kernel index).
  for (const auto& block : read_json(dir.path() + "/swim.json"))
    for (const auto& t : block["tasks"]) CHECK(t["subGraphId"] == 0);

  // aicpu.data: 256-byte records, one per core (at most 8 tasks each), fields where
  // tilefwk_prof_data_parser.py's struct format puts them.
  std::ifstream f(dir.path() + "/aicpu.data", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() % 256 == 0);
  auto u16 = [&](std::size_t at) {
    std::uint16_t v;
    std::memcpy(&v, bytes.data() + at, 2);
    return v;
  };
  auto u32 = [&](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  auto u64 = [&](std::size_t at) {
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  std::size_t tasks = 0;
  for (std::size_t rec = 0; rec < bytes.size(); rec += 256) {
    CHECK(u32(rec + 4) == 10);                 // type: AICPU op info
    const std::uint16_t core = u16(rec + 26);  // core id | type << 7 | data type << 10
    CHECK(((core >> 10) & 63) == 2);           // data type: log
    const std::uint32_t core_id = core & 127;
    CHECK(((core >> 7) & 7) == (core_id < chip.cores.aic ? 1u : 0u));  // AIC = 1, AIV = 0
    const std::uint8_t count = static_cast<std::uint8_t>(bytes[rec + 34]);
    REQUIRE(count >= 1);
    REQUIRE(count <= 8);
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t at = rec + 64 + 24 * k;
      const std::uint32_t id = u32(at + 4);
      const std::uint16_t seq = u16(at);
      const common::TaskId t = id;  // graph_of: orig_id == task index
      CHECK(seq == g.device_tasks[g.device_task[t]].seq_no);
      CHECK(r.timeline.core[t] == core_id);
      CHECK(u64(at + 16) > u64(at + 8));  // end after start, in board ticks
      ++tasks;
    }
  }
  CHECK(tasks == 4);
}

namespace {
// Appends spread samples of a time count: for each binary exponent 2^20..2^56 the power
// itself and 20,000 random values above it, each also cut to whole `unit`s and to whole
// `fraction`s (trailing zeros of the printed fraction).
void add_spread_counts(std::vector<std::uint64_t>& counts, std::uint64_t unit,
                       std::uint64_t fraction) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int e = 20; e <= 56; ++e) {
    const std::uint64_t lo = std::uint64_t{1} << e;
    counts.push_back(lo);
    for (int i = 0; i < 20000; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      const std::uint64_t v = lo + x % lo;
      counts.push_back(v);
      counts.push_back(v - v % unit);
      counts.push_back(v - v % fraction);
    }
  }
}

// Every count printed by `fast` and by TextOut::d of count / per_us: the same bytes, else the
// first difference in context.
template <typename Fast>
void check_prints_as_d(const std::vector<std::uint64_t>& counts, double per_us, Fast fast) {
  std::ostringstream fs, rs;
  {
    pypto::trace::TextOut a(fs), b(rs);
    for (const std::uint64_t v : counts) {
      fast(a, v) << ',';
      b.d(static_cast<double>(v) / per_us) << ',';
    }
    a.flush();
    b.flush();
  }
  const std::string f = fs.str(), r = rs.str();
  if (f == r) return;
  const std::size_t at = static_cast<std::size_t>(
      std::mismatch(f.begin(), f.end(), r.begin(), r.end()).first - f.begin());
  FAIL("first difference near: " << f.substr(at > 30 ? at - 30 : 0, 60) << " vs "
                                 << r.substr(at > 30 ? at - 30 : 0, 60));
}
}  // namespace

// trace.json's times skip grisu2 (TextOut::us_of_ns); they must print the bytes TextOut::d
// gives for the same double: every ns count below 2^20, and spread samples (each binary
// exponent, random and round values) up to the fast path's end at 2^40, and past it.
TEST_CASE("trace times in us print as nlohmann prints the double") {
  std::vector<std::uint64_t> ns;
  for (std::uint64_t k = 0; k < (1u << 20); ++k) ns.push_back(k);
  add_spread_counts(ns, 1000, 10);  // whole µs; trailing zeros of the fraction
  check_prints_as_d(
      ns, 1e3, [](pypto::trace::TextOut & o, std::uint64_t v) -> auto& { return o.us_of_ns(v); });
}

// The merged swimlane's times skip grisu2 where that is exact (TextOut::us_of_ps); every
// ps count must print the bytes TextOut::d gives for ps / 1e6: all counts around the fast
// path's start (1e6) and in a dense block, and spread samples (each binary exponent, random,
// whole-µs and round values) up to its end at 2^40, and past it.
TEST_CASE("swimlane times in us from ps print as nlohmann prints the double") {
  std::vector<std::uint64_t> ps;
  for (std::uint64_t k = 0; k < (1u << 20); ++k) ps.push_back(k);
  for (std::uint64_t k = 0; k < (1u << 21); ++k) ps.push_back(81910810 + k);
  add_spread_counts(ps, 1000000, 1000);  // whole µs; trailing zeros of the fraction
  check_prints_as_d(
      ps, 1e6, [](pypto::trace::TextOut & o, std::uint64_t v) -> auto& { return o.us_of_ps(v); });
}

// trace.json's durations go through TextOut::d_memo: the same bytes as TextOut::d for a
// stream of doubles that repeat (hits), collide in the memo (evictions) and span every
// magnitude, sign and the non-finite ones (null).
TEST_CASE("memoized doubles print as nlohmann prints them") {
  std::vector<double> pool;
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  auto next = [&x] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t r = next();
    double v;
    std::memcpy(&v, &r, sizeof v);  // any bit pattern, NaNs and infinities included
    pool.push_back(v);
    pool.push_back(static_cast<double>(r % 100000000) / 1e3 - 1e-9 * double(r % 7));
  }
  pool.push_back(0.0);
  pool.push_back(-0.0);
  std::ostringstream memo, ref;
  {
    pypto::trace::TextOut a(memo), b(ref);
    for (int i = 0; i < 400000; ++i) {
      const double v = pool[next() % (i < 200000 ? 64 : pool.size())];  // hot, then all
      a.d_memo(v) << ',';
      b.d(v) << ',';
    }
    a.flush();
    b.flush();
  }
  CHECK(memo.str() == ref.str());
}
