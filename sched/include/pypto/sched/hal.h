// SPDX-License-Identifier: Apache-2.0
// The hardware abstraction the runtime drives. Today its one implementation is the
// simulator's (sim/src/machine/sched_thread.cpp: modelled registers and costs, each call
// advancing the calling thread's local clock); the NPU backend is to be a second one over
// the AICore registers. The runtime never measures time itself, so a policy makes the same
// decisions whichever implementation drives it.
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/common/types.h"

namespace pypto::sched {

enum class AicpuOp : std::uint8_t {
  kResolveEdge,  // one successor edge walked (predecessor count decremented)
  kQueueOp,      // one locked operation on a shared ready queue
  kFairScan,     // one scan of the other threads' idle flags (fair modes)
};

class Hal {
 public:
  virtual ~Hal() = default;

  // Contract: thread t reads core c's completion register now. Appends the tasks that
  // finished since the last read of c, in finishing order (at most the running and the
  // pending task). Charges one poll.
  virtual void poll(common::ThreadId t, common::CoreId c,
                    std::vector<common::TaskId>& finished) = 0;

  // Contract: thread t writes `task` into core c's register: the running slot if the
  // runtime believes c idle, else the pending slot. Charges one dispatch.
  virtual void send(common::ThreadId t, common::TaskId task, common::CoreId c) = 0;

  // Contract: thread t executes an AICPU-type task inline (it returns when done).
  virtual void run_inline(common::ThreadId t, common::TaskId task) = 0;

  // Contract: charges n operations of kind op to thread t.
  virtual void charge(common::ThreadId t, AicpuOp op, std::uint32_t n) = 0;

  // Contract: thread t's local clock now (diagnostics and barrier bookkeeping only).
  virtual common::TimePs now(common::ThreadId t) const = 0;

  // Contract: asked by the runtime just before thread t operates on state the threads
  // share (a shared ready queue, the idle flags, predecessor counts, a device task's
  // counters and barrier). true = suspend the poll round here: run_round returns with
  // RoundResult::suspended set, and the next run_round(t) continues the same round at this
  // point, without asking again. An implementation whose threads run truly concurrently
  // answers false; a simulator whose thread runs ahead of the others on a local clock
  // answers true until the others have caught up, so that the threads' shared-state
  // operations happen in the order of their local times (as temporal decoupling
  // synchronises at shared resources). Other threads' rounds may run while t is suspended.
  virtual bool yield_before_shared(common::ThreadId t) { return false; }
};

}  // namespace pypto::sched
