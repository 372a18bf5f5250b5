// SPDX-License-Identifier: Apache-2.0
// pypto-sim bench: the benchmark suite (pypto_bench) with its options; writes bench.json and
// prints its table.
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "flags.h"
#include "pypto/bench/bench.h"
#include "pypto/common/output_file.h"

namespace pypto::cli {

namespace {

// "10k,100k,1M" -> {10000, 100000, 1000000}
std::vector<std::uint64_t> parse_sizes(const std::string& list) {
  std::vector<std::uint64_t> sizes;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    std::uint64_t mult = 1;
    std::string digits = item;
    if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) mult = 1'000;
    if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M')) mult = 1'000'000;
    if (mult != 1) digits.pop_back();
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 10) {
      throw UsageError("--sizes: '" + item + "' is not a task count (expected e.g. 10k,100k,1M)");
    }
    const std::uint64_t n = std::stoull(digits) * mult;
    if (std::find(sizes.begin(), sizes.end(), n) != sizes.end()) {
      throw UsageError("--sizes " + list + ": " + item + " is given twice; give each size once");
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) throw UsageError("--sizes: no size given (expected e.g. 10k,100k,1M)");
  return sizes;
}

}  // namespace

int cmd_bench(Context& /*ctx*/, int argc, char** argv) {
  bench::BenchOptions o;
  std::string sizes, rounds, formats;
  bool no_frontend = false;
  po::options_description d("options");
  d.add_options()("help,h", "show this help")(
      "quick", po::bool_switch(&o.quick), "smoke test: 10k and 100k tasks, one round (< 1 min)")(
      "out,o", po::value(&o.out_dir), "output folder (default: output/bench_<timestamp>)")(
      "sizes", po::value(&sizes), "scaling sizes, e.g. 10k,100k,1M,10M (the default)")(
      "trace-dir", po::value(&o.trace_dir),
      "where synthetic traces are kept and reused "
      "(default: the output folder)")(
      "rounds", po::value(&rounds),
      "interleaved repetitions, median taken (default 3; quick 1; sizes "
      "up to 100k run three times as many, except with --quick)")(
      "chip", po::value(&o.chip)->default_value("a2"), "chip preset")(
      "no-frontend", po::bool_switch(&no_frontend), "skip tools/bench_frontend.py")(
      "formats", po::value(&formats),
      "end-to-end input formats, e.g. native,dyn_topo (default: native, dyn_topo, topo_json, "
      "fixed_latency; none: no end-to-end table)");
  po::positional_options_description p;
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "bench [options]")) return 0;
  if (!sizes.empty()) o.sizes = parse_sizes(sizes);
  if (!rounds.empty()) o.rounds = static_cast<int>(parse_count("rounds", rounds, 1, 1000));
  o.frontend = !no_frontend;
  std::stringstream formats_list(formats);
  for (std::string f; std::getline(formats_list, f, ',');) {
    if (std::find(o.formats.begin(), o.formats.end(), f) != o.formats.end()) {
      throw UsageError("--formats " + formats + ": " + f +
                       " is given twice; give each format once");
    }
    o.formats.push_back(f);
  }
  if (!formats.empty() && o.formats.empty()) throw UsageError("--formats: no format given");
  if (o.formats.size() > 1 &&
      std::find(o.formats.begin(), o.formats.end(), "none") != o.formats.end()) {
    throw UsageError("--formats " + formats +
                     ": 'none' (no end-to-end table) cannot be listed with formats");
  }
  if (o.out_dir.empty()) {
    const std::time_t now = std::time(nullptr);
    char ts[32];
    std::strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", std::localtime(&now));
    o.out_dir = std::string("output/bench_") + ts;
  }
  o.self_exe = std::filesystem::read_symlink("/proc/self/exe").string();
  const nlohmann::ordered_json j = bench::run_bench(o, std::cerr);
  const std::string path = o.out_dir + "/bench.json";
  common::OutputFile f(path);
  f.stream() << j.dump(2) << "\n";
  f.commit();
  std::cout << bench::bench_table(j) << "bench.json in " << path << "\n";
  return 0;
}

}  // namespace pypto::cli
