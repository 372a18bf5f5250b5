// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/trace/aicpu_data_writer.h"
#include "pypto/trace/prof_writer.h"
#include "pypto/trace/swimlane_writer.h"
#include "pypto/trace/text_out.h"
#include "pypto/trace/topo_json_writer.h"

namespace pypto::sim {
namespace {

using common::CoreType;
using nlohmann::ordered_json;

double ns(std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; }

// trace.json times: whole ns (each instant rounded once), written in µs as the format wants.
// Viewers add ts + dur in doubles (Chrome DevTools drops a slice that seems to start before
// the previous one on its track ends), so dur is the double that makes ts + dur land exactly
// on the end's double, or just below it: back-to-back slices then meet exactly, and a reader
// that rounds to integer ns gets end - start.
std::uint64_t to_ns(std::uint64_t ps) { return (ps + 500) / 1000; }
double trace_us(std::uint64_t ps) { return static_cast<double>(to_ns(ps)) / 1e3; }
double trace_dur_us(std::uint64_t start_ps, std::uint64_t end_ps) {
  const double a = trace_us(start_ps), b = trace_us(end_ps);
  double d = b - a;
  for (int i = 0; i < 4 && a + d > b; ++i) d = std::nextafter(d, 0.0);
  for (int i = 0; i < 4 && a + d < b && a + std::nextafter(d, b) <= b; ++i)
    d = std::nextafter(d, b);
  return d;
}
// The same bytes as TextOut::d of trace_us / trace_dur_us, without nlohmann's grisu2: a time
// from its whole ns count, a dur from the memo of the doubles written before.
void write_trace_us(trace::TextOut& f, std::uint64_t ps) { f.us_of_ns(to_ns(ps)); }
void write_trace_dur_us(trace::TextOut& f, std::uint64_t start_ps, std::uint64_t end_ps) {
  f.d_memo(trace_dur_us(start_ps, end_ps));
}
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

// Every TextOut::kCheckEvery records a writer looks for Ctrl-C and for a failed write (a full
// disk stops the writer instead of it formatting the rest of a large trace for nothing).
void check_writer(common::OutputFile& f) {
  common::check_interrupt("writing " + f.path());
  if (f.failed()) f.finish();  // throws "error while writing ..."
}

// A report file's text (text_out.h), checked as it goes.
class ReportText : public trace::TextOut {
 public:
  explicit ReportText(common::OutputFile& f) : TextOut(f.stream(), [&f] { check_writer(f); }) {}
};

// Kernel names as JSON strings, escaped once each ("task" when the graph names none).
std::vector<std::string> json_kernel_names(const sched::TaskGraph& g) {
  std::vector<std::string> k;
  k.reserve(g.kernel_names.size());
  for (const std::string& name : g.kernel_names) k.push_back(ordered_json(name).dump());
  return k;
}
std::string_view json_kernel_of(const std::vector<std::string>& names, const sched::TaskGraph& g,
                                common::TaskId t) {
  return names.empty() ? std::string_view("\"task\"") : std::string_view(names[g.kernel[t]]);
}

// First task start to last task end: what a board recording's makespan measures.
std::uint64_t task_span_ps(const SimStats& s) {
  return s.last_end_ps - std::min(s.first_start_ps, s.last_end_ps);
}

// The span and the error against a recording need the task times; a run that kept none
// reports them as absent (null), never as a number.
ordered_json span_ns_or_null(const SimStats& s) {
  return s.has_task_span ? ordered_json(ns(task_span_ps(s))) : ordered_json(nullptr);
}

// How far the simulated task span is from the recorded makespan, in percent.
double replay_error_pct(const SimStats& s) {
  if (s.recorded_makespan_ps == 0) return 0.0;
  return (double(task_span_ps(s)) - double(s.recorded_makespan_ps)) /
         double(s.recorded_makespan_ps) * 100.0;
}

}  // namespace

nlohmann::ordered_json stats_json(const SimResult& r) {
  const SimStats& s = r.stats;
  ordered_json j;
  j["schema"] = "pypto-sim-stats/1";
  j["chip"] = s.chip;
  j["policy"] = s.policy;
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

namespace {

void write_trace(common::OutputFile& out, const sched::TaskGraph& g, const SimResult& r,
                 const ReportOptions& opt) {
  ReportText f(out);
  const Timeline& tl = r.timeline;
  const std::uint32_t aic = r.stats.aic.count;
  const std::uint32_t cores = aic + r.stats.aiv.count;
  const auto nthreads = static_cast<std::uint32_t>(r.stats.threads.size());
  bool first = true;
  auto sep = [&] {
    f << (first ? "\n" : ",\n");
    first = false;
  };
  auto emit = [&](const ordered_json& e) {
    sep();
    f << e.dump();
    f.end_record();
  };
  // Every event has a cat: viewers group and filter by it, and Chrome DevTools binds a flow
  // event to the slice with the same cat, pid, tid and ts (so a dependency arrow starts at
  // its producer's start and ends at its consumer's start, both in cat "task").
  f << "{\"traceEvents\":[";
  // Track names: pid 1 = AICore (tid = core id), pid 2 = AICPU (tid = thread, last = control).
  emit({{"ph", "M"},
        {"cat", "__metadata"},
        {"pid", 1},
        {"name", "process_name"},
        {"args", {{"name", "AICore"}}}});
  emit({{"ph", "M"},
        {"cat", "__metadata"},
        {"pid", 2},
        {"name", "process_name"},
        {"args", {{"name", "AICPU"}}}});
  for (std::uint32_t c = 0; c < cores; ++c) {
    const std::string name =
        c < aic ? "AIC " + std::to_string(c) : "AIV " + std::to_string(c - aic);
    emit({{"ph", "M"},
          {"cat", "__metadata"},
          {"pid", 1},
          {"tid", c},
          {"name", "thread_name"},
          {"args", {{"name", name}}}});
    emit({{"ph", "M"},
          {"cat", "__metadata"},
          {"pid", 1},
          {"tid", c},
          {"name", "thread_sort_index"},
          {"args", {{"sort_index", c}}}});
  }
  for (std::uint32_t t = 0; t <= nthreads; ++t) {
    const std::string name = t < nthreads ? "sched " + std::to_string(t) : "control flow";
    emit({{"ph", "M"},
          {"cat", "__metadata"},
          {"pid", 2},
          {"tid", t},
          {"name", "thread_name"},
          {"args", {{"name", name}}}});
  }
  // One X event per task on its core (the key order of the DOM this replaced).
  const std::vector<std::string> kernels = json_kernel_names(g);
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (!common::is_dispatchable(g.core_type[t]) || tl.core[t] == common::kNoCore16) continue;
    const auto& d = g.device_tasks[g.device_task[t]];
    sep();
    f << "{\"ph\":\"X\",\"cat\":\"task\",\"pid\":1,\"tid\":";
    f.u(tl.core[t]) << ",\"name\":" << json_kernel_of(kernels, g, t) << ",\"ts\":";
    write_trace_us(f, tl.start_ps[t]);
    f << ",\"dur\":";
    write_trace_dur_us(f, tl.start_ps[t], tl.end_ps[t]);
    f << ",\"args\":{\"taskId\":";
    f.u(g.orig_id[t]) << ",\"seqNo\":";
    f.u(d.seq_no) << ",\"root\":";
    f.u(g.root[t]) << "}}";
    f.end_record();
  }
  // Dependency arrows, producer to consumer, each flow event bound to its task's slice.
  std::size_t flows = 0;
  for (common::TaskId t = 0; t < g.num_tasks() && flows < opt.max_flow_edges; ++t) {
    if (!common::is_dispatchable(g.core_type[t]) || tl.core[t] == common::kNoCore16) continue;
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t) && flows < opt.max_flow_edges; ++i) {
      const common::TaskId s = g.succ[i];
      if (!common::is_dispatchable(g.core_type[s]) || tl.core[s] == common::kNoCore16) continue;
      ++flows;
      sep();
      f << "{\"ph\":\"s\",\"pid\":1,\"tid\":";
      f.u(tl.core[t]) << ",\"name\":\"dep\",\"cat\":\"task\",\"id\":";
      f.u(flows) << ",\"ts\":";
      write_trace_us(f, tl.start_ps[t]);
      f << '}';
      f.end_record();
      sep();
      f << "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":";
      f.u(tl.core[s]) << ",\"name\":\"dep\",\"cat\":\"task\",\"id\":";
      f.u(flows) << ",\"ts\":";
      write_trace_us(f, tl.start_ps[s]);
      f << '}';
      f.end_record();
    }
  }
  // AICPU work and ready-queue depth.
  for (const auto& a : tl.aicpu) {
    const bool control = a.thread == nthreads;
    sep();
    f << "{\"ph\":\"X\",\"cat\":\"aicpu\",\"pid\":2,\"tid\":";
    f.u(a.thread) << ",\"name\":" << (control ? "\"build device task\"" : "\"poll round\"")
                  << ",\"ts\":";
    write_trace_us(f, a.start_ps);
    f << ",\"dur\":";
    write_trace_dur_us(f, a.start_ps, a.end_ps);
    f << ",\"args\":{\"completions\":";
    f.u(a.completions) << ",\"dispatches\":";
    f.u(a.dispatches) << "}}";
    f.end_record();
  }
  for (const auto& d : tl.depth) {
    sep();
    f << "{\"ph\":\"C\",\"cat\":\"aicpu\",\"pid\":2,\"name\":\"ready queue\",\"ts\":";
    write_trace_us(f, d.time_ps);
    f << ",\"args\":{\"AIC\":";
    f.u(d.aic) << ",\"AIV\":";
    f.u(d.aiv) << "}}";
    f.end_record();
  }
  f << "\n],\"metadata\":"
    << ordered_json{{"generator", "pypto-sim"},
                    {"chip", r.stats.chip},
                    {"policy", r.stats.policy},
                    {"dependency_arrows", flows},
                    {"dependency_arrows_truncated", flows >= opt.max_flow_edges},
                    {"aicpu_events_truncated", tl.aicpu_truncated}}
           .dump()
    << "}\n";
  f.flush();
  out.finish();
}

