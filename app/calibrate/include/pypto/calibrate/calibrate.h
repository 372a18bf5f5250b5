// SPDX-License-Identifier: Apache-2.0
// Calibration: fits chip config values (the AICPU costs, by default) to one or more
// recordings by minimising the per-task start error of their replays (traces/FORMAT.md
// "Replay metrics"), and writes the fit as a config overlay for --config.
//
// Example:
//   auto rec = trace::load_trace("run.ndjson", {}, chip);
//   calibrate::Recording r{"run.ndjson", &rec.graph, {}};
//   calibrate::CalibrateResult fit = calibrate::calibrate({r}, chip, {});
//   std::cout << calibrate::fit_table(fit);
//   std::ofstream("fit.yaml") << calibrate::overlay_yaml(fit, chip.chip.name);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sched/task_graph.h"
#include "pypto/sim/simulation.h"

namespace pypto::calibrate {

// One config value the search may move: an unsigned-integer key of ChipConfig and the window
// it is searched in (within the config table's range, which validate() enforces as well).
struct ParamSpec {
  std::string key;  // dotted, e.g. "aicpu.poll_cycles"
  std::uint32_t lo = 0, hi = 0;
};

// The keys fitted when none are named: every AICPU cost and start-up latency of the model.
// Those a set of recordings does not constrain are found by the search (see ParamFit) and
// left out of the fit.
std::vector<ParamSpec> default_params();
// The spec of one key of default_params(); throws ConfigError naming the keys for another.
ParamSpec param_spec(const std::string& key);

struct Recording {
  std::string name;               // for tables and the overlay's comment
  const sched::TaskGraph* graph;  // with recorded starts (not owned)
  sched::RuntimeOptions runtime;  // the runtime options it was recorded with
};

struct CalibrateOptions {
  std::vector<ParamSpec> params = default_params();
  std::uint32_t max_simulations = 400;  // one simulation = one replay of one recording
  // Weight of the mean absolute makespan error in the objective (a tie-breaker).
  double makespan_weight = 0.1;
  std::function<void(const std::string&)> progress;  // one line per step, if set
};

// How one recording replays under a config.
struct RecordingFit {
  std::string name;
  sim::ReplayFidelity fidelity;    // median/p90 start error, Spearman, waits
  double mean_start_error_us = 0;  // mean |s(i) - r(i)| over the compared tasks
  // The same with the tasks of one kernel in one root paired in start order (the k-th
  // recorded start of the group with the k-th simulated one): the objective's term.
  double matched_start_error_us = 0;
  double makespan_error_pct = 0;  // (simulated - recorded) / recorded x 100, task span
  double makespan_error_us = 0;   // signed
};

struct ParamFit {
  std::string key;
  std::uint32_t start = 0, fitted = 0;
  // false: moving it (x2 and /2 from the start) changed no replay at all, so the recordings
  // say nothing about it; it keeps its start value and is not in the overlay.
  bool sensitive = true;
  bool at_bound = false;  // the fit stopped at the edge of its window
};

struct CalibrateResult {
  std::string chip;  // the chip the fit started from
  std::vector<ParamFit> params;
  std::vector<RecordingFit> before, after;  // per recording, in input order
  double objective_before_us = 0, objective_after_us = 0;
  std::uint32_t simulations = 0;  // replays run (repeated points are not run again)
  bool converged = false;         // false: stopped by max_simulations
  std::vector<std::string> recordings;
  model::ChipConfig fitted;
};

// The objective of a config: mean |start error| over every compared task of every recording
// (µs) + makespan_weight x mean over recordings of |makespan error| (µs).
//
// The search is deterministic (same inputs, same result): a compass search on log(1 + value),
// parameters in the order given, each first tried at x2 and /2 of its start value (which also
// finds the parameters without effect), a successful step doubled, a failed one halved down to
// a change of 1; it ends when no parameter moves or max_simulations is reached.
// Contract: every recording has recorded starts; the start config is valid. Throws
// ConfigError for a key outside default_params() or an empty recording list; ModelError and
// TraceError from simulate() propagate.
CalibrateResult calibrate(const std::vector<Recording>& recordings, const model::ChipConfig& start,
                          const CalibrateOptions& opt);

// How a config replays the recordings (the figures in CalibrateResult::before/after).
std::vector<RecordingFit> evaluate(const std::vector<Recording>& recordings,
                                   const model::ChipConfig& chip);

// The fit, its residuals per recording before and after, as a table for the terminal.
std::string fit_table(const CalibrateResult& r);

// A config overlay with the fitted keys only: `base: <base_preset>` and one line per key
// that the recordings constrain, each with a comment naming the recordings and the objective.
// `extra_sets` ("key.path=value", e.g. the --set the fit ran with) are written too, so that
// the overlay reproduces the fitted config.
std::string overlay_yaml(const CalibrateResult& r, const std::string& base_preset,
                         const std::vector<std::string>& extra_sets = {});

}  // namespace pypto::calibrate
