// SPDX-License-Identifier: Apache-2.0
// pypto-sim run TRACE: replays a task trace on the chip model and writes its reports
// (stats.json, trace.json, swim.json), and with --timed-trace the replay as a native trace.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "flags.h"
#include "progress_line.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/trace/native_writer.h"
#include "replay.h"

namespace pypto::cli {

namespace {

// The outputs of one `run` and its summary.
void finish_run(const Common& c, const std::string& timed_trace, const std::string& out,
                const sched::TaskGraph& graph, const sim::ChipConfig& chip, const sim::SimResult& r,
                const sim::ReportOptions& ro, ProgressLine& bar, sim::GraphReports* ahead,
                sim::PhaseWall& phases) {
  const auto write_t0 = std::chrono::steady_clock::now();
  // The timed trace is complete before the reports are written and renamed after them:
  // either every output of the run is there, or none.
  std::unique_ptr<OutputFile> timed;
  if (!timed_trace.empty()) {
    timed = std::make_unique<OutputFile>(timed_trace);
    bar.phase("writing " + timed_trace);
    sim::write_native_trace(graph, &r.timeline, chip.chip.name,
                            "pypto-sim run " + c.trace + " (simulated times)", timed->stream());
    timed->finish();
    check_interrupt("writing " + timed_trace);
  }
  const auto files = write_reports_shown(out, graph, chip, r, ro, bar, ahead);
  if (timed) timed->commit();
  phases.write_s = seconds_since(write_t0);
  if (phases.read_during_run) phases.total_s = phases.run_s + phases.write_s;
  if (!c.quiet) {
    std::cout << sim::summary_table(r, &phases) << "reports in " << out << "/\n";
  }
  if (ro.trace_json) {
    for (const auto& n : sim::trace_notes(graph, r, ro))
      std::cerr << "pypto-sim: note: " << n << "\n";
  }
}

// `run` on a native trace: the model starts on the first device tasks while the rest is
// read (sim::GraphFeed); outputs are those of a whole read.
int run_streamed(const Common& c, const sched::RuntimeOptions& rt, const std::string& timed_trace,
                 sim::ChipConfig& chip, ProgressLine& bar,
                 std::chrono::steady_clock::time_point read_t0) {
  const bool auto_chip = c.chip == "auto" || (c.chip.empty() && c.config.empty());
  chip = cfg::resolve_chip_config(auto_chip ? std::string("a2") : c.chip, c.config, c.sets);
  sim::LoadOptions lo;
  lo.runtime = rt;
  check_interrupt("loading " + c.trace);
  const std::unique_ptr<sim::GraphFeed> feed = sim::start_trace_feed(c.trace, lo, chip);
  // A trace that does not stream (device-task ids) is read whole first, as load_trace would:
  // the phases are then read, then simulate.
  const auto stop_if_interrupted = [&] {
    if (!interrupt_requested()) return;
    bar.clear();
    throw Interrupted("interrupted while loading " + c.trace);
  };
  const bool streams = feed->streams();
  if (streams) {
    // The run has waited for its first device task: the reading so far (shown at once
    // where the line shows from the start; later the simulating line carries the reading).
    bar.reading(c.trace, feed->read_bytes(), feed->total_bytes(), feed->read_wall_s());
  } else {
    bar.phase("reading " + c.trace);
    feed->on_wait([&] {
      stop_if_interrupted();
      bar.bytes(feed->read_bytes(), feed->total_bytes());
    });
    feed->complete();
    bar.clear();
  }
  // While the trace is read, the progress line says how far: "; reading t.ndjson: 120.5 /
  // 800.0 MB, 95.3 MB/s".
  const auto reading = [&c, &feed]() -> std::string {
    const std::uint64_t done = feed->read_bytes(), total = feed->total_bytes();
    if (total == 0 || done >= total) return "";
    return "; reading " + c.trace + ": " + read_rate_text(done, total, feed->read_wall_s());
  };
  feed->on_wait([&] {
    stop_if_interrupted();
    bar.reading(c.trace, feed->read_bytes(), feed->total_bytes(), feed->read_wall_s());
  });
  const sim::SimResult r =
      run_one(*feed, chip, rt, !c.no_trace || !timed_trace.empty(), bar, reading);
  sim::PhaseWall phases;
  phases.read_s = feed->read_wall_s();
  phases.read_during_run = streams;
  phases.run_s = seconds_since(read_t0);
  const sched::TaskGraph& graph = feed->graph();
  const std::string out = c.out.empty() ? default_out_dir(c.trace, rt.policy) : c.out;
  sim::ReportOptions ro;
  ro.trace_json = ro.swim_json = !c.no_trace;
  sim::GraphReports ahead = sim::start_graph_reports(out, graph, ro);
  finish_run(c, timed_trace, out, graph, chip, r, ro, bar, &ahead, phases);
  return 0;
}

}  // namespace

int cmd_run(Context& ctx, int argc, char** argv) {
  Common c;
  po::options_description d = common_options(c);
  add_policy_module_option(d, c.policy_modules);
  d.add_options()("trace", po::value(&c.trace), "trace file");
  std::string timed_trace;
  bool read_first = false;
  d.add_options()("timed-trace", po::value(&timed_trace),
                  "also write the replay as a native trace with every task's simulated "
                  "start/end (a recording made by the model; traces/FORMAT.md)")(
      "read-first", po::bool_switch(&read_first),
      "read the whole trace before the model starts (a native trace otherwise runs while "
      "it is read; outputs are the same, the summary's simulate time is then the model's "
      "alone)");
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
  const sched::RuntimeOptions rt = runtime_options(vm, c);
  sim::ChipConfig chip;
  ProgressLine bar(c.quiet);
  const auto read_t0 = std::chrono::steady_clock::now();
  if (!read_first && c.prof.empty() &&
      sim::detect_trace_format(c.trace) == sim::TraceFormat::kNative) {
    return run_streamed(c, rt, timed_trace, chip, bar, read_t0);
  }
  sim::LoadedTrace trace = load_with_chip(c, c.trace, c.prof, rt, chip, bar);
  sim::PhaseWall phases;
  phases.read_s = seconds_since(read_t0);
  warn_unrecorded(trace);
  const std::string out = c.out.empty() ? default_out_dir(c.trace, rt.policy) : c.out;
  sim::ReportOptions ro;
  ro.trace_json = ro.swim_json = !c.no_trace;
  // topo.json depends on the graph alone: it is written while the model runs.
  sim::GraphReports ahead = sim::start_graph_reports(out, trace.graph, ro);
  const sim::SimResult r = run_one(trace.graph, chip, rt, !c.no_trace || !timed_trace.empty(), bar);
  finish_run(c, timed_trace, out, trace.graph, chip, r, ro, bar, &ahead, phases);
  return 0;
}

}  // namespace pypto::cli
