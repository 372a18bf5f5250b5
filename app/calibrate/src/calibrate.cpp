// SPDX-License-Identifier: Apache-2.0
// The compass search behind `pypto-sim calibrate` (calibrate.h states the algorithm).
#include "pypto/calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "pypto/common/errors.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/report.h"

namespace pypto::calibrate {
namespace {

using common::TaskId;
using common::TimePs;
using model::ChipConfig;

constexpr double kPsPerUs = 1e6;

// The fitted keys and their search windows. Windows: cycles from 1 (a cost of 0 cycles is
// allowed by the config but makes log steps meaningless; 1 cycle is 0.6 ns) to 100k cycles
// (55 us per operation, far above any cost a board shows); latencies from 0 to 100 us. Where
// each value lives is the config's field table (model::numeric_value), not restated here.
struct Field {
  ParamSpec spec;
  std::uint32_t get(const ChipConfig& c) const {
    const std::optional<double> v = model::numeric_value(c, spec.key);
    NPU_CHECK(v.has_value(), "calibrate: '" + spec.key + "' is not a numeric chip config key");
    return static_cast<std::uint32_t>(*v);
  }
};

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {{"aicpu.poll_cycles", 1, 100000}},
      {{"aicpu.resolve_cycles", 1, 100000}},
      {{"aicpu.dispatch_cycles", 1, 100000}},
      {{"aicpu.queue_op_cycles", 1, 100000}},
      {{"aicpu.fair_scan_cycles_per_thread", 1, 100000}},
      {{"aicpu.barrier_cycles", 1, 100000}},
      {{"aicpu.device_task_build_cycles", 1, 1000000}},
      {{"aicpu.stitch_cycles_per_task", 1, 100000}},
      {{"aicpu.submit_cycles", 1, 100000}},
      {{"cores.slot_switch_cycles", 1, 100000}},
      {{"aicpu.completion_latency_ns", 0, 100000}},
      {{"aicpu.launch_latency_ns", 0, 100000}},
      {{"cores.start_latency_ns", 0, 100000}},
  };
  return f;
}

const Field& field(const std::string& key) {
  for (const Field& f : fields()) {
    if (f.spec.key == key) return f;
  }
  std::vector<std::string> keys;
  for (const Field& f : fields()) keys.push_back(f.spec.key);
  std::string msg = "calibrate: '" + key + "' is not a parameter the fit can move";
  if (const auto guess = common::closest_match(key, keys))
    msg += "; did you mean '" + *guess + "'?";
  msg += " (parameters:";
  for (const auto& k : keys) msg += " " + k;
  throw ConfigError(msg + ")");
}

ChipConfig with_values(const ChipConfig& base, const std::vector<ParamSpec>& params,
                       const std::vector<std::uint32_t>& v) {
  ChipConfig c = base;
  for (std::size_t i = 0; i < params.size(); ++i) {
    model::apply_override(c, params[i].key + "=" + std::to_string(v[i]));
  }
  model::validate(c);
  return c;
}

