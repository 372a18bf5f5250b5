// SPDX-License-Identifier: Apache-2.0
// Which device_sched_mode a board recording ran under. A recording does not say, and the
// runtime's built-in modes hand ready tasks to cores in different orders (docs/fidelity.md,
// "Dispatch order"): a replay under another mode starts the same tasks elsewhere in time. So
// the mode is read from the recording itself, as --chip auto reads the chip from its cores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sched/task_graph.h"
#include "pypto/sim/simulation.h"

namespace pypto::sim {

// Recordings with more tasks are not probed (a probe is one replay per mode): the run keeps
// the default mode and says how to choose one.
inline constexpr std::uint64_t kInferModeMaxTasks = 20000;

struct ModeInference {
  std::string policy;             // the mode chosen
  std::vector<ModeTrial> trials;  // every mode probed, in device_sched_mode order
};

// Whether a run of `graph` should infer its mode: the graph holds recorded start times and
// at most kInferModeMaxTasks tasks.
bool can_infer_sched_mode(const sched::TaskGraph& graph);

// Replays `graph` under each of the four device_sched_mode policies (their default
// parameters, `base`'s other options) and chooses the one whose tasks start nearest their
// recorded starts: the least median start error, then the least |makespan error|, then the
// lowest mode (fifo, PyPTO's default, wins a tie). Contract: can_infer_sched_mode(graph).
// Errors of a replay propagate (ConfigError, ModelError).
ModeInference infer_sched_mode(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                               const sched::RuntimeOptions& base);

}  // namespace pypto::sim
