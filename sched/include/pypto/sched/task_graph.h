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

#include "pypto/common/types.h"
#include "pypto/sched/workspace.h"

namespace pypto::sched {

// One memory range a task reads or writes (global-memory address space: inputs, outputs,
// workspace). The simulator pushes these through L2 and HBM.
struct MemAccess {
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
  std::uint32_t is_write = 0;
};

// A device task: the unit the control-flow AICPU hands to the schedule threads. Its tasks
// occupy [first_task, first_task + num_tasks) in the graph.
struct DeviceTask {
  TaskId first_task = 0;
  std::uint32_t num_tasks = 0;
  std::uint32_t num_roots = 0;            // root-function instances stitched into it
  std::uint32_t seq_no = 0;               // as named in the source (PyPTO seqNo)
  std::uint32_t parallel_group = 0;       // 0: serial; k>0: consecutive device tasks with the
                                          // same k come from one pypto.loop(parallel=True) and
                                          // may overlap up to device_sched_parallelism
  std::uint32_t count[4] = {0, 0, 0, 0};  // tasks per CoreType
};

inline constexpr std::uint32_t kNoRecord = 0xFFFFFFFFu;

struct TaskGraph {
  // ---- per-task columns (all of size num_tasks(), except the *_begin offsets: +1) ----
  std::vector<CoreType> core_type;
  std::vector<DeviceTaskId> device_task;
  std::vector<std::uint32_t> root;         // root-instance index (global, dense)
  std::vector<std::uint32_t> kernel;       // index into kernel_names
  std::vector<std::uint32_t> orig_id;      // task id as written in the source trace
  std::vector<std::uint32_t> succ_begin;   // CSR offsets into succ
  std::vector<TaskId> succ;                // successors, same device task only
  std::vector<std::uint32_t> pred_count;   // initial predecessor count
  std::vector<std::uint32_t> recorded_ns;  // recorded duration, kNoRecord if none
  // Recorded start, relative to the recording's first start; kNever for tasks without one.
  // Empty (no memory cost) unless the source recorded start times (board prof records,
  // native start/end): the replay metrics compare against it.
  std::vector<TimePs> recorded_start_ps;
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

  // Recorded on a board: makespan of the whole recording (first start to last end).
  std::optional<TimePs> recorded_makespan_ps;
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
  bool has_recorded(TaskId t) const { return recorded_ns[t] != kNoRecord; }
  bool has_recorded_start(TaskId t) const {
    return !recorded_start_ps.empty() && recorded_start_ps[t] != kNever;
  }

  // Successors of t as a [begin, end) index range into succ.
  std::uint32_t succ_first(TaskId t) const { return succ_begin[t]; }
  std::uint32_t succ_last(TaskId t) const { return succ_begin[t + 1]; }

  // Approximate resident bytes of the graph (for the memory benchmark and progress).
  std::size_t memory_bytes() const;
};

// Builds a TaskGraph incrementally. Importers add tasks in order (ids are dense and
// assigned in call order) and successors by dense id; finish() validates and derives the
// rest. Contract: finish() is called once; afterwards the builder is empty.
class TaskGraphBuilder {
 public:
  struct Task {
    CoreType core_type = CoreType::kAiv;
    std::uint32_t device_task_seq = 0;  // device task key (seqNo); tasks are grouped by it
    std::uint32_t root = 0;
    std::uint32_t orig_id = 0;
    std::uint32_t kernel = 0;
    std::uint32_t recorded_ns = kNoRecord;
    TimePs recorded_start_ps = kNever;  // see TaskGraph::recorded_start_ps
    std::uint32_t compute_cycles = 0;
    std::uint16_t tiles = 1;
    std::uint32_t parallel_group = 0;
  };

  explicit TaskGraphBuilder(std::string source) { g_.source = std::move(source); }

  // Interns a kernel name and returns its index.
  std::uint32_t kernel_index(const std::string& name);

  // Appends a task and returns its dense id. Successors and memory ranges added next
  // (before the next add_task) belong to it.
  TaskId add_task(const Task& t);
  void add_successor(TaskId succ) { g_.succ.push_back(succ); }
  void add_memory(const MemAccess& m);

  // Re-keys an already added task's device task. Importers that stitch after reading (the
  // device task of a task depends on the sizes of later roots) call it before finish().
  void set_device_task(TaskId t, std::uint32_t device_task_seq, std::uint32_t parallel_group) {
    seq_of_task_[t] = device_task_seq;
    group_of_task_[t] = parallel_group;
  }

