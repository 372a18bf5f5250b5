// SPDX-License-Identifier: Apache-2.0
// The task graph as the runtime sees it: device tasks (stitch batches) of leaf tasks with
// successor lists in flat arrays. Columns instead of per-task structs keep a 10M-task
// graph near 100 bytes per task and make the hot loops cache friendly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/types.h"
#include "pypto/sched/workspace.h"

namespace pypto::sched {

// One memory range a task reads or writes (global-memory address space: inputs, outputs,
// workspace). The simulator pushes these through L2 and HBM.
struct MemAccess {
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
  std::uint32_t is_write : 1;
  // The core moves the range in bursts of this many bytes (each row of a cube operand or
  // result is a burst of its own: the ND <-> fractal copies move rows); 0: one burst.
  std::uint32_t burst_bytes : 30;
  // The range goes to HBM past L2, neither filling nor evicting lines (PyPTO's
  // CachePolicy.NONE_CACHEABLE tensors).
  std::uint32_t no_l2 : 1;
};
// The largest burst_bytes a MemAccess holds.
inline constexpr std::uint32_t kMaxBurstBytes = (1u << 30) - 1;

// A device task: the unit the control-flow AICPU hands to the schedule threads. Its tasks
// occupy [first_task, first_task + num_tasks) in the graph.
struct DeviceTask {
  common::TaskId first_task = 0;
  std::uint32_t num_tasks = 0;
  std::uint32_t num_roots = 0;            // root-function instances stitched into it
  std::uint32_t seq_no = 0;               // as named in the source (PyPTO seqNo)
  std::uint32_t parallel_group = 0;       // 0: serial; k>0: consecutive device tasks with the
                                          // same k come from one pypto.loop(parallel=True) and
                                          // may overlap up to device_sched_parallelism
  std::uint32_t count[4] = {0, 0, 0, 0};  // tasks per CoreType
};

inline constexpr std::uint32_t kNoRecord = 0xFFFFFFFFu;

// The bytes one task moves: what its memory ranges read and write, as declared.
struct Traffic {
  std::uint64_t read_bytes = 0, write_bytes = 0;
};

struct TaskGraph {
  // ---- per-task columns (all of size num_tasks(), except the *_begin offsets: +1) ----
  std::vector<common::CoreType> core_type;
  std::vector<common::DeviceTaskId> device_task;
  std::vector<std::uint32_t> root;         // root-instance index (global, dense)
  std::vector<std::uint32_t> kernel;       // index into kernel_names
  std::vector<std::uint32_t> orig_id;      // task id as written in the source trace
  std::vector<std::uint32_t> succ_begin;   // CSR offsets into succ
  std::vector<common::TaskId> succ;        // successors, same device task only
  std::vector<std::uint32_t> pred_count;   // initial predecessor count
  std::vector<std::uint32_t> recorded_ns;  // recorded duration, kNoRecord if none
  // Recorded start, relative to the recording's first start; kNever for tasks without one.
  // Empty (no memory cost) unless the source recorded start times (board prof records,
  // native start/end): the replay metrics compare against it.
  std::vector<common::TimePs> recorded_start_ps;
  std::vector<std::uint32_t> mem_begin;  // CSR offsets into mem (empty: no memory info)
  std::vector<MemAccess> mem;
  std::vector<std::uint32_t> compute_cycles;  // AICore cycles of the busiest compute pipe
  std::vector<std::uint16_t> tiles;           // tiles per task (pipes overlap when > 1)

  std::vector<DeviceTask> device_tasks;
  std::vector<std::string> kernel_names;

  // The kernel's control flow reads tensor values that are not ready on the host
  // (ready_on_host_tensors), so it must wait for the AICore start handshake.
  bool control_waits_for_aicore = false;

  // Set by whoever laid the workspace out (the compiler, through its Stitcher); traces leave
  // it empty and the simulator estimates it from the graph (sim/workspace.h).
  std::optional<WorkspaceFigures> workspace;

  // Recorded on a board: PyPTO's AICore end to end of the recording (first AIC/AIV start to
  // last AIC/AIV end; AICPU tasks and placeholders left out), as the simulated task span.
  std::optional<common::TimePs> recorded_makespan_ps;
  std::string source;  // where it came from, for messages and stats

  // Calls f(column) for each per-task and CSR column above (core_type .. tiles): the one
  // list of them, for code that handles the columns' memory as a whole.
  template <class F>
  void for_each_column(F&& f) const {
    f(core_type);
    f(device_task);
    f(root);
    f(kernel);
    f(orig_id);
    f(succ_begin);
    f(succ);
    f(pred_count);
    f(recorded_ns);
    f(recorded_start_ps);
    f(mem_begin);
    f(mem);
    f(compute_cycles);
    f(tiles);
  }