// A simulated time in the chip's board-counter ticks (nearest), as swim.json and aicpu.data
// carry them.
std::uint64_t board_ticks(std::uint64_t ps, double ticks_per_ps) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(ps) * ticks_per_ps));
}

// The placed tasks of each core in start order (ties: task order): what every per-core
// report (swim.json, aicpu.data, the merged swimlane) walks.
std::vector<std::vector<common::TaskId>> tasks_by_core(const sched::TaskGraph& g,
                                                       const Timeline& tl, std::uint32_t cores) {
  // Sorted as (start, task) pairs gathered in task order: sorting task ids by a start looked
  // up per comparison misses the cache on every look-up at millions of tasks. Task ids grow
  // in insertion order, so ties keep task order as a stable sort by start would.
  std::vector<std::vector<std::pair<std::uint64_t, common::TaskId>>> keyed(cores);
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (common::is_dispatchable(g.core_type[t]) && tl.core[t] != common::kNoCore16)
      keyed[tl.core[t]].emplace_back(tl.start_ps[t], t);
  }
  std::vector<std::vector<common::TaskId>> per_core(cores);
  for (std::uint32_t c = 0; c < cores; ++c) {
    auto& k = keyed[c];
    if (!std::is_sorted(k.begin(), k.end())) std::sort(k.begin(), k.end());
    per_core[c].reserve(k.size());
    for (const auto& [start, t] : k) per_core[c].push_back(t);
    std::vector<std::pair<std::uint64_t, common::TaskId>>().swap(k);
  }
  return per_core;
}

