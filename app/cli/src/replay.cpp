// SPDX-License-Identifier: Apache-2.0
// What run, compare and calibrate share once their flags are read (replay.h).
#include "replay.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <utility>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/infer_mode.h"

namespace pypto::cli {

namespace {

// Loading writes nothing: a Ctrl-C there exits at once (see set_exit_on_interrupt).
struct ExitWhileLoading {
  std::string line;
  // erase_line: the progress line is on the terminal; the exit line replaces it.
  ExitWhileLoading(const std::string& path, bool erase_line)
      : line(std::string(erase_line ? "\r\033[K" : "") + "pypto-sim: interrupted while loading " +
             path + "; nothing written") {
    common::set_exit_on_interrupt(line.c_str());
  }
  ~ExitWhileLoading() { common::set_exit_on_interrupt(nullptr); }
  ExitWhileLoading(const ExitWhileLoading&) = delete;
  ExitWhileLoading& operator=(const ExitWhileLoading&) = delete;
};

// The progress line as an observer of the run. Its ticks are also where a Ctrl-C is seen
// during the run: the exception stops the model and simulate() rethrows it.
class ShowProgress final : public sim::RunObserver {
 public:
  ShowProgress(ProgressLine& bar, const std::string& policy) : bar_(bar), policy_(policy) {}
  unsigned events() const override { return sim::kRunProgress; }
  void on_progress(std::uint64_t done, std::uint64_t total) override {
    if (common::interrupt_requested()) {
      bar_.clear();
      throw Interrupted("interrupted while simulating (policy " + policy_ + ", " +
                        std::to_string(done) + " of " + std::to_string(total) + " tasks done)");
    }
    bar_.tasks(done, total);
  }

