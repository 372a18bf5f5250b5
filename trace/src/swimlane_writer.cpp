// SPDX-License-Identifier: Apache-2.0
// write_merged_swimlane (swimlane_writer.h): one event at a time through TextOut, in the bytes
// an ordered_json per event gave; write_bubble_analysis beside it.
#include "pypto/trace/swimlane_writer.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "pypto/trace/text_out.h"

namespace pypto::trace {

namespace {

using nlohmann::ordered_json;

double us(std::uint64_t ps) { return static_cast<double>(ps) / 1e6; }

// A JSON string as nlohmann::json::dump() writes it, quotes included.
std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

// A signed integer as nlohmann writes it.
TextOut& int_to(TextOut& o, int v) {
  if (v < 0) o << '-';
  return o.u(v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v)
                   : static_cast<std::uint64_t>(v));
}

// PyPTO's task name, seqNo-funcId-opIdx of the 64-bit id seqNo << 32 | taskId, in a buffer:
// an event names its task twice, where a string's to_string and concatenations cost more
// than the rest of the name's work.
struct FormalName {
  char buf[32];  // at most 10 + 1 + 4 + 1 + 5 characters
  std::size_t size = 0;
  std::string_view view() const { return {buf, size}; }
};
FormalName formal_chars(const sched::TaskGraph& g, common::TaskId t) {
  const std::uint32_t id = g.orig_id[t];
  FormalName f;
  char* const end = f.buf + sizeof f.buf;
  char* p = std::to_chars(f.buf, end, g.device_tasks[g.device_task[t]].seq_no).ptr;
  *p++ = '-';
  p = std::to_chars(p, end, (id >> 16) & 1023u).ptr;
  *p++ = '-';
  p = std::to_chars(p, end, id & 0xFFFFu).ptr;
  f.size = static_cast<std::size_t>(p - f.buf);
  return f;
}

std::string formal_name(const sched::TaskGraph& g, common::TaskId t) {
  return std::string(formal_chars(g, t).view());
}

// The lane name of core `c` (AICs first, `aic` of them), as PyPTO names its threads.
std::string core_name(std::uint32_t c, std::uint32_t aic) {
  return std::string(c < aic ? "AIC_" : "AIV_") + std::to_string(c + 1);
}

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
  auto formal = [&](common::TaskId t) { return formal_name(g, t); };

