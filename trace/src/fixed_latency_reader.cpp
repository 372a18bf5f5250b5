// SPDX-License-Identifier: Apache-2.0
// PyPTO's fixed-latency task graph (one device task): execTime is in AICore cycles (left
// for the pricing pass, which converts them at the chip's clock), HUB tasks are zero-cost
// dependency nodes, remainingPredecessors is a redundant predecessor
// count that we check against the successor lists.
//
// Streamed (JsonStream): each record goes straight into the TaskGraphBuilder, successors as
// taskIds, which are turned into task indices once every record is read (they may name later
// records). The checks and their order are those of the DOM reader this replaced: first, over
// all records, that each is an object with a unique taskId; then record by record its fields
// and successors. A record's fields may come in any order, and a key given twice counts with
// its last value (as in nlohmann's DOM).
//
// The parse runs on a thread of its own (BatchPipe): it reads records into batches of held
// values and runs the checks that concern one record alone (an object, no repeated key, a
// taskId); this thread takes them in file order and runs the rest (unique taskIds, the
// per-record checks, the graph), so the first error in file order is the one reported.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "batch_pipe.h"
#include "id_index.h"
#include "json_stream.h"
#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::trace::detail {

namespace {

using K = JsonStream::Kind;

std::uint64_t bit_cast_u64(double d) {
  std::uint64_t u = 0;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

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

// One record as read, before the checks that need the records before it.
struct Record {
  HeldScalar task_id, func, core, exec, rem;  // task_id.u: the checked taskId
  K succ_kind = K::kNone;  // kArray, kNone (absent) or the kind of a non-array value
  HeldScalar succ_other;   // a non-array "successors"
  std::uint32_t succ_begin = 0, succ_end = 0;  // its ids in Batch::succ
  std::string succ_bad_msg;  // an element is not a taskId: the ids before it are kept
  std::uint64_t offset = 0;  // bytes of the file consumed after the record
};
struct Batch {
  std::vector<Record> recs;  // recs[0, size): the batch; the rest keep their buffers
  std::size_t size = 0;
  std::vector<std::uint32_t> succ;
};

class FixedLatencyReader {
 public:
  explicit FixedLatencyReader(const std::string& path)
      : path_(path), js_(path, "record"), builder_(path) {}

  ReadTrace run();

 private:
  // Records per batch, and parsed records ahead of the checks at most (about 100 B each).
  static constexpr std::size_t kBatchRecords = 1024;
  static constexpr std::size_t kMaxQueuedRecords = 8 * kBatchRecords;

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

  void parse(BatchPipe<Batch>& pipe);  // the parse thread
  void read_record(Record& r, std::vector<std::uint32_t>& succ);
  void check_record(const Record& r, const std::uint32_t* succ);
  std::string where(std::uint64_t record) const {
    return path_ + ": record " + std::to_string(record);
  }
  std::string where(std::uint64_t record, std::uint32_t task_id) const {
    return where(record) + " (taskId " + std::to_string(task_id) + ")";
  }
  std::uint32_t kernel(const std::string& name);
  void check_memory(std::uint64_t offset);

  const std::string& path_;
  JsonStream js_;  // the parse thread's once it starts
  sched::TaskGraphBuilder builder_;
  IdIndex<std::uint32_t> index_;                            // taskId -> record
  std::unordered_map<std::uint32_t, std::uint32_t> roots_;  // taskId >> 20 -> dense root
  std::vector<std::uint32_t> remaining_;
  std::vector<UnpricedWork::Cycles> exec_;  // per task, for the pricing pass
  std::uint64_t records_ = 0;
  bool memory_checked_ = false;
  Pending pending_;

  // The parse thread's.
  JsonStream::Scalar v_;
  SeenKeys seen_;
  std::vector<std::uint32_t> ids_;
  JsonStream::PlainObject plain_;  // a plain record, read in one scan

  std::string last_func_;
  std::uint32_t last_kernel_ = common::kNoTask;
  std::uint32_t last_root_key_ = 0, last_root_ = common::kNoTask;
};

std::uint32_t FixedLatencyReader::kernel(const std::string& name) {
  if (last_kernel_ == common::kNoTask || name != last_func_) {
    last_kernel_ = builder_.kernel_index(name);
    last_func_ = name;
  }
  return last_kernel_;
}

// Reads one record's fields (any order; a repeated known key is noted in seen_), its
// successors appended to `succ`.
void FixedLatencyReader::read_record(Record& r, std::vector<std::uint32_t>& succ) {
  r.task_id.kind = r.func.kind = r.core.kind = r.exec.kind = r.rem.kind = K::kNone;
  r.succ_kind = K::kNone;
  r.succ_begin = r.succ_end = static_cast<std::uint32_t>(succ.size());
  r.succ_bad_msg.clear();
  seen_.clear();
  read_object(js_, plain_, 0xFFFFFFFFull, v_, [&](std::string_view key, FieldValue& v) {
    const Field f = field_of(key);
    if (f != Field::kOther) seen_.add(static_cast<unsigned>(f), key);
    switch (f) {
      case Field::kTaskId: v.hold(r.task_id); break;
      case Field::kFuncName: v.hold(r.func); break;
      case Field::kCoreType: v.hold(r.core); break;
      case Field::kExecTime: v.hold(r.exec); break;
      case Field::kRemaining: v.hold(r.rem); break;
      case Field::kOther: v.skip(); break;
      case Field::kSuccessors:
        // A repeated "successors" counts with its last value.
        succ.resize(r.succ_begin);
        r.succ_kind = v.kind();
        if (r.succ_kind == K::kArray) {
          v.ids("successors", ids_, r.succ_bad_msg);
          succ.insert(succ.end(), ids_.begin(), ids_.end());
        } else {
          r.succ_bad_msg.clear();
          v.hold(r.succ_other);
        }
        r.succ_end = static_cast<std::uint32_t>(succ.size());
        break;
    }
  });
}

// The parse thread: the records, with the checks of the DOM reader's first pass that
// concern one record alone, in batches.
void FixedLatencyReader::parse(BatchPipe<Batch>& pipe) {
  js_.begin_array();
  bool first = true;
  std::uint64_t records = 0;
  Batch b = pipe.recycle();
  b.size = 0;
  b.succ.clear();
  // The records before an error go first: their own errors come earlier in file order.
  try {
    while (js_.next_element(first)) {
      const K kind = js_.peek_kind();
      if (kind != K::kObject) {
        if (kind == K::kArray) {
          js_.semantic_error(where(records) + ": expected an object, got an array");
        }
        js_.read_scalar(v_);
        js_.semantic_error(where(records) + ": expected an object, got " + brief(v_));
      }
      if (b.size == b.recs.size()) b.recs.emplace_back();
      Record& r = b.recs[b.size];
      read_record(r, b.succ);
      if (!seen_.repeated.empty()) js_.semantic_error(where(records) + seen_.message());
      std::uint64_t id = 0;
      const std::string msg = check_uint(r.task_id, "taskId", 0xFFFFFFFFull, &id);
      if (!msg.empty()) js_.semantic_error(where(records) + ": " + msg);
      r.task_id.u = id;
      r.offset = js_.offset();
      ++records;
      if (++b.size == kBatchRecords) {
        pipe.push(std::move(b), kBatchRecords);
        b = pipe.recycle();
        b.size = 0;
        b.succ.clear();
      }
    }
  } catch (const BatchPipe<Batch>::Stopped&) {
    throw;
  } catch (...) {
    const std::size_t weight = b.size;
    pipe.push_partial(std::move(b), weight);
    throw;
  }
  const std::size_t weight = b.size;
  pipe.push_partial(std::move(b), weight);
  js_.end_document();
}

// The checks of the DOM reader's second pass, in its order; the first failure becomes
// pending_, else the task is added.
void FixedLatencyReader::check_record(const Record& r, const std::uint32_t* succ) {
  const std::uint64_t i = records_;
  const auto id = static_cast<std::uint32_t>(r.task_id.u);  // checked in the first pass
  auto fail = [&](const std::string& msg, bool keep_succ) {
    pending_.set = true;
    pending_.record = i;
    pending_.task_id = id;
    if (keep_succ) pending_.succ.assign(succ + r.succ_begin, succ + r.succ_end);
    pending_.msg = where(i, id) + ": " + msg;
  };
  std::string msg = check_string(r.func, "funcName");
  if (!msg.empty()) return fail(msg, false);
  msg = check_string(r.core, "coreType");
  if (!msg.empty()) return fail(msg, false);
  const auto ct = common::parse_core_type(r.core.s);
  if (!ct) {
    return fail("expected \"coreType\" to be AIC, AIV or HUB, got \"" + r.core.s + "\"", false);
  }
  if (!r.exec.present()) return fail("missing \"execTime\"", false);
  double cycles = 0;
  switch (r.exec.kind) {
    case K::kUint: cycles = static_cast<double>(r.exec.u); break;
    case K::kInt: cycles = static_cast<double>(r.exec.i); break;
    case K::kFloat: cycles = r.exec.d; break;
    default: cycles = -1; break;
  }
  if (cycles < 0) {
    return fail(
        "expected \"execTime\" to be a non-negative number of cycles, got " + brief(r.exec.view()),
        false);
  }
  if (*ct == common::CoreType::kHub && cycles != 0) {
    return fail(
        "a HUB task is a zero-cost dependency node, but its execTime is " + brief(r.exec.view()),
        false);
  }
  std::uint64_t rem = 0;
  msg = check_uint(r.rem, "remainingPredecessors", 0xFFFFFFFFull, &rem);
  if (!msg.empty()) return fail(msg, false);
  if (r.succ_kind == K::kNone) return fail("missing \"successors\"", false);
  if (r.succ_kind != K::kArray) {
    return fail(
        "expected \"successors\" to be an array of taskIds, got " + brief(r.succ_other.view()),
        false);
  }
  if (!r.succ_bad_msg.empty()) return fail(r.succ_bad_msg, true);

  sched::TaskGraphBuilder::Task t;
  t.orig_id = id;
  t.kernel = kernel(r.func.s);
  t.core_type = *ct;
  t.recorded_ns = 0;  // priced from exec_
  const std::uint32_t root_key = id >> 20;
  if (last_root_ == common::kNoTask || root_key != last_root_key_) {
    last_root_ = roots_.emplace(root_key, static_cast<std::uint32_t>(roots_.size())).first->second;
    last_root_key_ = root_key;
  }
  t.root = last_root_;
  remaining_.push_back(static_cast<std::uint32_t>(rem));
  UnpricedWork::Cycles c;
  switch (r.exec.kind) {
    case K::kUint: c = {r.exec.u, UnpricedWork::Number::kUint}; break;
    case K::kInt: c = {static_cast<std::uint64_t>(r.exec.i), UnpricedWork::Number::kInt}; break;
    default: c = {bit_cast_u64(r.exec.d), UnpricedWork::Number::kFloat}; break;
  }
  exec_.push_back(c);
  builder_.add_task(t);
  for (std::uint32_t e = r.succ_begin; e < r.succ_end; ++e) {
    builder_.add_successor(succ[e]);  // taskIds for now
  }
}

void FixedLatencyReader::check_memory(std::uint64_t offset) {
  memory_checked_ = true;
  const double tasks = static_cast<double>(records_) * static_cast<double>(js_.file_bytes()) /
                       static_cast<double>(offset);
  check_fits_memory(path_, tasks, kBytesPerTask,
                    "tasks from the file size at the density of its first " +
                        std::to_string(records_) + " records",
                    LoadOptions{});
  sched::TaskGraph& g = builder_.graph();
  const double scale = tasks / static_cast<double>(std::max<std::uint64_t>(records_, 1));
  reserve_graph(g, tasks, static_cast<double>(g.succ.size()) * scale);
  remaining_.reserve(g.core_type.capacity());
  exec_.reserve(g.core_type.capacity());
  index_.reserve(static_cast<std::size_t>(tasks));
}

ReadTrace FixedLatencyReader::run() {
  if (js_.peek_kind() != K::kArray) js_.semantic_error(path_ + ": expected a JSON array of tasks");
  {
    BatchPipe<Batch> pipe(kMaxQueuedRecords, [this](BatchPipe<Batch>& p) { parse(p); });
    // A check that fails here: a syntax error anywhere in the file goes first, as in
    // JsonStream::semantic_error.
    const auto semantic_error = [&](const std::string& msg) {
      if (!pipe.stop()) check_json_syntax(path_, "record");
      throw TraceError(msg);
    };
    Batch b;
    while (pipe.next(b)) {
      for (std::size_t k = 0; k < b.size; ++k) {
        const Record& r = b.recs[k];
        // The rest of the first pass: a unique taskId.
        const auto id = static_cast<std::uint32_t>(r.task_id.u);
        const std::uint32_t at = index_.insert(id, static_cast<std::uint32_t>(records_));
        if (at != records_) {
          semantic_error(where(records_) + ": taskId " + std::to_string(id) +
                         " already appears in record " + std::to_string(at));
        }
        if (!pending_.set) check_record(r, b.succ.data());
        ++records_;
        if (!memory_checked_ && r.offset >= (std::uint64_t{4} << 20)) check_memory(r.offset);
      }
    }
  }
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

  ReadTrace read;
  LoadedTrace& out = read.trace;
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
  // One device task: finish() kept the order, and exec_ is per task already.
  read.work.path = path_;
  read.work.exec_cycles = std::move(exec_);
  return read;
}

}  // namespace

ReadTrace load_fixed_latency(const std::string& path) {
  FixedLatencyReader reader(path);
  return reader.run();
}

}  // namespace pypto::trace::detail
