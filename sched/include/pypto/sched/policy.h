// SPDX-License-Identifier: Apache-2.0
// The scheduling-policy plug-in interface (v2).
//
// The schedule-thread loop itself is fixed by the hardware protocol (poll the cores'
// completion registers, resolve successors, dispatch ready tasks; see DESIGN.md), so a
// policy does not run the loop: the runtime asks it at every dispatch decision and tells
// it the events it subscribed to. Every decision of the loop is a hook here: which staged
// task goes to which core, when the staging buffer is published to the shared queue, the
// send-before-resolve pick, which device task's queue and which entry a thread takes, the
// core for every task taken, how many cores a thread may fill (the last-wave rule and the
// fairness rule), whether a thread publishes its idle flags and whom an idle thread steals
// from. The defaults are device_sched_mode 0 (fifo).
//
// A policy sees the machine only through a read-only MachineView, may mutate only its own
// members, and pays for the AICPU work it models through ThreadContext::charge (the Hal),
// as the device would. Every hook is a plain virtual function of simple arguments, so a
// pybind11 trampoline can implement any of them. A new built-in policy is one .cpp file in
// sched/src/policies/ plus one line in sched/src/builtin.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "pypto/common/types.h"
#include "pypto/sched/hal.h"
#include "pypto/sched/machine_view.h"

namespace pypto::sched {

inline constexpr common::ThreadId kNoThread = std::numeric_limits<common::ThreadId>::max();
inline constexpr std::size_t kNoPick = std::numeric_limits<std::size_t>::max();

// The thread a hook runs on, its clock and its AICPU budget.
class ThreadContext {
 public:
  ThreadContext(const MachineView& m, common::ThreadId t, Hal& hal) : m_(m), t_(t), hal_(hal) {}
  const MachineView& view() const { return m_; }
  common::ThreadId thread() const { return t_; }
  // The thread's local clock now (the Hal's; read lazily, so a hook that ignores time
  // costs nothing for it).
  common::TimePs now() const { return hal_.now(t_); }
  // Charges n operations of kind op to this thread's clock, as the decision would cost on
  // the AICPU (a scan of shared flags, a locked queue operation, edges walked).
  void charge(AicpuOp op, std::uint32_t n) const { hal_.charge(t_, op, n); }

 private:
  const MachineView& m_;
  common::ThreadId t_;
  Hal& hal_;
};

// Where publish_staged is asked.
enum class PublishPoint : std::uint8_t {
  kStaged,    // a task was just staged while resolving (the shared queue may be dry)
  kRoundEnd,  // the round's flush, after staged tasks went to this thread's cores
};

// A staged task and the core it goes to (pick_staged).
struct StagedPick {
  std::size_t index = kNoPick;  // into the staging buffer (0 oldest); kNoPick: stop
  common::CoreId core = common::kNoCore;
};

// The events a policy subscribes to (Policy::events()); the runtime calls only those hooks.
enum PolicyEvent : unsigned {
  kEventReady = 1u << 0,       // on_ready
  kEventDispatch = 1u << 1,    // on_dispatch
  kEventDone = 1u << 2,        // on_done
  kEventDeviceTask = 1u << 3,  // on_device_task_admitted / on_device_task_finished
};

class Policy {
 public:
  virtual ~Policy() = default;