RecordingFit replay(const Recording& rec, const ChipConfig& chip) {
  sim::SimOptions opt;
  opt.runtime = rec.runtime;
  opt.record_timeline = true;  // the starts, for the mean error
  opt.record_aicpu_events = false;
  const sim::SimResult r = sim::simulate(*rec.graph, chip, opt);
  const sched::TaskGraph& g = *rec.graph;
  RecordingFit f;
  f.name = rec.name;
  f.fidelity = r.stats.fidelity;
  // Mean |s(i) - r(i)|, each side from its own first start (as replay_fidelity measures).
  TimePs rec0 = common::kNever, sim0 = common::kNever;
  std::uint64_t n = 0;
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    if (g.core_type[t] == common::CoreType::kHub || !g.has_recorded_start(t)) continue;
    rec0 = std::min(rec0, g.recorded_start_ps[t]);
    sim0 = std::min(sim0, r.timeline.start_ps[t]);
    ++n;
  }
  double sum = 0;
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    if (g.core_type[t] == common::CoreType::kHub || !g.has_recorded_start(t)) continue;
    const double d = static_cast<double>(r.timeline.start_ps[t] - sim0) -
                     static_cast<double>(g.recorded_start_ps[t] - rec0);
    sum += std::fabs(d);
  }
  f.mean_start_error_us = n == 0 ? 0 : sum / static_cast<double>(n) / kPsPerUs;
  // The same with the instances of one kernel in one root matched in start order: siblings
  // (the successors of one fan-out) are interchangeable, and which core a sibling lands on
  // is not a cost the fit should chase.
  std::map<std::pair<std::uint32_t, std::uint32_t>,
           std::pair<std::vector<double>, std::vector<double>>>
      groups;
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    if (g.core_type[t] == common::CoreType::kHub || !g.has_recorded_start(t)) continue;
    auto& grp = groups[{g.root[t], g.kernel[t]}];
    grp.first.push_back(static_cast<double>(g.recorded_start_ps[t] - rec0));
    grp.second.push_back(static_cast<double>(r.timeline.start_ps[t] - sim0));
  }
  double matched = 0;
  for (auto& [key, grp] : groups) {
    std::sort(grp.first.begin(), grp.first.end());
    std::sort(grp.second.begin(), grp.second.end());
    for (std::size_t i = 0; i < grp.first.size(); ++i)
      matched += std::fabs(grp.first[i] - grp.second[i]);
  }
  f.matched_start_error_us = n == 0 ? 0 : matched / static_cast<double>(n) / kPsPerUs;
  const double recorded = g.recorded_makespan_ps ? static_cast<double>(*g.recorded_makespan_ps) : 0;
  const double simulated = static_cast<double>(r.stats.last_end_ps - r.stats.first_start_ps);
  f.makespan_error_us = (simulated - recorded) / kPsPerUs;
  f.makespan_error_pct = recorded > 0 ? (simulated - recorded) / recorded * 100.0 : 0;
  return f;
}

double objective(const std::vector<Recording>& recs, const std::vector<RecordingFit>& fits,
                 double makespan_weight) {
  double err = 0, tasks = 0, span = 0;
  for (std::size_t i = 0; i < fits.size(); ++i) {
    const double n = static_cast<double>(fits[i].fidelity.tasks);
    err += fits[i].matched_start_error_us * n;
    tasks += n;
    span += std::fabs(fits[i].makespan_error_us);
  }
  (void)recs;
  return (tasks > 0 ? err / tasks : 0) +
         makespan_weight * span / static_cast<double>(std::max<std::size_t>(fits.size(), 1));
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// The search's evaluations, each point simulated once.
class Search {
 public:
  Search(const std::vector<Recording>& recs, const ChipConfig& base, const CalibrateOptions& opt)
      : recs_(recs), base_(base), opt_(opt) {}

  // The objective at v; false when the budget is spent (and v was not seen before).
  bool eval(const std::vector<std::uint32_t>& v, double& f) {
    if (const auto it = seen_.find(v); it != seen_.end()) {
      f = it->second;
      return true;
    }
    if (sims_ + recs_.size() > opt_.max_simulations) return false;
    const ChipConfig c = with_values(base_, opt_.params, v);
    std::vector<RecordingFit> fits;
    try {
      for (const Recording& r : recs_) fits.push_back(replay(r, c));
      f = objective(recs_, fits, opt_.makespan_weight);
    } catch (const ModelError& e) {
      // A point where the model fails is no candidate; the search goes on around it.
      f = std::numeric_limits<double>::infinity();
      if (opt_.progress) {
        std::string at;
        for (std::size_t i = 0; i < v.size(); ++i) {
          at += (i ? ", " : "") + opt_.params[i].key + "=" + std::to_string(v[i]);
        }
        opt_.progress("replay failed at " + at + ": " + e.what() + "; point rejected");
      }
    }
    sims_ += static_cast<std::uint32_t>(recs_.size());
    seen_.emplace(v, f);
    return true;
  }
  std::uint32_t sims() const { return sims_; }

 private:
  const std::vector<Recording>& recs_;
  const ChipConfig& base_;
  const CalibrateOptions& opt_;
  std::map<std::vector<std::uint32_t>, double> seen_;
  std::uint32_t sims_ = 0;
};

// v moved by `steps` (log(1 + v) units) in direction dir, inside [lo, hi]; at least 1 away.
std::uint32_t moved(std::uint32_t v, double step, int dir, const ParamSpec& s) {
  const double u = std::log1p(static_cast<double>(v)) + dir * step;
  double w = std::round(std::expm1(u));
  if (dir > 0 && w <= v) w = static_cast<double>(v) + 1;
  if (dir < 0 && w >= v) w = static_cast<double>(v) - 1;
  w = std::clamp(w, static_cast<double>(s.lo), static_cast<double>(s.hi));
  return static_cast<std::uint32_t>(w);
}

}  // namespace