  // The text is what one ordered_json per event gave (keys in that order, `args` of an event
  // in nlohmann::json's sorted order), written straight out: the DOM cost ~110k instructions
  // a task, several times the simulation of the task.
  TextOut o(f, every_records);
  o << "{\"traceEvents\":[";
  bool first = true;
  auto begin_event = [&]() -> TextOut& {
    o << (first ? std::string_view("\n{") : std::string_view(",\n{"));
    first = false;
    return o;
  };
  auto end_event = [&] {
    o << '}';
    o.end_record();
  };
  begin_event() << "\"args\":{\"name\":\"Machine View\"},\"cat\":\"__metadata\","
                   "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
  o.u(kPid);
  end_event();
  for (std::uint32_t c = 0; c < cores; ++c) {
    if (per_core[c].empty()) continue;
    const std::string name = core_name(c, aic);
    for (std::uint32_t l = 0; l <= (core_overlaps[c] ? 1u : 0u); ++l) {
      begin_event() << "\"args\":{\"name\":\"" << name
                    << "\"},\"cat\":\"__metadata\",\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":";
      o.u(kPid) << ",\"tid\":";
      o.u(kTid0 + 2 * (c + 1) + l);
      end_event();
    }
  }
  // Per kernel its label as a JSON string and without the quotes (inside the event's name);
  // per leaf its execution hint (the same for every task of the leaf), made on first use.
  std::vector<std::string> labels(leaves.size()), hints(leaves.size());
  std::uint64_t event_id = 0;
  for (std::uint32_t c = 0; c < cores; ++c) {
    for (const common::TaskId t : per_core[c]) {
      const std::size_t leaf = g.kernel_names.empty() ? 0 : g.kernel[t];
      std::string& label = labels[leaf];
      if (label.empty()) {
        label = json_string(g.kernel_names.empty() ? std::string("task") : g.kernel_names[leaf]);
      }
      std::string& hint = hints[leaf];
      if (hint.empty()) {
        const Leaf& l = leaves[leaf];
        hint = json_string(
            "Average Execution Time: " + std::to_string(us(l.total_ps) / double(l.count)) +
            "\nMax Execution Time: " + std::to_string(us(l.max_ps)) + ", Task: [" +
            formal(l.max_task) + "]\nMin Execution Time: " + std::to_string(us(l.min_ps)) +
            ", Task: [" + formal(l.min_task) + "]\n");
      }
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
      const FormalName formal_t = formal_chars(g, t);
      const std::string_view name = formal_t.view();
      begin_event() << "\"args\":{\"color\":" << label << ",\"cubeNBufferHashOrder\":";
      int_to(o, cube_order) << ",\"event-hint\":\"Task:[" << name << "], rootHash:";
      o.u(g.root[t]) << ", callOpMagic:-1, leafHash:";
      o.u(g.kernel[t]) << ", TaskId:";
      o.u(g.orig_id[t]) << "\",\"execution-hint\":" << hint;
      if (!merges.empty()) o << ",\"hashOrder-hint\":" << json_string(merges);
      o << ",\"ioperand-hint\":\"[]\",\"l1ReuseHashOrder\":";
      int_to(o, l1_order) << ",\"ooperand-hint\":\"[]\",\"seqNo\":";
      o.u(seq) << ",\"taskId\":";
      o.u(g.orig_id[t]) << ",\"vecNBufferHashOrder\":";
      int_to(o, vec_order) << ",\"wrapId\":-1},\"cat\":\"event\",\"id\":";
      o.u(event_id++) << ",\"name\":\"" << name << '-';
      o.u(g.root[t]) << '-';
      o.u(g.kernel[t]) << '(' << std::string_view(label).substr(1, label.size() - 2)
                       << ")\",\"ph\":\"X\",\"pid\":";
      o.u(kPid) << ",\"tid\":";
      o.u(tid_of(t)) << ",\"ts\":";
      o.us_of_ps(tl.start_ps[t]) << ",\"dur\":";
      o.us_of_ps(tl.end_ps[t] - tl.start_ps[t]);
      end_event();
    }
  }
  std::size_t flows = 0;
  for (common::TaskId t = 0; t < g.num_tasks() && flows < run.max_flow_edges; ++t) {
    if (!placed(t)) continue;
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t) && flows < run.max_flow_edges; ++i) {
      const common::TaskId s = g.succ[i];
      if (!placed(s)) continue;
      ++flows;
      begin_event() << "\"cat\":\"machine-view-last-dep\",\"id\":";
      o.u(event_id) << ",\"name\":\"machine-view-last-dep\",\"ph\":\"s\",\"pid\":";
      o.u(kPid) << ",\"tid\":";
      o.u(tid_of(t)) << ",\"ts\":";
      o.d(us(tl.end_ps[t]) - 0.0001);
      end_event();
      begin_event() << "\"bp\":\"e\",\"cat\":\"machine-view-last-dep\",\"id\":";
      o.u(event_id) << ",\"name\":\"machine-view-last-dep\",\"ph\":\"f\",\"pid\":";
      o.u(kPid) << ",\"tid\":";
      o.u(tid_of(s)) << ",\"ts\":";
      o.us_of_ps(tl.start_ps[s]);
      end_event();
      ++event_id;
    }
  }
  // Ready-queue depth as PyPTO's counters (pid 1, tid 1), emitted when a value changes.
  std::int64_t last_aic = -1, last_aiv = -1;
  for (const QueueDepth& d : run.depth) {
    const bool aic_changed = d.aic != last_aic, aiv_changed = d.aiv != last_aiv;
    auto counter = [&](std::string_view name, std::uint64_t size) {
      begin_event() << "\"name\":\"" << name << "\",\"pid\":";
      o.u(kPid) << ",\"tid\":1,\"ph\":\"C\",\"ts\":";
      o.us_of_ps(d.time_ps) << ",\"args\":{\"size\":";
      o.u(size) << '}';
      end_event();
    };
    if (aic_changed) counter("ReadyCount_AIC", d.aic);
    if (aiv_changed) counter("ReadyCount_AIV", d.aiv);
    if (aic_changed || aiv_changed) counter("ReadyCount_Total", std::uint64_t(d.aic) + d.aiv);
    last_aic = d.aic;
    last_aiv = d.aiv;
  }
  o << "\n]}\n";
  o.flush();
}