 private:
  ProgressLine& bar_;
  const std::string& policy_;
};

sim::SimResult simulate_shown(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                              const sched::RuntimeOptions& rt, bool timeline, ProgressLine& bar) {
  sim::SimOptions opt;
  opt.runtime = rt;
  opt.record_timeline = timeline;
  opt.record_aicpu_events = timeline;
  bar.phase("simulating (policy " + rt.policy + ")");
  ShowProgress progress(bar, rt.policy);
  opt.observers.push_back(&progress);
  opt.progress_every_tasks = 4096;
  sim::SimResult r = sim::simulate(graph, chip, opt);
  bar.clear();
  common::check_interrupt("simulating (policy " + rt.policy +
                          ": finished, reports not written yet)");
  return r;
}

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

sim::SimResult run_one(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                       const sched::RuntimeOptions& rt, bool timeline, ProgressLine& bar) {
  return simulate_shown(graph, chip, rt, timeline, bar);
}

std::vector<std::string> write_reports_shown(const std::string& dir, const sched::TaskGraph& g,
                                             const model::ChipConfig& chip, const sim::SimResult& r,
                                             sim::ReportOptions ro, ProgressLine& bar,
                                             sim::GraphReports* ahead) {
  if (bar.enabled()) ro.on_file = [&bar](const std::string& path) { bar.phase("writing " + path); };
  auto files = sim::write_reports(dir, g, chip, r, ro, ahead);
  bar.clear();
  return files;
}

trace::LoadedTrace load_with_chip(const Common& c, const std::string& path, const std::string& prof,
                                  const sched::RuntimeOptions& rt, model::ChipConfig& chip,
                                  ProgressLine& bar) {
  trace::LoadOptions lo;
  lo.prof_path = prof;
  lo.runtime = rt;
  if (bar.enabled()) {
    lo.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.bytes(done, total); };
  }
  bar.phase("reading " + path);
  common::check_interrupt("loading " + path);
  const ExitWhileLoading exit_while_loading(path, bar.enabled());
  const bool auto_chip = c.chip == "auto" || (c.chip.empty() && c.config.empty());
  chip = model::resolve_chip_config(auto_chip ? std::string("a2") : c.chip, c.config, c.sets);
  // Read once, without a chip: a board recording's cores may choose another, and the trace
  // is priced for the chip chosen.
  trace::ReadTrace read = trace::read_trace(path, lo);
  std::vector<std::string> fits;
  if (read.trace.recorded_cores && auto_chip) {
    fits = model::fitting_chip_presets(*read.trace.recorded_cores);
    if (!fits.empty() && fits.front() != chip.chip.name) {
      chip = model::resolve_chip_config(fits.front(), "", c.sets);
    }
  }
  // A native trace names the chip it was made for (a timed replay, a compiled kernel, a
  // recording of a 20-cluster part): --chip auto takes it when it is a preset.
  const std::string& hint = read.trace.chip_hint;
  if (auto_chip && !read.trace.recorded_cores && !hint.empty() && hint != chip.chip.name) {
    const std::vector<std::string> presets = model::list_chip_presets();
    if (std::find(presets.begin(), presets.end(), hint) != presets.end()) {
      chip = model::resolve_chip_config(hint, "", c.sets);
      if (!c.quiet) {
        bar.clear();
        std::cerr << "pypto-sim: --chip auto: using " << hint << " (named by " << path
                  << "'s header)\n";
      }
    } else {
      bar.clear();
      std::cerr << "pypto-sim: warning: " << path << "'s header names chip \"" << hint
                << "\", which is no preset (";
      for (std::size_t i = 0; i < presets.size(); ++i) std::cerr << (i ? ", " : "") << presets[i];
      std::cerr << "); --chip auto uses " << chip.chip.name << " (--chip or --config to choose)\n";
    }
  }
  trace::LoadedTrace trace = trace::price_trace(std::move(read), chip);
  if (trace.recorded_cores) {
    if (auto_chip) {
      bar.clear();
      // Say so when the recording moved the chip off the default (a2 and a3 share core counts
      // and clocks, so the choice between fitting presets is a convention: name it).
      if (!c.quiet && !fits.empty() && fits.front() != "a2") {
        std::cerr << "pypto-sim: --chip auto: using " << chip.chip.name << " (presets that fit:";
        for (const auto& f : fits) std::cerr << " " << f;
        std::cerr << ")\n";
      }
    }
    model::check_recorded_cores(chip, *trace.recorded_cores);
  }
  bar.clear();
  return trace;
}

void warn_unrecorded(const trace::LoadedTrace& trace) {
  if (trace.unrecorded_tasks > 0) {
    std::cerr << "pypto-sim: warning: " << trace.unrecorded_tasks
              << " AIC/AIV tasks of the topology have no --prof record; they count as zero-cost "
                 "dependency nodes\n";
  }
  if (trace.placeholder_tasks > 0) {
    std::cerr << "pypto-sim: warning: " << trace.placeholder_tasks
              << " placeholder tasks of the swimlane (its \"Fake Core\" lane: tasks without a "
                 "record) count as zero-cost dependency nodes";
    if (trace.kernel_placeholders > 0) {
      std::cerr << "; " << trace.kernel_placeholders
                << " of them name a compiled leaf (leafHash and operands, not a HUB): tasks that "
                   "ran without a record, whose core time the replay leaves out (their "
                   "successors may start early)";
    }
    if (trace.merged_placeholders > 0) {
      std::cerr << "; " << trace.merged_placeholders
                << " of them were drawn at the same time as another and are merged with it";
    }
    if (trace.dropped_placeholder_arrows > 0) {
      std::cerr << "; " << trace.dropped_placeholder_arrows
                << " flow arrows from or to them point back in time (drawn positions, not "
                   "recorded ones) and are dropped";
    }
    std::cerr << "\n";
  }
}

bool mode_given(const po::variables_map& vm, const sched::RuntimeOptions& rt,
                const std::vector<std::string>& run_config_keys) {
  return vm.count("device-sched-mode") + vm.count("sched-mode") != 0 || !rt.policy_params.empty() ||
         std::find(run_config_keys.begin(), run_config_keys.end(), "device_sched_mode") !=
             run_config_keys.end();
}

std::string infer_mode(const std::string& path, const sched::TaskGraph& graph,
                       const model::ChipConfig& chip, sched::RuntimeOptions& rt,
                       std::vector<sim::ModeTrial>& trials, ProgressLine& bar) {
  if (graph.recorded_start_ps.empty()) return "";
  if (!sim::can_infer_sched_mode(graph)) {
    return path + " has " + std::to_string(graph.num_tasks()) +
           " tasks; a recording's device_sched_mode is inferred up to " +
           std::to_string(sim::kInferModeMaxTasks) + " only: replayed under " + rt.policy +
           " (--device-sched-mode chooses)";
  }
  bar.phase("inferring the device_sched_mode of " + path);
  sim::ModeInference m = sim::infer_sched_mode(graph, chip, rt);
  rt.policy = m.policy;
  std::string note = "device_sched_mode of " + path +
                     " inferred from its recorded starts: " + m.policy + " (median start error";
  for (const sim::ModeTrial& t : m.trials) {
    char us[32];
    std::snprintf(us, sizeof us, "%.2f", t.start_error_median_us);
    note += std::string(&t == &m.trials.front() ? " " : ", ") + t.policy + " " + us + " us";
  }
  trials = std::move(m.trials);
  return note + "); --device-sched-mode chooses";
}

}  // namespace pypto::cli
