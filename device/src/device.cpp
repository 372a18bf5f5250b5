// SPDX-License-Identifier: Apache-2.0
// run(): the wall-clock Hal, the cores' device streams, the schedule threads and the
// control-flow thread. Lock order: the scheduler lock, then a core's or a thread's own lock
// (never the other way round), so no thread waits on another while holding what it needs.
#include "pypto/device/device.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent_threads.h"
#include "pypto/common/errors.h"

namespace pypto::device {
namespace {

using Clock = std::chrono::steady_clock;
using common::CoreId;
using common::TaskId;
using common::ThreadId;

// A sleeping agent and the count of reasons it was woken: a waiter remembers the count
// before it looks at the shared state, so a notification that comes in between is not lost.
struct Waker {
  std::mutex mu;
  std::condition_variable cv;
  std::uint64_t epoch = 0;

  std::uint64_t snapshot() {
    const std::lock_guard<std::mutex> lock(mu);
    return epoch;
  }
  void notify() {
    {
      const std::lock_guard<std::mutex> lock(mu);
      ++epoch;
    }
    cv.notify_one();
  }
  // Returns when the count moved past `seen` or after `timeout`.
  void wait(std::uint64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, timeout, [&] { return epoch != seen; });
  }
};

// One core's registers and its device stream: slot[0] runs, slot[1] is pending; the stream
// starts the pending task as soon as the running one ends, as the AICore does.
struct Core {
  std::mutex mu;
  std::condition_variable cv;
  TaskId slot[2] = {common::kNoTask, common::kNoTask};
  int n = 0;
  std::vector<TaskId> done;  // finished since the owner's last poll, in order
  bool stop = false;
  ThreadId owner = 0;
  std::uint64_t busy_ns = 0, tasks = 0;
};

class Runtime;

// The second sched::Hal: every call acts on the real cores at once and costs what it costs.
class WallClockHal final : public sched::Hal {
 public:
  explicit WallClockHal(Runtime& rt) : rt_(rt) {}
  void poll(ThreadId t, CoreId c, std::vector<TaskId>& finished) override;
  void send(ThreadId t, TaskId task, CoreId c) override;
  void run_inline(ThreadId t, TaskId task) override;
  void charge(ThreadId, sched::AicpuOp, std::uint32_t) override {}  // real time passes
  common::TimePs now(ThreadId) const override;
  // Rounds are serialised by the scheduler lock, so no round needs to pause for another.
  bool yield_before_shared(ThreadId) override { return false; }

 private:
  Runtime& rt_;
};

class Runtime {
 public:
  Runtime(const sched::TaskGraph& g, const sched::MachineShape& shape, sched::Policy& policy,
          const RunOptions& opt)
      : g_(g), opt_(opt), scheduler_(g, shape, policy), hal_(*this) {
    const std::uint32_t ncores = shape.aic + shape.aiv;
    for (CoreId c = 0; c < ncores; ++c) {
      cores_.push_back(std::make_unique<Core>());
      cores_.back()->owner = scheduler_.owner(c);
    }
    for (ThreadId t = 0; t < shape.threads; ++t) wakers_.push_back(std::make_unique<Waker>());
    waits_.resize(shape.threads);
    const std::size_t n = g.num_tasks();
    tl_.start_ns.assign(n, 0);
    tl_.end_ns.assign(n, 0);
    tl_.core.assign(n, kNoCore16);
    tl_.thread.assign(n, kNoCore16);
  }

  RunResult run() {
    const auto wall0 = Clock::now();
    // One host thread per agent, from the threads kept across runs (agent_threads.h).
    Countdown streams(cores_.size()), sched_threads(wakers_.size());
    std::size_t started_streams = 0, started_threads = 0;
    try {
      for (; started_streams < cores_.size(); ++started_streams) {
        const CoreId c = static_cast<CoreId>(started_streams);
        start_agent([this, c] { stream(c); }, streams);
      }
      for (; started_threads < wakers_.size(); ++started_threads) {
        const ThreadId t = static_cast<ThreadId>(started_threads);
        start_agent([this, t] { schedule_thread(t); }, sched_threads);
      }
    } catch (...) {
      // No thread for an agent: stop the ones started and report why.
      fail(std::current_exception());
      streams.forget(cores_.size() - started_streams);
      sched_threads.forget(wakers_.size() - started_threads);
    }
    // The launch: every agent exists (as the AICore and AICPU kernels are up on the device
    // before the first device task), so thread start-up is not part of the measured time.
    {
      const std::lock_guard<std::mutex> lock(gate_mu_);
      t0_ = Clock::now();
      startup_ns_ = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(t0_ - wall0).count());
      open_ = true;
    }
    gate_cv_.notify_all();
    if (!abort_.load()) control_flow();  // on the calling thread
    sched_threads.wait();
    for (auto& c : cores_) {
      {
        const std::lock_guard<std::mutex> lock(c->mu);
        c->stop = true;
      }
      c->cv.notify_one();
    }
    streams.wait();
    if (error_) std::rethrow_exception(error_);

