// SPDX-License-Identifier: Apache-2.0
// A trace handed to a run while it is still being read. A loading thread reads the file
// and pushes each device task as soon as it is complete; the run (simulate(GraphFeed&))
// appends a device task to its graph when the control flow first needs it, and waits only
// when the reading is behind. The run's results are those of the whole graph: the model
// advances simulated time, not wall time, and what it looks at of the graph at any point is
// already there (device tasks before the one being built; a policy that looks further
// ahead gets the whole trace first, Policy::reads_ahead).
//
// Errors keep the order of a whole read: the loading thread's error (a bad line, a cycle)
// is what the run reports, even when the run itself failed first on the part it had.
//
// Example:
//   auto feed = pypto::sim::start_trace_feed("mix.ndjson", load_options, chip);
//   pypto::sim::SimResult r = pypto::sim::simulate(*feed, chip, sim_options);
//   const pypto::sched::TaskGraph& g = feed->graph();  // the whole graph, for the reports
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pypto/sched/task_graph.h"
#include "pypto/sim/trace/trace_loader.h"

namespace pypto::sim {

class GraphFeed {
 public:
  // Thrown by push() once the run has stopped the loading (cancel()); the loader lets it pass.
  struct Cancelled {};

  // What the loading thread hands over once the whole trace is read.
  struct End {
    // The whole-trace fields (format, chip hint, counts). When nothing was pushed,
    // loaded.graph is the whole graph; otherwise it is empty and finish_graph completes the
    // graph the pushed device tasks make (kernel names, recorded starts made relative to
    // the first one): exactly the graph a whole read gives.
    LoadedTrace loaded;
    std::function<void(sched::TaskGraph&)> finish_graph;
  };

  GraphFeed() = default;
  // Stops the loading thread (cancel()) and joins it.
  ~GraphFeed();
  GraphFeed(const GraphFeed&) = delete;
  GraphFeed& operator=(const GraphFeed&) = delete;

  // Contract: called once; runs `load` on a thread of its own. load pushes device tasks
  // and ends with finish(); an exception from it (Cancelled aside) is the feed's error.
  void start(std::function<void(GraphFeed&)> load);

  // ---- the loading thread ----
  // The task count the trace announces (a hint for reserving the run's graph and for its
  // progress; 0: unknown). Before the first push.
  void announce_tasks(std::size_t tasks);
  // Contract: the next device task in order, in TaskGraphBuilder::cut_device_task's form.
  // Waits while kMaxQueuedTasks tasks are queued that the run has not taken: the reading
  // keeps pace with the run instead of holding the graph twice (queued and grown). Throws
  // Cancelled once the run has given up. The first push reserves the run's graph, and
  // every push faults its memory in ahead of the run (populate_ahead).
  void push(sched::TaskGraph&& device_task);
  void finish(End&& end);
  // True once the run has given up (cancel()): the reading may stop.
  bool cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }
  // Bytes read so far of `total` (for the run's progress line; any thread may note and
  // ask). The figure only grows: the file's reader and the graph's builder both note theirs.
  void note_read(std::uint64_t done, std::uint64_t total) {
    std::uint64_t had = read_bytes_.load(std::memory_order_relaxed);
    while (done > had && !read_bytes_.compare_exchange_weak(had, done, std::memory_order_relaxed)) {
    }
    total_bytes_.store(total, std::memory_order_relaxed);
  }

