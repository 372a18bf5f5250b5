// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/trace/graph_feed.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <type_traits>
#include <utility>

#include "fault_ahead.h"
#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::sim {

namespace {
// Niceness of the reading threads (0..19; CFS gives a nice-10 thread about a tenth of the
// share of a nice-0 one on a shared core).
constexpr int kReadNice = 10;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

void GraphFeed::announce_tasks(std::size_t tasks) {
  std::lock_guard<std::mutex> lock(mu_);
  announced_ = tasks;
}

void GraphFeed::push(sched::TaskGraph&& device_task) {
  const std::size_t m = device_task.num_tasks();
  if (pushed_tasks_ == 0) reserve_for(device_task);
  {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [this] { return cancelled_ || queued_tasks_ < kMaxQueuedTasks; });
    if (cancelled_) throw Cancelled{};
    queued_tasks_ += m;
    any_pushed_ = true;
    queue_.push_back(std::move(device_task));
    cv_.notify_all();
  }
  pushed_tasks_ += m;
  populate_ahead();
}

// Before the first device task is queued, this thread reserves the run's graph apart
// (reserved_, taken by the run with that device task), for the announced task count at the
// first device task's density of edges and memory ranges (more is grown by the run, as
// without it). Reserving once saves the copies and the 2x peak of growing by doubling.
void GraphFeed::reserve_for(const sched::TaskGraph& first) {
  std::size_t tasks = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks = announced_;
  }
  const std::size_t m = first.num_tasks();
  if (tasks <= m || m == 0) return;
  const double scale = 1.1 * static_cast<double>(tasks) / static_cast<double>(m);
  const auto want = [&](std::size_t have) {
    return static_cast<std::size_t>(std::min(static_cast<double>(have) * scale, 4.0e9));
  };
  sched::TaskGraph& g = reserved_;
  trace_detail::reserve_task_columns(g, tasks);
  g.device_task.reserve(tasks);
  g.pred_count.reserve(tasks);
  g.succ.reserve(want(first.succ.size()));
  if (!first.mem.empty()) {
    g.mem.reserve(want(first.mem.size()));
    g.mem_begin.reserve(tasks + 1);
  }
  if (!first.recorded_start_ps.empty()) g.recorded_start_ps.reserve(tasks);
  spans_.clear();
  g.for_each_column(
      [this](const auto& col) { add_span(spans_, col.data(), col.capacity() * sizeof(col[0])); });
  span_tasks_ = tasks;
  reserved_pending_ = true;  // published to the run by the push that follows (mu_)
}

// Spans under FaultAhead::kMinBytes fault in quickly enough on the thread that fills them.
void GraphFeed::add_span(std::vector<Span>& to, const void* begin, std::size_t bytes) {
  if (bytes < trace_detail::FaultAhead::kMinBytes) return;
  const auto b = reinterpret_cast<std::uintptr_t>(begin);
  to.push_back({b, b + bytes, b});
}

void GraphFeed::populate_with_graph(const void* begin, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  add_span(run_spans_, begin, bytes);
}

// First touches of fresh memory cost ~2 ms/MiB on the project's VMs (docs/performance-log.md):
// the reserved graph is faulted in here, on the reading thread, a little ahead of the
// device tasks pushed (a step at a time: the run waits for the first ones), so that the run's
// appends write to memory already there. Only page tables change: the run's data is never touched
// from this thread.
void GraphFeed::populate_ahead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!run_spans_.empty() && span_tasks_ > 0) {
      spans_.insert(spans_.end(), run_spans_.begin(), run_spans_.end());
      run_spans_.clear();
    }
  }
  if (spans_.empty()) return;
  const double frac = std::min(1.0, static_cast<double>(pushed_tasks_ + kPopulateAheadTasks) /
                                        static_cast<double>(span_tasks_));
  for (Span& sp : spans_)
    sp.done = trace_detail::fault_in_to(sp.begin, sp.end - sp.begin, sp.done, frac);
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

bool GraphFeed::streams() const {
  std::unique_lock<std::mutex> lock(mu_);
  // cv_ is notified on every push, at the end and on an error.
  cv_.wait(lock, [this] { return any_pushed_ || finished_ || error_ != nullptr; });
  return any_pushed_;
}

std::uint64_t GraphFeed::announced_tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return announced_;
}

double GraphFeed::read_wall_s() const {
  std::lock_guard<std::mutex> lock(mu_);
  return (end_s_ >= 0 ? end_s_ : now_s()) - start_s_;
}

bool GraphFeed::append_next() {
  if (ended_) return false;
  std::deque<sched::TaskGraph> pieces;
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
    if (!pieces.empty() && reserved_pending_) {
      // The first device task: the graph is still the empty one the run started with (a
      // vector's buffer moves with it, so the spans being faulted in stay valid).
      NPU_CHECK(graph_.num_tasks() == 0 && graph_.device_tasks.empty(),
                "GraphFeed: the reserved graph comes after a device task");
      graph_ = std::move(reserved_);
      reserved_pending_ = false;
    }
    queued_tasks_ = 0;
    room_.notify_all();
    if (pieces.empty() && error_) std::rethrow_exception(error_);
  }
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
