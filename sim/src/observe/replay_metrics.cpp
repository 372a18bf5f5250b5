// SPDX-License-Identifier: Apache-2.0
#include "replay_metrics.h"

namespace pypto::sim {

void ReplayMetrics::on_run_start(const RunInfo& run) {
  graph_ = &run.graph;
  if (run.graph.num_tasks() >= kReplayThreadFromTasks) {
    const sched::TaskGraph* g = graph_;
    recorded_ = std::async(std::launch::async, [g] { return recorded_replay(*g); });
  }
}

void ReplayMetrics::on_run_end() {
  fidelity_ =
      replay_fidelity(*graph_, recorded_.valid() ? recorded_.get() : recorded_replay(*graph_),
                      tl_.start_ps, tl_.end_ps);
}

}  // namespace pypto::sim
