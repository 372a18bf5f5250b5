// SPDX-License-Identifier: Apache-2.0
// PyPTO's fixed-latency task graph (one device task): execTime is in AICore cycles, HUB
// tasks are zero-cost dependency nodes, remainingPredecessors is a redundant predecessor
// count that we check against the successor lists.
//
// Streamed (JsonStream): each record goes straight into the TaskGraphBuilder, successors as
// taskIds, which are turned into task indices once every record is read (they may name later
// records). The checks and their order are those of the DOM reader this replaced: first, over
// all records, that each is an object with a unique taskId; then record by record its fields
// and successors. A record's fields may come in any order, and a key given twice counts with
// its last value (as in nlohmann's DOM).
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "id_index.h"
#include "json_stream.h"
#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::sim::trace_detail {

namespace {

using K = JsonStream::Kind;

enum class Field { kTaskId, kFuncName, kCoreType, kExecTime, kSuccessors, kRemaining, kOther };

Field field_of(std::string_view k) {
  switch (k.size()) {
    case 6:
      if (k == "taskId") return Field::kTaskId;
      break;
    case 8:
      if (k == "funcName") return Field::kFuncName;
      if (k == "coreType") return Field::kCoreType;
      if (k == "execTime") return Field::kExecTime;
      break;
    case 10:
      if (k == "successors") return Field::kSuccessors;
      break;
    case 21:
      if (k == "remainingPredecessors") return Field::kRemaining;
      break;
    default: break;
  }
  return Field::kOther;
}

// Memory per task while loading and simulating: the graph's columns and CSR (about 40 B),
// the taskId index (8-16 B), the predecessor counts to check (4 B) and the run's own state
// (about 30 B).
constexpr double kBytesPerTask = 100;

class FixedLatencyReader {
 public:
  FixedLatencyReader(const std::string& path, const ChipConfig& chip)
      : path_(path), chip_(chip), js_(path, "record"), builder_(path) {}

  LoadedTrace run();

 private:
  // The first error of the per-record checks (the second pass of the DOM reader): thrown
  // once the checks that came before it have passed (every record's taskId, and the
  // successor lookups of earlier records).
  struct Pending {
    bool set = false;
    std::uint64_t record = 0;
    std::uint32_t task_id = 0;
    std::vector<std::uint32_t> succ;  // the record's successors looked up before the error
    std::string msg;
  };

  void read_record();
  void check_record();
  std::string where(std::uint64_t record) const {
    return path_ + ": record " + std::to_string(record);
  }
  std::string where(std::uint64_t record, std::uint32_t task_id) const {
    return where(record) + " (taskId " + std::to_string(task_id) + ")";
  }
  std::uint32_t kernel(const std::string& name);
  void check_memory();

  const std::string& path_;
  const ChipConfig& chip_;
  JsonStream js_;
  sched::TaskGraphBuilder builder_;
  IdIndex<std::uint32_t> index_;                            // taskId -> record
  std::unordered_map<std::uint32_t, std::uint32_t> roots_;  // taskId >> 20 -> dense root
  std::vector<std::uint32_t> remaining_;
  std::uint64_t records_ = 0;
  bool memory_checked_ = false;
  Pending pending_;

  // The record being read.
  JsonStream::Scalar v_;
  HeldScalar task_id_, func_, core_, exec_, rem_;
  SeenKeys seen_;
  K succ_kind_ = K::kNone;  // kArray, kNone (absent) or the kind of a non-array value
  HeldScalar succ_other_;   // a non-array "successors"
  std::vector<std::uint32_t> succ_;
  bool succ_bad_ = false;  // an element is not a taskId: succ_ holds the ones before it
  std::string succ_bad_msg_;