// The per-core walks read several columns of tasks spread over the whole graph (a core runs
// every 70th task or so): fetching a few tasks ahead hides most of the cache misses.
constexpr std::size_t kPrefetchAhead = 8;
void prefetch_task(const sched::TaskGraph& g, const Timeline& tl, common::TaskId t) {
  __builtin_prefetch(&tl.start_ps[t]);
  __builtin_prefetch(&tl.end_ps[t]);
  __builtin_prefetch(&g.device_task[t]);
  __builtin_prefetch(&g.kernel[t]);
  __builtin_prefetch(&g.orig_id[t]);
}

// PyPTO's swimlane shape, in the chip's board-counter ticks so that it lines up with a
// recorded tilefwk_L1_prof_data.json (and can be read back as one).
void write_swim(common::OutputFile& out, const sched::TaskGraph& g, const model::ChipConfig& chip,
                const SimResult& r, const std::vector<std::vector<common::TaskId>>& per_core) {
  const Timeline& tl = r.timeline;
  const std::uint32_t aic = r.stats.aic.count;
  const std::uint32_t cores = aic + r.stats.aiv.count;
  const double ticks_per_ps = chip.chip.board_clock_mhz / 1e6;
  trace::ProfWriter w(out.stream(),
                      {/*record_per_line=*/false, trace::ProfWriter::SubGraphId::kBeforeTaskId},
                      [&out] { check_writer(out); });
  for (std::uint32_t c = 0; c < cores; ++c) {
    const auto& v = per_core[c];
    if (v.empty()) continue;
    w.block(c, c < aic ? "AIC" : "AIV");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const common::TaskId t = v[i];
      if (i + kPrefetchAhead < v.size()) prefetch_task(g, tl, v[i + kPrefetchAhead]);
      // subGraphId: PyPTO's leaf-function index of the task; ours is the kernel index, which
      // names the same thing (PyPTO's tools colour and group tasks by it).
      w.record({g.device_tasks[g.device_task[t]].seq_no, g.orig_id[t], g.kernel[t],
                board_ticks(tl.start_ps[t], ticks_per_ps),
                board_ticks(tl.end_ps[t], ticks_per_ps)});
    }
  }
  w.finish();
  out.finish();
}

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