    RunResult r;
    r.makespan_ns = makespan_ns_;
    r.startup_ns = startup_ns_;
    r.first_start_ns = ~std::uint64_t{0};
    for (TaskId t = 0; t < g_.num_tasks(); ++t) {
      if (g_.core_type[t] == common::CoreType::kHub) continue;
      ++r.tasks;
      if (tl_.core[t] == kNoCore16) continue;
      r.first_start_ns = std::min(r.first_start_ns, tl_.start_ns[t]);
      r.last_end_ns = std::max(r.last_end_ns, tl_.end_ns[t]);
    }
    if (r.first_start_ns == ~std::uint64_t{0}) r.first_start_ns = 0;
    for (const auto& c : cores_) {
      r.core_busy_ns.push_back(c->busy_ns);
      r.core_tasks.push_back(c->tasks);
    }
    for (ThreadId t = 0; t < waits_.size(); ++t) {
      ThreadStats s;
      static_cast<sched::ThreadStats&>(s) = scheduler_.stats(t);
      s.waits = waits_[t];
      r.threads.push_back(s);
    }
    r.timeline = std::move(tl_);
    r.wall_s = std::chrono::duration<double>(Clock::now() - wall0).count();
    return r;
  }

  std::uint64_t now_ns() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0_).count());
  }

  // ---- what the Hal does ----
  void poll(CoreId c, std::vector<TaskId>& finished) {
    Core& co = *cores_[c];
    const std::lock_guard<std::mutex> lock(co.mu);
    finished.insert(finished.end(), co.done.begin(), co.done.end());
    co.done.clear();
  }

  void send(ThreadId t, TaskId task, CoreId c) {
    Core& co = *cores_[c];
    {
      const std::lock_guard<std::mutex> lock(co.mu);
      NPU_CHECK(co.n < 2, "core " + std::to_string(c) + " was sent task " + std::to_string(task) +
                              " with its running and pending slots full");
      co.slot[co.n++] = task;
    }
    tl_.thread[task] = static_cast<std::uint16_t>(t);
    co.cv.notify_one();
  }

  void run_inline(ThreadId t, TaskId task) {
    tl_.start_ns[task] = now_ns();
    execute(task, common::kNoCore);
    tl_.end_ns[task] = now_ns();
    tl_.thread[task] = static_cast<std::uint16_t>(t);
    progress_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  void execute(TaskId task, CoreId c) {
    if (opt_.execute) opt_.execute(task, c);
  }

  void fail(std::exception_ptr e) {
    {
      const std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_) error_ = e;
    }
    abort_.store(true);
    wake_all();
  }

  void wake_all() {
    for (auto& w : wakers_) w->notify();
    control_.notify();
  }

  // A core's device stream: runs what its slots hold, in order, and reports each end.
  void stream(CoreId c) {
    Core& co = *cores_[c];
    std::unique_lock<std::mutex> lock(co.mu);
    for (;;) {
      co.cv.wait(lock, [&] { return co.n > 0 || co.stop; });
      if (co.n == 0) return;  // stopped and drained
      const TaskId task = co.slot[0];
      lock.unlock();
      const std::uint64_t start = now_ns();
      if (!abort_.load(std::memory_order_relaxed)) {
        try {
          execute(task, c);
        } catch (...) {
          fail(std::current_exception());
        }
      }
      const std::uint64_t end = now_ns();
      tl_.start_ns[task] = start;
      tl_.end_ns[task] = end;
      tl_.core[task] = static_cast<std::uint16_t>(c);
      lock.lock();
      co.busy_ns += end - start;
      ++co.tasks;
      co.slot[0] = co.slot[1];
      co.slot[1] = common::kNoTask;
      --co.n;
      co.done.push_back(task);
      lock.unlock();
      progress_.fetch_add(1, std::memory_order_relaxed);
      wakers_[co.owner]->notify();  // the completion register changed
      lock.lock();
    }
  }

  // A schedule AICPU thread: a poll round whenever something may have changed for it.
  void schedule_thread(ThreadId t) {
    Waker& me = *wakers_[t];
    {
      std::unique_lock<std::mutex> lock(gate_mu_);
      gate_cv_.wait(lock, [&] { return open_; });
    }
    try {
      for (;;) {
        const std::uint64_t seen = me.snapshot();
        if (abort_.load()) return;
        bool again = false;
        {
          const std::lock_guard<std::mutex> lock(sched_mu_);
          if (scheduler_.all_done()) return;
          const std::uint64_t begin = now_ns();
          sched::RoundResult r;
          do {
            r = scheduler_.run_round(t, hal_);
          } while (r.suspended);
          scheduler_.add_busy_ps(t, (now_ns() - begin) * 1000);
          bool device_task_done = false;
          for (const auto& f : r.finished_device_tasks) {
            makespan_ns_ = std::max(makespan_ns_, f.time_ps / 1000);
            device_task_done = true;
          }
          const bool work = r.completions > 0 || r.dispatches > 0;
          // Idle threads spin on the shared queues and on the barrier on the device: wake
          // them for new shared work, for the last send of a device task (they drain and
          // arrive), and while shared work is left after a round that did something.
          if (r.pushed_shared[0] || r.pushed_shared[1] || r.all_sent ||
              (work && scheduler_.shared_work_left())) {
            for (ThreadId o = 0; o < wakers_.size(); ++o) {
              if (o != t) wakers_[o]->notify();
            }
          }
          if (device_task_done) {
            control_.notify();
            if (scheduler_.all_done()) {
              wake_all();
              return;
            }
          }
          again = work && scheduler_.has_dispatchable_work(t);
        }
        if (again) continue;
        ++waits_[t];
        me.wait(seen, std::chrono::milliseconds(20));
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // The control-flow AICPU: admits device tasks in order as the runtime allows.
  void control_flow() {
    try {
      const std::size_t ndt = g_.device_tasks.size();
      std::size_t next = 0;
      std::uint64_t last_progress = progress_.load();
      auto last_change = Clock::now();
      for (;;) {
        const std::uint64_t seen = control_.snapshot();
        if (abort_.load()) return;
        {
          const std::lock_guard<std::mutex> lock(sched_mu_);
          if (scheduler_.all_done()) return;
          bool admitted = false;
          while (next < ndt && scheduler_.admissible(static_cast<common::DeviceTaskId>(next))) {
            scheduler_.admit(static_cast<common::DeviceTaskId>(next), hal_);
            ++next;
            admitted = true;
          }
          if (admitted) {
            for (auto& w : wakers_) w->notify();
            last_change = Clock::now();
          }
        }
        const std::uint64_t p = progress_.load();
        if (p != last_progress) {
          last_progress = p;
          last_change = Clock::now();
        } else if (std::chrono::duration<double>(Clock::now() - last_change).count() >
                   opt_.stall_timeout_s) {
          std::string state;
          {
            const std::lock_guard<std::mutex> lock(sched_mu_);
            state = scheduler_.describe_state();
          }
          throw ModelError("device run stalled: no task completed for " +
                           std::to_string(opt_.stall_timeout_s) + " s; " + std::to_string(next) +
                           " of " + std::to_string(ndt) +
                           " device tasks admitted. Runtime state:" + state);
        }
        control_.wait(seen, std::chrono::milliseconds(20));
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }

  const sched::TaskGraph& g_;
  const RunOptions& opt_;
  std::mutex sched_mu_;  // the scheduler is not thread-safe: one round at a time
  sched::Scheduler scheduler_;
  WallClockHal hal_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::vector<std::unique_ptr<Waker>> wakers_;  // one per schedule thread
  Waker control_;
  std::vector<std::uint64_t> waits_;  // per schedule thread (ThreadStats::waits)
  Timeline tl_;  // each task's entries are written by one thread, before its completion
                 // is published under a lock, and read after every thread has joined
  std::uint64_t makespan_ns_ = 0;
  Clock::time_point t0_;  // the launch; written before the gate opens
  std::uint64_t startup_ns_ = 0;
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool open_ = false;
  std::atomic<std::uint64_t> progress_{0};
  std::atomic<bool> abort_{false};
  std::mutex error_mu_;
  std::exception_ptr error_;
};

void WallClockHal::poll(ThreadId, CoreId c, std::vector<TaskId>& finished) {
  rt_.poll(c, finished);
}
void WallClockHal::send(ThreadId t, TaskId task, CoreId c) { rt_.send(t, task, c); }
void WallClockHal::run_inline(ThreadId t, TaskId task) { rt_.run_inline(t, task); }
common::TimePs WallClockHal::now(ThreadId) const { return rt_.now_ns() * 1000; }

}  // namespace

RunResult run(const sched::TaskGraph& graph, const sched::MachineShape& shape,
              sched::Policy& policy, const RunOptions& opt) {
  Runtime rt(graph, shape, policy, opt);
  return rt.run();
}

}  // namespace pypto::device
