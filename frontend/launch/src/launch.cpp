// SPDX-License-Identifier: Apache-2.0
#include "pypto/launch/launch.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/trace/native_writer.h"

namespace pypto::launch {

HostTileExecutor::HostTileExecutor(const Launch& l, const std::vector<LaunchTensor>& tensors)
    : launch_(l), workspace_(l.workspace_bytes, 0) {
  for (const LaunchTensor& a : tensors) {
    mem_.base.push_back(a.data);
    mem_.size_bytes.push_back(a.size_bytes);
    mem_.dtype.push_back(a.dtype);
  }
  mem_.base.push_back(workspace_.data());
  mem_.size_bytes.push_back(workspace_.size());
  mem_.dtype.push_back(model::DType::kInt8);
}

void HostTileExecutor::execute(common::TaskId t) {
  NPU_CHECK(t < launch_.programs.size(), "task " + std::to_string(t) + " has no program");
  // One scratch per calling thread: the device backend calls this from every core's stream
  // at once (the memory description is only read).
  thread_local exec::ExecScratch scratch;
  exec::execute(launch_.programs[t], mem_, scratch);
}

namespace {

// SIM's functional half as an observer of the timing run: performs each task as the model
// completes it, and stops the run on a pending interruption (the Python module's
// KeyboardInterrupt poll).
class ExecuteAsSimulated final : public sim::RunObserver {
 public:
  explicit ExecuteAsSimulated(TaskExecutor& executor) : executor_(executor) {}
  unsigned events() const override { return sim::kRunTaskFinished | sim::kRunProgress; }
  void on_task_finished(common::TaskId task, common::CoreId, common::TimePs,
                        common::TimePs) override {
    executor_.execute(task);
  }
  void on_progress(std::uint64_t done, std::uint64_t total) override {
    if (common::interrupt_requested()) {
      throw Interrupted("interrupted while simulating (" + std::to_string(done) + " of " +
                        std::to_string(total) + " tasks done); no report written");
    }
  }

 private:
  TaskExecutor& executor_;
};

}  // namespace

sim::SimResult simulate(const Launch& l, const model::ChipConfig& chip,
                        const sched::RuntimeOptions& runtime, TaskExecutor& executor,
                        sim::L2State* l2) {
  sim::SimOptions so;
  so.runtime = runtime;
  so.l2_state = l2;
  ExecuteAsSimulated execute(executor);
  so.observers.push_back(&execute);
  so.progress_every_tasks = 4096;
  return sim::simulate(l.graph, chip, so);
}

namespace {

// The kept L2s, one per chip. The mutex is held for a whole warm run: two threads running
// SIM calls share one L2 in call order, as two streams on one device would.
struct L2Registry {
  std::mutex mu;
  bool warm = true;
  std::map<std::string, sim::L2State> states;
};

L2Registry& registry() {
  static L2Registry r;
  return r;
}

std::string l2_key(const model::ChipConfig& chip) {
  return chip.chip.name + "/" + std::to_string(chip.l2.size_kib) + "KiB/" +
         std::to_string(chip.l2.line_bytes) + "B/" + std::to_string(chip.l2.ways) + "w";
}

// PYPTO_SIM_L2: "cold", "warm" or unset; another value (a typo) is refused, not taken as warm.
bool env_says_cold() {
  const char* v = std::getenv("PYPTO_SIM_L2");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "warm") == 0) return false;
  if (std::strcmp(v, "cold") == 0) return true;
  throw ConfigError(std::string("environment variable PYPTO_SIM_L2='") + v +
                    "': expected cold or warm (or unset)");
}

}  // namespace

void set_l2_warm_across_calls(bool warm) {
  wait_submitted_sims();
  L2Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  r.warm = warm;
  if (!warm) r.states.clear();
}

bool l2_warm_across_calls() {
  L2Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  return r.warm;
}

void reset_l2() {
  wait_submitted_sims();
  L2Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  r.states.clear();
}

