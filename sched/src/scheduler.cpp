// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/scheduler.h"

#include <algorithm>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::sched {
namespace {

constexpr int idx(common::CoreType ct) { return static_cast<int>(ct); }
constexpr common::CoreType kTypes[common::kNumDispatchTypes] = {common::CoreType::kAic,
                                                                common::CoreType::kAiv};

// A hook's answer outside its contract is the policy's fault, not the model's: a PolicyError
// naming the hook, the answer and what it may answer.
[[noreturn]] void bad_answer(const char* hook, const std::string& answer,
                             const std::string& expected) {
  throw PolicyError(std::string("hook ") + hook + " returned " + answer + "; expected " + expected);
}

// "an index in [0, n)" for a list of n entries named `what`.
std::string index_into(std::size_t n, const char* what) {
  return "an index into " + std::string(what) + " of " + std::to_string(n) + ", in [0, " +
         std::to_string(n) + ")";
}

struct Core {
  common::TaskId running = common::kNoTask;
  common::TaskId pending = common::kNoTask;
  bool acked = false;  // a poll has seen the running task acknowledged (started)
  common::ThreadId owner = 0;
  common::CoreType type = common::CoreType::kAic;
};

// One admitted device task.
struct Ctx {
  common::DeviceTaskId dt = 0;
  bool parallel = false;
  std::vector<common::TaskId>
      queue[common::kNumDispatchTypes];  // shared ready queues, [head, size)
  std::size_t head[common::kNumDispatchTypes] = {0, 0};
  std::uint32_t unsent[common::kNumDispatchTypes] = {0, 0};
  std::uint64_t sent = 0, total = 0, completed = 0;
  std::vector<std::uint8_t> arrived;  // per thread, serial device tasks
  std::uint32_t arrived_count = 0;
  common::TimePs barrier_ps = 0;          // latest arrival
  std::vector<std::uint8_t> first_taken;  // [thread * 2 + type]: first batch taken

  std::size_t queued(int ct) const { return queue[ct].size() - head[ct]; }
};

// Where a suspended poll round continues (Scheduler::run_round).
enum class Phase : std::uint8_t {
  kPoll,        // read the completion registers of this type's busy cores
  kSendBefore,  // refill from the shared queue before resolving
  kResolve,     // walk the successors of the next finished task
  kFlush,       // publish staged tasks: idle cores, then the shared queue
  kDispatch,    // take from the shared queue
  kSteal,       // idle cores, no shared work: steal from another thread's staging
  kPublish,     // publish the idle flag (policies that do)
  kFinish,      // device-task drain and barrier
};

// A poll round in progress; it survives the round's suspensions.
struct RoundState {
  bool active = false;  // a round has begun and not ended
  bool synced = false;  // the backend let the round pass the current yield point
  Phase phase = Phase::kPoll;
  int ct = 0;         // the core type being worked on
  int k = 0;          // kFlush: the core type being flushed
  std::size_t i = 0;  // kResolve: the next finished task
  bool serial_active = false;
};

struct Thread {
  common::CoreId begin[common::kNumDispatchTypes] = {0, 0};
  common::CoreId end[common::kNumDispatchTypes] = {0, 0};
  std::vector<common::CoreId>
      run_ready[common::kNumDispatchTypes];  // fully idle; back = most recently freed
  std::vector<common::TaskId> staging[common::kNumDispatchTypes];
  std::uint32_t in_flight_cores = 0;
  bool idle_flag[common::kNumDispatchTypes] = {true, true};
  ThreadStats stats;
  std::vector<common::TaskId> polled;
  std::vector<std::pair<common::TaskId, common::CoreId>> finished;
  RoundState rs;
  RoundResult* round = nullptr;  // result of the piece of this thread's round in progress
};

}  // namespace

struct Scheduler::Impl {
  Impl(const TaskGraph& g, const MachineShape& s, Policy& p, Scheduler& self)
      : graph(g), shape(s), policy(p), events(p.events()), view(self) {}

  const TaskGraph& graph;
  MachineShape shape;
  Policy& policy;
  unsigned events;  // PolicyEvent bits the policy subscribed to
  bool set_up = false;
  MachineView view;
  std::vector<Core> cores;
  // Bit c: core c runs a task (cores[c].running set); the poll and the polling mode visit
  // only these instead of testing each of a thread's cores.
  std::vector<std::uint64_t> busy_bits;
  std::vector<Thread> threads;
  std::vector<std::uint32_t> pred;  // remaining predecessors (valid for admitted tasks)
  std::vector<Ctx> ctxs;            // active device tasks (at most `parallelism`)
  std::uint64_t admit_edges = 0;

  std::uint32_t cores_of(int ct) const { return ct == 0 ? shape.aic : shape.aiv; }

  Ctx& ctx_of_task(common::TaskId t) {
    const common::DeviceTaskId dt = graph.device_task[t];
    for (auto& c : ctxs) {
      if (c.dt == dt) return c;
    }
    throw ModelError("task " + std::to_string(t) + " belongs to a device task not admitted");
  }
  const Ctx* find_ctx(common::DeviceTaskId dt) const {
    for (const auto& c : ctxs) {
      if (c.dt == dt) return &c;
    }
    return nullptr;
  }

