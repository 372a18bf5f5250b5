// SPDX-License-Identifier: Apache-2.0
// pypto-sim calibrate TRACE [--prof PROF] [TRACE [--prof PROF]]...: fits the AICPU costs to
// recordings, prints the fit and writes it as a config overlay. Each --prof belongs to the
// trace before it. The fit is pypto_calibrate's; this only loads, prints and writes.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "command.h"
#include "flags.h"
#include "progress_line.h"
#include "pypto/calibrate/calibrate.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/model/config_loader.h"
#include "replay.h"

namespace pypto::cli {

int cmd_calibrate(Context& /*ctx*/, int argc, char** argv) {
  Common c;
  std::string overlay, params, max_sims_text;
  po::options_description d = chip_options(c);
  d.add_options()("trace", po::value<std::vector<std::string>>(), "recordings")(
      "params", po::value(&params),
      "keys to fit, comma-separated (default: every AICPU cost and start-up latency; those "
      "the recordings do not constrain are found and left out)")(
      "max-sims", po::value(&max_sims_text)->default_value("400"),
      "at most this many replays (one replay = one recording once)")(
      "out,o", po::value(&overlay), "write the fit as a config overlay (YAML for --config)")(
      "quiet,q", po::bool_switch(&c.quiet), "no progress on stderr");
  po::positional_options_description p;
  p.add("trace", -1);
  po::parsed_options parsed = parse_line(argc, argv, d, p);
  std::vector<std::pair<std::string, std::string>> pairs;  // trace, prof
  for (const po::option& o : parsed.options) {
    if (o.string_key == "trace") pairs.emplace_back(o.value.at(0), "");
    if (o.string_key == "prof") {
      if (pairs.empty() || !pairs.back().second.empty())
        throw UsageError("--prof " + o.value.at(0) + ": give it after the TRACE it belongs to");
      if (o.value.at(0).empty()) throw UsageError("--prof: the value is empty");
      pairs.back().second = o.value.at(0);
    }
  }
  parsed.options.erase(std::remove_if(parsed.options.begin(), parsed.options.end(),
                                      [](const po::option& o) {
                                        return o.string_key == "trace" || o.string_key == "prof";
                                      }),
                       parsed.options.end());
  po::variables_map vm;
  po::store(parsed, vm);
  po::notify(vm);
  check_no_empty_values(vm);
  for (const auto& [trace, prof] : pairs) {
    if (trace.empty()) throw UsageError("TRACE is an empty path");
  }
  if (vm.count("help") != 0) {
    std::cout << "usage: pypto-sim calibrate TRACE [--prof PROF] [TRACE [--prof PROF]]... "
                 "[options]\n"
              << d;
    return 0;
  }
  if (pairs.empty()) throw UsageError("missing TRACE: pypto-sim calibrate TRACE [--prof PROF]...");
  std::vector<std::string> config_keys;
  const sched::RuntimeOptions rt = runtime_options(vm, c, true, &config_keys);
  const bool given = mode_given(vm, rt, config_keys);
  calibrate::CalibrateOptions opt;
  if (!params.empty()) {
    opt.params.clear();
    std::stringstream ss(params);
    std::vector<std::string> seen;
    for (std::string k; std::getline(ss, k, ',');) {
      // "a,,b" and "a,a" are slips (a key left out, one fitted twice), refused like --set's.
      if (k.empty()) {
        throw UsageError("--params " + params +
                         ": an empty item; expected keys separated by commas");
      }
      if (std::find(seen.begin(), seen.end(), k) != seen.end()) {
        throw UsageError("--params " + params + ": " + k + " is given twice; give each key once");
      }
      seen.push_back(k);
      opt.params.push_back(calibrate::param_spec(k));
    }
  }
  opt.max_simulations =
      static_cast<std::uint32_t>(parse_count("max-sims", max_sims_text, 1, 1'000'000));
  if (!c.quiet)
    opt.progress = [](const std::string& s) { std::cerr << "calibrate: " << s << "\n"; };
  std::vector<trace::LoadedTrace> traces;
  model::ChipConfig chip;
  ProgressLine bar(c.quiet);
  for (const auto& [path, prof] : pairs) {
    model::ChipConfig this_chip;
    traces.push_back(load_with_chip(c, path, prof, rt, this_chip, bar));
    if (traces.size() == 1) {
      chip = this_chip;
    } else if (this_chip.chip.name != chip.chip.name) {
      throw UsageError(path + " runs on " + this_chip.chip.name + " but " + pairs[0].first +
                       " on " + chip.chip.name + "; name one chip with --chip");
    }
  }
  std::vector<calibrate::Recording> recs;
  std::vector<std::string> mode_notes;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    // Each recording is fitted under the mode it ran under, unless one is given.
    sched::RuntimeOptions own = rt;
    std::vector<sim::ModeTrial> trials;
    if (!given)
      mode_notes.push_back(infer_mode(pairs[i].first, traces[i].graph, chip, own, trials, bar));
    recs.push_back({pairs[i].first, &traces[i].graph, own});
  }
  // The overlay's temporary is opened first, so that an unwritable path fails before the
  // fit rather than after it. The fit writes nothing until it is done: a Ctrl-C during it
  // exits at once (removing that temporary).
  std::unique_ptr<common::OutputFile> overlay_file;
  if (!overlay.empty()) {
    Inputs inputs = common_inputs(c, "", "");
    for (const auto& [path, prof] : pairs) {
      inputs.emplace_back("a TRACE", path);
      inputs.emplace_back("--prof", prof);
    }
    refuse_overwrite("-o", overlay, inputs);
    overlay_file = std::make_unique<common::OutputFile>(overlay);
  }
  common::set_exit_on_interrupt("pypto-sim: interrupted while calibrating; nothing written");
  const calibrate::CalibrateResult r = calibrate::calibrate(recs, chip, opt);
  common::set_exit_on_interrupt(nullptr);
  std::cout << calibrate::fit_table(r);
  for (const std::string& n : mode_notes) {
    if (!n.empty() && !c.quiet) std::cerr << "pypto-sim: note: " << n << "\n";
  }
  if (!overlay.empty()) {
    std::string text;
    if (c.config.empty()) {
      text = calibrate::overlay_yaml(r, chip.chip.name, c.sets);
    } else {
      // A --config file is no preset a `base:` could name: write the whole fitted chip.
      text = "# Written by `pypto-sim calibrate` from " + c.config + ": the whole chip, with\n";
      for (const auto& pf : r.params) {
        if (pf.sensitive) text += "#   " + pf.key + " fitted: " + std::to_string(pf.fitted) + "\n";
      }
      text += model::to_yaml(r.fitted);
    }
    overlay_file->stream() << text;
    overlay_file->commit();
    std::cout << "overlay in " << overlay << "\n";
  }
  return 0;
}

}  // namespace pypto::cli
