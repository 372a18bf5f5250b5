// SPDX-License-Identifier: Apache-2.0
// PyPTO's merged swimlane (merged_swimlane.json, reference/pypto-runtime.md §6): a Chrome
// trace that tools/profiling/draw_swim_lane.py draws from a board recording (and pypto-sim's
// own writer, swimlane_writer.h): a lane (thread) per core named "AIC_<blockIdx+1>",
// "AIV_<blockIdx+1>" (a second lane of the same name where a core's tasks overlap), one "X"
// event per task in µs with its seqNo and taskId in args, a flow arrow per dependency ("s" on
// the producer's lane 0.0001 µs before its end, "f" on the consumer's lane at its start), and
// a "Fake Core" lane with the tasks of the topology that have no record (HUBs, unrecorded
// tasks), drawn next to their neighbours.
//
// The graph is rebuilt from those: tasks from the AIC/AIV/AI-CPU lanes with their recorded
// durations and starts, placeholders as zero-cost HUB nodes, dependencies from the arrows,
// whose ends are matched to tasks by lane and time. Placeholders drawn at the same time on
// the Fake Core lane cannot be told apart by an arrow: they become one node (the recording
// satisfies the merged dependencies: every predecessor of the group ended before any
// successor started). Arrows into or out of a placeholder that point back in time (drawn
// positions of tasks without a record, see run()) are dropped and counted. Times are already
// in µs: nothing is left for the pricing pass.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json_stream.h"
#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::trace::detail {