  // Flags no thread publishes keep their initial "idle" value, as on the device. The
  // scan's cost is the policy's to charge (it decides to scan).
  bool other_thread_idle(common::ThreadId t, int ct) const {
    if (shape.threads <= 1) return false;
    for (common::ThreadId o = 0; o < shape.threads; ++o) {
      if (o != t && threads[o].idle_flag[ct]) return true;
    }
    return false;
  }

  // ---- sending -------------------------------------------------------------------------
  // `hook` chose core c for task: c must be a core of thread t of the task's type with a free
  // slot.
  void check_core(const char* hook, common::ThreadId t, common::TaskId task,
                  common::CoreId c) const {
    const int want = idx(graph.core_type[task]);
    // The messages are built only for a bad answer: this check runs once per dispatch.
    const auto fail = [&](const char* why) {
      const Thread& th = threads[t];
      const std::string type(to_string(graph.core_type[task]));
      const std::string expected = "one of thread " + std::to_string(t) + "'s " + type +
                                   " cores (ids " + std::to_string(th.begin[want]) + " to " +
                                   std::to_string(th.end[want] - 1) +
                                   ") with a free slot, for task " + std::to_string(task);
      const std::string answer = c == common::kNoCore ? "NO_CORE" : "core " + std::to_string(c);
      bad_answer(hook, answer + why, expected);
    };
    if (c >= cores.size() || cores[c].owner != t || idx(cores[c].type) != want) fail("");
    if (cores[c].running != common::kNoTask && cores[c].pending != common::kNoTask) {
      fail(" (its running and pending slots are both taken)");
    }
    if (cores[c].running != common::kNoTask && !cores[c].acked) {
      fail(
          " (its running task is not acknowledged yet, so its pending slot "
          "is not free: MachineView.has_free_slot)");
    }
  }

  void send(common::ThreadId t, common::TaskId task, common::CoreId c, Hal& hal, const char* hook) {
    check_core(hook, t, task, c);
    Core& co = cores[c];
    Thread& th = threads[t];
    const int ct = idx(co.type);
    if (co.running == common::kNoTask) {
      co.running = task;
      co.acked = false;
      busy_bits[c >> 6] |= std::uint64_t{1} << (c & 63);
      auto& rr = th.run_ready[ct];
      auto it = std::find(rr.rbegin(), rr.rend(), c);
      NPU_CHECK(it != rr.rend(), "idle core missing from the run-ready list");
      rr.erase(std::next(it).base());
      ++th.in_flight_cores;
    } else {
      co.pending = task;
    }
    Ctx& x = ctx_of_task(task);
    ++x.sent;
    --x.unsent[ct];
    if (x.sent == x.total && th.round != nullptr) th.round->all_sent = true;
    ++th.stats.dispatches;
    if (th.round != nullptr) ++th.round->dispatches;
    hal.send(t, task, c);
    if ((events & kEventDispatch) != 0) {
      ThreadContext cx(view, t, hal);
      policy.on_dispatch(cx, task, c);
    }
  }

  std::uint32_t free_pending_count(common::ThreadId t, int ct) const {
    const Thread& th = threads[t];
    std::uint32_t n = 0;
    for (common::CoreId c = th.begin[ct]; c < th.end[ct]; ++c) {
      n += (cores[c].running != common::kNoTask && cores[c].pending == common::kNoTask &&
            cores[c].acked)
               ? 1
               : 0;
    }
    return n;
  }

  void push_shared(common::ThreadId t, Ctx& x, int ct, common::TaskId task) {
    x.queue[ct].push_back(task);
    if (threads[t].round != nullptr) threads[t].round->pushed_shared[ct] = true;
  }

  // ---- staging buffer ------------------------------------------------------------------
  // Staged tasks go to the thread's cores in the policy's choice (flush_send, private);
  // the rest, oldest first, to the shared queue (spill, shared).
  void flush_local(common::ThreadId t, int ct, Hal& hal) {
    flush_send(t, ct, hal);
    if (!threads[t].staging[ct].empty()) spill(t, ct, hal);
  }

  void flush_send(common::ThreadId t, int ct, Hal& hal) {
    auto& st = threads[t].staging[ct];
    if (st.empty()) return;
    ThreadContext cx(view, t, hal);
    while (!st.empty()) {
      const StagedPick p = policy.pick_staged(cx, kTypes[ct], TaskListView(st.data(), st.size()));
      if (p.index == kNoPick) break;
      if (p.index >= st.size()) {
        bad_answer("pick_staged", "index " + std::to_string(p.index),
                   "None or " + index_into(st.size(), "the staged tasks"));
      }
      const common::TaskId task = st[p.index];
      if (p.index + 1 == st.size()) {
        st.pop_back();
      } else {
        st.erase(st.begin() + static_cast<std::ptrdiff_t>(p.index));
      }
      send(t, task, p.core, hal, "pick_staged");
    }
  }

  // The push takes effect at the thread's clock when it starts; the lock and the
  // operation are charged after it.
  void spill(common::ThreadId t, int ct, Hal& hal) {
    auto& st = threads[t].staging[ct];
    for (common::TaskId task : st) push_shared(t, ctx_of_task(task), ct, task);
    st.clear();
    hal.charge(t, AicpuOp::kQueueOp, 1);
  }