  // Calls f(column) for the builder's own per-task columns (the device-task key and parallel
  // group of each task until finish()), first reserving them for the graph's reserved task
  // capacity, as add_task() does by itself when they next grow: for a reader that reserved
  // the graph (reserve_task_columns) and faults the columns' memory in ahead.
  template <class F>
  void reserve_own_columns(F&& f) {
    if (g_.core_type.capacity() > seq_of_task_.capacity()) {
      seq_of_task_.reserve(g_.core_type.capacity());
      group_of_task_.reserve(g_.core_type.capacity());
    }
    f(static_cast<const std::vector<std::uint32_t>&>(seq_of_task_));
    f(static_cast<const std::vector<std::uint32_t>&>(group_of_task_));
  }

  // Tasks added so far (cut ones included).
  std::size_t num_tasks() const { return cut_base_ + g_.core_type.size(); }
  // The tasks not cut yet (all of them unless cut_device_task is used).
  TaskGraph& graph() { return g_; }

  // Validates and completes the graph:
  //  - every successor id exists (else TraceError naming the task);
  //  - tasks are grouped by device task in first-appearance order (reorders if needed);
  //  - edges from a later device task to an earlier one are errors; edges to later device
  //    tasks are dropped, because device tasks run one after another;
  //  - predecessor counts are derived, and a cycle is a TraceError that prints it.
  TaskGraph finish();

  // ---- Streaming: device tasks handed to a run while the trace is still being read ----
  // What cut_device_task() found wrong; the first of each kind over all cuts. The caller
  // reports them once the whole trace is read, in finish()'s order (an edge back in time
  // before a cycle), after the errors that finish() would have raised first.
  struct CutErrors {
    std::string back_edge;
    std::string cycle;
    bool any() const { return !back_edge.empty() || !cycle.empty(); }
  };
  // Completes the tasks added since the last cut, up to (not including) task `end`, as the
  // next device task (key seq_no) and moves them out as a piece for append_device_task():
  // a TaskGraph of those tasks alone, with per-task columns and CSR offsets local to it
  // (succ_begin and mem_begin with one entry more than tasks; mem_begin and
  // recorded_start_ps may be empty when none of them has memory or a start), successors as global
  // task ids, and one DeviceTask with its global first_task. finish()'s rules apply to the piece:
  // edges into later device tasks are dropped, and an edge into an earlier one or a cycle goes to
  // `errors`. Contract: device tasks are added in order (a task of a later device task is never
  // added before an earlier one is cut; set_device_task is not used with cuts); successor
  // ids are not range-checked (the caller checks the largest one at the end, as finish()
  // would first); the cut names the device task (the tasks' device_task_seq is not read)
  // and seq_no is what finish() would have given it; its tasks' parallel_group is
  // parallel_group (checked). After the last cut the builder holds no task, and take_kernel_names()
  // gives the names the pieces' kernel columns index.
  TaskGraph cut_device_task(TaskId end, std::uint32_t seq_no, std::uint32_t parallel_group,
                            CutErrors& errors);
  std::vector<std::string> take_kernel_names();
  // Counts over every task added (cut or not), for estimates while reading.
  std::uint64_t edges_listed() const { return cut_edges_listed_ + g_.succ.size(); }
  std::uint64_t memory_ranges() const { return cut_memory_ranges_ + g_.mem.size(); }
  bool has_memory() const { return cut_has_memory_ || g_.has_memory(); }

 private:
  TaskGraph g_;
  std::vector<std::uint32_t> seq_of_task_;  // device_task_seq per task before grouping
  std::vector<std::uint32_t> group_of_task_;
  std::unordered_map<std::string, std::uint32_t> kernel_lookup_;
  // Cuts made so far: g_ holds tasks from cut_base_ on.
  TaskId cut_base_ = 0;
  std::vector<TaskId> cut_first_;           // first task per cut device task
  std::vector<std::uint32_t> cut_seq_;      // its key
  bool cut_orig_is_id_ = true;              // every cut task's orig id is its id
  std::vector<std::uint32_t> cut_orig_id_;  // else: the orig ids of the cut tasks
  std::uint64_t cut_edges_listed_ = 0, cut_memory_ranges_ = 0;
  bool cut_has_memory_ = false;
};

// Appends `piece`, the next device task in the form cut_device_task() gives, to g, the
// complete graph of the device tasks before it (a finished graph, an empty TaskGraph, or
// one grown by earlier appends). Columns created lazily (mem_begin, recorded_start_ps) are
// filled in for whichever side lacks them, so that appending every piece of a trace gives
// the graph finish() gives, kernel_names and the whole-trace fields aside.
// Contract: piece.device_tasks[0].first_task == g.num_tasks(); piece is consumed.
void append_device_task(TaskGraph& g, TaskGraph&& piece);

// Human-readable name of task t for messages: "task 1048577 (seqNo 0)".
std::string describe_task(const TaskGraph& g, TaskId t);

}  // namespace pypto::sched
