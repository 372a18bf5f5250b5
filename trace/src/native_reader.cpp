// SPDX-License-Identifier: Apache-2.0
// Reader of the native NDJSON trace (traces/FORMAT.md): the checks across records and the
// graph, on the loading thread, over the batches the parse threads give (native_parse.h).
// The tile ops are left unpriced (pricing.h).
#include <algorithm>
#include <fstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "native_parse.h"
#include "pypto/sched/stitcher.h"
#include "readers.h"

namespace pypto::trace::detail {

namespace {

using namespace native;
using sched::TaskGraphBuilder;

constexpr common::TaskId kReserveProbe = 1 << 16;
// Memory per task: the graph's fixed columns (35 B: core type, device task, root, kernel,
// original id, CSR offset, predecessor count, recorded ns, cycles, tiles), and the run's own
// state (task start/end for the statistics, scheduler state; 24 B). With 4 B per edge and
// 16 B per memory range it gives 109 B/task for the 10M-task mix trace of `pypto-sim gen`,
// as measured (peak RSS of `run --no-trace`).
constexpr double kGraphBytesPerTask = 35;
constexpr double kRunBytesPerTask = 24;

class NativeReader {
 public:
  NativeReader(const std::string& path, const LoadOptions& opts)
      : path_(path),
        opts_(opts),
        builder_(path),
        file_bytes_(input_file_size(path)),
        parsers_{RecordParser(path, file_bytes_, 0), RecordParser(path, file_bytes_, 1)} {}

  ReadTrace run();

 private:
  struct DeviceTaskInfo {
    std::uint32_t parallel_group = 0;
    bool declared = false;  // a device-task record exists
    std::uint64_t decl_line = 0;
    std::uint64_t first_task_line = 0;
  };

  [[noreturn]] __attribute__((noinline, cold)) void fail_at(std::uint64_t line,
                                                            const std::string& msg) const {
    throw TraceError(path_ + ":" + std::to_string(line) + ": " + msg);
  }

  void add_task(const Rec& r, const Batch& batch);
  void add_device_task_record(const Rec& r);
  std::uint32_t kernel_of(std::uint32_t local, const Batch& batch);
  std::uint32_t ops_of(std::uint32_t local, const Batch& batch);
  void reserve_edges_and_memory();
  void check_memory(std::uint64_t consumed_bytes);
  const Header& header() const { return parsers_[0].header(); }

  // Parsed records ahead of the checks at most (about 120 B each).
  static constexpr std::size_t kMaxQueuedRecords = 8 * kBatchRecords;

  const std::string& path_;
  const LoadOptions& opts_;
  TaskGraphBuilder builder_;  // this thread's
  const std::uint64_t file_bytes_;
  // The parse thread's, and its helpers'. The header is always parsed by parsers_[0]
  // (the second one starts once the header is read); this thread reads it once a batch
  // with `header` is taken.
  RecordParser parsers_[2];