  bool any_queued(int ct) const {
    for (const auto& x : ctxs) {
      if (x.queued(ct) > 0) return true;
    }
    return false;
  }

  // Whether thread t's round end may finish a device task or arrive at a barrier.
  bool may_finish_any(common::ThreadId t) const {
    const Thread& th = threads[t];
    for (const auto& x : ctxs) {
      if (x.parallel ? x.completed == x.total
                     : x.sent == x.total && th.in_flight_cores == 0 && x.arrived[t] == 0) {
        return true;
      }
    }
    return false;
  }

  // ---- dependency resolution -----------------------------------------------------------
  void push_ready(common::ThreadId t, common::TaskId s, common::CoreId producer, Hal& hal) {
    const int ct = idx(graph.core_type[s]);
    Ctx& x = ctx_of_task(s);
    ThreadContext cx(view, t, hal);
    if ((events & kEventReady) != 0) policy.on_ready(cx, s);
    if (!x.parallel) {
      const common::CoreId c = policy.direct_send(cx, s, producer);
      if (c != common::kNoCore) {
        send(t, s, c, hal, "direct_send");
        return;
      }
    }
    auto& st = threads[t].staging[ct];
    st.push_back(s);
    if (st.size() >= shape.staging_capacity) spill(t, ct, hal);
    if (policy.publish_staged(cx, kTypes[ct], PublishPoint::kStaged, x.queued(ct))) {
      flush_local(t, ct, hal);
    }
  }

  void resolve(common::ThreadId t, common::TaskId task, common::CoreId producer, Hal& hal) {
    const std::uint32_t b = graph.succ_first(task), e = graph.succ_last(task);
    if (b == e) return;
    hal.charge(t, AicpuOp::kResolveEdge, e - b);
    threads[t].stats.resolves += e - b;
    for (std::uint32_t i = b; i < e; ++i) {
      const common::TaskId s = graph.succ[i];
      if (--pred[s] != 0) continue;
      switch (graph.core_type[s]) {
        case common::CoreType::kHub: resolve(t, s, producer, hal); break;
        case common::CoreType::kAicpu: {
          hal.run_inline(t, s);
          Ctx& x = ctx_of_task(s);
          ++x.sent;
          ++x.completed;
          // The other threads must hear that the device task is sent, as after a send().
          if (x.sent == x.total && threads[t].round != nullptr) threads[t].round->all_sent = true;
          resolve(t, s, common::kNoCore, hal);
          break;
        }
        default: push_ready(t, s, producer, hal);
      }
    }
  }

  // ---- shared-queue dispatch -----------------------------------------------------------
  // Takes tasks of type ct from the active device tasks' shared queues: device task, count,
  // entry and core are the policy's (pick_device_task, fill_quota, pick_shared, pick_core).
  void dispatch_shared(common::ThreadId t, int ct, bool before_resolve, Hal& hal) {
    ThreadContext cx(view, t, hal);
    const common::CoreType type = kTypes[ct];
    std::uint32_t served = 0;  // bit i: ctxs[i] served in this call (ctxs.size() <= 8)
    for (;;) {
      std::size_t ci = ctxs.size();
      if (ctxs.size() == 1) {
        if (served == 0 && ctxs[0].queued(ct) > 0) ci = 0;
      } else {
        candidates.clear();
        candidate_ctx.clear();
        for (std::size_t i = 0; i < ctxs.size(); ++i) {
          if ((served & (1u << i)) == 0 && ctxs[i].queued(ct) > 0) {
            candidates.push_back(ctxs[i].dt);
            candidate_ctx.push_back(i);
          }
        }
        if (!candidates.empty()) {
          const std::size_t pick =
              candidates.size() == 1 ? 0 : policy.pick_device_task(cx, type, candidates);
          if (pick >= candidates.size()) {
            bad_answer("pick_device_task", std::to_string(pick),
                       index_into(candidates.size(), "the candidate device tasks"));
          }
          ci = candidate_ctx[pick];
        }
      }
      if (ci == ctxs.size()) return;
      served |= 1u << ci;
      Ctx& x = ctxs[ci];
      std::uint32_t k = policy.fill_quota(cx, type, x.dt);
      if (k == 0) return;
      // Each task taken needs a free slot of the thread: asking for more than there are
      // would leave pick_core no answer.
      const std::size_t free = threads[t].run_ready[ct].size() + free_pending_count(t, ct);
      if (std::min<std::size_t>(k, x.queued(ct)) > free) {
        bad_answer("fill_quota", std::to_string(k),
                   "at most the " + std::to_string(free) + " free " + std::string(to_string(type)) +
                       " slots of thread " + std::to_string(t) + " (idle cores and free pending " +
                       "slots), or 0 for none");
      }
      hal.charge(t, AicpuOp::kQueueOp, 1);
      std::uint8_t& first = x.first_taken[t * common::kNumDispatchTypes + ct];
      const bool first_batch = first == 0;
      while (k > 0 && x.queued(ct) > 0) {
        auto& q = x.queue[ct];
        const std::size_t pick =
            policy.pick_shared(cx, type, TaskListView(q.data() + x.head[ct], x.queued(ct)),
                               first_batch, before_resolve);
        if (pick >= x.queued(ct)) {
          bad_answer("pick_shared", std::to_string(pick),
                     index_into(x.queued(ct), "the shared queue"));
        }
        const common::TaskId task = q[x.head[ct] + pick];
        const common::CoreId core = policy.pick_core(cx, type, task);
        if (core < cores.size() && cores[core].running != common::kNoTask &&
            !policy.fill_pending_slot(cx, type, core, task)) {
          ++threads[t].stats.pending_kept_free;
          break;
        }
        if (pick == 0) {
          ++x.head[ct];
        } else if (pick + 1 == x.queued(ct)) {
          q.pop_back();
        } else {
          q.erase(q.begin() + static_cast<std::ptrdiff_t>(x.head[ct] + pick));
        }
        send(t, task, core, hal, "pick_core");
        --k;
      }
      first = 1;
      if (x.queued(ct) == 0) {  // keep the queue's memory, drop consumed entries
        x.queue[ct].clear();
        x.head[ct] = 0;
      }
    }
  }