namespace {

// The timing half of a call when its outputs were computed beforehand.
class NoExecution final : public TaskExecutor {
 public:
  void execute(common::TaskId /*t*/) override {}
};

// Simulates run.launch (from the kept L2 when `warm`) and writes the reports: the half that
// run_sim() and the report worker share.
void time_and_report(SimRun& run, const model::ChipConfig& chip,
                     const sched::RuntimeOptions& runtime, TaskExecutor& executor, bool warm,
                     const std::string& report_dir, const sim::ReportOptions& report) {
  if (warm) {
    L2Registry& reg = registry();
    const std::lock_guard<std::mutex> lock(reg.mu);
    run.result = simulate(run.launch, chip, runtime, executor, &reg.states[l2_key(chip)]);
  } else {
    run.result = simulate(run.launch, chip, runtime, executor);
  }
  if (!report_dir.empty()) {
    // One atomic set: the merged swimlane is renamed with the others, stats.json last.
    sim::ReportOptions ro = report;
    if (ro.swim_json)
      ro.merged_swimlane = std::string(kPyptoSimOutputFolder) + "/" + kMergedSwimlaneFile;
    for (const compiler::LeafMerge& m : run.launch.leaf_hints) {
      ro.leaf_hints.push_back(
          sim::LeafMergeHint{m.hash_order, m.vec_count, m.l1_count, m.cube_count});
    }
    run.files = sim::write_reports(report_dir, run.launch.graph, chip, run.result, ro);
    run.report_dir = report_dir;
  }
}

bool warm_now() {
  L2Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mu);
  return reg.warm && !env_says_cold();
}

constexpr std::chrono::milliseconds kInterruptPoll{50};

// Waits on `cv` (with `lock` held) until `ready()`, asking common::interrupt_requested() every
// kInterruptPoll with the lock released (the Python poll takes the GIL). Returns false, the
// lock held again, when an interruption was requested (even if `ready()` holds by then: the
// request must still end the caller).
template <class Ready>
bool wait_or_interrupt(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                       const Ready& ready) {
  while (!cv.wait_for(lock, kInterruptPoll, ready)) {
    lock.unlock();
    const bool stop = common::interrupt_requested();
    lock.lock();
    if (stop) return false;
  }
  return true;
}

}  // namespace

struct SimTicket::State {
  SimRun run;
  model::ChipConfig chip;
  sched::RuntimeOptions runtime;
  bool warm = true;
  std::string report_dir;
  sim::ReportOptions report;
  std::atomic<bool> cancel{false};    // set by ReportWorker::cancel_all
  std::atomic<bool> observed{false};  // SimTicket::wait() was called
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu
  std::exception_ptr error;
};

namespace {

// The process's report worker (see submit_sim). Never destroyed: at exit its thread may
// still be waiting for work; the Python module waits for the queue at interpreter exit.
class ReportWorker {
 public:
  // The thread starts with the first use (run_sim's wait), not with the first submission:
  // a cache-hit call should not pay for it.
  static ReportWorker& get() {
    static const bool registered = [] {
      ::pthread_atfork(&ReportWorker::before_fork, &ReportWorker::after_fork_in_parent,
                       &ReportWorker::after_fork_in_child);
      return true;
    }();
    (void)registered;
    ReportWorker* w = current().load();
    if (w == nullptr) {
      const std::lock_guard<std::mutex> lock(start_mu());
      w = current().load();
      if (w == nullptr) {
        w = start();
        current().store(w);
      }
    }
    return *w;
  }

  // While nobody waits for it, the worker runs as SCHED_IDLE: woken by a submission on a
  // busy machine, a normal thread would take the core from the caller's thread (which goes
  // on with the user's code) for the whole timing run. A thread that waits for a result
  // makes it a normal thread again until it has it. Best effort: without the scheduler
  // calls the worker simply stays normal.
  class Urgent {
   public:
    explicit Urgent(ReportWorker& w) : w_(w) {
      if (w_.waiters_.fetch_add(1) == 0) w_.set_urgent(true);
    }
    ~Urgent() {
      if (w_.waiters_.fetch_sub(1) == 1) w_.set_urgent(false);
    }
    Urgent(const Urgent&) = delete;
    Urgent& operator=(const Urgent&) = delete;

   private:
    ReportWorker& w_;
  };

