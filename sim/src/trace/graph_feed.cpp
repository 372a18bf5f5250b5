// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/trace/graph_feed.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::sim {

namespace {
// Niceness of the reading threads (0..19; CFS gives a nice-10 thread about a tenth of the
// share of a nice-0 one on a shared core).
constexpr int kReadNice = 10;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

GraphFeed::~GraphFeed() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void GraphFeed::start(std::function<void(GraphFeed&)> load) {
  NPU_CHECK(!thread_.joinable(), "GraphFeed::start called twice");
  start_s_ = now_s();
  thread_ = std::thread([this, load = std::move(load)] {
    // The run is the critical path: on a busy machine the reading (this thread and the
    // parse threads it starts, which inherit the setting) yields to it, and keeps pace
    // through the core the run leaves.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kReadNice);
    try {
      load(*this);
    } catch (const Cancelled&) {
      // The run gave up: nobody waits for the rest.
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
      end_s_ = now_s();
      cv_.notify_all();
    }
  });
}

void GraphFeed::reserve(std::size_t tasks, std::size_t edges, std::size_t memory_ranges) {
  std::lock_guard<std::mutex> lock(mu_);
  reserve_tasks_ = std::max(reserve_tasks_, tasks);
  reserve_edges_ = std::max(reserve_edges_, edges);
  reserve_memory_ = std::max(reserve_memory_, memory_ranges);
  reserve_pending_ = true;
}

void GraphFeed::push(sched::TaskGraph&& device_task) {
  std::unique_lock<std::mutex> lock(mu_);
  room_.wait(lock, [this] { return cancelled_ || queued_tasks_ < kMaxQueuedTasks; });
  if (cancelled_) throw Cancelled{};
  queued_tasks_ += device_task.num_tasks();
  queue_.push_back(std::move(device_task));
  cv_.notify_all();
}

void GraphFeed::finish(End&& end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) throw Cancelled{};
  end_ = std::move(end);
  finished_ = true;
  end_s_ = now_s();
  cv_.notify_all();
}

void GraphFeed::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  queue_.clear();
  queued_tasks_ = 0;
  room_.notify_all();
}

std::uint64_t GraphFeed::announced_tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserve_tasks_;
}

double GraphFeed::read_wall_s() const {
  std::lock_guard<std::mutex> lock(mu_);
  return (end_s_ >= 0 ? end_s_ : now_s()) - start_s_;
}

// The run's graph grows by appends; reserving it once for the announced size saves the
// copies (and the 2x peak) of growing by doubling.
void GraphFeed::apply_reserve() {
  std::size_t tasks = 0, edges = 0, memory = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks = reserve_tasks_;
    edges = reserve_edges_;
    memory = reserve_memory_;
  }
  sched::TaskGraph& g = graph_;
  trace_detail::reserve_task_columns(g, tasks);
  g.device_task.reserve(tasks);
  g.pred_count.reserve(tasks);
  g.succ.reserve(edges);
  g.mem.reserve(memory);
  if (memory > 0) g.mem_begin.reserve(tasks + 1);
}

bool GraphFeed::append_next() {
  if (ended_) return false;
  std::deque<sched::TaskGraph> pieces;
  bool reserve = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    NPU_CHECK(!cancelled_, "GraphFeed: append after cancel");
    const auto ready = [this] { return !queue_.empty() || finished_ || error_; };
    while (!ready()) {
      if (on_wait_) {
        lock.unlock();
        on_wait_();
        lock.lock();
      }
      cv_.wait_for(lock, std::chrono::milliseconds(100), ready);
    }
    // Everything queued at once: one lock per wake-up rather than per device task.
    pieces.swap(queue_);
    queued_tasks_ = 0;
    room_.notify_all();
    reserve = reserve_pending_;
    reserve_pending_ = false;
    if (pieces.empty() && error_) std::rethrow_exception(error_);
  }
  if (reserve) apply_reserve();
  if (!pieces.empty()) {
    for (sched::TaskGraph& p : pieces) sched::append_device_task(graph_, std::move(p));
    return true;
  }
  // The end: the whole graph, handed over or completed.
  if (graph_.device_tasks.empty() && end_.loaded.graph.num_tasks() > 0) {
    graph_ = std::move(end_.loaded.graph);
    end_.loaded.graph = sched::TaskGraph{};
    return true;  // next call: the end
  }
  if (end_.finish_graph) {
    end_.finish_graph(graph_);
    end_.finish_graph = nullptr;
  }
  ended_ = true;
  return false;
}

void GraphFeed::complete() {
  while (append_next()) {
  }
}

}  // namespace pypto::sim