  // ---- stealing --------------------------------------------------------------------------
  bool may_steal(common::ThreadId t, int ct) const {
    return !threads[t].run_ready[ct].empty() && !any_queued(ct) &&
           policy.steal_victim(view, t, kTypes[ct]) != kNoThread;
  }

  // Fills thread t's idle cores of type ct from other threads' staging buffers, one locked
  // operation per task taken.
  void steal(common::ThreadId t, int ct, Hal& hal) {
    ThreadContext cx(view, t, hal);
    const common::CoreType type = kTypes[ct];
    while (!threads[t].run_ready[ct].empty()) {
      const common::ThreadId v = policy.steal_victim(view, t, type);
      if (v == kNoThread) return;
      if (v >= threads.size() || v == t || threads[v].staging[ct].empty()) {
        bad_answer("steal_victim",
                   "thread " + std::to_string(v) + " for thread " + std::to_string(t),
                   "NO_THREAD or another thread whose staging buffer holds " +
                       std::string(to_string(type)) + " tasks (MachineView.staged_count > 0)");
      }
      auto& vs = threads[v].staging[ct];
      const std::size_t i = policy.pick_stolen(cx, type, v, TaskListView(vs.data(), vs.size()));
      if (i >= vs.size()) {
        bad_answer("pick_stolen", std::to_string(i),
                   index_into(vs.size(), "the victim's staged tasks"));
      }
      const common::TaskId task = vs[i];
      vs.erase(vs.begin() + static_cast<std::ptrdiff_t>(i));
      hal.charge(t, AicpuOp::kQueueOp, 1);
      send(t, task, policy.pick_core(cx, type, task), hal, "pick_core");
    }
  }

  std::vector<common::DeviceTaskId> candidates;  // dispatch_shared scratch
  std::vector<std::size_t> candidate_ctx;
};

// ---- construction ----------------------------------------------------------------------
Scheduler::Scheduler(const TaskGraph& graph, const MachineShape& shape, Policy& policy)
    : graph_(graph), shape_(shape), impl_(std::make_unique<Impl>(graph, shape, policy, *this)) {
  if (shape.threads == 0) throw ConfigError("schedule threads: 0; need at least 1");
  if (shape.aic == 0 && shape.aiv == 0) throw ConfigError("the machine has no cores");
  if (shape.aic > 0 && shape.aiv % shape.aic != 0) {
    throw ConfigError("AIV cores (" + std::to_string(shape.aiv) +
                      ") must be a multiple of AIC cores (" + std::to_string(shape.aic) + ")");
  }
  const std::uint32_t clusters = shape.aic;
  if (shape.threads > std::max<std::uint32_t>(clusters, 1)) {
    throw ConfigError("schedule threads (" + std::to_string(shape.threads) +
                      ") exceed the number of AICore clusters (" + std::to_string(clusters) + ")");
  }
  for (const auto& d : graph.device_tasks) {
    for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) {
      if (d.count[ct] > 0 && impl_->cores_of(ct) == 0) {
        throw ConfigError("device task seqNo " + std::to_string(d.seq_no) + " has " +
                          std::to_string(d.count[ct]) + " " + std::string(to_string(kTypes[ct])) +
                          " tasks but the chip has no " + std::string(to_string(kTypes[ct])) +
                          " cores");
      }
    }
  }
  const std::uint32_t per_aic = shape.aic > 0 ? shape.aiv / shape.aic : 0;
  impl_->cores.resize(shape.aic + shape.aiv);
  impl_->busy_bits.assign((impl_->cores.size() + 63) / 64, 0);
  impl_->threads.resize(shape.threads);
  for (common::ThreadId t = 0; t < shape.threads; ++t) {
    Thread& th = impl_->threads[t];
    // Equal blocks; the first (clusters mod threads) threads own one cluster more, as the
    // board does (20 clusters, 3 threads: {0-6}, {7-13}, {14-19}).
    const std::uint32_t q = clusters / shape.threads, rem = clusters % shape.threads;
    const std::uint32_t c0 = t * q + std::min(t, rem), c1 = c0 + q + (t < rem ? 1 : 0);
    th.begin[0] = c0;
    th.end[0] = c1;
    th.begin[1] = shape.aic + c0 * per_aic;
    th.end[1] = shape.aic + c1 * per_aic;
    for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) {
      // Reverse order: the first dispatch lands on the lowest core id.
      for (common::CoreId c = th.end[ct]; c > th.begin[ct]; --c) {
        Core& co = impl_->cores[c - 1];
        co.owner = t;
        co.type = kTypes[ct];
        th.run_ready[ct].push_back(c - 1);
      }
    }
  }
  impl_->pred.assign(graph.num_tasks(), 0);
}