void write_bubble_analysis(std::ostream& f, const SwimlaneRun& run) {
  const sched::TaskGraph& g = run.graph;
  const Times tl{run.start_ps, run.end_ps, run.core};
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (const auto& v : run.per_core) {
    for (const common::TaskId t : v) first = std::min(first, tl.start_ps[t]);
  }
  if (first == std::numeric_limits<std::uint64_t>::max()) first = 0;
  // Each task's last predecessor's end (HUBs: their resolve time), the run's first start
  // where it has none.
  std::vector<std::uint64_t> ready(g.num_tasks(), first);
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
      ready[g.succ[i]] = std::max(ready[g.succ[i]], tl.end_ps[t]);
    }
  }
  auto us3 = [](std::uint64_t ps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ps) / 1e6);
    return std::string(buf);
  };
  auto label = [&](common::TaskId t) {
    return g.kernel_names.empty() ? std::string("task") : g.kernel_names[g.kernel[t]];
  };
  struct Wait {
    std::uint64_t ps;
    common::TaskId t;
  };
  const auto longer = [](const Wait& a, const Wait& b) {
    return a.ps != b.ps ? a.ps > b.ps : a.t < b.t;
  };
  auto task_line = [&](const Wait& w) {
    return "    Task:" + formal_name(g, w.t) + ", label:" + label(w.t) + ", wait: " + us3(w.ps) +
           "\n";
  };
  std::vector<Wait> all;
  std::string cores;
  for (std::uint32_t c = 0; c < run.per_core.size(); ++c) {
    const auto& v = run.per_core[c];
    if (v.empty()) continue;
    std::uint64_t last_end = first, total_wait = 0, schedule_wait = 0;
    std::vector<Wait> mine;
    for (const common::TaskId t : v) {
      const std::uint64_t start = tl.start_ps[t];
      // A task overlapping its predecessor on the core (a pending slot's switch) waited 0.
      const std::uint64_t free_at = std::max(last_end, ready[t]);
      const Wait w{start > free_at ? start - free_at : 0, t};
      schedule_wait += w.ps;
      total_wait += start > last_end ? start - last_end : 0;
      last_end = std::max(last_end, tl.end_ps[t]);
      mine.push_back(w);
      all.push_back(w);
    }
    cores += "[" + core_name(c, run.aic_cores) + "] Execute task num:" + std::to_string(v.size()) +
             "\n    Core Total Work Time: " + us3(last_end - first) +
             "\n    Total Wait Time: " + us3(total_wait) +
             "\n    Wait Schedule Time: " + us3(schedule_wait) +
             "\n    Wait Predecessor Time: " + us3(total_wait - schedule_wait) +
             "\n    Top 3 tasks in waiting schedule time\n";
    const std::size_t top = std::min<std::size_t>(3, mine.size());
    std::partial_sort(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(top), mine.end(),
                      longer);
    for (std::size_t i = 0; i < top; ++i) cores += task_line(mine[i]);
  }
  const std::size_t top = std::min<std::size_t>(10, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(top), all.end(), longer);
  f << "Top 10 tasks in waiting schedule\n";
  for (std::size_t i = 0; i < top; ++i) f << task_line(all[i]);
  f << "\n\n" << cores;
  f.flush();
}

}  // namespace pypto::trace
