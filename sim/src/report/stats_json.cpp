// SPDX-License-Identifier: Apache-2.0
// stats.json: the numbers of a run (stats_json in report.h).
#include <algorithm>
#include <cmath>

#include "report_files.h"

namespace pypto::sim {
namespace {

using nlohmann::ordered_json;
using report::ns;
using report::replay_error_pct;
using report::task_span_ps;

// Round to a fixed number of decimals so printed ratios do not depend on the last bit.
double round_to(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

ordered_json core_stats(const CoreTypeStats& c) {
  return ordered_json{{"count", c.count},
                      {"tasks", c.tasks},
                      {"busy_ns", ns(c.busy_ps)},
                      {"utilization", round_to(c.utilization, 6)}};
}

// The span and the error against a recording need the task times; a run that kept none
// reports them as absent (null), never as a number.
ordered_json span_ns_or_null(const SimStats& s) {
  return s.has_task_span ? ordered_json(ns(task_span_ps(s))) : ordered_json(nullptr);
}

// PyPTO's AICore summary of a swimlane (draw_swim_lane.py's print_aicore_summary): the end-to-end
// time is the first AIC/AIV start to the last AIC/AIV end, blank gaps between device tasks
// included (our task span), and the utilization is the cores' busy time over that span times
// the lanes (cores that ran a task). Absent (null) when the run kept no task times.
ordered_json aicore_summary(const SimStats& s) {
  const double span = double(task_span_ps(s)), lanes = s.aicore_lanes;
  const double busy = double(s.aic.busy_ps) + double(s.aiv.busy_ps);
  const bool known = s.has_task_span && span > 0 && lanes > 0;
  return ordered_json{
      {"end_to_end_ns", span_ns_or_null(s)},
      {"utilization", known ? ordered_json(round_to(busy / (lanes * span), 6)) : nullptr},
      {"lanes", s.aicore_lanes}};
}

}  // namespace

nlohmann::ordered_json stats_json(const SimResult& r) {
  const SimStats& s = r.stats;
  ordered_json j;
  j["schema"] = "pypto-sim-stats/1";
  j["chip"] = s.chip;
  j["policy"] = s.policy;
  if (!s.mode_trials.empty()) {
    // The recording did not name its mode: each probe, the least median start error chosen.
    ordered_json trials = ordered_json::array();
    for (const ModeTrial& t : s.mode_trials) {
      trials.push_back(ordered_json{{"policy", t.policy},
                                    {"start_error_median_us", round_to(t.start_error_median_us, 6)},
                                    {"makespan_error_pct", round_to(t.makespan_error_pct, 3)}});
    }
    j["policy_inferred_from"] = trials;
  }
  // Only for a policy with parameters: the runs of the others read as they always did.
  if (!s.policy_params.empty()) {
    ordered_json params = ordered_json::object();
    for (const PolicyParamValue& p : s.policy_params) {
      if (p.type == sched::ParamType::kBool) {
        params[p.name] = p.value != 0;
      } else if (p.type == sched::ParamType::kInt) {
        params[p.name] = static_cast<std::int64_t>(p.value);
      } else {
        params[p.name] = p.value;
      }
    }
    j["policy_params"] = params;
  }
  j["source"] = s.source;
  j["makespan_ns"] = ns(s.makespan_ps);
  j["task_span_ns"] = span_ns_or_null(s);
  j["aicore"] = aicore_summary(s);
  j["tasks"] = s.tasks;
  j["hub_tasks"] = s.hub_tasks;
  j["edges"] = s.edges;
  j["device_tasks"] = s.device_tasks;
  j["cores"] = ordered_json{{"AIC", core_stats(s.aic)}, {"AIV", core_stats(s.aiv)}};
  ordered_json threads = ordered_json::array();
  for (std::size_t t = 0; t < s.threads.size(); ++t) {
    const auto& th = s.threads[t];
    threads.push_back(ordered_json{{"thread", t},
                                   {"rounds", th.rounds},
                                   {"polls", th.polls},
                                   {"resolves", th.resolves},
                                   {"dispatches", th.dispatches},
                                   {"pending_kept_free", th.pending_kept_free},
                                   {"busy_ns", ns(th.busy_ps)}});
  }
  j["aicpu"] = ordered_json{{"sched_threads", s.sched_threads},
                            {"threads", threads},
                            {"control_flow_busy_ns", ns(s.control_busy_ps)}};
  // Reads and writes apart: a write that allocates a line is no hit, so the hit rate is the
  // reads' (a plain stream reads every line once: 0 %, not the 50 % of a mixed count).
  const std::uint64_t reads = s.l2.read_hits + s.l2.read_misses;
  j["l2"] = ordered_json{
      {"warm_start", s.l2_warm_start},
      {"read_hits", s.l2.read_hits},
      {"read_misses", s.l2.read_misses},
      {"hit_rate", reads == 0 ? 0.0 : round_to(double(s.l2.read_hits) / double(reads), 6)},
      {"write_hits", s.l2.write_hits},
      {"write_allocations", s.l2.write_allocations},
      {"write_fills", s.l2.write_fills},
      {"writebacks", s.l2.writebacks},
      {"hit_bytes", s.l2_hit_bytes},
      {"miss_bytes", s.l2_miss_bytes},
      {"dirty_bytes_at_end", s.l2_dirty_bytes_at_end}};
  // Bandwidth from the bytes that crossed HBM during the run; the output still dirty in L2
  // is owed, not moved (a later run's evictions pay it), so it is reported apart and never
  // inflates the figure. The flow model never exceeds the effective peak, and the clamp
  // keeps rounding from showing more.
  const double achieved =
      s.makespan_ps == 0 ? 0.0 : double(s.hbm_bytes) / double(s.makespan_ps) * 1000.0;
  j["hbm"] = ordered_json{
      {"bytes", s.hbm_bytes},
      {"busy_ns", ns(s.hbm_busy_ps)},
      {"achieved_gbps",
       round_to(s.hbm_effective_gbps > 0 ? std::min(achieved, s.hbm_effective_gbps) : achieved, 3)},
      {"peak_gbps", round_to(s.hbm_peak_gbps, 3)},
      {"effective_peak_gbps", round_to(s.hbm_effective_gbps, 3)},
      {"pending_writeback_bytes", s.l2_dirty_bytes_at_end}};
  j["workspace"] = ordered_json{{"peak_bytes", s.workspace_peak_bytes},
                                {"minimum_bytes", s.workspace_minimum_bytes},
                                {"capacity_bytes", s.workspace_capacity_bytes}};
  if (s.has_recorded) {
    j["replay"] = ordered_json{{"recorded_makespan_ns", ns(s.recorded_makespan_ps)},
                               {"simulated_makespan_ns", span_ns_or_null(s)},
                               {"error_pct", s.has_task_span && s.recorded_makespan_ps > 0
                                                 ? ordered_json(round_to(replay_error_pct(s), 3))
                                                 : ordered_json(nullptr)}};
    if (s.has_fidelity) {
      // traces/FORMAT.md "Replay metrics"; times in us to the picosecond.
      const ReplayFidelity& f = s.fidelity;
      const auto dist = [](const double v[3]) {
        return ordered_json{
            {"p10", round_to(v[0], 6)}, {"p50", round_to(v[1], 6)}, {"p90", round_to(v[2], 6)}};
      };
      j["replay"]["tasks_compared"] = f.tasks;
      j["replay"]["start_error_us"] = ordered_json{{"median", round_to(f.start_error_median_us, 6)},
                                                   {"p90", round_to(f.start_error_p90_us, 6)}};
      j["replay"]["start_order_spearman"] =
          f.has_spearman ? ordered_json(round_to(f.spearman, 6)) : ordered_json(nullptr);
      j["replay"]["wait_us"] = ordered_json{{"tasks", f.wait_tasks},
                                            {"recorded", dist(f.recorded_wait_us)},
                                            {"simulated", dist(f.simulated_wait_us)}};
    }
  }
  j["sim_events"] = s.sim_events;
  // Wall-clock fields last: the only ones that differ between identical runs.
  j["wall_s"] = s.wall_s;
  j["tasks_per_s"] = s.wall_s > 0 ? double(s.tasks) / s.wall_s : 0.0;
  return j;
}

}  // namespace pypto::sim