Scheduler::~Scheduler() = default;

bool Scheduler::admissible(common::DeviceTaskId dt) const {
  const auto& ctxs = impl_->ctxs;
  if (ctxs.empty()) return true;
  const std::uint32_t g = graph_.device_tasks[dt].parallel_group;
  if (g == 0 || ctxs.size() >= shape_.parallelism) return false;
  for (const auto& c : ctxs) {
    if (!c.parallel || graph_.device_tasks[c.dt].parallel_group != g) return false;
    // Iterations j and j+P share a workspace copy: j+P waits until j has finished.
    if (c.dt + shape_.parallelism <= dt) return false;
  }
  return true;
}

std::uint64_t Scheduler::admit(common::DeviceTaskId dt, Hal& hal) {
  NPU_CHECK(admissible(dt), "device task admitted out of order");
  const DeviceTask& d = graph_.device_tasks[dt];
  Impl& m = *impl_;
  m.ctxs.emplace_back();
  Ctx& x = m.ctxs.back();
  x.dt = dt;
  x.parallel = d.parallel_group != 0 && shape_.parallelism > 1;
  x.unsent[0] = d.count[0];
  x.unsent[1] = d.count[1];
  x.total = std::uint64_t{d.count[0]} + d.count[1] + d.count[idx(common::CoreType::kAicpu)];
  x.arrived.assign(shape_.threads, 0);
  x.first_taken.assign(std::size_t{shape_.threads} * common::kNumDispatchTypes, 0);
  // A shared queue keeps its consumed entries until it runs empty, so on a device task
  // whose ready tasks keep coming it grows to the device task's size: reserved at once, it
  // is not copied into fresh memory each time it doubles, on the run's thread. Memory
  // reserved and not used is never touched.
  for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) x.queue[ct].reserve(d.count[ct]);
  const common::TaskId b = d.first_task, e = d.first_task + d.num_tasks;
  if (!m.set_up) {
    m.set_up = true;
    m.policy.setup(m.view);
  }
  for (common::TaskId t = b; t < e; ++t) m.pred[t] = graph_.pred_count[t];
  if ((m.events & kEventDeviceTask) != 0) m.policy.on_device_task_admitted(m.view, dt, hal.now(0));
  // The control-flow AICPU builds the ready queues in task order and resolves
  // zero-predecessor HUBs at once ("resolve early").
  std::uint64_t edges = 0;
  std::vector<common::TaskId> work;
  for (common::TaskId t = b; t < e; ++t) {
    if (graph_.pred_count[t] == 0) work.push_back(t);
  }
  for (std::size_t i = 0; i < work.size(); ++i) {
    const common::TaskId t = work[i];
    const common::CoreType ct = graph_.core_type[t];
    if (common::is_dispatchable(ct)) {
      x.queue[idx(ct)].push_back(t);
      if ((m.events & kEventReady) != 0) {
        ThreadContext cx(m.view, 0, hal);
        m.policy.on_ready(cx, t);
      }
      continue;
    }
    if (ct == common::CoreType::kAicpu) {
      hal.run_inline(0, t);
      ++x.sent;
      ++x.completed;
    }
    for (std::uint32_t k = graph_.succ_first(t); k < graph_.succ_last(t); ++k) {
      ++edges;
      if (--m.pred[graph_.succ[k]] == 0) work.push_back(graph_.succ[k]);
    }
  }
  return edges;
}

std::uint32_t Scheduler::active_device_tasks() const {
  return static_cast<std::uint32_t>(impl_->ctxs.size());
}

