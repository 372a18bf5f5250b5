// SPDX-License-Identifier: Apache-2.0
// pypto-sim gen: writes a synthetic trace, native (to stdout or -o) or in one of PyPTO's
// formats.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "command.h"
#include "flags.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/model/config_loader.h"
#include "pypto/trace/pypto_writers.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"

namespace pypto::cli {

int cmd_gen(Context& /*ctx*/, int argc, char** argv) {
  trace::SyntheticSpec s;
  std::string out, tasks, seed, tasks_per_root, format, prof, chip_name;
  bool no_memory = false;
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("shape", po::value(&s.shape)->default_value("mix"),
                                              "mix, chain, fanout, loops or independent")(
      "tasks", po::value(&tasks)->default_value("1000"), "number of tasks (1 .. 4294967294)")(
      "seed", po::value(&seed)->default_value("1"), "random seed (0 .. 4294967295)")(
      "tasks-per-root", po::value(&tasks_per_root)->default_value("8"),
      "tasks per loop body (1 .. 4294967295)")("recorded", po::bool_switch(&s.recorded),
                                               "give every task a recorded duration")(
      "no-memory", po::bool_switch(&no_memory), "no memory ranges")(
      "out,o", po::value(&out), "output file (default: stdout)")(
      "format", po::value(&format)->default_value("native"),
      "native, dyn_topo, topo_json or fixed_latency (PyPTO's formats: the same graph, recorded "
      "durations in whole board ticks, no memory ranges; needs -o)")(
      "prof", po::value(&prof),
      "dyn_topo/topo_json: where the tilefwk_L1_prof_data.json recording goes (default: "
      "tilefwk_L1_prof_data.json beside -o)")("chip", po::value(&chip_name)->default_value("a2"),
                                              "chip preset whose clocks the PyPTO formats use");
  po::positional_options_description p;
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "gen [options]")) return 0;
  // Read after each branch's own checks (a bad --format is named before a bad count).
  const auto read_counts = [&] {
    s.tasks = parse_count("tasks", tasks, 1, 4'294'967'294ull);
    s.seed = static_cast<std::uint32_t>(parse_count("seed", seed, 0, 4'294'967'295ull));
    s.tasks_per_root = static_cast<std::uint32_t>(
        parse_count("tasks-per-root", tasks_per_root, 1, 4'294'967'295ull));
  };
  // Flags the format does not use are refused, not ignored (--chip bogus used to pass).
  const model::ChipConfig gen_chip = model::load_chip_preset(chip_name);
  if (format == "native") {
    refuse_unused(vm, {"chip"},
                  "by --format native (only the PyPTO formats take a chip's clocks, for their "
                  "board ticks)");
  } else {
    refuse_unused(vm, {"recorded", "no-memory"},
                  "by --format " + format +
                      " (PyPTO's formats always carry recorded durations and no memory "
                      "ranges)");
  }
  if (!prof.empty() && format != "dyn_topo" && format != "topo_json") {
    throw UsageError("--prof " + prof + ": only --format dyn_topo and topo_json write a " +
                     "recording (this is --format " + format + ")");
  }
  if (!prof.empty() && !out.empty() && same_file(prof, out)) {
    throw UsageError("--prof " + prof + " is also -o; the topology and the recording need two " +
                     "files");
  }
  if (format != "native") {
    const std::vector<std::pair<std::string, trace::TraceFormat>> formats = {
        {"dyn_topo", trace::TraceFormat::kDynTopo},
        {"topo_json", trace::TraceFormat::kTopoJson},
        {"fixed_latency", trace::TraceFormat::kFixedLatency}};
    const auto it = std::find_if(formats.begin(), formats.end(),
                                 [&](const auto& f) { return f.first == format; });
    if (it == formats.end()) {
      throw UsageError("--format " + format +
                       ": expected native, dyn_topo, topo_json or fixed_latency");
    }
    if (out.empty()) throw UsageError("--format " + format + " needs -o FILE");
    const model::ChipConfig& chip = gen_chip;
    read_counts();
    s.recorded = true;
    s.memory = false;
    s.dur_step_ns = static_cast<std::uint32_t>(std::llround(1000.0 / chip.chip.board_clock_mhz));
    if (prof.empty() && it->second != trace::TraceFormat::kFixedLatency) {
      prof = (std::filesystem::path(out).parent_path() / "tilefwk_L1_prof_data.json").string();
      if (same_file(prof, out)) {
        throw UsageError("-o " + out + " is where the recording goes by default; name the " +
                         "recording with --prof or -o another file");
      }
    }
    trace::write_synthetic_as(s, it->second, chip, out, prof);
    return 0;
  }
  s.memory = !no_memory;
  read_counts();
  if (out.empty()) {
    trace::write_synthetic_trace(s, std::cout);
    return 0;  // cli::main checks that stdout took it
  }
  // The writer does not poll for Ctrl-C: a signal removes the temporary and exits at once.
  common::OutputFile f(out);
  const std::string line = "pypto-sim: interrupted while writing " + out + "; nothing written";
  common::set_exit_on_interrupt(line.c_str());
  try {
    trace::write_synthetic_trace(s, f.stream());
  } catch (...) {
    common::set_exit_on_interrupt(nullptr);
    throw;
  }
  common::set_exit_on_interrupt(nullptr);
  f.commit();
  return 0;
}

}  // namespace pypto::cli
