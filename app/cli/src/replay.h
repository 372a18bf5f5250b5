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

// Whether the run's flags or --run-config chose the device_sched_mode (a policy's parameters
// choose it too: they belong to the mode they were given for).
bool mode_given(const po::variables_map& vm, const sched::RuntimeOptions& rt,
                const std::vector<std::string>& run_config_keys);

// A recording that does not say its device_sched_mode runs under the mode its start times fit
// best (sim/infer_mode.h): `rt.policy` becomes that mode and `trials` holds the probes.
// Returns the note to print once the run is done (each mode's median start error; or, for a
// recording with more tasks than are probed, that rt.policy is kept); empty when `graph` has
// no recorded starts.
std::string infer_mode(const std::string& path, const sched::TaskGraph& graph,
                       const model::ChipConfig& chip, sched::RuntimeOptions& rt,
                       std::vector<sim::ModeTrial>& trials, ProgressLine& bar);

}  // namespace pypto::cli