  // Queues `s`, first waiting while the pending runs are at a ReportQueueLimits bound (an
  // interruption request cancels every pending run, `s` is not queued, and this throws
  // Interrupted).
  void submit(std::shared_ptr<SimTicket::State> s) {
    const std::uint64_t tasks = s->run.launch.graph.num_tasks();
    std::unique_lock<std::mutex> lock(mu_);
    const auto has_room = [this, tasks] {
      return idle() ||
             (pending_runs() < limits_.max_runs && pending_tasks_ + tasks <= limits_.max_tasks);
    };
    if (!has_room()) {
      const Urgent urgent(*this);
      if (!wait_or_interrupt(lock, cv_, has_room)) {
        cancel_locked();
        cv_.wait(lock, [this] { return idle(); });
        throw Interrupted(
            "interrupted while waiting for room in the queue of background timing runs; this "
            "call's outputs are computed, its report and those of the pending calls were not "
            "written");
      }
    }
    pending_tasks_ += tasks;
    queue_.push_back(std::move(s));
    cv_.notify_all();
  }

  void set_limits(const ReportQueueLimits& l) {
    const std::lock_guard<std::mutex> lock(mu_);
    limits_ = l;
    cv_.notify_all();
  }
  ReportQueueLimits limits() {
    const std::lock_guard<std::mutex> lock(mu_);
    return limits_;
  }

  // Blocks until nothing is queued or running; on an interruption request cancels all and
  // throws Interrupted.
  void wait_idle() {
    const Urgent urgent(*this);
    std::unique_lock<std::mutex> lock(mu_);
    const auto is_idle = [this] { return idle(); };
    if (!wait_or_interrupt(lock, cv_, is_idle)) {
      cancel_locked();
      cv_.wait(lock, is_idle);
      throw Interrupted(
          "interrupted while waiting for the timing runs of earlier SIM calls; their "
          "reports were not written");
    }
  }

  void cancel_all() {
    const std::lock_guard<std::mutex> lock(mu_);
    cancel_locked();
  }

  std::vector<std::string> take_unobserved_failures() {
    std::vector<std::shared_ptr<SimTicket::State>> failed;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      failed.swap(failed_);
    }
    std::vector<std::string> out;
    for (const auto& s : failed) {
      if (s->observed.load()) continue;
      try {
        std::rethrow_exception(s->error);
      } catch (const std::exception& e) {
        out.push_back(s->report_dir + ": " + e.what());
      }
    }
    return out;
  }

 private:
  bool idle() const { return queue_.empty() && running_ == nullptr; }
  std::size_t pending_runs() const { return queue_.size() + (running_ != nullptr ? 1 : 0); }

  static std::atomic<ReportWorker*>& current() {
    static std::atomic<ReportWorker*> w{nullptr};
    return w;
  }
  static std::mutex& start_mu() {
    static std::mutex mu;
    return mu;
  }

  static ReportWorker* start() {
    auto* worker = new ReportWorker;
    std::thread([worker] {
      worker->tid_.store(static_cast<pid_t>(::syscall(SYS_gettid)));
      worker->set_urgent(false);
      worker->loop();
    }).detach();
    return worker;
  }

  // fork() copies only the forking thread. A child forked while the worker ran would have
  // its queue never move, and locks the worker held (the kept L2's, the model's) held
  // forever: a hang at the child's next SIM call. So a fork first waits until the worker is
  // idle (every pending report written; the worker needs no GIL) and keeps new submissions
  // out until it has happened; the child then gets a worker of its own at its next use.
  static void before_fork() {
    ReportWorker* w = current().load();
    if (w == nullptr) return;
    w->fork_lock_ = std::unique_lock<std::mutex>(w->mu_);
    const Urgent urgent(*w);
    w->cv_.wait(w->fork_lock_, [w] { return w->idle(); });
  }
  static void after_fork_in_parent() {
    ReportWorker* w = current().load();
    if (w != nullptr && w->fork_lock_.owns_lock()) w->fork_lock_.unlock();
  }
  static void after_fork_in_child() {
    ReportWorker* w = current().load();
    if (w == nullptr) return;
    if (w->fork_lock_.owns_lock()) w->fork_lock_.unlock();  // this thread took it
    current().store(nullptr);  // its thread is not in this process; the object is leaked
  }