  std::string last_func_;
  std::uint32_t last_kernel_ = sched::kNoTask;
  std::uint32_t last_root_key_ = 0, last_root_ = sched::kNoTask;
};

std::uint32_t FixedLatencyReader::kernel(const std::string& name) {
  if (last_kernel_ == sched::kNoTask || name != last_func_) {
    last_kernel_ = builder_.kernel_index(name);
    last_func_ = name;
  }
  return last_kernel_;
}

// Reads one record's fields (any order; a repeated known key is noted in seen_).
void FixedLatencyReader::read_record() {
  task_id_.kind = func_.kind = core_.kind = exec_.kind = rem_.kind = K::kNone;
  succ_kind_ = K::kNone;
  seen_.clear();
  js_.begin_object();
  bool first = true;
  std::string_view key;
  while (js_.next_key(first, key)) {
    const Field f = field_of(key);
    if (f != Field::kOther) seen_.add(static_cast<unsigned>(f), key);
    switch (f) {
      case Field::kTaskId: read_held(js_, task_id_, v_); break;
      case Field::kFuncName: read_held(js_, func_, v_); break;
      case Field::kCoreType: read_held(js_, core_, v_); break;
      case Field::kExecTime: read_held(js_, exec_, v_); break;
      case Field::kRemaining: read_held(js_, rem_, v_); break;
      case Field::kOther: js_.skip_value(); break;
      case Field::kSuccessors:
        succ_kind_ = js_.peek_kind();
        if (succ_kind_ == K::kArray) {
          read_id_array(js_, "successors", succ_, succ_bad_msg_, v_);
          succ_bad_ = !succ_bad_msg_.empty();
        } else {
          succ_.clear();
          succ_bad_ = false;
          read_held(js_, succ_other_, v_);
        }
        break;
    }
  }
}

// The checks of the DOM reader's second pass, in its order; the first failure becomes
// pending_, else the task is added.
void FixedLatencyReader::check_record() {
  const std::uint64_t i = records_;
  const auto id = static_cast<std::uint32_t>(task_id_.u);  // checked in the first pass
  auto fail = [&](const std::string& msg, bool keep_succ) {
    pending_.set = true;
    pending_.record = i;
    pending_.task_id = id;
    if (keep_succ) pending_.succ = succ_;
    pending_.msg = where(i, id) + ": " + msg;
  };
  std::string msg = check_string(func_, "funcName");
  if (!msg.empty()) return fail(msg, false);
  msg = check_string(core_, "coreType");
  if (!msg.empty()) return fail(msg, false);
  const auto ct = sched::parse_core_type(core_.s);
  if (!ct) {
    return fail("expected \"coreType\" to be AIC, AIV or HUB, got \"" + core_.s + "\"", false);
  }
  if (!exec_.present()) return fail("missing \"execTime\"", false);
  double cycles = 0;
  switch (exec_.kind) {
    case K::kUint: cycles = static_cast<double>(exec_.u); break;
    case K::kInt: cycles = static_cast<double>(exec_.i); break;
    case K::kFloat: cycles = exec_.d; break;
    default: cycles = -1; break;
  }
  if (cycles < 0) {
    return fail(
        "expected \"execTime\" to be a non-negative number of cycles, got " + brief(exec_.view()),
        false);
  }
  if (*ct == sched::CoreType::kHub && cycles != 0) {
    return fail(
        "a HUB task is a zero-cost dependency node, but its execTime is " + brief(exec_.view()),
        false);
  }
  const double ns = std::nearbyint(cycles * 1000.0 / chip_.cores.freq_mhz);
  if (ns >= static_cast<double>(sched::kNoRecord)) {
    return fail("execTime " + brief(exec_.view()) + " cycles does not fit in 32-bit nanoseconds",
                false);
  }
  std::uint64_t rem = 0;
  msg = check_uint(rem_, "remainingPredecessors", 0xFFFFFFFFull, &rem);
  if (!msg.empty()) return fail(msg, false);
  if (succ_kind_ == K::kNone) return fail("missing \"successors\"", false);
  if (succ_kind_ != K::kArray) {
    return fail(
        "expected \"successors\" to be an array of taskIds, got " + brief(succ_other_.view()),
        false);
  }
  if (succ_bad_) return fail(succ_bad_msg_, true);

  sched::TaskGraphBuilder::Task t;
  t.orig_id = id;
  t.kernel = kernel(func_.s);
  t.core_type = *ct;
  t.recorded_ns = static_cast<std::uint32_t>(ns);
  const std::uint32_t root_key = id >> 20;
  if (last_root_ == sched::kNoTask || root_key != last_root_key_) {
    last_root_ = roots_.emplace(root_key, static_cast<std::uint32_t>(roots_.size())).first->second;
    last_root_key_ = root_key;
  }
  t.root = last_root_;
  remaining_.push_back(static_cast<std::uint32_t>(rem));
  builder_.add_task(t);
  for (const std::uint32_t s : succ_) builder_.add_successor(s);  // taskIds for now
}

void FixedLatencyReader::check_memory() {
  memory_checked_ = true;
  const double tasks = static_cast<double>(records_) * static_cast<double>(js_.file_bytes()) /
                       static_cast<double>(js_.offset());
  check_fits_memory(path_, tasks, kBytesPerTask,
                    "tasks from the file size at the density of its first " +
                        std::to_string(records_) + " records",
                    LoadOptions{});
  sched::TaskGraph& g = builder_.graph();
  const double scale = tasks / static_cast<double>(std::max<std::uint64_t>(records_, 1));
  reserve_graph(g, tasks, static_cast<double>(g.succ.size()) * scale);
  remaining_.reserve(g.core_type.capacity());
  index_.reserve(static_cast<std::size_t>(tasks));
}

LoadedTrace FixedLatencyReader::run() {
  if (js_.peek_kind() != K::kArray) js_.semantic_error(path_ + ": expected a JSON array of tasks");
  js_.begin_array();
  bool first = true;
  while (js_.next_element(first)) {
    const K kind = js_.peek_kind();
    if (kind != K::kObject) {
      if (kind == K::kArray) {
        js_.semantic_error(where(records_) + ": expected an object, got an array");
      }
      js_.read_scalar(v_);
      js_.semantic_error(where(records_) + ": expected an object, got " + brief(v_));
    }
    read_record();
    if (!seen_.repeated.empty()) js_.semantic_error(where(records_) + seen_.message());
    // The first pass: a unique taskId.
    std::uint64_t id = 0;
    const std::string msg = check_uint(task_id_, "taskId", 0xFFFFFFFFull, &id);
    if (!msg.empty()) js_.semantic_error(where(records_) + ": " + msg);
    task_id_.u = id;
    const std::uint32_t at =
        index_.insert(static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(records_));
    if (at != records_) {
      js_.semantic_error(where(records_) + ": taskId " + std::to_string(id) +
                         " already appears in record " + std::to_string(at));
    }
    if (!pending_.set) check_record();
    ++records_;
    if (!memory_checked_ && js_.offset() >= (std::uint64_t{4} << 20)) check_memory();
  }
  js_.end_document();
  if (records_ == 0) throw TraceError(path_ + ": the JSON array is empty (no tasks)");

  // Successors name taskIds; turn them into task indices (tasks are records, in order).
  sched::TaskGraph& g = builder_.graph();
  const std::size_t n = g.num_tasks();
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t last =
        t + 1 < n ? g.succ_begin[t + 1] : static_cast<std::uint32_t>(g.succ.size());
    for (std::uint32_t e = g.succ_begin[t]; e < last; ++e) {
      const std::uint32_t to = index_.find(g.succ[e]);
      if (to == IdIndex<std::uint32_t>::kAbsent) {
        throw TraceError(where(t, g.orig_id[t]) + ": successor " + std::to_string(g.succ[e]) +
                         " is not a task of " + path_);
      }
      g.succ[e] = to;
    }
  }
  if (pending_.set) {
    for (const std::uint32_t s : pending_.succ) {
      if (index_.find(s) == IdIndex<std::uint32_t>::kAbsent) {
        throw TraceError(where(pending_.record, pending_.task_id) + ": successor " +
                         std::to_string(s) + " is not a task of " + path_);
      }
    }
    throw TraceError(pending_.msg);
  }
  index_.clear();

  LoadedTrace out;
  try {
    out.graph = builder_.finish();
  } catch (const TraceError& e) {
    throw TraceError(path_ + ": " + e.what());
  }
  // One device task and file order, so task i of the graph is record i.
  for (std::size_t i = 0; i < n; ++i) {
    if (out.graph.pred_count[i] != remaining_[i]) {
      throw TraceError(path_ + ": record " + std::to_string(i) + " (taskId " +
                       std::to_string(out.graph.orig_id[i]) + "): remainingPredecessors is " +
                       std::to_string(remaining_[i]) + " but " +
                       std::to_string(out.graph.pred_count[i]) + " tasks list it as a successor");
    }
  }
  out.format = TraceFormat::kFixedLatency;
  return out;
}

}  // namespace

LoadedTrace load_fixed_latency(const std::string& path, const ChipConfig& chip) {
  FixedLatencyReader reader(path, chip);
  return reader.run();
}

}  // namespace pypto::sim::trace_detail