// ---- the poll round ----------------------------------------------------------------------
RoundResult Scheduler::run_round(common::ThreadId t, Hal& hal) {
  Impl& m = *impl_;
  Thread& th = m.threads[t];
  RoundState& rs = th.rs;
  RoundResult r;
  th.round = &r;
  if (!rs.active) {
    rs = RoundState{};
    rs.active = true;
    ++th.stats.rounds;
    for (const auto& x : m.ctxs) rs.serial_active |= !x.parallel;
  }
  // Before an operation on shared state: suspend the round if the backend asks to (it
  // resumes here, past the question).
  ThreadContext cx(m.view, t, hal);
  const auto yield = [&] {
    if (rs.synced) {
      rs.synced = false;
      return false;
    }
    if (!hal.yield_before_shared(t)) return false;
    rs.synced = true;
    r.suspended = true;
    th.round = nullptr;
    return true;
  };

  for (;;) {
    const int ct = rs.ct;
    switch (rs.phase) {
      case Phase::kPoll: {
        // 1. Poll the cores of this type that hold tasks.
        bool had_in_flight = false;
        th.finished.clear();
        // The busy cores of [begin, end) in id order, a word of busy_bits at a time.
        const common::CoreId b = th.begin[ct], e = th.end[ct];
        for (common::CoreId w = b & ~63u; w < e; w += 64) {
          std::uint64_t bits = m.busy_bits[w >> 6];
          if (w < b) bits &= ~std::uint64_t{0} << (b - w);
          if (e - w < 64) bits &= (std::uint64_t{1} << (e - w)) - 1;
          for (; bits != 0; bits &= bits - 1) {
            const common::CoreId c = w + static_cast<common::CoreId>(__builtin_ctzll(bits));
            Core& co = m.cores[c];
            had_in_flight = true;
            th.polled.clear();
            hal.poll(t, c, th.polled);
            ++th.stats.polls;
            for (common::TaskId task : th.polled) {
              if (task == co.running) {
                co.running = co.pending;
                co.pending = common::kNoTask;
              } else {
                NPU_CHECK(false, "core " + std::to_string(c) + " reported task " +
                                     std::to_string(task) + " but runs " +
                                     std::to_string(co.running) + " with " +
                                     std::to_string(co.pending) + " pending");
              }
              th.finished.emplace_back(task, c);
            }
            // The poll reads the core's ACK of what runs now (the pending task it moved to,
            // or the one it already ran): its pending slot may be filled from here on.
            co.acked = co.running != common::kNoTask;
            if (co.running == common::kNoTask) {
              --th.in_flight_cores;
              th.run_ready[ct].push_back(c);
              m.busy_bits[c >> 6] &= ~(std::uint64_t{1} << (c & 63));
            }
          }
        }
        rs.phase = had_in_flight ? Phase::kSendBefore : Phase::kDispatch;
        break;
      }
      case Phase::kSendBefore:
        // 2. Send before resolve: keep the cores busy before the slow resolve walk.
        if (rs.synced || (rs.serial_active && m.any_queued(ct) &&
                          m.policy.send_before_resolve(cx, kTypes[ct]))) {
          if (yield()) return r;
          m.dispatch_shared(t, ct, /*before_resolve=*/true, hal);
        }
        rs.i = 0;
        rs.phase = Phase::kResolve;
        break;
      case Phase::kResolve:
        // 3. Resolve successors of what finished (predecessor counts are shared).
        while (rs.i < th.finished.size()) {
          const auto [task, core] = th.finished[rs.i];
          if ((rs.synced || m.graph.succ_first(task) != m.graph.succ_last(task)) && yield()) {
            return r;
          }
          ++m.ctx_of_task(task).completed;
          if ((m.events & kEventDone) != 0) m.policy.on_done(cx, task, core);
          m.resolve(t, task, core, hal);
          ++rs.i;
          ++r.completions;
        }
        rs.k = 0;
        rs.phase = Phase::kFlush;
        break;
      case Phase::kFlush:
        // 4. Staged tasks to this thread's cores, then (if the policy publishes now) the
        // rest to the shared queue; tasks kept staged are work other threads may steal.
        while (rs.k < common::kNumDispatchTypes) {
          m.flush_send(t, rs.k, hal);
          const auto& st = th.staging[rs.k];
          if (rs.synced || (!st.empty() && m.policy.publish_staged(cx, kTypes[rs.k],
                                                                   PublishPoint::kRoundEnd, 0))) {
            if (yield()) return r;
            if (!st.empty()) m.spill(t, rs.k, hal);
          } else if (!st.empty()) {
            r.pushed_shared[rs.k] = true;
          }
          ++rs.k;
        }
        rs.phase = Phase::kDispatch;
        break;
      case Phase::kDispatch:
        // 5. Take from the shared queue in the policy's order.
        if (rs.synced || m.any_queued(ct)) {
          if (yield()) return r;
          m.dispatch_shared(t, ct, /*before_resolve=*/false, hal);
        }
        rs.phase = Phase::kSteal;
        break;
      case Phase::kSteal:
        // 6. Idle cores and no shared work: steal from other threads (policies that do).
        if (rs.synced || m.may_steal(t, ct)) {
          if (yield()) return r;
          m.steal(t, ct, hal);
        }
        rs.phase = Phase::kPublish;
        break;
      case Phase::kPublish:
        // 7. Publish whether this thread has a fully idle core (policies that do).
        if (rs.synced || (th.idle_flag[ct] != !th.run_ready[ct].empty() &&
                          m.policy.publish_idle(cx, kTypes[ct]))) {
          if (yield()) return r;
          th.idle_flag[ct] = !th.run_ready[ct].empty();
        }
        if (++rs.ct < common::kNumDispatchTypes) {
          rs.phase = Phase::kPoll;
        } else {
          rs.phase = Phase::kFinish;
        }
        break;
      case Phase::kFinish: {
        // Device-task completion: serial ones drain and meet at a barrier; parallel ones
        // end when every task has completed.
        if ((rs.synced || m.may_finish_any(t)) && yield()) return r;
        for (std::size_t i = 0; i < m.ctxs.size();) {
          Ctx& x = m.ctxs[i];
          bool done = false;
          if (x.parallel) {
            done = x.completed == x.total;
            x.barrier_ps = hal.now(t);
          } else if (x.sent == x.total && th.in_flight_cores == 0 && x.arrived[t] == 0) {
            x.arrived[t] = 1;
            ++x.arrived_count;
            x.barrier_ps = std::max(x.barrier_ps, hal.now(t));
            done = x.arrived_count == m.shape.threads;
          }
          if (done) {
            r.finished_device_tasks.push_back({x.dt, x.barrier_ps});
            if ((m.events & kEventDeviceTask) != 0) {
              m.policy.on_device_task_finished(m.view, x.dt, x.barrier_ps);
            }
            m.ctxs.erase(m.ctxs.begin() + static_cast<std::ptrdiff_t>(i));
            ++done_device_tasks_;
          } else {
            ++i;
          }
        }
        r.in_flight = th.in_flight_cores > 0;
        rs.active = false;
        th.round = nullptr;
        return r;
      }
    }
  }
}