std::vector<ParamSpec> default_params() {
  std::vector<ParamSpec> p;
  for (const Field& f : fields()) p.push_back(f.spec);
  return p;
}

ParamSpec param_spec(const std::string& key) { return field(key).spec; }

std::vector<RecordingFit> evaluate(const std::vector<Recording>& recordings,
                                   const model::ChipConfig& chip) {
  std::vector<RecordingFit> out;
  for (const Recording& r : recordings) out.push_back(replay(r, chip));
  return out;
}

CalibrateResult calibrate(const std::vector<Recording>& recordings, const model::ChipConfig& start,
                          const CalibrateOptions& opt) {
  if (recordings.empty()) throw ConfigError("calibrate: no recording given");
  for (const Recording& r : recordings) {
    if (r.graph == nullptr || r.graph->recorded_start_ps.empty()) {
      throw ConfigError("calibrate: " + r.name +
                        " has no recorded start times (a board recording with --prof, or a "
                        "native trace with start/end)");
    }
  }
  const std::size_t np = opt.params.size();
  std::vector<std::uint32_t> x(np);
  for (std::size_t i = 0; i < np; ++i) {
    const Field& f = field(opt.params[i].key);
    x[i] = std::clamp(f.get(start), opt.params[i].lo, opt.params[i].hi);
  }
  auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  CalibrateResult res;
  res.chip = start.chip.name;
  for (const Recording& r : recordings) res.recordings.push_back(r.name);
  res.before = evaluate(recordings, start);
  res.objective_before_us = objective(recordings, res.before, opt.makespan_weight);

  Search s(recordings, start, opt);
  double fx = 0;
  if (!s.eval(x, fx)) throw ConfigError("calibrate: --max-sims is too small for one replay");
  say("start: objective " + fmt("%.4f", fx) + " us");
  std::vector<double> step(np, std::log(2.0));
  std::vector<char> sensitive(np, 1), done(np, 0);
  std::vector<int> last_dir(np, -1);  // costs start high: try down first
  bool budget = true;

  // First sweep: x2 and /2 of each parameter; one that changes nothing is not constrained.
  for (std::size_t i = 0; i < np && budget; ++i) {
    bool changed = false, moved_here = false;
    for (const int dir : {-1, +1}) {
      std::vector<std::uint32_t> y = x;
      y[i] = moved(x[i], step[i], dir, opt.params[i]);
      if (y[i] == x[i]) continue;
      double fy = 0;
      if (!s.eval(y, fy)) {
        budget = false;
        break;
      }
      if (fy != fx) changed = true;
      if (fy < fx) {
        say(opt.params[i].key + " " + std::to_string(x[i]) + " -> " + std::to_string(y[i]) +
            ": objective " + fmt("%.4f", fy) + " us (" + std::to_string(s.sims()) +
            " simulations)");
        x = y;
        fx = fy;
        last_dir[i] = dir;
        moved_here = true;
        break;
      }
    }
    if (budget && !changed && !moved_here) {
      sensitive[i] = 0;
      done[i] = 1;
      say(opt.params[i].key + ": no effect on these recordings, not fitted");
    }
  }
  // Nelder-Mead over the parameters that matter, in log(1 + value): it follows coupled
  // directions (a cheaper poll traded for a dearer resolve) that single steps cannot.
  auto point = [&](const std::vector<double>& u, const std::vector<std::size_t>& idx) {
    std::vector<std::uint32_t> y = x;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      const ParamSpec& ps = opt.params[idx[k]];
      const double w = std::clamp(std::round(std::expm1(u[k])), static_cast<double>(ps.lo),
                                  static_cast<double>(ps.hi));
      y[idx[k]] = static_cast<std::uint32_t>(w);
    }
    return y;
  };
  auto nelder_mead = [&]() {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < np; ++i) {
      if (sensitive[i]) idx.push_back(i);
    }
    const std::size_t m = idx.size();
    if (m == 0) return;
    std::vector<std::vector<double>> simplex(m + 1, std::vector<double>(m));
    for (std::size_t k = 0; k < m; ++k) simplex[0][k] = std::log1p(static_cast<double>(x[idx[k]]));
    for (std::size_t j = 1; j <= m; ++j) {
      simplex[j] = simplex[0];
      simplex[j][j - 1] -= std::log(2.0);  // costs start high: the first vertices are lower
    }
    std::vector<double> fv(m + 1);
    auto f_of = [&](const std::vector<double>& u, double& f) { return s.eval(point(u, idx), f); };
    for (std::size_t j = 0; j <= m; ++j) {
      if (!f_of(simplex[j], fv[j])) {
        budget = false;
        return;
      }
    }
    for (int iter = 0; iter < 400 && budget; ++iter) {
      std::vector<std::size_t> order(m + 1);
      for (std::size_t j = 0; j <= m; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return fv[a] < fv[b]; });
      const std::size_t best = order[0], worst = order[m], second = order[m - 1];
      // Converged when every vertex rounds to the same point or the values agree.
      bool same = true;
      for (std::size_t j = 1; j <= m && same; ++j)
        same = point(simplex[j], idx) == point(simplex[0], idx);
      if (same || fv[worst] - fv[best] <= 1e-6 * (1 + std::fabs(fv[best]))) break;
      std::vector<double> c(m, 0);
      for (std::size_t j = 0; j <= m; ++j) {
        if (j == worst) continue;
        for (std::size_t k = 0; k < m; ++k) c[k] += simplex[j][k] / static_cast<double>(m);
      }
      auto along = [&](double t) {
        std::vector<double> u(m);
        for (std::size_t k = 0; k < m; ++k) u[k] = c[k] + t * (simplex[worst][k] - c[k]);
        return u;
      };
      double fr = 0, fe = 0, fc = 0;
      const std::vector<double> r = along(-1.0);
      if (!f_of(r, fr)) break;
      if (fr < fv[best]) {
        const std::vector<double> e = along(-2.0);
        if (!f_of(e, fe)) break;
        if (fe < fr) {
          simplex[worst] = e, fv[worst] = fe;
        } else {
          simplex[worst] = r, fv[worst] = fr;
        }
      } else if (fr < fv[second]) {
        simplex[worst] = r, fv[worst] = fr;
      } else {
        const std::vector<double> k = fr < fv[worst] ? along(-0.5) : along(0.5);
        if (!f_of(k, fc)) break;
        if (fc < std::min(fr, fv[worst])) {
          simplex[worst] = k, fv[worst] = fc;
        } else {
          for (std::size_t j = 0; j <= m; ++j) {
            if (j == best) continue;
            for (std::size_t q = 0; q < m; ++q)
              simplex[j][q] = simplex[best][q] + 0.5 * (simplex[j][q] - simplex[best][q]);
            if (!f_of(simplex[j], fv[j])) break;
          }
        }
      }
    }
    std::size_t best = 0;
    for (std::size_t j = 1; j <= m; ++j) {
      if (fv[j] < fv[best]) best = j;
    }
    if (fv[best] < fx) {
      x = point(simplex[best], idx);
      fx = fv[best];
      say("simplex: objective " + fmt("%.4f", fx) + " us (" + std::to_string(s.sims()) +
          " simulations)");
    }
    if (s.sims() + recordings.size() > opt.max_simulations) budget = false;
  };
  // Compass search: single steps, halved down to a change of 1, to polish the simplex's point.
  auto compass = [&]() {
    for (std::size_t i = 0; i < np; ++i) {
      done[i] = sensitive[i] ? 0 : 1;
      step[i] = std::log(2.0);
    }
    while (budget) {
      bool any = false;
      for (std::size_t i = 0; i < np && budget; ++i) {
        if (done[i]) continue;
        any = true;
        bool improved = false;
        for (const int dir : {last_dir[i], -last_dir[i]}) {
          std::vector<std::uint32_t> y = x;
          y[i] = moved(x[i], step[i], dir, opt.params[i]);
          if (y[i] == x[i]) continue;
          double fy = 0;
          if (!s.eval(y, fy)) {
            budget = false;
            break;
          }
          if (fy < fx) {
            say(opt.params[i].key + " " + std::to_string(x[i]) + " -> " + std::to_string(y[i]) +
                ": objective " + fmt("%.4f", fy) + " us (" + std::to_string(s.sims()) +
                " simulations)");
            x = y;
            fx = fy;
            last_dir[i] = dir;
            improved = true;
            break;
          }
        }
        if (!budget) break;
        if (improved) {
          // Others may move again from the new point.
          for (std::size_t j = 0; j < np; ++j) {
            if (j != i && sensitive[j]) done[j] = 0;
          }
        } else {
          // Both neighbours at a change of 1 are no better: converged for now.
          const bool unit = moved(x[i], step[i], +1, opt.params[i]) <= x[i] + 1 &&
                            moved(x[i], step[i], -1, opt.params[i]) + 1 >= x[i];
          if (unit) {
            done[i] = 1;
          } else {
            step[i] /= 2;
          }
        }
      }
      if (!any) break;
    }
  };
  // Alternate until a round gains less than 0.1 %: a restarted simplex leaves a shallow
  // local minimum that the last one shrank into.
  for (int round = 0; round < 8 && budget; ++round) {
    const double before = fx;
    nelder_mead();
    compass();
    if (!(fx < before * 0.999)) break;
  }
  res.converged = budget;
  res.simulations = s.sims() + static_cast<std::uint32_t>(2 * recordings.size());
  res.fitted = with_values(start, opt.params, x);
  for (std::size_t i = 0; i < np; ++i) {
    ParamFit p;
    p.key = opt.params[i].key;
    p.start = field(p.key).get(start);
    p.fitted = x[i];
    p.sensitive = sensitive[i] != 0;
    p.at_bound = p.sensitive && (x[i] == opt.params[i].lo || x[i] == opt.params[i].hi);
    res.params.push_back(p);
  }
  res.after = evaluate(recordings, res.fitted);
  res.objective_after_us = objective(recordings, res.after, opt.makespan_weight);
  say("done: objective " + fmt("%.4f", res.objective_before_us) + " -> " +
      fmt("%.4f", res.objective_after_us) + " us");
  return res;
}