  std::size_t num_tasks() const { return core_type.size(); }
  std::size_t num_edges() const { return succ.size(); }
  bool has_memory() const { return !mem_begin.empty(); }
  bool has_recorded(common::TaskId t) const { return recorded_ns[t] != kNoRecord; }
  // The recorded duration in ps: the one conversion of recorded_ns. Contract: has_recorded(t).
  common::TimePs recorded_ps(common::TaskId t) const {
    return common::TimePs{recorded_ns[t]} * 1000;
  }
  // What t's memory ranges read and write (zero without memory information).
  Traffic traffic(common::TaskId t) const {
    Traffic x;
    if (!has_memory()) return x;
    for (std::uint32_t i = mem_begin[t]; i < mem_begin[t + 1]; ++i) {
      (mem[i].is_write != 0 ? x.write_bytes : x.read_bytes) += mem[i].bytes;
    }
    return x;
  }
  bool has_recorded_start(common::TaskId t) const {
    return !recorded_start_ps.empty() && recorded_start_ps[t] != common::kNever;
  }

  // Successors of t as a [begin, end) index range into succ.
  std::uint32_t succ_first(common::TaskId t) const { return succ_begin[t]; }
  std::uint32_t succ_last(common::TaskId t) const { return succ_begin[t + 1]; }

  // Approximate resident bytes of the graph (for the memory benchmark and progress).
  std::size_t memory_bytes() const;
};

// Builds a TaskGraph incrementally. Importers add tasks in order (ids are dense and
// assigned in call order) and successors by dense id; finish() validates and derives the
// rest. Contract: finish() is called once; afterwards the builder is empty.
class TaskGraphBuilder {
 public:
  struct Task {
    common::CoreType core_type = common::CoreType::kAiv;
    std::uint32_t device_task_seq = 0;  // device task key (seqNo); tasks are grouped by it
    std::uint32_t root = 0;
    std::uint32_t orig_id = 0;
    std::uint32_t kernel = 0;
    std::uint32_t recorded_ns = kNoRecord;
    common::TimePs recorded_start_ps = common::kNever;  // see TaskGraph::recorded_start_ps
    std::uint32_t compute_cycles = 0;
    std::uint16_t tiles = 1;
    std::uint32_t parallel_group = 0;
  };

  explicit TaskGraphBuilder(std::string source) { g_.source = std::move(source); }

  // Interns a kernel name and returns its index.
  std::uint32_t kernel_index(const std::string& name);

  // Appends a task and returns its dense id. Successors and memory ranges added next
  // (before the next add_task) belong to it.
  common::TaskId add_task(const Task& t);
  void add_successor(common::TaskId succ) { g_.succ.push_back(succ); }
  void add_memory(const MemAccess& m);
  // The same for the n ranges at `first`, in order (a reader's parsed record, a compiled task).
  void add_memory(const MemAccess* first, std::size_t n) {
    if (n == 0) return;
    if (g_.mem_begin.empty()) start_memory();
    // A reader's few ranges are copied in place while they fit (no memmove call); a compiled
    // tile's hundreds, or ranges past the capacity, go as one insert.
    if (n > kInPlaceRanges || g_.mem.capacity() - g_.mem.size() < n) return grow_memory(first, n);
    for (std::size_t i = 0; i < n; ++i) g_.mem.push_back(first[i]);
  }
  // The same for `count` ranges like `m` at m.addr + k * pitch, k = 0, 1, ... (a tile's rows),
  // stored straight into the graph rather than built elsewhere and copied in.
  void add_memory_rows(MemAccess m, std::uint64_t pitch, std::size_t count) {
    if (count == 0) return;
    if (g_.mem_begin.empty()) start_memory();
    for (std::size_t i = 0; i < count; ++i, m.addr += pitch) g_.mem.push_back(m);
  }

  // Re-keys an already added task's device task. Importers that stitch after reading (the
  // device task of a task depends on the sizes of later roots) call it before finish().
  void set_device_task(common::TaskId t, std::uint32_t device_task_seq,
                       std::uint32_t parallel_group) {
    seq_of_task_[t] = device_task_seq;
    group_of_task_[t] = parallel_group;
  }