  // ---- the run (one thread) ----
  // Appends the next device task(s) to graph(), waiting for the loading thread, and returns
  // true; false when the trace has no more, graph() then being the whole graph. Rethrows
  // the loading thread's error once the device tasks read before it are taken.
  bool append_next();
  // Waits for the end of the loading and appends everything (rethrowing its error).
  void complete();
  // Waits until the reading has pushed a device task (true: the trace streams) or ended
  // without (false: the whole graph comes at the end, or the reading failed).
  bool streams() const;
  // The run's own per-task columns (times kept per task, say), reserved for
  // announced_tasks() and filled in task order: faulted in ahead as the graph is.
  void populate_with_graph(const void* begin, std::size_t bytes);
  // Called on the run's thread when append_next() has to wait, and every 100 ms while it
  // waits (a progress line: the reading is behind). Set before the run.
  void on_wait(std::function<void()> f) { on_wait_ = std::move(f); }
  // Stops the loading thread as soon as it next pushes; nothing more is appended.
  void cancel();
  // The run's graph: the device tasks appended so far (a valid, complete graph of them).
  sched::TaskGraph& graph() { return graph_; }
  const sched::TaskGraph& graph() const { return graph_; }
  // The task count the trace announces (0: unknown), for progress while it is read.
  std::uint64_t announced_tasks() const;
  // True once append_next() has returned false: graph() is the whole trace's.
  bool ended() const { return ended_; }
  // After ended(): the whole-trace fields (graph moved into graph(), so loaded.graph is empty).
  const LoadedTrace& loaded() const { return end_.loaded; }
  // Wall seconds from start() to the end of the loading (so far, while it runs).
  double read_wall_s() const;
  std::uint64_t read_bytes() const { return read_bytes_.load(std::memory_order_relaxed); }
  std::uint64_t total_bytes() const { return total_bytes_.load(std::memory_order_relaxed); }

 private:
  // The loading thread's (see push()).
  void reserve_for(const sched::TaskGraph& first);
  void populate_ahead();

  // About 7 MB of device tasks of the mix trace, what the control flow builds ahead there
  // (64 device tasks of 1,024 tasks); larger device tasks pass one at a time. Twice as much
  // ran no faster and held 5 MiB more (1M-task mix trace).
  static constexpr std::size_t kMaxQueuedTasks = std::size_t{1} << 16;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // the run waits for device tasks
  std::condition_variable room_;        // the loading thread waits for room
  std::deque<sched::TaskGraph> queue_;
  std::size_t queued_tasks_ = 0;
  bool finished_ = false, cancelled_ = false, any_pushed_ = false;
  std::exception_ptr error_;
  End end_;
  std::size_t announced_ = 0;
  // The loading thread's: the run's reserved columns ([begin, end) addresses, faulted in up
  // to done), the tasks they are reserved for, and the tasks pushed.
  // As far ahead as the queue may run (kMaxQueuedTasks): a quarter of it left the run's thread
  // ~12 huge-page faults in append_device_task on the 1M-task mix trace (`perf record -e
  // page-faults`), this none, 6 % less wall there with the same peak memory.
  static constexpr std::size_t kPopulateAheadTasks = std::size_t{1} << 16;
  struct Span {
    std::uintptr_t begin = 0, end = 0, done = 0;
  };
  std::vector<Span> spans_;
  // Adds [begin, begin + bytes) to `to` if it is worth faulting in ahead.
  static void add_span(std::vector<Span>& to, const void* begin, std::size_t bytes);
  std::size_t span_tasks_ = 0, pushed_tasks_ = 0;
  // The run's graph, empty, with its columns reserved: filled by reserve_for() before the
  // first device task is queued and taken by the run with that device task (under mu_), so
  // that this thread never writes the graph the run is reading (the run looks at its empty
  // graph before the first device task arrives).
  sched::TaskGraph reserved_;
  bool reserved_pending_ = false;  // reserved_ filled and not yet taken (read by the run only
                                   // once a device task is queued)
  std::vector<Span> run_spans_;    // populate_with_graph()'s, taken by the next push (mu_)
  double start_s_ = 0, end_s_ = -1;
  std::atomic<std::uint64_t> read_bytes_{0}, total_bytes_{0};
  std::thread thread_;

  // The run's.
  std::function<void()> on_wait_;
  sched::TaskGraph graph_;
  bool ended_ = false;
};

// Starts reading `path` into a feed. A native trace without device-task ids streams (its
// device tasks are stitched as it is read); every other trace is handed over whole once
// read. Errors are load_trace()'s, from the feed's append_next()/complete().
// Instead of calling opts.progress, the reading notes its bytes in the feed (read_bytes()).
std::unique_ptr<GraphFeed> start_trace_feed(const std::string& path, const LoadOptions& opts,
                                            const ChipConfig& chip);

}  // namespace pypto::sim