std::string fit_table(const CalibrateResult& r) {
  std::ostringstream o;
  o << "calibrate: " << r.recordings.size() << " recording(s) on " << r.chip << ", "
    << r.simulations << " simulations, " << (r.converged ? "converged" : "stopped by --max-sims")
    << "\n\n";
  char b[256];
  std::snprintf(b, sizeof b, "%-36s %10s %10s\n", "parameter", "start", "fitted");
  o << b;
  for (const ParamFit& p : r.params) {
    if (p.sensitive) {
      std::snprintf(b, sizeof b, "%-36s %10u %10u%s\n", p.key.c_str(), p.start, p.fitted,
                    p.at_bound ? "  (at the edge of its window)" : "");
    } else {
      std::snprintf(b, sizeof b, "%-36s %10u %10s  no effect on these recordings: not fitted\n",
                    p.key.c_str(), p.start, "-");
    }
    o << b;
  }
  o << "\nresiduals (before -> after; start errors in us, each side from its first start)\n";
  std::snprintf(b, sizeof b, "%-28s %6s %17s %17s %17s %19s %15s\n", "recording", "tasks",
                "mean start err", "median", "p90", "makespan err %", "spearman");
  o << b;
  for (std::size_t i = 0; i < r.before.size(); ++i) {
    const RecordingFit &x = r.before[i], &y = r.after[i];
    auto pair = [](double a, double c, const char* f) {
      char s[64];
      char fa[16], fb[16];
      std::snprintf(fa, sizeof fa, f, a);
      std::snprintf(fb, sizeof fb, f, c);
      std::snprintf(s, sizeof s, "%s -> %s", fa, fb);
      return std::string(s);
    };
    std::string name = x.name;
    if (name.size() > 28) name = "..." + name.substr(name.size() - 25);
    const std::string sp = x.fidelity.has_spearman && y.fidelity.has_spearman
                               ? pair(x.fidelity.spearman, y.fidelity.spearman, "%.3f")
                               : std::string("-");
    std::snprintf(
        b, sizeof b, "%-28s %6llu %17s %17s %17s %19s %15s\n", name.c_str(),
        static_cast<unsigned long long>(x.fidelity.tasks),
        pair(x.mean_start_error_us, y.mean_start_error_us, "%.3f").c_str(),
        pair(x.fidelity.start_error_median_us, y.fidelity.start_error_median_us, "%.3f").c_str(),
        pair(x.fidelity.start_error_p90_us, y.fidelity.start_error_p90_us, "%.3f").c_str(),
        pair(x.makespan_error_pct, y.makespan_error_pct, "%+.1f").c_str(), sp.c_str());
    o << b;
  }
  o << "\nobjective (mean |start error| + weight x mean |makespan error|): "
    << fmt("%.4f", r.objective_before_us) << " -> " << fmt("%.4f", r.objective_after_us) << " us\n";
  return o.str();
}

