// SPDX-License-Identifier: Apache-2.0
// The scheduling-policy plug-in interface.
//
// The schedule-thread loop itself is fixed by the hardware protocol (poll the cores'
// completion registers, resolve successors, dispatch ready tasks; see DESIGN.md), so a
// policy does not run the loop: the runtime calls it at the loop's decision points and the
// policy answers. It sees the machine only through a read-only MachineView and may mutate
// only its own members. Every built-in device_sched_mode is one such object; a new policy
// is one .cpp file in sched/src/policies/ plus one line in sched/src/builtin.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pypto/common/types.h"
#include "pypto/sched/machine_view.h"

namespace pypto::sched {

class Policy {
 public:
  virtual ~Policy() = default;

  // Contract: called by a schedule thread once per poll round and core type, after it
  // polled its cores and before it resolves the completions it found. true = first refill
  // the thread's cores from the head of the shared queue ("send before resolve").
  // Never called for device tasks of a parallel loop (the runtime skips the step there).
  virtual bool send_before_resolve(const MachineView& m, ThreadId t) const { return true; }

  // Contract: called when task `ready` (an AIC/AIV task of a serial device task) has just
  // lost its last predecessor on thread t; `producer_core` ran the predecessor that
  // released it (kNoCore if unknown). Return a core of t's partition with a free slot to
  // send it to at once (MachineView::has_free_slot must hold), or kNoCore to stage it in
  // the thread's local buffer as usual.
  virtual CoreId direct_send(const MachineView& m, ThreadId t, TaskId ready, CoreId producer_core) {
    return kNoCore;
  }

  // Contract: called when thread t takes one task of type `ct` from the shared ready
  // queue q (q.size() > 0, q[0] oldest). Return the index to take, in [0, q.size()).
  // `first_batch` is true for the thread's first take of this type in this device task.
  virtual std::size_t pick_shared(const MachineView& m, ThreadId t, CoreType ct,
                                  const ReadyQueueView& q, bool first_batch) {
    return 0;
  }

  // Contract: called before thread t fills cores of type ct. false = fill only fully idle
  // cores and leave the pending slots of busy cores empty for now.
  virtual bool may_prefill_pending(const MachineView& m, ThreadId t, CoreType ct) const {
    return true;
  }

  // Contract: queried once when the runtime is built. true = threads publish, per core
  // type, whether they have a fully idle core (MachineView::other_thread_idle then reads
  // live flags; otherwise the flags keep their initial "idle" value, as on the device),
  // and flush their staging buffer as soon as the shared queue of that type runs dry.
  virtual bool fair() const { return false; }
};

}  // namespace pypto::sched
