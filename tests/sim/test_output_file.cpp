// SPDX-License-Identifier: Apache-2.0
// Outputs are complete or absent (pypto/common/output_file.h, sim::write_reports): a write
// that fails or is interrupted leaves no file, no temporary and no folder it made.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "graph_helpers.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/swimlane_writer.h"

namespace fs = std::filesystem;
using namespace pypto;
using pypto::common::CoreType;
using pypto::testing::graph_of;

namespace {

// A fresh empty folder under the system's temporary folder.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("pypto_output_file_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::set<std::string> names_in(const fs::path& d) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(d))
    out.insert(fs::relative(e.path(), d).string());
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool g_interrupt = false;
bool interrupt_poll() { return g_interrupt; }

// Sets an interruption for the scope (through the poll hook, as the Python module does).
struct Interrupting {
  Interrupting() {
    g_interrupt = true;
    common::set_interrupt_poll(interrupt_poll);
  }
  ~Interrupting() {
    g_interrupt = false;
    common::set_interrupt_poll(nullptr);
  }
};

sim::SimResult small_run(const sched::TaskGraph& g, const model::ChipConfig& chip) {
  sim::SimOptions opt;
  return sim::simulate(g, chip, opt);
}

}  // namespace

TEST_CASE("OutputFile: the final name appears only on commit", "[output]") {
  const fs::path d = fresh_dir("commit");
  {
    common::OutputFile f((d / "a.txt").string());
    f.stream() << "hello\n";
    f.finish();
    CHECK_FALSE(fs::exists(d / "a.txt"));  // complete, not yet renamed
    f.commit();
  }
  CHECK(read(d / "a.txt") == "hello\n");
  CHECK(names_in(d) == std::set<std::string>{"a.txt"});
  fs::remove_all(d);
}

TEST_CASE("OutputFile: pieces of every size arrive in order", "[output]") {
  // Single characters and short pieces gather in the buffer; pieces larger than it go
  // straight to the file.
  const fs::path d = fresh_dir("pieces");
  std::string expected;
  expected.reserve(24u << 20);
  {
    common::OutputFile f((d / "big.txt").string());
    std::uint64_t x = 88172645463325252ull;  // xorshift: sizes from 1 B to 4 MiB
    while (expected.size() < (16u << 20)) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const std::size_t n = std::size_t{1} << (x % 23);
      const char c = static_cast<char>('a' + x % 26);
      if (n == 1) {
        f.stream() << c;
        expected += c;
      } else {
        const std::string piece(n - 1, c);
        f.stream().write(piece.data(), static_cast<std::streamsize>(piece.size()));
        f.stream() << '\n';
        expected += piece;
        expected += '\n';
      }
    }
    f.commit();
  }
  const std::string got = read(d / "big.txt");
  REQUIRE(got.size() == expected.size());
  CHECK(got == expected);
  fs::remove_all(d);
}

TEST_CASE("OutputFile: without commit nothing is left, an old file stays as it was", "[output]") {
  const fs::path d = fresh_dir("discard");
  std::ofstream(d / "old.txt") << "old\n";
  {
    common::OutputFile f((d / "old.txt").string());
    f.stream() << "new, but never committed\n";
    common::OutputFile g((d / "b.txt").string());
    g.stream() << "x";
  }
  CHECK(read(d / "old.txt") == "old\n");
  CHECK(names_in(d) == std::set<std::string>{"old.txt"});
  fs::remove_all(d);
}