bool Scheduler::in_round(common::ThreadId t) const { return impl_->threads[t].rs.active; }

bool Scheduler::piece_has_results(common::ThreadId t) const {
  const RoundResult* r = impl_->threads[t].round;
  return r != nullptr && (r->pushed_shared[0] || r->pushed_shared[1] || r->all_sent ||
                          !r->finished_device_tasks.empty());
}

bool Scheduler::has_in_flight(common::ThreadId t) const {
  return impl_->threads[t].in_flight_cores > 0;
}

std::size_t Scheduler::in_flight_cores(common::ThreadId t, std::vector<common::CoreId>& out) const {
  const Thread& th = impl_->threads[t];
  const std::uint64_t* const busy = impl_->busy_bits.data();
  // Sized once for all the thread's cores and never cut: each core is one store, with no
  // capacity check (push_back reloaded the cores through `out` a core) and no zeroing.
  std::size_t all = 0;
  for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) all += th.end[ct] - th.begin[ct];
  if (out.size() < all) out.resize(all);
  common::CoreId* const o = out.data();
  std::size_t n = 0;
  for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) {
    const common::CoreId b = th.begin[ct], e = th.end[ct];
    for (common::CoreId w = b & ~63u; w < e; w += 64) {
      std::uint64_t bits = busy[w >> 6];
      if (w < b) bits &= ~std::uint64_t{0} << (b - w);
      if (e - w < 64) bits &= (std::uint64_t{1} << (e - w)) - 1;
      for (; bits != 0; bits &= bits - 1) {
        o[n++] = w + static_cast<common::CoreId>(__builtin_ctzll(bits));
      }
    }
  }
  return n;
}

bool Scheduler::shared_work_left() const {
  for (const auto& x : impl_->ctxs) {
    if (x.queued(0) > 0 || x.queued(1) > 0) return true;
  }
  return false;
}

bool Scheduler::has_dispatchable_work(common::ThreadId t) const {
  const Impl& m = *impl_;
  const Thread& th = m.threads[t];
  for (const auto& x : m.ctxs) {
    if (!x.parallel && x.sent == x.total && th.in_flight_cores == 0 && x.arrived[t] == 0) {
      return true;  // must arrive at the barrier
    }
    for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) {
      if (x.queued(ct) == 0) continue;
      if (!th.run_ready[ct].empty() || m.free_pending_count(t, ct) > 0) return true;
    }
  }
  for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) {
    if (m.may_steal(t, ct)) return true;
  }
  return false;
}

const ThreadStats& Scheduler::stats(common::ThreadId t) const { return impl_->threads[t].stats; }
void Scheduler::count_skipped_rounds(common::ThreadId t, std::uint64_t rounds,
                                     std::uint64_t polls_each) {
  ThreadStats& s = impl_->threads[t].stats;
  s.rounds += rounds;
  s.polls += rounds * polls_each;
}
void Scheduler::add_busy_ps(common::ThreadId t, common::TimePs busy_ps) {
  impl_->threads[t].stats.busy_ps += busy_ps;
}
common::ThreadId Scheduler::owner(common::CoreId c) const { return impl_->cores[c].owner; }

void Scheduler::prefetch_completion(common::TaskId task) const {
  // A few successors cover almost every task (the rest are found when they are resolved).
  constexpr std::uint32_t kAhead = 4;
  const std::uint32_t b = graph_.succ_first(task);
  const std::uint32_t e = std::min(graph_.succ_last(task), b + kAhead);
  for (std::uint32_t i = b; i < e; ++i) {
    const common::TaskId s = graph_.succ[i];
    __builtin_prefetch(&impl_->pred[s], 1);
    __builtin_prefetch(&graph_.core_type[s]);
    __builtin_prefetch(&graph_.device_task[s]);
  }
}

std::uint64_t Scheduler::ready_depth(common::CoreType ct) const {
  const int k = idx(ct);
  std::uint64_t n = 0;
  for (const auto& x : impl_->ctxs) n += x.queued(k);
  for (const auto& th : impl_->threads) n += th.staging[k].size();
  return n;
}

