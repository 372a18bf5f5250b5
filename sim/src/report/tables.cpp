// SPDX-License-Identifier: Apache-2.0
// The CLI's text tables: one run's summary and several runs side by side.
#include <cstdio>
#include <sstream>

#include "report_files.h"

namespace pypto::sim {
namespace {

using report::ns;
using report::replay_error_pct;
using report::task_span_ps;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double aicpu_busy_pct(const SimStats& s) {
  if (s.threads.empty() || s.makespan_ps == 0) return 0.0;
  std::uint64_t busy = 0;
  for (const auto& t : s.threads) busy += t.busy_ps;
  return 100.0 * double(busy) / (double(s.makespan_ps) * double(s.threads.size()));
}

// Of line reads (write allocations are no hits; see stats_json).
double hit_rate_pct(const SimStats& s) {
  const std::uint64_t reads = s.l2.read_hits + s.l2.read_misses;
  return reads == 0 ? 0.0 : 100.0 * double(s.l2.read_hits) / double(reads);
}

}  // namespace

std::string summary_table(const SimResult& r, const PhaseWall* phases) {
  const SimStats& s = r.stats;
  std::ostringstream o;
  o << "chip " << s.chip << ", policy " << s.policy
    << (s.mode_trials.empty() ? "" : " (inferred from the recorded starts)") << ", "
    << s.sched_threads << " schedule threads\n";
  o << "  makespan        " << fmt("%.3f", ns(s.makespan_ps) / 1000.0) << " us\n";
  o << "  tasks           " << s.tasks << " in " << s.device_tasks << " device tasks ("
    << s.hub_tasks << " HUB)\n";
  o << "  AIC utilization " << fmt("%.1f", 100 * s.aic.utilization) << " % of " << s.aic.count
    << " cores\n";
  o << "  AIV utilization " << fmt("%.1f", 100 * s.aiv.utilization) << " % of " << s.aiv.count
    << " cores\n";
  o << "  AICPU busy      " << fmt("%.1f", aicpu_busy_pct(s)) << " % (schedule threads)\n";
  if (s.has_task_span && s.aicore_lanes > 0 && task_span_ps(s) > 0) {
    // PyPTO's "AICORE Prof Summary" figures (stats.json "aicore").
    const double span = double(task_span_ps(s));
    o << "  AICore e2e      " << fmt("%.3f", span / 1e6) << " us, utilization "
      << fmt("%.1f", 100 * (double(s.aic.busy_ps) + double(s.aiv.busy_ps)) /
                         (double(s.aicore_lanes) * span))
      << " % of " << s.aicore_lanes << " lanes (first AIC/AIV start to last end)\n";
  }
  o << "  L2 hit rate     " << fmt("%.1f", hit_rate_pct(s)) << " % of "
    << (s.l2.read_hits + s.l2.read_misses) << " line reads (" << s.l2.write_allocations
    << " write allocations)\n";
  o << "  HBM             " << s.hbm_bytes << " bytes (" << s.l2_dirty_bytes_at_end
    << " written back later)\n";
  if (s.has_recorded) {
    o << "  recorded        " << fmt("%.3f", ns(s.recorded_makespan_ps) / 1000.0) << " us";
    if (s.has_task_span && s.recorded_makespan_ps > 0) {
      o << " (simulated task span " << fmt("%.3f", ns(task_span_ps(s)) / 1000.0) << " us, error "
        << fmt("%+.2f", replay_error_pct(s)) << " %)";
    } else {
      o << " (simulated task span not kept by this run)";
    }
    o << "\n";
  }
  if (s.has_fidelity && s.fidelity.tasks > 0) {
    const ReplayFidelity& f = s.fidelity;
    o << "  start error     median " << fmt("%.3f", f.start_error_median_us) << " us, p90 "
      << fmt("%.3f", f.start_error_p90_us) << " us over " << f.tasks
      << " tasks (each from its first start)\n";
    o << "  start order     Spearman "
      << (f.has_spearman ? fmt("%.3f", f.spearman) : std::string("n/a")) << "\n";
    if (f.wait_tasks > 0) {
      const auto dist = [](const double v[3]) {
        return fmt("%.3f", v[0]) + " / " + fmt("%.3f", v[1]) + " / " + fmt("%.3f", v[2]);
      };
      o << "  wait p10/50/90  recorded " << dist(f.recorded_wait_us) << " us, simulated "
        << dist(f.simulated_wait_us) << " us (" << f.wait_tasks << " tasks)\n";
    }
  }
  const std::string rate = fmt("%.0f", s.wall_s > 0 ? double(s.tasks) / s.wall_s : 0.0);
  if (phases == nullptr) {
    o << "  wall            " << fmt("%.3f", s.wall_s) << " s (" << rate << " tasks/s)\n";
  } else {
    o << "  wall            " << fmt("%.3f", phases->read_s + s.wall_s + phases->write_s)
      << " s (read " << fmt("%.3f", phases->read_s) << " s, simulate " << fmt("%.3f", s.wall_s)
      << " s at " << rate << " tasks/s, write " << fmt("%.3f", phases->write_s) << " s)\n";
  }
  return o.str();
}

std::string compare_table(const std::vector<SimResult>& runs) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %14s %9s %8s %8s %8s %10s\n", "policy", "makespan_us",
                "speedup", "AIC_%", "AIV_%", "L2_hit%", "AICPU_%");
  o << line;
  const double base = runs.empty() ? 0.0 : double(runs.front().stats.makespan_ps);
  for (const auto& r : runs) {
    const SimStats& s = r.stats;
    std::snprintf(line, sizeof line, "%-12s %14.3f %8.3fx %8.1f %8.1f %8.1f %10.1f\n",
                  s.policy.c_str(), ns(s.makespan_ps) / 1000.0,
                  s.makespan_ps == 0 ? 0.0 : base / double(s.makespan_ps), 100 * s.aic.utilization,
                  100 * s.aiv.utilization, hit_rate_pct(s), aicpu_busy_pct(s));
    o << line;
  }
  return o.str();
}

}  // namespace pypto::sim
