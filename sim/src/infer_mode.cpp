// SPDX-License-Identifier: Apache-2.0
// The mode a recording ran under (infer_mode.h): one replay per built-in mode, compared with
// the recorded start times by the replay metrics of traces/FORMAT.md.
#include "pypto/sim/infer_mode.h"

#include <cmath>

#include "pypto/common/errors.h"

namespace pypto::sim {

bool can_infer_sched_mode(const sched::TaskGraph& graph) {
  return !graph.recorded_start_ps.empty() && graph.num_tasks() <= kInferModeMaxTasks;
}

ModeInference infer_sched_mode(const sched::TaskGraph& graph, const model::ChipConfig& chip,
                               const sched::RuntimeOptions& base) {
  NPU_CHECK(can_infer_sched_mode(graph), "infer_sched_mode: the graph has no recorded starts");
  ModeInference out;
  const ModeTrial* best = nullptr;
  for (const std::string_view mode : sched::kModePolicies) {
    SimOptions opt;
    opt.runtime = base;
    opt.runtime.policy = std::string(mode);
    opt.runtime.policy_params.clear();
    opt.record_timeline = false;
    opt.record_task_times = true;
    opt.record_aicpu_events = false;
    const SimStats s = simulate(graph, chip, opt).stats;
    ModeTrial t;
    t.policy = opt.runtime.policy;
    t.start_error_median_us = s.has_fidelity ? s.fidelity.start_error_median_us : 0;
    if (s.has_task_span && s.recorded_makespan_ps > 0) {
      const double span = static_cast<double>(s.last_end_ps - s.first_start_ps);
      const auto rec = static_cast<double>(s.recorded_makespan_ps);
      t.makespan_error_pct = (span - rec) / rec * 100.0;
    }
    out.trials.push_back(t);
  }
  for (const ModeTrial& t : out.trials) {
    if (best == nullptr || t.start_error_median_us < best->start_error_median_us ||
        (t.start_error_median_us == best->start_error_median_us &&
         std::abs(t.makespan_error_pct) < std::abs(best->makespan_error_pct))) {
      best = &t;
    }
  }
  out.policy = best->policy;
  return out;
}

}  // namespace pypto::sim