std::string Scheduler::describe_state() const {
  const Impl& m = *impl_;
  std::string out;
  for (const auto& x : m.ctxs) {
    out += "\n  device task seqNo " + std::to_string(graph_.device_tasks[x.dt].seq_no) +
           (x.parallel ? " (parallel)" : "") + ": " + std::to_string(x.sent) + " of " +
           std::to_string(x.total) + " tasks sent, " + std::to_string(x.completed) +
           " completed, queued AIC " + std::to_string(x.queued(0)) + " AIV " +
           std::to_string(x.queued(1));
    if (!x.parallel) {
      std::string waits;
      for (common::ThreadId t = 0; t < shape_.threads; ++t) {
        if (x.arrived[t] == 0) waits += (waits.empty() ? "" : ",") + std::to_string(t);
      }
      out += "; barrier: " + std::to_string(x.arrived_count) + " of " +
             std::to_string(shape_.threads) + " threads arrived, waiting for thread(s) " + waits;
    }
  }
  for (common::ThreadId t = 0; t < shape_.threads; ++t) {
    const Thread& th = m.threads[t];
    std::string cores;
    for (int ct = 0; ct < common::kNumDispatchTypes; ++ct) {
      for (common::CoreId c = th.begin[ct]; c < th.end[ct]; ++c) {
        const Core& co = m.cores[c];
        if (co.running == common::kNoTask) continue;
        cores += " core " + std::to_string(c) + " runs task " + std::to_string(co.running);
        if (co.pending != common::kNoTask)
          cores += " (task " + std::to_string(co.pending) + " pending)";
        cores += ";";
      }
    }
    const std::size_t staged = th.staging[0].size() + th.staging[1].size();
    if (cores.empty() && staged == 0 && !th.rs.active) continue;
    out += "\n  runtime thread " + std::to_string(t) + ":" + cores;
    if (staged > 0) out += " " + std::to_string(staged) + " tasks staged;";
    if (th.rs.active) out += " round suspended;";
  }
  return out;
}

// ---- MachineView ---------------------------------------------------------------------------
const TaskGraph& MachineView::graph() const { return s_.graph_; }
std::uint32_t MachineView::num_threads() const { return s_.shape_.threads; }
std::uint32_t MachineView::num_cores(common::CoreType ct) const {
  return s_.impl_->cores_of(idx(ct));
}
common::CoreType MachineView::core_type(common::CoreId c) const { return s_.impl_->cores[c].type; }
common::ThreadId MachineView::owner(common::CoreId c) const { return s_.impl_->cores[c].owner; }
common::CoreId MachineView::first_core(common::ThreadId t, common::CoreType ct) const {
  return s_.impl_->threads[t].begin[idx(ct)];
}
common::CoreId MachineView::end_core(common::ThreadId t, common::CoreType ct) const {
  return s_.impl_->threads[t].end[idx(ct)];
}
common::TaskId MachineView::running(common::CoreId c) const { return s_.impl_->cores[c].running; }
common::TaskId MachineView::pending(common::CoreId c) const { return s_.impl_->cores[c].pending; }
bool MachineView::acknowledged(common::CoreId c) const {
  const auto& co = s_.impl_->cores[c];
  return co.running != common::kNoTask && co.acked;
}
std::size_t MachineView::idle_count(common::ThreadId t, common::CoreType ct) const {
  return s_.impl_->threads[t].run_ready[idx(ct)].size();
}
common::CoreId MachineView::idle_core(common::ThreadId t, common::CoreType ct,
                                      std::size_t i) const {
  return s_.impl_->threads[t].run_ready[idx(ct)][i];
}
std::uint32_t MachineView::free_pending_count(common::ThreadId t, common::CoreType ct) const {
  return s_.impl_->free_pending_count(t, idx(ct));
}
bool MachineView::other_thread_idle(common::ThreadId t, common::CoreType ct) const {
  return s_.impl_->other_thread_idle(t, idx(ct));
}
std::uint32_t MachineView::remaining_unsent(common::DeviceTaskId dt, common::CoreType ct) const {
  const Ctx* x = s_.impl_->find_ctx(dt);
  return x == nullptr ? 0 : x->unsent[idx(ct)];
}
std::uint64_t MachineView::unsent_tasks(common::DeviceTaskId dt) const {
  const Ctx* x = s_.impl_->find_ctx(dt);
  return x == nullptr ? 0 : x->total - x->sent;
}
std::size_t MachineView::shared_queued(common::DeviceTaskId dt, common::CoreType ct) const {
  const Ctx* x = s_.impl_->find_ctx(dt);
  return x == nullptr ? 0 : x->queued(idx(ct));
}
TaskListView MachineView::staged(common::ThreadId t, common::CoreType ct) const {
  const auto& st = s_.impl_->threads[t].staging[idx(ct)];
  return TaskListView(st.data(), st.size());
}
common::TimePs MachineView::duration_estimate_ps(common::TaskId task) const {
  const TaskGraph& g = s_.graph_;
  if (g.has_recorded(task)) return g.recorded_ps(task);
  return s_.estimator_ != nullptr ? s_.estimator_->estimate_ps(task) : 0;
}
std::uint64_t MachineView::bytes_read(common::TaskId task) const {
  return s_.graph_.traffic(task).read_bytes;
}
std::uint64_t MachineView::bytes_written(common::TaskId task) const {
  return s_.graph_.traffic(task).write_bytes;
}

}  // namespace pypto::sched