  // ---- events ------------------------------------------------------------------------
  // Contract: queried once when the runtime is built: the PolicyEvent bits of the on_*
  // hooks to call (others are never called). setup is always called.
  virtual unsigned events() const { return 0; }
  // Contract: called once, when the first device task is admitted (the backend has set
  // its estimator by then), before any other hook.
  virtual void setup(const MachineView& m) {}
  // Contract: task (AIC/AIV) has lost its last predecessor on c.thread() (at admission:
  // thread 0's context), before the runtime decides where it goes.
  virtual void on_ready(ThreadContext& c, common::TaskId task) {}
  // Contract: task was just written into core's register (running or pending slot).
  virtual void on_dispatch(ThreadContext& c, common::TaskId task, common::CoreId core) {}
  // Contract: c.thread() has seen task finish on core, before resolving its successors.
  virtual void on_done(ThreadContext& c, common::TaskId task, common::CoreId core) {}
  // Contract: dt was admitted (its zero-predecessor tasks are ready), at time_ps of
  // thread 0's clock / dt has finished at time_ps (the barrier or its last completion).
  virtual void on_device_task_admitted(const MachineView& m, common::DeviceTaskId dt,
                                       common::TimePs time_ps) {}
  virtual void on_device_task_finished(const MachineView& m, common::DeviceTaskId dt,
                                       common::TimePs time_ps) {}

  // ---- decisions ---------------------------------------------------------------------
  // Contract: called once per poll round and core type ct of a thread with serial device
  // tasks, after it polled its cores and before it resolves the completions it found,
  // when a shared queue of ct holds work. true = first refill the thread's cores from the
  // shared queue (pick_shared with before_resolve set). Default: true.
  virtual bool send_before_resolve(ThreadContext& c, common::CoreType ct) { return true; }

  // Contract: called when task `ready` (an AIC/AIV task of a serial device task) has just
  // lost its last predecessor on c.thread(); `producer_core` ran the predecessor that
  // released it (kNoCore if unknown). Return a core of the thread with a free slot (idle,
  // or MachineView::has_free_slot) to send it to at once, or kNoCore to stage it.
  // Default: kNoCore.
  virtual common::CoreId direct_send(ThreadContext& c, common::TaskId ready,
                                     common::CoreId producer_core) {
    return common::kNoCore;
  }

  // Contract: called repeatedly while the thread holds staged tasks of type ct, at the
  // round's flush and when staged tasks are published: which staged task goes to which
  // core of the thread (an idle one or a free pending slot), or {kNoPick, _} to stop.
  // `staged` is the thread's staging buffer, 0 oldest. Default: the newest to the most
  // recently freed idle core, while idle cores last.
  virtual StagedPick pick_staged(ThreadContext& c, common::CoreType ct, const TaskListView& staged);

  // Contract: whether the thread now moves the tasks still staged of type ct to the shared
  // queue (a locked operation, charged by the runtime). `shared_queued` is the shared
  // queue's size of the just staged task's device task (kStaged) or 0 (kRoundEnd). A full
  // staging buffer is published regardless (the buffer has a hardware size). Tasks kept
  // staged past the round stay private to the thread until it sends them or another
  // thread steals them. Default: at the round end only.
  virtual bool publish_staged(ThreadContext& c, common::CoreType ct, PublishPoint at,
                              std::size_t shared_queued) {
    return at == PublishPoint::kRoundEnd;
  }

  // Contract: called when a thread takes from the shared queues of type ct and more than
  // one active device task (a parallel loop) has queued work: which of `candidates`
  // (admission order) to serve next. Return an index into candidates. Default: 0 (oldest).
  virtual std::size_t pick_device_task(ThreadContext& c, common::CoreType ct,
                                       const std::vector<common::DeviceTaskId>& candidates) {
    return 0;
  }

  // Contract: called once before the thread takes tasks of type ct of device task dt from
  // the shared queue: how many tasks it takes now (0 = none). The runtime takes at most
  // that many and as many as are queued. Default (all four modes): every idle core plus
  // every free pending slot (MachineView::has_free_slot: behind an acknowledged running
  // task), except in the last wave (the device task's unsent tasks of every type fit in the
  // chip's cores of ct) while another thread has an idle core: idle cores only.
  virtual std::uint32_t fill_quota(ThreadContext& c, common::CoreType ct, common::DeviceTaskId dt) {
    return last_wave_quota(c, ct, dt, /*allow_pending=*/true);
  }

