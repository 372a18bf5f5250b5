// SPDX-License-Identifier: Apache-2.0
// write_merged_swimlane (swimlane_writer.h): one event at a time through nlohmann's DOM (a
// merged swimlane is for runs a person looks at, not millions of tasks).
#include "pypto/trace/swimlane_writer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "pypto/trace/text_out.h"

namespace pypto::trace {

namespace {

using nlohmann::ordered_json;

double us(std::uint64_t ps) { return static_cast<double>(ps) / 1e6; }

// The run's per-task columns under the names the report used.
struct Times {
  const std::vector<std::uint64_t>& start_ps;
  const std::vector<std::uint64_t>& end_ps;
  const std::vector<std::uint16_t>& core;
};

}  // namespace

void write_merged_swimlane(std::ostream& f, const SwimlaneRun& run,
                           const std::function<void()>& every_records) {
  const sched::TaskGraph& g = run.graph;
  const Times tl{run.start_ps, run.end_ps, run.core};
  const std::uint32_t aic = run.aic_cores;
  const auto cores = static_cast<std::uint32_t>(run.per_core.size());
  constexpr int kPid = 1;                // PyPTO's "Machine View" process
  constexpr std::uint32_t kTid0 = 1000;  // its thread offset; tid = kTid0 + 2 * (blockIdx + 1)
  auto placed = [&](common::TaskId t) {
    return common::is_dispatchable(g.core_type[t]) && tl.core[t] != common::kNoCore16;
  };
  // Tasks per core in start order; a task starting before its predecessor on the core ended
  // goes to the core's second lane, as PyPTO draws overlapping tasks.
  const std::vector<std::vector<common::TaskId>>& per_core = run.per_core;
  std::vector<std::uint8_t> lane(g.num_tasks(), 0);
  std::vector<bool> core_overlaps(cores, false);
  // PyPTO's execution-hint: duration statistics per leaf function (our kernel index).
  struct Leaf {
    std::uint64_t count = 0, total_ps = 0, max_ps = 0, min_ps = 0;
    common::TaskId max_task = 0, min_task = 0;
  };
  std::vector<Leaf> leaves(std::max<std::size_t>(g.kernel_names.size(), 1));
  for (std::uint32_t c = 0; c < cores; ++c) {
    const auto& v = per_core[c];
    for (std::size_t i = 0; i < v.size(); ++i) {
      const common::TaskId t = v[i];
      if (i > 0 && lane[v[i - 1]] == 0 && tl.start_ps[t] < tl.end_ps[v[i - 1]]) {
        lane[t] = 1;
        core_overlaps[c] = true;
      }
      Leaf& l = leaves[g.kernel_names.empty() ? 0 : g.kernel[t]];
      const std::uint64_t d = tl.end_ps[t] - tl.start_ps[t];
      if (l.count == 0 || d > l.max_ps) l.max_ps = d, l.max_task = t;
      if (l.count == 0 || d < l.min_ps) l.min_ps = d, l.min_task = t;
      ++l.count;
      l.total_ps += d;
    }
  }
  auto tid_of = [&](common::TaskId t) { return kTid0 + 2 * (tl.core[t] + 1u) + lane[t]; };
  // PyPTO's task name: seqNo-funcId-opIdx of the 64-bit id seqNo << 32 | taskId.
  auto formal = [&](common::TaskId t) {
    const std::uint32_t id = g.orig_id[t];
    return std::to_string(g.device_tasks[g.device_task[t]].seq_no) + "-" +
           std::to_string((id >> 16) & 1023u) + "-" + std::to_string(id & 0xFFFFu);
  };
  auto label = [&](common::TaskId t) {
    return g.kernel_names.empty() ? std::string("task") : g.kernel_names[g.kernel[t]];
  };

  std::uint64_t records = 0;
  bool first = true;
  auto emit = [&](const ordered_json& e) {
    f << (first ? "\n" : ",\n") << e.dump();
    first = false;
    if (every_records && ++records % TextOut::kCheckEvery == 0) every_records();
  };
  f << "{\"traceEvents\":[";
  emit({{"args", {{"name", "Machine View"}}},
        {"cat", "__metadata"},
        {"name", "process_name"},
        {"ph", "M"},
        {"pid", kPid}});
  for (std::uint32_t c = 0; c < cores; ++c) {
    if (per_core[c].empty()) continue;
    const std::string name = std::string(c < aic ? "AIC_" : "AIV_") + std::to_string(c + 1);
    for (std::uint32_t l = 0; l <= (core_overlaps[c] ? 1u : 0u); ++l) {
      emit({{"args", {{"name", name}}},
            {"cat", "__metadata"},
            {"name", "thread_name"},
            {"ph", "M"},
            {"pid", kPid},
            {"tid", kTid0 + 2 * (c + 1) + l}});
    }
  }
  std::uint64_t event_id = 0;
  for (std::uint32_t c = 0; c < cores; ++c) {
    for (const common::TaskId t : per_core[c]) {
      const Leaf& l = leaves[g.kernel_names.empty() ? 0 : g.kernel[t]];
      const std::string hint =
          "Average Execution Time: " + std::to_string(us(l.total_ps) / double(l.count)) +
          "\nMax Execution Time: " + std::to_string(us(l.max_ps)) + ", Task: [" +
          formal(l.max_task) + "]\nMin Execution Time: " + std::to_string(us(l.min_ps)) +
          ", Task: [" + formal(l.min_task) + "]\n";
      const std::uint32_t seq = g.device_tasks[g.device_task[t]].seq_no;
      const LeafMergeHint mh = t < run.leaf_hints.size() ? run.leaf_hints[t] : LeafMergeHint{};
      // PyPTO's hashOrder-hint: one line per merge that made this leaf, the class before it.
      std::string merges;
      const auto merge_line = [&](const char* kind, std::uint32_t count) {
        if (count == 0) return -1;
        merges += std::string(kind) + " hashOrder: func" + std::to_string(g.root[t]) + "_" +
                  std::to_string(mh.hash_order) + ", subGraphCount: " + std::to_string(count) +
                  "\n";
        return static_cast<int>(mh.hash_order);
      };
      const int l1_order = merge_line("l1ReuseInfo", mh.l1_count);
      const int cube_order = merge_line("cubeMergeInfo", mh.cube_count);
      const int vec_order = merge_line("vecMergeInfo", mh.vec_count);
      nlohmann::json args = {
          {"event-hint", "Task:[" + formal(t) + "], rootHash:" + std::to_string(g.root[t]) +
                             ", callOpMagic:-1, leafHash:" + std::to_string(g.kernel[t]) +
                             ", TaskId:" + std::to_string(g.orig_id[t])},
          {"ioperand-hint", "[]"},
          {"ooperand-hint", "[]"},
          {"execution-hint", hint},
          {"color", label(t)},
          {"taskId", g.orig_id[t]},
          {"seqNo", seq},
          {"wrapId", -1},
          {"l1ReuseHashOrder", l1_order},
          {"cubeNBufferHashOrder", cube_order},
          {"vecNBufferHashOrder", vec_order}};
      if (!merges.empty()) args["hashOrder-hint"] = merges;
      emit({{"args", args},
            {"cat", "event"},
            {"id", event_id++},
            {"name", formal(t) + "-" + std::to_string(g.root[t]) + "-" +
                         std::to_string(g.kernel[t]) + "(" + label(t) + ")"},
            {"ph", "X"},
            {"pid", kPid},
            {"tid", tid_of(t)},
            {"ts", us(tl.start_ps[t])},
            {"dur", us(tl.end_ps[t] - tl.start_ps[t])}});
    }
  }
  std::size_t flows = 0;
  for (common::TaskId t = 0; t < g.num_tasks() && flows < run.max_flow_edges; ++t) {
    if (!placed(t)) continue;
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t) && flows < run.max_flow_edges; ++i) {
      const common::TaskId s = g.succ[i];
      if (!placed(s)) continue;
      ++flows;
      emit({{"cat", "machine-view-last-dep"},
            {"id", event_id},
            {"name", "machine-view-last-dep"},
            {"ph", "s"},
            {"pid", kPid},
            {"tid", tid_of(t)},
            {"ts", us(tl.end_ps[t]) - 0.0001}});
      emit({{"bp", "e"},
            {"cat", "machine-view-last-dep"},
            {"id", event_id},
            {"name", "machine-view-last-dep"},
            {"ph", "f"},
            {"pid", kPid},
            {"tid", tid_of(s)},
            {"ts", us(tl.start_ps[s])}});
      ++event_id;
    }
  }
  // Ready-queue depth as PyPTO's counters (pid 1, tid 1), emitted when a value changes.
  std::int64_t last_aic = -1, last_aiv = -1;
  for (const QueueDepth& d : run.depth) {
    const bool aic_changed = d.aic != last_aic, aiv_changed = d.aiv != last_aiv;
    auto counter = [&](const char* name, std::uint64_t size) {
      emit({{"name", name},
            {"pid", kPid},
            {"tid", 1},
            {"ph", "C"},
            {"ts", us(d.time_ps)},
            {"args", {{"size", size}}}});
    };
    if (aic_changed) counter("ReadyCount_AIC", d.aic);
    if (aiv_changed) counter("ReadyCount_AIV", d.aiv);
    if (aic_changed || aiv_changed) counter("ReadyCount_Total", std::uint64_t(d.aic) + d.aiv);
    last_aic = d.aic;
    last_aiv = d.aiv;
  }
  f << "\n]}\n";
}

}  // namespace pypto::trace