namespace {

// Creates `dir` and its parents; returns the top-most folder it made (empty: none), so that
// a failed write can take away what it added.
std::filesystem::path make_folder(const std::filesystem::path& dir) {
  std::filesystem::path top;
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p, ec);
       p = p.parent_path()) {
    top = p;
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create output folder " + dir.string() + ": " + ec.message());
  return top;
}

// Removes the folders make_folder made, if they are still empty (never anything else).
void remove_made_folders(const std::filesystem::path& dir, const std::filesystem::path& top) {
  if (top.empty()) return;
  std::error_code ec;
  for (std::filesystem::path p = dir;; p = p.parent_path()) {
    if (!std::filesystem::remove(p, ec)) return;  // not empty (or gone): stop
    if (p == top || p.empty()) return;
  }
}

void write_merged_swimlane_to(common::OutputFile& out, const sched::TaskGraph& g,
                              const SimResult& r, const ReportOptions& opt) {
  const Timeline& tl = r.timeline;
  const std::uint32_t cores = r.stats.aic.count + r.stats.aiv.count;
  const std::vector<std::vector<common::TaskId>> per_core = tasks_by_core(g, tl, cores);
  const trace::SwimlaneRun run{g,        tl.start_ps,    tl.end_ps,
                               tl.core,  per_core,       r.stats.aic.count,
                               tl.depth, opt.leaf_hints, opt.max_flow_edges};
  trace::write_merged_swimlane(out.stream(), run, [&out] { check_writer(out); });
  out.finish();
}

}  // namespace

bool write_merged_swimlane(const std::string& path, const sched::TaskGraph& g, const SimResult& r,
                           const ReportOptions& opt) {
  if (r.timeline.core.size() != g.num_tasks()) return false;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path made = parent.empty() ? parent : make_folder(parent);
  try {
    common::OutputFile out(path);
    write_merged_swimlane_to(out, g, r, opt);
    out.commit();
  } catch (...) {
    remove_made_folders(parent, made);
    throw;
  }
  return true;
}