  // This thread's: across records.
  std::vector<std::uint32_t> kernel_map_[2];  // a parser's kernel index -> the builder's
  std::size_t batch_kernel_ = 0;              // Batch::kernels taken
  std::vector<std::uint32_t> ops_map_[2];     // a parser's op-list index -> work_.op_lists'
  std::size_t batch_ops_ = 0;                 // Batch::op_lists taken
  UnpricedWork work_;                         // the tile ops, for the pricing pass
  std::uint32_t unnamed_kernel_ = common::kNoTask;
  int dt_mode_ = -1;  // -1: no task yet; 0: no task has "dt"; 1: every task has "dt"
  std::uint64_t first_task_line_ = 0;
  std::uint64_t first_dt_record_line_ = 0;
  bool have_prev_root_ = false;
  std::uint64_t prev_root_ = 0;
  std::uint32_t prev_pg_ = 0;
  std::uint32_t dense_root_ = 0;
  std::unordered_map<std::uint32_t, DeviceTaskInfo> device_tasks_;
  std::uint64_t max_succ_ = 0, max_succ_line_ = 0, max_succ_task_ = 0;
  bool any_interval_ = false;
  std::uint64_t min_start_ = ~std::uint64_t(0), max_end_ = 0;
  std::uint64_t min_start_line_ = 0, max_end_line_ = 0;
  // The same over AIC/AIV tasks only: the recording's AICore end to end.
  std::uint64_t core_start_ = ~std::uint64_t(0), core_end_ = 0;
};

// Recorded times become ps relative to the first start (one rule for a whole read and for a
// graph assembled from pushed device tasks); the recorded makespan is the AICore end to end.
void make_starts_relative(sched::TaskGraph& g, std::uint64_t min_start_ns,
                          std::uint64_t aicore_span_ns) {
  g.recorded_makespan_ps = aicore_span_ns * 1000;
  for (common::TimePs& s : g.recorded_start_ps) {
    if (s != common::kNever) s = (s - min_start_ns) * 1000;
  }
}

// The builder's index of the parse's kernel `local`; a kernel seen for the first time is
// the batch's next new name (the parse numbers them in file order, as they are taken).
std::uint32_t NativeReader::kernel_of(std::uint32_t local, const Batch& batch) {
  std::vector<std::uint32_t>& map = kernel_map_[batch.parser];
  if (local >= map.size()) map.push_back(builder_.kernel_index(batch.kernels[batch_kernel_++]));
  return map[local];
}

// The same for op lists: work_.op_lists' index of the parse's list `local`.
std::uint32_t NativeReader::ops_of(std::uint32_t local, const Batch& batch) {
  std::vector<std::uint32_t>& map = ops_map_[batch.parser];
  if (local >= map.size()) {
    map.push_back(static_cast<std::uint32_t>(work_.op_lists.size()));
    work_.op_lists.push_back(batch.op_lists[batch_ops_++]);
  }
  return map[local];
}

void NativeReader::add_device_task_record(const Rec& r) {
  if (!(r.seen & kDeviceTask)) fail_at(r.line, "a device-task record needs \"device_task\"");
  if (dt_mode_ == 0) {
    fail_at(r.line, "a device-task record, but the tasks have no \"dt\" (first task on line " +
                        std::to_string(first_task_line_) +
                        "); \"dt\" is needed to refer to device tasks");
  }
  const auto key = static_cast<std::uint32_t>(r.device_task);
  auto [it, inserted] = device_tasks_.try_emplace(key);
  if (!inserted) {
    if (it->second.declared)
      fail_at(r.line, "device task " + std::to_string(key) + " is declared twice");
    fail_at(r.line, "the record of device task " + std::to_string(key) +
                        " comes after its first task (line " +
                        std::to_string(it->second.first_task_line) +
                        "); declare a device task before its tasks");
  }
  it->second.declared = true;
  it->second.decl_line = r.line;
  it->second.parallel_group = static_cast<std::uint32_t>(r.parallel_group);
  if (first_dt_record_line_ == 0) first_dt_record_line_ = r.line;
}

// Once a sample of tasks has been read, the edge and memory columns are reserved for the
// announced task count at the sample's density: growing them by doubling would copy
// gigabytes for a 10M-task trace.
void NativeReader::reserve_edges_and_memory() {
  const double scale = 1.05 * static_cast<double>(header().reserve_tasks) / (kReserveProbe + 1);
  const auto want = [&](std::uint64_t have) {
    return static_cast<std::size_t>(std::min(static_cast<double>(have) * scale, 4.0e9));
  };
  sched::TaskGraph& g = builder_.graph();
  g.succ.reserve(want(g.succ.size()));
  g.mem.reserve(want(g.mem.size()));
  if (!g.mem_begin.empty()) g.mem_begin.reserve(header().reserve_tasks + 1);
}

// After the first chunk: the whole trace's memory from the densities seen so far, so that a
// trace too large for the machine is refused in a second, not after minutes of swapping.
void NativeReader::check_memory(std::uint64_t consumed_bytes) {
  const double n = static_cast<double>(builder_.num_tasks());
  if (n == 0 || consumed_bytes == 0) return;
  const double tasks = header().has_tasks ? static_cast<double>(header().reserve_tasks)
                                          : static_cast<double>(file_bytes_) * n /
                                                static_cast<double>(consumed_bytes);
  const double per_task = kGraphBytesPerTask + (builder_.has_memory() ? 4.0 : 0.0) +
                          (any_interval_ ? 8.0 : 0.0) +
                          4.0 * static_cast<double>(builder_.edges_listed()) / n +
                          static_cast<double>(sizeof(sched::MemAccess)) *
                              static_cast<double>(builder_.memory_ranges()) / n +
                          kRunBytesPerTask;
  check_fits_memory(path_, tasks, per_task,
                    header().has_tasks ? "tasks from the header"
                                       : "tasks from the file size at the density of its first " +
                                             std::to_string(builder_.num_tasks()) + " tasks",
                    opts_);
}

void NativeReader::add_task(const Rec& r, const Batch& batch) {
  if (!(r.seen & kId)) fail_at(r.line, "a task record needs \"id\"");
  if (!(r.seen & kCore)) fail_at(r.line, "a task record needs \"core\" (AIC, AIV, HUB or AICPU)");
  const std::size_t n = builder_.num_tasks();
  if (r.id != n) {
    fail_at(r.line, "expected \"id\" " + std::to_string(n) +
                        " (ids are dense and in file order), got " + std::to_string(r.id));
  }
  // "dt" is all-or-none; the first task decides.
  const bool has_dt = (r.seen & kDt) != 0;
  if (dt_mode_ < 0) {
    dt_mode_ = has_dt ? 1 : 0;
    first_task_line_ = r.line;
    if (header().has_tasks) {
      reserve_task_columns(builder_.graph(), header().reserve_tasks);
    }
    if (!has_dt && first_dt_record_line_ != 0) {
      fail_at(r.line, "the trace declares device tasks (line " +
                          std::to_string(first_dt_record_line_) + ") but this task has no \"dt\"");
    }
  } else if (has_dt != (dt_mode_ == 1)) {
    fail_at(r.line,
            std::string(has_dt ? "this task has \"dt\" but" : "this task has no \"dt\" but") +
                " the first task (line " + std::to_string(first_task_line_) +
                (has_dt ? ") has none" : ") has one") + "; \"dt\" is all-or-none");
  }

  // Roots are renumbered densely; they must not decrease (the tasks of a root instance
  // are contiguous, as the control flow emits them).
  const auto pg = static_cast<std::uint32_t>(r.pg);
  if (!have_prev_root_ || r.root != prev_root_) {
    if (have_prev_root_ && r.root < prev_root_) {
      fail_at(r.line, "\"root\" " + std::to_string(r.root) +
                          " is smaller than the previous task's root " +
                          std::to_string(prev_root_) + "; roots must be non-decreasing");
    }
    if (have_prev_root_) ++dense_root_;
    have_prev_root_ = true;
    prev_root_ = r.root;
  } else if (dt_mode_ == 0 && pg != prev_pg_) {
    fail_at(r.line, "\"pg\" " + std::to_string(pg) + " differs from the earlier tasks of root " +
                        std::to_string(r.root) + " (" + std::to_string(prev_pg_) +
                        "); a root belongs to one parallel group");
  }
  prev_pg_ = pg;

  TaskGraphBuilder::Task t;
  t.core_type = r.core;
  t.root = dense_root_;
  t.orig_id = static_cast<std::uint32_t>(r.id);
  if (!(r.seen & kKernel)) {
    if (unnamed_kernel_ == common::kNoTask) unnamed_kernel_ = builder_.kernel_index("unnamed");
    t.kernel = unnamed_kernel_;
  } else {
    t.kernel = kernel_of(r.kernel, batch);
  }
  // Compute beyond the ops for now: the pricing pass adds the ops' cycles.
  t.compute_cycles = static_cast<std::uint32_t>(r.extra_cycles);
  t.tiles = static_cast<std::uint16_t>(r.tiles);
  t.parallel_group = pg;
  if (dt_mode_ == 1) {
    const auto key = static_cast<std::uint32_t>(r.dt);
    auto [it, inserted] = device_tasks_.try_emplace(key);
    DeviceTaskInfo& info = it->second;
    if (info.first_task_line == 0) {
      info.first_task_line = r.line;
      if (!info.declared) info.parallel_group = pg;
    }
    if (!(r.seen & kPg)) {
      t.parallel_group = info.parallel_group;
    } else if (pg != info.parallel_group) {
      fail_at(r.line,
              "\"pg\" " + std::to_string(pg) + " differs from device task " + std::to_string(key) +
                  "'s parallel group " + std::to_string(info.parallel_group) + " (line " +
                  std::to_string(info.declared ? info.decl_line : info.first_task_line) + ")");
    }
    t.device_task_seq = key;
  }

  // A HUB is resolved inline by the AICPU and never runs: a time, memory or ops on it
  // would be silently ignored, so they are refused.
  if (r.core == CoreType::kHub && (r.seen & (kStart | kEnd | kDur | kMem | kOps))) {
    fail_at(r.line,
            "a HUB task is a zero-cost dependency node; it takes no \"start\", \"end\", "
            "\"dur\", \"mem\" or \"ops\"");
  }
  const bool has_start = (r.seen & kStart) != 0, has_end = (r.seen & kEnd) != 0;
  if (has_start != has_end)
    fail_at(r.line, "\"start\" and \"end\" go together; give both or \"dur\" alone");
  if (has_start) {
    if (r.seen & kDur) fail_at(r.line, "give either \"start\"/\"end\" or \"dur\", not both");
    if (r.end < r.start) {
      fail_at(r.line, "\"end\" " + std::to_string(r.end) + " is before \"start\" " +
                          std::to_string(r.start));
    }
    if (r.end - r.start >= sched::kNoRecord) {
      fail_at(r.line, "the task lasts " + std::to_string(r.end - r.start) +
                          " ns, more than the 2^32-2 ns a task may last");
    }
    t.recorded_ns = static_cast<std::uint32_t>(r.end - r.start);
    t.recorded_start_ps = r.start;  // ns for now; made relative to the first start at the end
    any_interval_ = true;
    if (r.start < min_start_) {
      min_start_ = r.start;
      min_start_line_ = r.line;
    }
    if (r.end > max_end_) {
      max_end_ = r.end;
      max_end_line_ = r.line;
    }
    if (common::is_dispatchable(r.core)) {
      core_start_ = std::min(core_start_, r.start);
      core_end_ = std::max(core_end_, r.end);
    }
  } else if (r.seen & kDur) {
    t.recorded_ns = static_cast<std::uint32_t>(r.dur);
  }

  const common::TaskId id = builder_.add_task(t);
  // The op-list column is made at the first task with ops: traces without pay nothing.
  if (r.ops != UnpricedWork::kNoOps) {
    if (work_.task_ops.empty()) {
      work_.task_ops.reserve(std::max<std::size_t>(header().reserve_tasks, id + 1));
      work_.task_ops.assign(id, UnpricedWork::kNoOps);
    }
    work_.task_ops.push_back(ops_of(r.ops, batch));
  } else if (!work_.task_ops.empty()) {
    work_.task_ops.push_back(UnpricedWork::kNoOps);
  }
  if (simdjson_unlikely(id == kReserveProbe && header().has_tasks)) reserve_edges_and_memory();
  for (std::uint32_t e = r.succ_begin; e < r.succ_end; ++e) {
    const common::TaskId s = batch.succ[e];
    builder_.add_successor(s);
    // A successor 0 never fails the check in run() (a trace has a task): only larger ones
    // are tracked.
    if (s > max_succ_) {
      max_succ_ = s;
      max_succ_line_ = r.line;
      max_succ_task_ = r.id;
    }
  }
  builder_.add_memory(batch.mem.data() + r.mem_begin, r.mem_end - r.mem_begin);
}

ReadTrace NativeReader::run() {
  {
    BatchPipe<Batch> pipe(kMaxQueuedRecords, [this](BatchPipe<Batch>& p) {
      read_chunks(path_, file_bytes_, parsers_, p);
    });
    Batch b;
    while (pipe.next(b)) {
      batch_kernel_ = 0;
      batch_ops_ = 0;
      for (std::size_t k = 0; k < b.size; ++k) {
        const Rec& r = b.recs[k];
        if (r.seen & (kDeviceTask | kParallelGroup)) {
          add_device_task_record(r);
        } else {
          add_task(r, b);
        }
      }
      if (b.chunk_end) {
        if (opts_.progress) opts_.progress(b.consumed, std::max(b.consumed, file_bytes_));
        if (b.check_memory) check_memory(b.consumed);
      }
    }
  }

  if (!header().seen) throw TraceError(path_ + ": no header line");
  const std::size_t n = builder_.num_tasks();
  if (n == 0) throw TraceError(path_ + ": the trace has no task records");
  if (header().has_tasks && header().tasks != n) {
    throw TraceError(path_ + ": the header announces " + std::to_string(header().tasks) +
                     " tasks but the file has " + std::to_string(n) +
                     (n < header().tasks ? " (truncated?)" : ""));
  }
  if (max_succ_ >= n) {
    throw TraceError(path_ + ":" + std::to_string(max_succ_line_) + ": task " +
                     std::to_string(max_succ_task_) + " lists successor " +
                     std::to_string(max_succ_) + ", but the trace has only " + std::to_string(n) +
                     " tasks (ids 0.." + std::to_string(n - 1) + ")");
  }
  if (dt_mode_ == 0) {
    // No device-task ids: stitch the roots as the control-flow AICPU would.
    // The builder's parallel groups are the tasks' "pg" (no "dt": nothing overrides them).
    const std::vector<std::uint32_t>& pgs = builder_.parallel_groups();
    builder_.set_device_tasks(
        sched::stitch_device_tasks(builder_.graph().root, pgs, opts_.runtime));
  }
  const bool has_interval = any_interval_;
  const std::uint64_t span_ns = has_interval ? max_end_ - min_start_ : 0;
  // Recorded times become ps relative to the first start: the span must fit the clock.
  if (span_ns > common::kTimeLimitPs / 1000) {
    throw TraceError(path_ + ": the recorded times span " + std::to_string(span_ns) +
                     " ns, from \"start\" " + std::to_string(min_start_) + " (line " +
                     std::to_string(min_start_line_) + ") to \"end\" " + std::to_string(max_end_) +
                     " (line " + std::to_string(max_end_line_) +
                     "), more than the model's time limit of 2^62 ps (about 53 days)");
  }
  ReadTrace read;
  LoadedTrace& out = read.trace;
  std::vector<common::TaskId> moved;
  try {
    out.graph = builder_.finish(&moved);
  } catch (const TraceError& e) {
    throw TraceError(path_ + ": " + e.what());
  }
  if (has_interval) {
    make_starts_relative(out.graph, min_start_,
                         core_start_ <= core_end_ ? core_end_ - core_start_ : 0);
  }
  out.format = TraceFormat::kNative;
  out.chip_hint = header().chip_hint;
  if (!work_.task_ops.empty()) permute_column(work_.task_ops, moved);
  work_.path = path_;
  read.work = std::move(work_);
  return read;
}

}  // namespace

ReadTrace load_native(const std::string& path, const LoadOptions& opts) {
  NativeReader reader(path, opts);
  return reader.run();
}

std::uint64_t native_task_line(const std::string& path, std::uint64_t task) {
  std::ifstream in(path, std::ios::binary);
  simdjson::ondemand::parser parser;
  std::string line;
  for (std::uint64_t n = 1; std::getline(in, line); ++n) {
    const simdjson::padded_string text(line);
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    std::uint64_t id = 0;
    if (parser.iterate(text).get(doc) != simdjson::SUCCESS) continue;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) continue;
    // Device-task records and the header have no "id"; a task's is its index.
    if (obj.find_field_unordered("id").get_uint64().get(id) == simdjson::SUCCESS && id == task) {
      return n;
    }
  }
  return 0;
}

}  // namespace pypto::trace::detail