  // Contract: called for each task the thread takes from shared queue q (q.size() > 0,
  // q[0] oldest) of type ct. Return the index to take, in [0, q.size()). first_batch: the
  // thread's first take of this type in this device task; before_resolve: the take is the
  // send-before-resolve refill. Default: 0 (oldest).
  virtual std::size_t pick_shared(ThreadContext& c, common::CoreType ct, const TaskListView& q,
                                  bool first_batch, bool before_resolve) {
    return 0;
  }

  // Contract: the core of the thread for `task` (type ct), about to be taken from a shared
  // queue or stolen: an idle core or a free pending slot of a busy core. Default: the most
  // recently freed idle core, else the pending slots round-robin.
  virtual common::CoreId pick_core(ThreadContext& c, common::CoreType ct, common::TaskId task) {
    const MachineView& m = c.view();
    const std::size_t idle = m.idle_count(c.thread(), ct);
    if (idle > 0) return m.idle_core(c.thread(), ct, idle - 1);
    return pending_rr_.next(m, c.thread(), ct);
  }

  // Contract: called when pick_core chose a busy core (its free pending slot) for `task` of
  // type ct, taken from a shared queue: true fills the slot; false keeps it free, leaves
  // `task` queued and ends this take from the queue. The cost of a free slot: when the
  // core's running task ends it idles until a round of its thread sends it work (the poll
  // that sees the end, the resolve walk and a dispatch: about a microsecond on the A2/A3
  // presets) instead of starting the pending task at once (cores.slot_switch_cycles); what
  // it buys: a task released later (the running task's successor) can start on that core
  // as soon as it is ready, instead of behind the pending one. Each false is counted in the
  // thread's stats (ThreadStats::pending_kept_free, stats.json "pending_kept_free").
  // Default: true (every free slot is filled, as on the device).
  virtual bool fill_pending_slot(ThreadContext& c, common::CoreType ct, common::CoreId core,
                                 common::TaskId task) {
    return true;
  }

  // Contract: called at the end of each round per core type: true = the thread publishes
  // whether it has a fully idle core of ct (MachineView::other_thread_idle reads those
  // flags; unpublished flags keep their initial "idle" value, as on the device). Writing
  // the flag is an operation on shared state, which the runtime orders. Default: false.
  virtual bool publish_idle(ThreadContext& c, common::CoreType ct) { return false; }

  // Contract: asked when thread t has an idle core of ct and no shared queue of ct holds
  // work (also by the backend, to know whether an idle thread has work): the thread to
  // steal a staged task of ct from (MachineView::staged_count(victim, ct) > 0), or
  // kNoThread. Must not change state. Default: kNoThread (no stealing).
  virtual common::ThreadId steal_victim(const MachineView& m, common::ThreadId t,
                                        common::CoreType ct) const {
    return kNoThread;
  }
  // Contract: which of the victim's staged tasks (0 oldest) to take; each steal is one
  // locked queue operation, charged by the runtime. Default: 0 (oldest).
  virtual std::size_t pick_stolen(ThreadContext& c, common::CoreType ct, common::ThreadId victim,
                                  const TaskListView& staged) {
    return 0;
  }

  // The fill rule of the four modes, for policies to reuse: idle cores plus, if
  // allow_pending and not (last wave while another thread idles), the free pending slots.
  static std::uint32_t last_wave_quota(const ThreadContext& c, common::CoreType ct,
                                       common::DeviceTaskId dt, bool allow_pending);

 protected:
  // Round-robin over a thread's busy cores with a free pending slot, per thread and type.
  class PendingRoundRobin {
   public:
    common::CoreId next(const MachineView& m, common::ThreadId t, common::CoreType ct);

   private:
    std::vector<std::uint32_t> cursor_;  // [thread * kNumDispatchTypes + type]
  };

 private:
  PendingRoundRobin pending_rr_;
};

}  // namespace pypto::sched