// PyPTO's topo.json shape, for its tools/profiling/draw_swim_lane.py (swim.json + topo.json):
// one record per task, taskId = seqNo << 32 | the task's own id (the key that tool joins
// swim.json on), successors in the same encoding, HUB tasks included (the tool draws them
// as zero-length "fake" tasks).
void write_pypto_topo(common::OutputFile& out, const sched::TaskGraph& g) {
  std::vector<common::TaskId> order(g.num_tasks());
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) order[t] = t;
  auto key = [&](common::TaskId t) {
    return (std::uint64_t{g.device_tasks[g.device_task[t]].seq_no} << 32) | g.orig_id[t];
  };
  const auto by_key = [&](common::TaskId a, common::TaskId b) { return key(a) < key(b); };
  // Usually in key order already (device tasks in order, ids in file order).
  if (!std::is_sorted(order.begin(), order.end(), by_key))
    std::stable_sort(order.begin(), order.end(), by_key);
  const std::vector<std::string> kernels = json_kernel_names(g);
  trace::TopoJsonWriter w(out.stream(), [&out] { check_writer(out); });
  for (const common::TaskId t : order) {
    trace::TopoRecord rec;
    rec.task_id = key(t);
    rec.has_ori = true;
    rec.ori_task_id = g.orig_id[t];
    rec.ori_seq_no = g.device_tasks[g.device_task[t]].seq_no;
    rec.func_name = json_kernel_of(kernels, g, t);
    rec.core_type = common::to_string(g.core_type[t]);
    rec.has_root = true;
    rec.root_index = g.root[t];
    rec.psg_id = g.kernel[t];
    w.begin(rec);
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) w.successor(key(g.succ[i]));
    w.end();
  }
  w.finish();
  out.finish();
}

// PyPTO's device log records (aicpu.data): per core its tasks in start order, in board ticks.
void write_aicpu_data(common::OutputFile& out, const sched::TaskGraph& g,
                      const model::ChipConfig& chip, const SimResult& r,
                      const std::vector<std::vector<common::TaskId>>& per_core) {
  const Timeline& tl = r.timeline;
  const std::uint32_t aic = r.stats.aic.count;
  const std::uint32_t cores = aic + r.stats.aiv.count;
  const double ticks_per_ps = chip.chip.board_clock_mhz / 1e6;
  trace::AicpuDataWriter w(out.stream(), [&out] { check_writer(out); });
  for (std::uint32_t c = 0; c < cores; ++c) {
    const auto& v = per_core[c];
    w.core(c, c < aic, v.size(), [&](std::size_t i) {
      const common::TaskId t = v[i];
      if (i + kPrefetchAhead < v.size()) prefetch_task(g, tl, v[i + kPrefetchAhead]);
      return trace::AicpuTask{g.device_tasks[g.device_task[t]].seq_no, g.kernel[t], g.orig_id[t],
                              board_ticks(tl.start_ps[t], ticks_per_ps),
                              board_ticks(tl.end_ps[t], ticks_per_ps)};
    });
  }
  out.finish();
}

namespace {
// Below a few thousand tasks the files take less time than starting a thread.
constexpr std::size_t kParallelWriteTasks = 1 << 14;
}  // namespace

struct GraphReports::State {
  std::string dir;
  std::filesystem::path made;                // the top-most folder start_graph_reports made
  std::unique_ptr<common::OutputFile> topo;  // topo.json's temporary
  std::thread writer;
  std::exception_ptr error;  // the writer's
  bool taken = false;        // write_reports took the file over, and the folder with it

  void wait() {
    if (writer.joinable()) writer.join();
  }
  ~State() {
    wait();
    if (taken) return;
    topo.reset();  // removes the temporary
    remove_made_folders(dir, made);
  }
};

GraphReports::GraphReports() = default;
GraphReports::GraphReports(GraphReports&&) noexcept = default;
GraphReports& GraphReports::operator=(GraphReports&&) noexcept = default;
GraphReports::~GraphReports() = default;

GraphReports start_graph_reports(const std::string& dir, const sched::TaskGraph& g,
                                 const ReportOptions& opt) {
  GraphReports ahead;
  if (!opt.swim_json || g.num_tasks() < kParallelWriteTasks) return ahead;
  ahead.s_ = std::make_unique<GraphReports::State>();
  GraphReports::State& st = *ahead.s_;  // stays put when `ahead` moves
  st.dir = dir;
  st.made = make_folder(dir);
  st.topo = std::make_unique<common::OutputFile>(dir + "/topo.json");
  // The file, not st.topo: write_reports may take the pointer over while this writes.
  st.writer = std::thread([&st, &g, topo = st.topo.get()] {
    try {
      write_pypto_topo(*topo, g);
    } catch (...) {
      st.error = std::current_exception();
    }
  });
  return ahead;
}