namespace {

using K = JsonStream::Kind;

// What a lane's name says (draw_swim_lane.py's get_core_name: the core type, "_", blockIdx+1).
struct Lane {
  enum class Kind : std::uint8_t { kUnnamed, kAic, kAiv, kAicpu, kFake, kOther };
  Kind kind = Kind::kUnnamed;
  std::uint32_t number = 0;  // after the "_"
  bool numbered = false;
  std::string name;
  std::uint64_t name_event = 0;  // the thread_name event, for messages
  // The lane's tasks by end and by start (µs), for matching the arrows' ends.
  std::vector<std::pair<double, std::uint32_t>> by_end, by_start;
};

Lane::Kind lane_kind(std::string_view type) {
  if (type == "AIC") return Lane::Kind::kAic;
  if (type == "AIV") return Lane::Kind::kAiv;
  if (type == "AI-CPU" || type == "AICPU") return Lane::Kind::kAicpu;
  if (type == "Fake Core") return Lane::Kind::kFake;
  return Lane::Kind::kOther;
}

void name_lane(Lane& l, std::string_view name) {
  l.name.assign(name.data(), name.size());
  const std::size_t us = name.rfind('_');
  std::string_view type = name;
  l.numbered = false;
  if (us != std::string_view::npos && us + 1 < name.size()) {
    std::uint64_t n = 0;
    bool digits = true;
    for (std::size_t i = us + 1; i < name.size() && digits; ++i) {
      const char c = name[i];
      digits = c >= '0' && c <= '9' && n < 0xFFFFFFFFull / 10;
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (digits && n <= 0xFFFFFFFFull) {
      type = name.substr(0, us);
      l.number = static_cast<std::uint32_t>(n);
      l.numbered = true;
    }
  }
  l.kind = l.numbered ? lane_kind(type) : Lane::Kind::kOther;
}

// One task ("X" event) as read.
struct Task {
  double ts = 0, dur = 0;  // µs
  std::uint64_t lane = 0;  // key of its lane
  std::uint64_t event = 0;
  std::uint32_t task_id = 0, seq = 0;
  std::string kernel;
  bool compiled_leaf = false;  // a nonzero leafHash and operands: a kernel, not a HUB
};

// One end of a flow arrow.
struct FlowEnd {
  double ts = 0;
  std::uint64_t lane = 0;
  std::uint64_t event = 0;
};

std::uint64_t lane_key(std::uint64_t pid, std::uint64_t tid) { return (pid << 32) ^ tid; }

std::string us_text(double v) { return compact(v) + " us"; }

// The event's fields this reader uses; the others are skipped.
enum class Field { kPh, kName, kCat, kPid, kTid, kTs, kDur, kId, kArgs, kOther };
Field field_of(std::string_view k) {
  if (k == "ph") return Field::kPh;
  if (k == "name") return Field::kName;
  if (k == "cat") return Field::kCat;
  if (k == "pid") return Field::kPid;
  if (k == "tid") return Field::kTid;
  if (k == "ts") return Field::kTs;
  if (k == "dur") return Field::kDur;
  if (k == "id") return Field::kId;
  if (k == "args") return Field::kArgs;
  return Field::kOther;
}
enum class ArgField { kName, kTaskId, kSeqNo, kHint, kInputs, kOutputs, kOther };
ArgField arg_of(std::string_view k) {
  if (k == "name") return ArgField::kName;
  if (k == "taskId") return ArgField::kTaskId;
  if (k == "seqNo") return ArgField::kSeqNo;
  if (k == "event-hint") return ArgField::kHint;
  if (k == "ioperand-hint") return ArgField::kInputs;
  if (k == "ooperand-hint") return ArgField::kOutputs;
  return ArgField::kOther;
}

class SwimlaneReader {
 public:
  explicit SwimlaneReader(const std::string& path) : path_(path), js_(path, "event") {}
  ReadTrace run();

 private:
  void read_events();
  void read_event(std::uint64_t index);
  std::string where(std::uint64_t event) const {
    return path_ + ": event " + std::to_string(event);
  }
  std::string lane_text(std::uint64_t key) const;
  // The task of `lane` whose end (ends=true) or start is nearest to `t`; placeholders drawn
  // at that same time are joined into one node. TraceError if none is there.
  std::uint32_t match(std::uint64_t lane, double t, bool ends, std::uint64_t event,
                      const char* what);
  std::uint32_t find(std::uint32_t t) {
    while (parent_[t] != t) t = parent_[t] = parent_[parent_[t]];
    return t;
  }
  double number(const HeldScalar& v, const char* key, std::uint64_t event);
  std::uint64_t id_number(const HeldScalar& v, const char* key, std::uint64_t event);

  const std::string& path_;
  JsonStream js_;
  JsonStream::Scalar tmp_;
  std::unordered_map<std::uint64_t, Lane> lanes_;
  std::vector<Task> tasks_;
  std::vector<bool> fake_;
  std::vector<std::uint32_t> parent_;  // union-find over placeholders drawn at one time
  // Arrow ends by (category, id): the "s" and the "f" event.
  struct Arrow {
    FlowEnd s, f;
    bool has_s = false, has_f = false;
  };
  std::map<std::pair<std::string, std::string>, Arrow> arrows_;
  std::uint64_t events_ = 0;
  bool saw_trace_events_ = false;
};

double SwimlaneReader::number(const HeldScalar& v, const char* key, std::uint64_t event) {
  double d = 0;
  switch (v.kind) {
    case K::kUint: d = static_cast<double>(v.u); break;
    case K::kInt: d = static_cast<double>(v.i); break;
    case K::kFloat: d = v.d; break;
    case K::kNone: js_.semantic_error(where(event) + ": missing \"" + key + "\"");
    default:
      js_.semantic_error(where(event) + ": expected \"" + key + "\" to be a number (us), got " +
                         brief(v.view()));
  }
  if (!std::isfinite(d) || d < 0) {
    js_.semantic_error(where(event) + ": expected \"" + key +
                       "\" to be a non-negative number of us, got " + brief(v.view()));
  }
  return d;
}

std::uint64_t SwimlaneReader::id_number(const HeldScalar& v, const char* key, std::uint64_t event) {
  std::uint64_t x = 0;
  const std::string msg = check_uint(v, key, 0xFFFFFFFFull, &x);
  if (!msg.empty()) js_.semantic_error(where(event) + ": " + msg);
  return x;
}

void SwimlaneReader::read_event(std::uint64_t index) {
  const K kind = js_.peek_kind();
  if (kind != K::kObject) {
    HeldScalar v;
    read_held(js_, v, tmp_);
    js_.semantic_error(where(index) + ": expected an object, got " + brief(v.view()));
  }
  HeldScalar ph, name, cat, pid, tid, ts, dur, id, a_name, a_task, a_seq, a_hint, a_in, a_out;
  K args_kind = K::kNone;
  js_.begin_object();
  bool first = true;
  std::string_view key;
  while (js_.next_key(first, key)) {
    switch (field_of(key)) {
      case Field::kPh: read_held(js_, ph, tmp_); break;
      case Field::kName: read_held(js_, name, tmp_); break;
      case Field::kCat: read_held(js_, cat, tmp_); break;
      case Field::kPid: read_held(js_, pid, tmp_); break;
      case Field::kTid: read_held(js_, tid, tmp_); break;
      case Field::kTs: read_held(js_, ts, tmp_); break;
      case Field::kDur: read_held(js_, dur, tmp_); break;
      case Field::kId: read_held(js_, id, tmp_); break;
      case Field::kOther: js_.skip_value(); break;
      case Field::kArgs: {
        args_kind = js_.peek_kind();
        if (args_kind != K::kObject) {
          js_.skip_value();
          break;
        }
        js_.begin_object();
        bool afirst = true;
        std::string_view akey;
        while (js_.next_key(afirst, akey)) {
          switch (arg_of(akey)) {
            case ArgField::kName: read_held(js_, a_name, tmp_); break;
            case ArgField::kTaskId: read_held(js_, a_task, tmp_); break;
            case ArgField::kSeqNo: read_held(js_, a_seq, tmp_); break;
            case ArgField::kHint: read_held(js_, a_hint, tmp_); break;
            case ArgField::kInputs: read_held(js_, a_in, tmp_); break;
            case ArgField::kOutputs: read_held(js_, a_out, tmp_); break;
            case ArgField::kOther: js_.skip_value(); break;
          }
        }
        break;
      }
    }
  }
  if (ph.kind != K::kString) return;  // not an event this reader uses (PyPTO writes "ph")
  const std::string& p = ph.s;
  const bool task = p == "X", flow = p == "s" || p == "f";
  const bool lane_name = p == "M" && name.kind == K::kString && name.s == "thread_name";
  if (!task && !flow && !lane_name) return;  // counters, process names, instants
  const std::uint64_t lane =
      lane_key(pid.present() ? id_number(pid, "pid", index) : 0, id_number(tid, "tid", index));
  if (lane_name) {
    if (args_kind != K::kObject || a_name.kind != K::kString) {
      js_.semantic_error(where(index) +
                         ": a thread_name event needs \"args\": {\"name\": \"<lane name>\"}");
    }
    Lane& l = lanes_[lane];
    if (l.kind != Lane::Kind::kUnnamed && l.name != a_name.s) {
      js_.semantic_error(where(index) + ": " + lane_text(lane) + " is named \"" + a_name.s +
                         "\" here but \"" + l.name + "\" in event " + std::to_string(l.name_event));
    }
    name_lane(l, a_name.s);
    l.name_event = index;
    return;
  }
  const double t = number(ts, "ts", index);
  if (flow) {
    std::string key_id;
    if (id.kind == K::kString) {
      key_id = "s:" + id.s;
    } else if (id.kind == K::kUint) {
      key_id = std::to_string(id.u);
    } else if (id.kind == K::kInt) {
      key_id = std::to_string(id.i);
    } else {
      js_.semantic_error(where(index) + ": a flow event (\"ph\": \"" + p +
                         "\") needs an \"id\" (a number or a string), got " +
                         (id.present() ? brief(id.view()) : std::string("none")));
    }
    Arrow& a = arrows_[{cat.kind == K::kString ? cat.s : std::string(), key_id}];
    const bool start = p == "s";
    if (start ? a.has_s : a.has_f) {
      js_.semantic_error(where(index) + ": a second \"" + p + "\" event for flow id " +
                         brief(id.view()) + " (the first is event " +
                         std::to_string(start ? a.s.event : a.f.event) +
                         "); each dependency arrow has one start and one end");
    }
    (start ? a.s : a.f) = FlowEnd{t, lane, index};
    (start ? a.has_s : a.has_f) = true;
    return;
  }
  Task x;
  x.ts = t;
  x.dur = number(dur, "dur", index);
  x.lane = lane;
  x.event = index;
  if (args_kind != K::kObject) {
    js_.semantic_error(where(index) + ": a task event (\"ph\": \"X\") needs \"args\" with its " +
                       "\"taskId\" and \"seqNo\", as PyPTO's draw_swim_lane.py writes them");
  }
  x.task_id = static_cast<std::uint32_t>(id_number(a_task, "taskId", index));
  x.seq = a_seq.present() ? static_cast<std::uint32_t>(id_number(a_seq, "seqNo", index)) : 0;
  // The kernel: the label in the name's last parentheses, else the leaf hash of the hint.
  if (name.kind == K::kString) {
    const std::string& n = name.s;
    const std::size_t open = n.rfind('(');
    if (open != std::string::npos && n.size() >= open + 2 && n.back() == ')') {
      x.kernel = n.substr(open + 1, n.size() - open - 2);
    }
  }
  if (a_hint.kind == K::kString) {
    const std::size_t at = a_hint.s.find("leafHash:");
    if (at != std::string::npos) {
      const std::size_t b = at + 9, e = a_hint.s.find_first_of(", ", b);
      const std::string hash = a_hint.s.substr(b, e == std::string::npos ? e : e - b);
      // HUBs have neither a leaf nor operands; a task of a compiled leaf names both.
      const auto names = [](const HeldScalar& v) {
        return v.kind == K::kString && !v.s.empty() && v.s != "[]";
      };
      x.compiled_leaf = !hash.empty() && hash != "0" && (names(a_in) || names(a_out));
      if (x.kernel.empty()) x.kernel = "leaf" + hash;
    }
  }
  if (x.kernel.empty()) x.kernel = "unnamed";
  tasks_.push_back(std::move(x));
}

void SwimlaneReader::read_events() {
  js_.begin_array();
  bool first = true;
  while (js_.next_element(first)) read_event(events_++);
}

std::string SwimlaneReader::lane_text(std::uint64_t key) const {
  const auto it = lanes_.find(key);
  std::string s =
      "lane pid " + std::to_string(key >> 32) + " tid " + std::to_string(key & 0xFFFFFFFFull);
  if (it != lanes_.end() && it->second.kind != Lane::Kind::kUnnamed) {
    s += " (\"" + it->second.name + "\")";
  }
  return s;
}

std::uint32_t SwimlaneReader::match(std::uint64_t lane_id, double t, bool ends, std::uint64_t event,
                                    const char* what) {
  // PyPTO's writer rounds µs of a board clock to doubles: allow a few units in the last
  // place of the time, and the 0.0001 µs the arrow starts before its producer's end.
  const double mag = std::max(std::fabs(t), 1.0);
  const double ulp = std::nextafter(mag, std::numeric_limits<double>::infinity()) - mag;
  const double tol = 2e-4 + 8 * ulp;
  const double target = ends ? t + 1e-4 : t;
  const auto it = lanes_.find(lane_id);
  if (it != lanes_.end()) {
    const Lane& l = it->second;
    const auto& v = ends ? l.by_end : l.by_start;
    auto lo = std::lower_bound(v.begin(), v.end(), std::make_pair(target - tol, std::uint32_t{0}));
    std::uint32_t best = common::kNoTask;
    double best_d = 0;
    bool tie = false;
    std::vector<std::uint32_t> near;
    for (auto i = lo; i != v.end() && i->first <= target + tol; ++i) {
      const double d = std::fabs(i->first - target);
      near.push_back(i->second);
      if (best == common::kNoTask || d < best_d - ulp) {
        best = i->second;
        best_d = d;
        tie = false;
      } else if (d <= best_d + ulp) {
        tie = true;
      }
    }
    if (best != common::kNoTask && l.kind == Lane::Kind::kFake) {
      for (const std::uint32_t o : near) parent_[find(o)] = find(best);
      return find(best);
    }
    if (best != common::kNoTask && !tie) return best;
    if (best != common::kNoTask) {
      throw TraceError(where(event) + ": the flow arrow " + what + " at ts " + us_text(t) + " on " +
                       lane_text(lane_id) + " fits several of its tasks (events " +
                       std::to_string(tasks_[near[0]].event) + " and " +
                       std::to_string(tasks_[near[1]].event) +
                       "); cannot tell which task the dependency is on");
    }
  }
  throw TraceError(where(event) + ": the flow arrow " + what + " at ts " + us_text(t) + " on " +
                   lane_text(lane_id) + ", but no task of that lane " +
                   (ends ? "ends 0.0001 us after it" : "starts there") +
                   " (draw_swim_lane.py starts an arrow 0.0001 us before its producer's end and "
                   "ends it at its consumer's start)");
}

ReadTrace SwimlaneReader::run() {
  const K top = js_.peek_kind();
  if (top == K::kArray) {
    saw_trace_events_ = true;
    read_events();
  } else if (top == K::kObject) {
    js_.begin_object();
    bool first = true;
    std::string_view key;
    while (js_.next_key(first, key)) {
      if (key == "traceEvents") {
        if (js_.peek_kind() != K::kArray) {
          js_.semantic_error(path_ + ": expected \"traceEvents\" to be an array of events");
        }
        saw_trace_events_ = true;
        read_events();
      } else {
        js_.skip_value();
      }
    }
  } else {
    js_.semantic_error(path_ + ": expected a JSON object {\"traceEvents\": [...]}");
  }
  js_.end_document();
  if (!saw_trace_events_) {
    throw TraceError(path_ +
                     ": no \"traceEvents\": expected PyPTO's merged swimlane, a JSON "
                     "object {\"traceEvents\": [...]}");
  }
  if (tasks_.empty()) {
    throw TraceError(path_ + ": no task events (\"ph\": \"X\") among its " +
                     std::to_string(events_) + " events: nothing to replay");
  }

  // Lanes: every task's lane must say its core type.
  const std::size_t n = tasks_.size();
  fake_.assign(n, false);
  model::RecordedCores cores;
  bool numbering_known = true;
  std::uint64_t placeholders = 0, kernel_placeholders = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Task& x = tasks_[i];
    Lane& l = lanes_[x.lane];
    switch (l.kind) {
      case Lane::Kind::kUnnamed:
        throw TraceError(where(x.event) + ": " + lane_text(x.lane) +
                         " has no thread_name event; its name (AIC_n, AIV_n, AI-CPU_n or "
                         "Fake Core_n) says which core type ran the task");
      case Lane::Kind::kOther:
        throw TraceError(where(x.event) + ": lane pid " + std::to_string(x.lane >> 32) + " tid " +
                         std::to_string(x.lane & 0xFFFFFFFFull) + " is named \"" + l.name +
                         "\" (event " + std::to_string(l.name_event) +
                         "); expected AIC_n, AIV_n, AI-CPU_n or Fake Core_n, the lanes of "
                         "PyPTO's merged swimlane");
      case Lane::Kind::kFake:
        fake_[i] = true;
        ++placeholders;
        kernel_placeholders += x.compiled_leaf;
        break;
      case Lane::Kind::kAic:
      case Lane::Kind::kAiv: {
        if (l.number == 0) {
          numbering_known = false;  // not draw_swim_lane.py's blockIdx + 1
          break;
        }
        const std::uint32_t block = l.number - 1;
        if (l.kind == Lane::Kind::kAic) {
          cores.max_aic_block = cores.any_aic ? std::max(cores.max_aic_block, block) : block;
          cores.any_aic = true;
        } else {
          cores.min_aiv_block = cores.any_aiv ? std::min(cores.min_aiv_block, block) : block;
          cores.max_aiv_block = cores.any_aiv ? std::max(cores.max_aiv_block, block) : block;
          cores.any_aiv = true;
        }
        break;
      }
      case Lane::Kind::kAicpu: break;
    }
    l.by_end.emplace_back(x.ts + x.dur, i);
    l.by_start.emplace_back(x.ts, i);
  }
  for (auto& [key, l] : lanes_) {
    std::sort(l.by_end.begin(), l.by_end.end());
    std::sort(l.by_start.begin(), l.by_start.end());
  }

  // Tasks in (seqNo, taskId) order: a device task's tasks in the order of its topology.
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::make_pair(tasks_[a].seq, tasks_[a].task_id) <
           std::make_pair(tasks_[b].seq, tasks_[b].task_id);
  });
  for (std::size_t k = 1; k < n; ++k) {
    const Task& a = tasks_[order[k - 1]];
    const Task& b = tasks_[order[k]];
    if (a.seq == b.seq && a.task_id == b.task_id) {
      const Task& later = a.event < b.event ? b : a;
      throw TraceError(where(later.event) + ": task " + std::to_string(b.task_id) + " of seqNo " +
                       std::to_string(b.seq) + " is drawn a second time (first: " + "event " +
                       std::to_string(std::min(a.event, b.event)) + ")");
    }
  }

  // Dependencies from the arrows.
  parent_.resize(n);
  std::iota(parent_.begin(), parent_.end(), 0u);
  // A producer's successors keep the order of its arrows in the file: draw_swim_lane.py draws
  // them in the order of the task's successor list, the order the AICPU resolves and releases
  // them in (a board swimlane's waves start in that order).
  struct Edge {
    std::uint32_t from, to;
    std::uint64_t arrow;  // event index of the arrow's start
  };
  std::vector<Edge> edges;
  edges.reserve(arrows_.size());
  for (const auto& [key, a] : arrows_) {
    if (!a.has_s || !a.has_f) {
      const FlowEnd& e = a.has_s ? a.s : a.f;
      throw TraceError(where(e.event) + ": flow id " + key.second +
                       (a.has_s ? " starts here but never ends (no \"f\" event)"
                                : " ends here but never starts (no \"s\" event)"));
    }
    const std::uint32_t from = match(a.s.lane, a.s.ts, true, a.s.event, "starts");
    const std::uint32_t to = match(a.f.lane, a.f.ts, false, a.f.event, "ends");
    edges.push_back({from, to, a.s.event});
  }
  std::uint64_t merged = 0;
  for (std::uint32_t i = 0; i < n; ++i) merged += fake_[i] && find(i) != i;
  for (auto& e : edges) e = {find(e.from), find(e.to), e.arrow};
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.from, a.to, a.arrow) < std::tie(b.from, b.to, b.arrow);
  });
  edges.erase(
      std::unique(edges.begin(), edges.end(),
                  [](const Edge& a, const Edge& b) { return a.from == b.from && a.to == b.to; }),
      edges.end());
  // A placeholder's place on the Fake Core lane is drawn, not recorded: draw_swim_lane.py
  // lays out the tasks of a root without any record one after another, so their arrows can
  // point back in time, and merging can close cycles. Such an arrow contradicts the drawing
  // it comes from (no task starts before its producer ends) and is dropped; with every
  // duration positive, no cycle is left.
  const auto against_time = [&](const Edge& e) {
    if (!fake_[e.from] && !fake_[e.to]) return false;
    const Task& a = tasks_[e.from];
    const Task& b = tasks_[e.to];
    const double end = a.ts + a.dur;
    const double mag = std::max(std::fabs(end), 1.0);
    const double ulp = std::nextafter(mag, std::numeric_limits<double>::infinity()) - mag;
    return end > b.ts + 2e-4 + 8 * ulp;
  };
  const std::size_t before_drop = edges.size();
  edges.erase(std::remove_if(edges.begin(), edges.end(), against_time), edges.end());
  const std::uint64_t dropped = before_drop - edges.size();

  // Recorded times: µs since the first start of a recorded task.
  double min_ts = std::numeric_limits<double>::infinity(), max_end = 0;
  // PyPTO's AICore end to end (print_aicore_summary): AIC/AIV lanes only, placeholders out.
  double core_ts = std::numeric_limits<double>::infinity(), core_end = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (fake_[i]) continue;
    min_ts = std::min(min_ts, tasks_[i].ts);
    max_end = std::max(max_end, tasks_[i].ts + tasks_[i].dur);
    const Lane::Kind k = lanes_[tasks_[i].lane].kind;
    if (k == Lane::Kind::kAic || k == Lane::Kind::kAiv) {
      core_ts = std::min(core_ts, tasks_[i].ts);
      core_end = std::max(core_end, tasks_[i].ts + tasks_[i].dur);
    }
  }
  if (!(min_ts <= max_end)) {
    throw TraceError(path_ +
                     ": every task is on the Fake Core lane (placeholders without a "
                     "record): nothing recorded to replay");
  }
  const double span_ps = std::nearbyint((max_end - min_ts) * 1e6);
  if (!(span_ps < static_cast<double>(common::kTimeLimitPs))) {
    throw TraceError(path_ + ": the recorded tasks span " + us_text(max_end - min_ts) +
                     ", more than the model's time limit of 2^62 ps (about 53 days)");
  }

  sched::TaskGraphBuilder builder(path_);
  std::vector<std::uint32_t> pos(n);  // graph id of each task
  for (std::uint32_t k = 0; k < n; ++k) pos[order[k]] = k;
  auto by_src = edges;
  std::sort(by_src.begin(), by_src.end(), [&](const Edge& a, const Edge& b) {
    return std::make_pair(pos[a.from], a.arrow) < std::make_pair(pos[b.from], b.arrow);
  });
  std::unordered_map<std::uint64_t, std::uint32_t> roots;
  std::size_t e = 0;
  std::uint32_t last_kernel = 0;
  std::string last_kernel_name;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t i = order[k];
    const Task& x = tasks_[i];
    const Lane& l = lanes_[x.lane];
    sched::TaskGraphBuilder::Task t;
    t.device_task_seq = x.seq;
    t.orig_id = x.task_id;
    // The root instance: the taskId above its 16-bit op index (reference/pypto-runtime.md
    // §1.4), numbered densely per device task.
    const std::uint64_t rk = (std::uint64_t{x.seq} << 32) | (x.task_id >> 16);
    t.root = roots.emplace(rk, static_cast<std::uint32_t>(roots.size())).first->second;
    if (k == 0 || x.kernel != last_kernel_name) {
      last_kernel = builder.kernel_index(x.kernel);
      last_kernel_name = x.kernel;
    }
    t.kernel = last_kernel;
    if (fake_[i]) {
      t.core_type = common::CoreType::kHub;
      t.recorded_ns = 0;
    } else {
      t.core_type = l.kind == Lane::Kind::kAic   ? common::CoreType::kAic
                    : l.kind == Lane::Kind::kAiv ? common::CoreType::kAiv
                                                 : common::CoreType::kAicpu;
      const double ns = std::nearbyint(x.dur * 1000.0);
      if (!(ns < static_cast<double>(sched::kNoRecord))) {
        throw TraceError(where(x.event) + ": duration " + us_text(x.dur) +
                         " does not fit in 32-bit nanoseconds");
      }
      t.recorded_ns = static_cast<std::uint32_t>(ns);
      t.recorded_start_ps = static_cast<common::TimePs>(std::nearbyint((x.ts - min_ts) * 1e6));
    }
    builder.add_task(t);
    for (; e < by_src.size() && pos[by_src[e].from] == k; ++e) {
      if (by_src[e].to != by_src[e].from) builder.add_successor(pos[by_src[e].to]);
    }
  }
  // Arrows between device tasks: one into a later device task is satisfied by their order
  // (finish() drops it); one into an earlier device task cannot be honoured.
  for (const Edge& ed : edges) {
    const std::uint32_t from = ed.from, to = ed.to;
    if (tasks_[from].seq > tasks_[to].seq) {
      throw TraceError(
          where(tasks_[from].event) + ": task " + std::to_string(tasks_[from].task_id) +
          " of seqNo " + std::to_string(tasks_[from].seq) + " has a flow arrow to task " +
          std::to_string(tasks_[to].task_id) + " of the earlier seqNo " +
          std::to_string(tasks_[to].seq) + " (event " + std::to_string(tasks_[to].event) +
          "); device tasks run in seqNo order, so it cannot be honoured");
    }
  }
  ReadTrace read;
  LoadedTrace& out = read.trace;
  try {
    out.graph = builder.finish();
  } catch (const TraceError& err) {
    // A cycle may come from merging: say so, the recording itself has none.
    throw TraceError(path_ + ": " + err.what() +
                     (merged > 0 ? " (" + std::to_string(merged) +
                                       " placeholders were merged with others drawn at the "
                                       "same time, which the flow arrows cannot tell apart)"
                                 : std::string()));
  }
  out.graph.recorded_makespan_ps =
      core_ts <= core_end ? static_cast<common::TimePs>(std::nearbyint((core_end - core_ts) * 1e6))
                          : common::TimePs{0};
  out.format = TraceFormat::kSwimlane;
  out.placeholder_tasks = placeholders;
  out.kernel_placeholders = kernel_placeholders;
  out.merged_placeholders = merged;
  out.dropped_placeholder_arrows = dropped;
  if (numbering_known && (cores.any_aic || cores.any_aiv)) out.recorded_cores = cores;
  read.work.path = path_;
  return read;
}

}  // namespace

ReadTrace load_swimlane(const std::string& path) { return SwimlaneReader(path).run(); }

}  // namespace pypto::trace::detail
