// SPDX-License-Identifier: Apache-2.0
// What run, compare and calibrate share once their flags are read: loading a trace with its
// chip, one simulation with its progress line and Ctrl-C, and the reports of a run.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "flags.h"
#include "progress_line.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/trace_loader.h"

namespace pypto::cli {

double seconds_since(std::chrono::steady_clock::time_point t0);

// Loads a trace and resolves the chip. --chip auto (the default without --chip/--config): a
// board recording's blockIdx tell the core counts, so the preset that fits is taken; other
// traces run on a2. The trace is read once, then priced for the chip (its board clock
// converts the ticks). A named chip is checked against the recording.
trace::LoadedTrace load_with_chip(const Common& c, const std::string& path, const std::string& prof,
                                  const sched::RuntimeOptions& rt, model::ChipConfig& chip,
                                  ProgressLine& bar);

// The warnings for a topology's tasks that its --prof recording lacks and for a swimlane's
// placeholder tasks (none: says nothing).
void warn_unrecorded(const trace::LoadedTrace& trace);

// One simulation of a whole graph, with the progress line and Ctrl-C (an Interrupted naming
// how far it got).
sim::SimResult run_one(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                       const sched::RuntimeOptions& rt, bool timeline, ProgressLine& bar);

// The reports of one run, with the progress line naming each file as it is written.
// ahead: the graph-only reports started before the run (null: none).
std::vector<std::string> write_reports_shown(const std::string& dir, const sched::TaskGraph& g,
                                             const model::ChipConfig& chip, const sim::SimResult& r,
                                             sim::ReportOptions ro, ProgressLine& bar,
                                             sim::GraphReports* ahead = nullptr);

}  // namespace pypto::cli