std::vector<std::string> write_reports(const std::string& dir, const sched::TaskGraph& g,
                                       const model::ChipConfig& chip, const SimResult& r,
                                       const ReportOptions& opt, GraphReports* ahead_reports) {
  GraphReports::State* const ahead = ahead_reports != nullptr ? ahead_reports->s_.get() : nullptr;
  std::filesystem::path made = make_folder(dir);
  // topo.json written ahead, with the folder it may have made: this call's from here on. Its
  // writer may still be running: it is waited for after the other files are written, not
  // before, so that it overlaps them.
  std::unique_ptr<common::OutputFile>
      ahead_topo;  // taken in the try below, which waits on every path
  if (ahead != nullptr) {
    ahead->taken = true;
    if (made.empty()) made = ahead->made;
  }
  // Contract: before anything that ends the file written ahead (commit, removal).
  const auto wait_ahead = [ahead] {
    if (ahead != nullptr) ahead->wait();
  };
  const bool have_timeline = r.timeline.core.size() == g.num_tasks();
  const std::string stats = dir + "/stats.json";
  const std::string merged = opt.merged_swimlane.empty() ? "" : dir + "/" + opt.merged_swimlane;
  const std::filesystem::path merged_dir = std::filesystem::path(merged).parent_path();
  std::filesystem::path merged_made;
  // Each file goes to a temporary and every one is renamed only once all are complete,
  // stats.json last: a folder holding stats.json holds the complete reports of that run. The
  // earlier run's stats.json goes first, so a failure here never leaves one claiming success
  // next to this run's files, and its other reports go too (a folder holds one run).
  std::error_code ec;
  std::filesystem::remove(stats, ec);
  std::vector<std::unique_ptr<common::OutputFile>> files;
  try {
    if (ahead != nullptr) ahead_topo = std::move(ahead->topo);
    // trace.json, the largest report, is written on this thread while a second thread writes
    // the others (each reads only the graph and the result): the same bytes, in about the
    // time of trace.json alone. The helper joins before anything is committed or removed,
    // and an error of trace.json (the first file) goes before one of the others.
    common::OutputFile* trace = nullptr;
    if (opt.trace_json && have_timeline) {
      files.push_back(std::make_unique<common::OutputFile>(dir + "/trace.json"));
      trace = files.back().get();
    }
    std::vector<std::function<void()>> others;
    if (opt.swim_json && have_timeline) {
      files.push_back(std::make_unique<common::OutputFile>(dir + "/swim.json"));
      common::OutputFile* swim = files.back().get();
      // PyPTO's own profiling tools read these two next to swim.json (docs/cli.md).
      const bool topo_written = ahead_topo != nullptr;
      files.push_back(topo_written ? std::move(ahead_topo)
                                   : std::make_unique<common::OutputFile>(dir + "/topo.json"));
      common::OutputFile* topo = files.back().get();
      files.push_back(std::make_unique<common::OutputFile>(dir + "/aicpu.data"));
      common::OutputFile* aicpu = files.back().get();
      others.push_back([&g, &chip, &r, swim, topo, topo_written, aicpu] {
        // Both per-core reports walk the same order.
        const std::vector<std::vector<common::TaskId>> per_core =
            tasks_by_core(g, r.timeline, r.stats.aic.count + r.stats.aiv.count);
        write_swim(*swim, g, chip, r, per_core);
        if (!topo_written) write_pypto_topo(*topo, g);
        write_aicpu_data(*aicpu, g, chip, r, per_core);
      });
    }
    if (!merged.empty() && have_timeline) {
      merged_made = make_folder(merged_dir);
      files.push_back(std::make_unique<common::OutputFile>(merged));
      common::OutputFile* m = files.back().get();
      others.push_back([&g, &r, &opt, m] { write_merged_swimlane_to(*m, g, r, opt); });
    }
    if (opt.on_file) {
      for (const auto& f : files) opt.on_file(f->path());
      if (trace != nullptr) opt.on_file(trace->path());  // the one the run waits for
    }
    auto write_others = [&others] {
      for (auto& w : others) w();
    };
    if (trace != nullptr && !others.empty() && g.num_tasks() >= kParallelWriteTasks) {
      std::exception_ptr helper_error;
      std::thread helper([&] {
        try {
          write_others();
        } catch (...) {
          helper_error = std::current_exception();
        }
      });
      try {
        write_trace(*trace, g, r, opt);
      } catch (...) {
        helper.join();
        throw;
      }
      helper.join();
      if (helper_error) std::rethrow_exception(helper_error);
    } else {
      if (trace != nullptr) write_trace(*trace, g, r, opt);
      write_others();
    }
    wait_ahead();
    if (ahead != nullptr && ahead->error) std::rethrow_exception(ahead->error);
    if (opt.on_file) opt.on_file(stats);
    files.push_back(std::make_unique<common::OutputFile>(stats));
    files.back()->stream() << stats_json(r).dump(2) << "\n";
    files.back()->finish();
    common::check_interrupt("writing the reports in " + dir);
    for (const char* stale : {"trace.json", "swim.json", "topo.json", "aicpu.data"}) {
      const std::string p = dir + "/" + stale;
      const bool kept =
          std::any_of(files.begin(), files.end(), [&](const auto& f) { return f->path() == p; });
      if (!kept) std::filesystem::remove(p, ec);
    }
    for (auto& f : files) f->commit();  // stats.json is the last
  } catch (...) {
    wait_ahead();   // its file may be one of those below
    files.clear();  // removes the temporaries
    ahead_topo.reset();
    if (!merged.empty()) remove_made_folders(merged_dir, merged_made);
    remove_made_folders(dir, made);
    throw;
  }
  std::vector<std::string> written;
  written.push_back(stats);
  for (const auto& f : files) {
    if (f->path() != stats) written.push_back(f->path());
  }
  return written;
}

