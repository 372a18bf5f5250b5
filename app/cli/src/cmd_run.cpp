// SPDX-License-Identifier: Apache-2.0
// pypto-sim run TRACE: replays a task trace on the chip model and writes its reports
// (stats.json, trace.json, swim.json), and with --timed-trace the replay as a native trace.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "flags.h"
#include "progress_line.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/model/config_loader.h"
#include "pypto/trace/native_writer.h"
#include "replay.h"

namespace pypto::cli {

namespace {

// The outputs of one `run` and its summary.
void finish_run(const Common& c, const std::string& timed_trace, const std::string& out,
                const sched::TaskGraph& graph, const model::ChipConfig& chip,
                const sim::SimResult& r, const sim::ReportOptions& ro, ProgressLine& bar,
                sim::GraphReports* ahead, sim::PhaseWall& phases) {
  const auto write_t0 = std::chrono::steady_clock::now();
  // The timed trace is complete before the reports are written and renamed after them:
  // either every output of the run is there, or none.
  std::unique_ptr<common::OutputFile> timed;
  if (!timed_trace.empty()) {
    timed = std::make_unique<common::OutputFile>(timed_trace);
    bar.phase("writing " + timed_trace);
    const trace::TaskTimes times{r.timeline.start_ps, r.timeline.end_ps};
    common::write_files({timed.get()}, [&] {
      trace::write_native_trace(graph, &times, chip.chip.name,
                                "pypto-sim run " + c.trace + " (simulated times)", timed->stream());
    });
    timed->finish();
    common::check_interrupt("writing " + timed_trace);
  }
  const auto files = write_reports_shown(out, graph, chip, r, ro, bar, ahead);
  if (timed) timed->commit();
  phases.write_s = seconds_since(write_t0);
  if (!c.quiet) {
    std::cout << sim::summary_table(r, &phases) << "reports in " << out << "/\n";
  }
  if (ro.trace_json) {
    for (const auto& n : sim::trace_notes(graph, r, ro))
      std::cerr << "pypto-sim: note: " << n << "\n";
  }
}

}  // namespace

int cmd_run(Context& ctx, int argc, char** argv) {
  Common c;
  po::options_description d = common_options(c);
  add_policy_module_option(d, c.policy_modules);
  d.add_options()("trace", po::value(&c.trace), "trace file");
  std::string timed_trace;
  d.add_options()("timed-trace", po::value(&timed_trace),
                  "also write the replay as a native trace with every task's simulated "
                  "start/end (a recording made by the model; traces/FORMAT.md)");
  po::positional_options_description p;
  p.add("trace", 1);
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "run TRACE [options]")) return 0;
  if (c.trace.empty()) throw UsageError("missing TRACE: pypto-sim run TRACE [options]");
  const Inputs inputs = common_inputs(c, c.trace, c.prof);
  if (!c.out.empty()) refuse_overwrite_by_reports(c.out, inputs);
  if (!timed_trace.empty()) {
    refuse_overwrite("--timed-trace", timed_trace, inputs);
    const std::string out = c.out.empty() ? "" : c.out;
    for (const char* name : sim::kReportFiles) {
      if (!out.empty() && same_file(timed_trace, out + "/" + name)) {
        throw UsageError("--timed-trace " + timed_trace + " is also the report " + out + "/" +
                         name + " of -o; choose another path");
      }
    }
  }
  load_policy_modules(ctx.host, c.policy_modules);
  std::vector<std::string> config_keys;
  sched::RuntimeOptions rt = runtime_options(vm, c, true, &config_keys);
  const bool given = mode_given(vm, rt, config_keys);
  model::ChipConfig chip;
  ProgressLine bar(c.quiet);
  const auto read_t0 = std::chrono::steady_clock::now();
  trace::LoadedTrace trace = load_with_chip(c, c.trace, c.prof, rt, chip, bar);
  sim::PhaseWall phases;
  phases.read_s = seconds_since(read_t0);
  warn_unrecorded(trace);
  std::vector<sim::ModeTrial> trials;
  const std::string mode_note =
      given ? "" : infer_mode(c.trace, trace.graph, chip, rt, trials, bar);
  const std::string out = c.out.empty() ? default_out_dir(c.trace, rt.policy) : c.out;
  sim::ReportOptions ro;
  ro.trace_json = ro.swim_json = !c.no_trace;
  // topo.json depends on the graph alone: it is written while the model runs.
  sim::GraphReports ahead = sim::start_graph_reports(out, trace.graph, ro);
  sim::SimResult r = run_one(trace.graph, chip, rt, !c.no_trace || !timed_trace.empty(), bar);
  r.stats.mode_trials = std::move(trials);
  finish_run(c, timed_trace, out, trace.graph, chip, r, ro, bar, &ahead, phases);
  // After the run: a run that fails says only why.
  if (!mode_note.empty() && !c.quiet) std::cerr << "pypto-sim: note: " << mode_note << "\n";
  return 0;
}

}  // namespace pypto::cli
