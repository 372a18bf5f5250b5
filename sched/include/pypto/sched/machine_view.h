// SPDX-License-Identifier: Apache-2.0
// What a policy may look at: the runtime's own bookkeeping of cores, threads and ready
// queues (what the schedule AICPU knows from its polls, not the hardware's true state).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pypto/common/types.h"
#include "pypto/sched/task_graph.h"

namespace pypto::sched {

class Scheduler;

// A read-only window onto one shared ready queue; index 0 is the oldest entry.
class ReadyQueueView {
 public:
  ReadyQueueView(const TaskId* data, std::size_t size) : data_(data), size_(size) {}
  std::size_t size() const { return size_; }
  TaskId operator[](std::size_t i) const { return data_[i]; }

 private:
  const TaskId* data_;
  std::size_t size_;
};

class MachineView {
 public:
  explicit MachineView(const Scheduler& s) : s_(s) {}

  const TaskGraph& graph() const;
  std::uint32_t num_threads() const;
  std::uint32_t num_cores(CoreType ct) const;
  CoreType core_type(CoreId c) const;
  ThreadId owner(CoreId c) const;
  // Cores of thread t of type ct are [first_core(t, ct), end_core(t, ct)).
  CoreId first_core(ThreadId t, CoreType ct) const;
  CoreId end_core(ThreadId t, CoreType ct) const;
  TaskId running(CoreId c) const;  // kNoTask when none
  TaskId pending(CoreId c) const;
  bool is_idle(CoreId c) const { return running(c) == kNoTask; }
  bool has_free_slot(CoreId c) const { return pending(c) == kNoTask; }
  // Thread t's fully idle cores of type ct; the last one is the most recently freed.
  std::size_t idle_count(ThreadId t, CoreType ct) const;
  CoreId idle_core(ThreadId t, CoreType ct, std::size_t i) const;
  // True if some thread other than t has published a fully idle core of type ct.
  bool other_thread_idle(ThreadId t, CoreType ct) const;
  // Tasks of type ct of task's device task not yet sent to a core.
  std::uint32_t remaining_unsent(DeviceTaskId dt, CoreType ct) const;

 private:
  const Scheduler& s_;
};

}  // namespace pypto::sched