TEST_CASE("OutputFile: a directory, a missing folder and a full device are refused", "[output]") {
  const fs::path d = fresh_dir("refuse");
  CHECK_THROWS_WITH(common::OutputFile(d.string()), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(common::OutputFile((d / "missing" / "x.txt").string()),
                    Catch::Contains("cannot write"));
  if (fs::exists("/dev/full")) {
    common::OutputFile f("/dev/full");
    f.stream() << std::string(1 << 16, 'x');
    CHECK_THROWS_WITH(f.finish(), Catch::Contains("error while writing /dev/full"));
    CHECK(fs::is_character_file("/dev/full"));  // written in place, never replaced
  }
  CHECK(names_in(d).empty());
  fs::remove_all(d);
}

TEST_CASE("write_reports: an interrupted write leaves no report, no temporary, no folder",
          "[output]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = graph_of({{CoreType::kAiv, 100, {1}}, {CoreType::kAic, 200, {}}});
  const sim::SimResult r = small_run(g, chip);
  const fs::path d = fresh_dir("interrupt");
  // An earlier complete run in the folder: its stats.json must not survive a failed run
  // (it would claim this run succeeded).
  REQUIRE(sim::write_reports((d / "run").string(), g, chip, r, {}).size() == 5);
  {
    const Interrupting now;
    CHECK_THROWS_AS(sim::write_reports((d / "run").string(), g, chip, r, {}), Interrupted);
    CHECK_THROWS_AS(sim::write_reports((d / "new" / "deep").string(), g, chip, r, {}), Interrupted);
  }
  CHECK_FALSE(fs::exists(d / "run" / "stats.json"));
  CHECK_FALSE(fs::exists(d / "new"));  // the folders it made are gone again
  for (const auto& n : names_in(d)) CHECK(n.find(".tmp.") == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("write_reports: a folder holds one run's reports", "[output]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = graph_of({{CoreType::kAiv, 100, {}}});
  const sim::SimResult r = small_run(g, chip);
  const fs::path d = fresh_dir("one_run");
  sim::ReportOptions all;
  all.merged_swimlane = "CostModelSimulationOutput/merged_swimlane.json";
  const auto files = sim::write_reports(d.string(), g, chip, r, all);
  CHECK(files.front() == (d / "stats.json").string());
  CHECK(names_in(d) == std::set<std::string>{"stats.json", "trace.json", "swim.json", "topo.json",
                                             "aicpu.data", "CostModelSimulationOutput",
                                             "CostModelSimulationOutput/bubble_analysis.log",
                                             "CostModelSimulationOutput/merged_swimlane.json"});
  sim::ReportOptions stats_only;
  stats_only.trace_json = stats_only.swim_json = false;
  sim::write_reports(d.string(), g, chip, r, stats_only);
  // The earlier trace.json, swim.json, topo.json and aicpu.data belonged to another run:
  // they are gone.
  CHECK(names_in(d) == std::set<std::string>{"stats.json", "CostModelSimulationOutput",
                                             "CostModelSimulationOutput/bubble_analysis.log",
                                             "CostModelSimulationOutput/merged_swimlane.json"});
  fs::remove_all(d);
}

TEST_CASE(
    "write_reports: topo.json written ahead gives the same files, and its error is the call's",
    "[output]") {
  // Large enough for the writer ahead (start_graph_reports writes only for 16k tasks or more).
  std::vector<pypto::testing::T> tasks(20000, pypto::testing::T{CoreType::kAiv, 100, {}});
  for (common::TaskId t = 0; t + 1 < 20000; t += 2) tasks[t].succ = {t + 1};
  const sched::TaskGraph g = graph_of(tasks);
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sim::SimResult r = small_run(g, chip);
  const fs::path d = fresh_dir("ahead");
  const sim::ReportOptions all;
  sim::write_reports((d / "plain").string(), g, chip, r, all);
  {
    // The writer may still be running when write_reports starts: it is taken over and
    // waited for after the other files.
    sim::GraphReports ahead = sim::start_graph_reports((d / "ahead").string(), g, all);
    sim::write_reports((d / "ahead").string(), g, chip, r, all, &ahead);
  }
  for (const char* f : {"stats.json", "trace.json", "swim.json", "topo.json", "aicpu.data"}) {
    const std::string plain = read(d / "plain" / f), ahead = read(d / "ahead" / f);
    if (std::string(f) == "stats.json") continue;  // its wall-clock fields differ
    CHECK(plain.size() > 0);
    CHECK(plain == ahead);
  }
  CHECK(names_in(d / "ahead") == names_in(d / "plain"));
  if (fs::exists("/dev/full")) {
    // topo.json is a link to a full device: the writer ahead fails, and write_reports throws
    // its error after writing the others, leaving none of them.
    fs::create_directories(d / "full");
    fs::create_symlink("/dev/full", d / "full" / "topo.json");
    sim::GraphReports ahead = sim::start_graph_reports((d / "full").string(), g, all);
    CHECK_THROWS_WITH(sim::write_reports((d / "full").string(), g, chip, r, all, &ahead),
                      Catch::Contains("error while writing") && Catch::Contains("topo.json"));
    std::set<std::string> left;  // names_in would resolve the link
    for (const auto& e : fs::directory_iterator(d / "full")) left.insert(e.path().filename());
    CHECK(left == std::set<std::string>{"topo.json"});
  }
  fs::remove_all(d);
}

TEST_CASE("stats.json: a run that kept no task times reports the span as absent", "[output]") {
  const model::ChipConfig chip = model::load_chip_preset("a2");
  const sched::TaskGraph g = graph_of({{CoreType::kAiv, 100, {}}});
  sim::SimOptions opt;
  opt.record_timeline = false;
  const auto kept = sim::stats_json(sim::simulate(g, chip, opt));
  CHECK(kept["task_span_ns"].get<double>() == Approx(100.0));
  opt.record_task_times = false;
  const auto none = sim::stats_json(sim::simulate(g, chip, opt));
  CHECK(none["task_span_ns"].is_null());
}

TEST_CASE("bubble analysis: each core's waits as PyPTO's swimlane tool works them out",
          "[output]") {
  // t0 feeds t1 and t2. Core 0 (AIV_1) runs t0 [0, 10] us and t1 [12, 20]: t1 was ready at 10
  // on a free core, so it waited 2 us for the scheduler. Core 1 (AIV_2) runs t2 [15, 25]:
  // idle 15 us from the first start, 10 of them for t0 and 5 for the scheduler.
  const sched::TaskGraph g = graph_of(
      {{CoreType::kAiv, 100, {1, 2}}, {CoreType::kAiv, 100, {}}, {CoreType::kAiv, 100, {}}});
  const std::vector<std::uint64_t> start{0, 12'000'000, 15'000'000};
  const std::vector<std::uint64_t> end{10'000'000, 20'000'000, 25'000'000};
  const std::vector<std::uint16_t> core{0, 0, 1};
  const std::vector<std::vector<common::TaskId>> per_core{{0, 1}, {2}};
  const std::vector<trace::QueueDepth> depth;
  const std::vector<trace::LeafMergeHint> hints;
  const trace::SwimlaneRun run{g, start, end, core, per_core, 0, depth, hints, 100};
  std::ostringstream os;
  trace::write_bubble_analysis(os, run);
  const std::string text = os.str();
  INFO(text);
  CHECK(text.rfind("Top 10 tasks in waiting schedule\n", 0) == 0);
  CHECK(text.find("[AIV_1] Execute task num:2\n    Core Total Work Time: 20.000\n"
                  "    Total Wait Time: 2.000\n    Wait Schedule Time: 2.000\n"
                  "    Wait Predecessor Time: 0.000\n") != std::string::npos);
  CHECK(text.find("[AIV_2] Execute task num:1\n    Core Total Work Time: 25.000\n"
                  "    Total Wait Time: 15.000\n    Wait Schedule Time: 5.000\n"
                  "    Wait Predecessor Time: 10.000\n") != std::string::npos);
  // The run's longest waits first: t2 (5 us), t1 (2 us), t0 (0).
  const auto w5 = text.find("wait: 5.000"), w2 = text.find("wait: 2.000");
  CHECK((w5 != std::string::npos && w2 != std::string::npos && w5 < w2));
  CHECK(text.find("[AIV_1]") < text.find("[AIV_2]"));
}