std::string overlay_yaml(const CalibrateResult& r, const std::string& base_preset,
                         const std::vector<std::string>& extra_sets) {
  std::ostringstream o;
  o << "# SPDX-License-Identifier: Apache-2.0\n"
    << "# Written by `pypto-sim calibrate`: AICPU costs fitted to\n";
  for (const std::string& n : r.recordings) o << "#   " << n << "\n";
  o << "# objective (mean |start error| + weight x mean |makespan error|): "
    << fmt("%.4f", r.objective_before_us) << " -> " << fmt("%.4f", r.objective_after_us) << " us, "
    << r.simulations << " simulations" << (r.converged ? "" : " (not converged)")
    << ".\n# Use it with: pypto-sim run TRACE --config THIS_FILE\n";
  o << "base: " << base_preset << "\n";
  // Group "section.key" lines by section, in the order keys first appear.
  std::vector<std::string> sections;
  std::map<std::string, std::vector<std::string>> lines;
  auto add = [&](const std::string& key, const std::string& value, const std::string& note) {
    const auto dot = key.find('.');
    const std::string sec = key.substr(0, dot);
    if (lines.find(sec) == lines.end()) sections.push_back(sec);
    std::string line = "  " + key.substr(dot + 1) + ": " + value;
    if (!note.empty())
      line += std::string(std::max<std::size_t>(1, 40 - line.size()), ' ') + "# " + note;
    lines[sec].push_back(line);
  };
  for (const std::string& s : extra_sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos) continue;
    const bool fitted = std::any_of(r.params.begin(), r.params.end(), [&](const ParamFit& p) {
      return p.sensitive && p.key == s.substr(0, eq);
    });
    if (fitted) continue;  // the fitted value replaces it
    add(s.substr(0, eq), s.substr(eq + 1), "--set during the fit");
  }
  for (const ParamFit& p : r.params) {
    if (!p.sensitive) continue;
    add(p.key, std::to_string(p.fitted),
        "fitted (start " + std::to_string(p.start) + (p.at_bound ? ", at the window's edge" : "") +
            ")");
  }
  for (const std::string& sec : sections) {
    o << sec << ":\n";
    for (const std::string& l : lines[sec]) o << l << "\n";
  }
  return o.str();
}

}  // namespace pypto::calibrate