  void set_urgent(bool urgent) {
    // Serialized, so that the last call decides from the waiter count it saw.
    const std::lock_guard<std::mutex> lock(priority_mu_);
    const pid_t tid = tid_.load();
    if (tid == 0) return;
    const sched_param param{};
    (void)::sched_setscheduler(tid, urgent || waiters_.load() > 0 ? SCHED_OTHER : SCHED_IDLE,
                               &param);
  }

  void cancel_locked() {
    if (running_ != nullptr) running_->cancel.store(true);
    for (const auto& s : queue_) {
      pending_tasks_ -= s->run.launch.graph.num_tasks();
      s->cancel.store(true);
      finish(*s, std::make_exception_ptr(Interrupted(
                     "interrupted before this call's timing run started; no report written")));
    }
    queue_.clear();
    cv_.notify_all();
  }

  static void finish(SimTicket::State& s, std::exception_ptr error) {
    {
      const std::lock_guard<std::mutex> lock(s.mu);
      s.error = std::move(error);
      s.done = true;
    }
    s.cv.notify_all();
  }

  void loop() {
    for (;;) {
      std::shared_ptr<SimTicket::State> s;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !queue_.empty(); });
        s = queue_.front();
        queue_.pop_front();
        running_ = s;
      }
      std::exception_ptr error;
      try {
        const common::ScopedCancelFlag flag(&s->cancel);
        NoExecution none;
        time_and_report(s->run, s->chip, s->runtime, none, s->warm, s->report_dir, s->report);
      } catch (...) {
        error = std::current_exception();
      }
      const bool failed = error != nullptr && !s->cancel.load();
      finish(*s, std::move(error));
      {
        const std::lock_guard<std::mutex> lock(mu_);
        if (failed) failed_.push_back(s);
        pending_tasks_ -= s->run.launch.graph.num_tasks();
        running_ = nullptr;
        cv_.notify_all();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<SimTicket::State>> queue_;
  std::shared_ptr<SimTicket::State> running_;
  std::vector<std::shared_ptr<SimTicket::State>> failed_;
  ReportQueueLimits limits_;
  std::uint64_t pending_tasks_ = 0;         // tasks of the queued and running runs
  std::atomic<pid_t> tid_{0};               // the worker thread's id, once it runs
  std::atomic<int> waiters_{0};             // threads in wait_idle() or SimTicket::wait()
  std::unique_lock<std::mutex> fork_lock_;  // mu_, held from before_fork until after it
  std::mutex priority_mu_;
};

}  // namespace

const SimRun& SimTicket::wait() {
  State& s = *s_;
  s.observed.store(true);
  const ReportWorker::Urgent urgent(ReportWorker::get());
  std::unique_lock<std::mutex> lock(s.mu);
  const auto is_done = [&s] { return s.done; };
  if (!wait_or_interrupt(lock, s.cv, is_done)) {
    lock.unlock();  // cancelling finishes queued tickets, this one's lock included
    ReportWorker::get().cancel_all();
    lock.lock();
    s.cv.wait(lock, is_done);
    throw Interrupted("interrupted while waiting for a SIM call's timing run; no report written");
  }
  if (s.error) std::rethrow_exception(s.error);
  return s.run;
}

const Launch& SimTicket::launch() const { return s_->run.launch; }

bool SimTicket::done() const {
  const std::lock_guard<std::mutex> lock(s_->mu);
  return s_->done;
}