std::vector<std::string> trace_notes(const sched::TaskGraph& g, const SimResult& r,
                                     const ReportOptions& opt) {
  std::vector<std::string> notes;
  const Timeline& tl = r.timeline;
  if (tl.core.size() != g.num_tasks()) return notes;
  auto placed = [&](common::TaskId t) {
    return common::is_dispatchable(g.core_type[t]) && tl.core[t] != common::kNoCore16;
  };
  std::size_t edges = 0;
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (!placed(t)) continue;
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) edges += placed(g.succ[i]);
  }
  if (edges > opt.max_flow_edges) {
    notes.push_back("trace.json: " + std::to_string(opt.max_flow_edges) + " of " +
                    std::to_string(edges) +
                    " dependency arrows written (the first, in task order; "
                    "viewers slow down beyond)");
  }
  if (tl.aicpu_truncated) {
    notes.push_back("trace.json: only the first " + std::to_string(tl.aicpu.size()) +
                    " AICPU spans (and ready-queue samples up to them) kept; later ones left out");
  }
  return notes;
}

std::string summary_table(const SimResult& r, const PhaseWall* phases) {
  const SimStats& s = r.stats;
  std::ostringstream o;
  o << "chip " << s.chip << ", policy " << s.policy << ", " << s.sched_threads
    << " schedule threads\n";
  o << "  makespan        " << fmt("%.3f", ns(s.makespan_ps) / 1000.0) << " us\n";
  o << "  tasks           " << s.tasks << " in " << s.device_tasks << " device tasks ("
    << s.hub_tasks << " HUB)\n";
  o << "  AIC utilization " << fmt("%.1f", 100 * s.aic.utilization) << " % of " << s.aic.count
    << " cores\n";
  o << "  AIV utilization " << fmt("%.1f", 100 * s.aiv.utilization) << " % of " << s.aiv.count
    << " cores\n";
  o << "  AICPU busy      " << fmt("%.1f", aicpu_busy_pct(s)) << " % (schedule threads)\n";
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