  // Re-keys every task's device task at once: task t's becomes device_task_seq[t]; their
  // parallel groups stay as added. Contract: device_task_seq.size() == num_tasks().
  void set_device_tasks(std::vector<std::uint32_t> device_task_seq) {
    NPU_CHECK(device_task_seq.size() == n_, "set_device_tasks() needs a key per task");
    trim();
    seq_of_task_ = std::move(device_task_seq);
  }
  // The parallel group of each task added (Task::parallel_group, or as set_device_task set
  // it), num_tasks() of them.
  const std::vector<std::uint32_t>& parallel_groups() {
    trim();
    return group_of_task_;
  }

  // Tasks added so far.
  std::size_t num_tasks() const { return n_; }
  // The graph being built, its per-task columns trimmed to num_tasks() (add_task writes into
  // slots sized ahead). For a reader's steps between phases (a reservation, a pass over what
  // was read), not per task: the next add_task sizes the columns ahead again.
  TaskGraph& graph() {
    trim();
    return g_;
  }

  // Validates and completes the graph:
  //  - every successor id exists (else TraceError naming the task);
  //  - tasks are grouped by device task in first-appearance order (reorders if needed);
  //  - edges from a later device task to an earlier one are errors; edges to later device
  //    tasks are dropped, because device tasks run one after another;
  //  - predecessor counts are derived, and a cycle is a TraceError that prints it.
  // `new_pos`, if given, receives where each task went when the grouping reordered them
  // (new_pos[old] = new id; empty when the order was kept), for readers that keep per-task
  // columns of their own.
  TaskGraph finish(std::vector<common::TaskId>* new_pos = nullptr);

  // Counts over every task added, for estimates while reading.
  std::uint64_t edges_listed() const { return g_.succ.size(); }
  std::uint64_t memory_ranges() const { return g_.mem.size(); }
  bool has_memory() const { return g_.has_memory(); }

 private:
  // More ranges than this at once go as one insert (a memmove) rather than range by range.
  static constexpr std::size_t kInPlaceRanges = 8;
  void start_memory();  // the memory CSR's first range: every task before it has none
  void grow_memory(const MemAccess* first, std::size_t n);
  // Sizes the per-task columns kTaskBlock slots ahead: add_task then stores by index, with
  // no capacity check per column.
  void grow_tasks();
  static constexpr std::size_t kTaskBlock = 256;
  // Sizes the per-task columns to the tasks added (sized_ = n_).
  void trim();
  // Sets the lazily created recorded_start_ps column to kNever for every slot.
  void start_recorded_starts();

  TaskGraph g_;
  // Invariant: the per-task columns (and mem_begin, recorded_start_ps when present) hold
  // sized_ slots, the first n_ of them tasks added; the rest are overwritten by add_task.
  std::size_t n_ = 0;
  std::size_t sized_ = 0;
  std::vector<std::uint32_t> seq_of_task_;  // device_task_seq per task before grouping
  std::vector<std::uint32_t> group_of_task_;
  std::unordered_map<std::string, std::uint32_t> kernel_lookup_;
};

// Inline: a reader calls it once per task.
inline common::TaskId TaskGraphBuilder::add_task(const Task& t) {
  // grow_tasks() checks the 2^32-1 task limit whenever the columns are sized ahead.
  if (n_ == sized_) grow_tasks();
  const std::size_t local = n_++;
  g_.core_type[local] = t.core_type;
  g_.root[local] = t.root;
  g_.kernel[local] = t.kernel;
  g_.orig_id[local] = t.orig_id;
  g_.recorded_ns[local] = t.recorded_ns;
  // Created lazily, like the memory CSR: graphs without recorded starts pay nothing.
  if (!g_.recorded_start_ps.empty()) {
    g_.recorded_start_ps[local] = t.recorded_start_ps;
  } else if (t.recorded_start_ps != common::kNever) {
    start_recorded_starts();
    g_.recorded_start_ps[local] = t.recorded_start_ps;
  }
  g_.compute_cycles[local] = t.compute_cycles;
  g_.tiles[local] = t.tiles;
  g_.succ_begin[local] = static_cast<std::uint32_t>(g_.succ.size());
  if (!g_.mem_begin.empty()) g_.mem_begin[local] = static_cast<std::uint32_t>(g_.mem.size());
  seq_of_task_[local] = t.device_task_seq;
  group_of_task_[local] = t.parallel_group;
  return static_cast<common::TaskId>(local);
}

// Human-readable name of task t for messages: "task 1048577 (seqNo 0)".
std::string describe_task(const TaskGraph& g, common::TaskId t);

}  // namespace pypto::sched