void execute_in_dependency_order(const Launch& l, TaskExecutor& executor) {
  const sched::TaskGraph& g = l.graph;
  std::vector<std::uint32_t> waiting(g.pred_count);
  std::vector<common::TaskId> ready;
  std::uint64_t done = 0;
  for (const sched::DeviceTask& d : g.device_tasks) {
    ready.clear();
    const common::TaskId end = d.first_task + d.num_tasks;
    for (common::TaskId t = d.first_task; t < end; ++t) {
      if (waiting[t] == 0) ready.push_back(t);
    }
    // Lowest ready id first (a min-heap), so the order is the same on every run.
    std::make_heap(ready.begin(), ready.end(), std::greater<>());
    std::uint32_t executed = 0;
    while (!ready.empty()) {
      std::pop_heap(ready.begin(), ready.end(), std::greater<>());
      const common::TaskId t = ready.back();
      ready.pop_back();
      if ((done & 4095) == 0 && common::interrupt_requested()) {
        throw Interrupted("interrupted while executing (" + std::to_string(done) + " of " +
                          std::to_string(g.num_tasks()) + " tasks done); no report written");
      }
      executor.execute(t);
      ++done;
      ++executed;
      for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
        if (--waiting[g.succ[i]] == 0) {
          ready.push_back(g.succ[i]);
          std::push_heap(ready.begin(), ready.end(), std::greater<>());
        }
      }
    }
    NPU_CHECK(executed == d.num_tasks,
              "device task " + std::to_string(d.seq_no) + ": its dependencies form a cycle (" +
                  std::to_string(d.num_tasks - executed) + " tasks never became ready)");
  }
  NPU_CHECK(done == g.num_tasks(), "the device tasks cover " + std::to_string(done) + " of " +
                                       std::to_string(g.num_tasks()) + " tasks");
}

void start_report_worker() { (void)ReportWorker::get(); }

void wait_submitted_sims() { ReportWorker::get().wait_idle(); }

void set_report_queue_limits(const ReportQueueLimits& limits) {
  if (limits.max_runs < 1 || limits.max_tasks < 1) {
    throw ConfigError("report queue limits: max_runs " + std::to_string(limits.max_runs) +
                      ", max_tasks " + std::to_string(limits.max_tasks) +
                      "; both must be at least 1");
  }
  ReportWorker::get().set_limits(limits);
}

ReportQueueLimits report_queue_limits() { return ReportWorker::get().limits(); }

std::vector<std::string> take_unobserved_sim_failures() {
  return ReportWorker::get().take_unobserved_failures();
}

SimRun run_sim(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
               const Bindings& bindings, const LaunchOptions& opt, const model::ChipConfig& chip,
               const std::string& report_dir, const sim::ReportOptions& report) {
  // Earlier submitted calls first: the kept L2 evolves in call order.
  ReportWorker::get().wait_idle();
  SimRun run;
  run.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  HostTileExecutor executor(run.launch, tensors);
  time_and_report(run, chip, opt.runtime, executor, warm_now(), report_dir, report);
  return run;
}

SimTicket submit_sim(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                     const Bindings& bindings, const LaunchOptions& opt,
                     const model::ChipConfig& chip, const std::string& report_dir,
                     const sim::ReportOptions& report) {
  auto s = std::make_shared<SimTicket::State>();
  s->run.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  {
    HostTileExecutor executor(s->run.launch, tensors);
    execute_in_dependency_order(s->run.launch, executor);
  }
  s->chip = chip;
  s->runtime = opt.runtime;
  s->warm = warm_now();
  s->report_dir = report_dir;
  s->report = report;
  ReportWorker::get().submit(s);
  return SimTicket(std::move(s));
}

TimedLaunch instantiate_timed(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                              const Bindings& bindings, const LaunchOptions& opt,
                              const model::ChipConfig& chip) {
  TimedLaunch r;
  const auto t0 = std::chrono::steady_clock::now();
  r.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void write_launch_trace(const Launch& l, const model::ChipConfig& chip, std::ostream& out) {
  trace::write_native_trace(l.graph, nullptr, chip.chip.name, "pypto compiler: " + l.graph.source,
                            out, [&](common::TaskId t, std::vector<model::TileOp>& ops) {
                              return compiler::task_tile_ops(l, t, chip, &ops);
                            });
}

void dump_trace(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                const Bindings& bindings, const LaunchOptions& opt, const model::ChipConfig& chip,
                const std::string& path) {
  const Launch l = compiler::instantiate(k, tensors, bindings, opt, chip);
  common::OutputFile f(path);
  common::write_files({&f}, [&] { write_launch_trace(l, chip, f.stream()); });
  f.commit();
}

}  // namespace pypto::launch
