// SPDX-License-Identifier: Apache-2.0
// What a policy may look at: the runtime's own bookkeeping of cores, threads, staging
// buffers and ready queues (what the schedule AICPU knows from its polls, not the
// hardware's true state), plus per-task figures a scheduler could know in advance: a
// duration estimate and the bytes a task reads and writes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pypto/common/types.h"
#include "pypto/sched/task_graph.h"

namespace pypto::sched {

class Scheduler;

// A read-only window onto a list of tasks (a shared ready queue or a staging buffer);
// index 0 is the oldest entry.
class TaskListView {
 public:
  TaskListView(const common::TaskId* data, std::size_t size) : data_(data), size_(size) {}
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  common::TaskId operator[](std::size_t i) const { return data_[i]; }

 private:
  const common::TaskId* data_;
  std::size_t size_;
};
using ReadyQueueView = TaskListView;

// A duration estimate for tasks without a recorded one; the backend that has a cost model
// provides it (Scheduler::set_estimator).
class DurationEstimator {
 public:
  virtual ~DurationEstimator() = default;
  // Contract: the expected run time of task on an idle core with a warm L2, in ps; pure.
  virtual common::TimePs estimate_ps(common::TaskId task) const = 0;
};

class MachineView {
 public:
  explicit MachineView(const Scheduler& s) : s_(s) {}

  const TaskGraph& graph() const;
  std::uint32_t num_threads() const;
  std::uint32_t num_cores(common::CoreType ct) const;
  common::CoreType core_type(common::CoreId c) const;
  common::ThreadId owner(common::CoreId c) const;
  // Cores of thread t of type ct are [first_core(t, ct), end_core(t, ct)).
  common::CoreId first_core(common::ThreadId t, common::CoreType ct) const;
  common::CoreId end_core(common::ThreadId t, common::CoreType ct) const;
  common::TaskId running(common::CoreId c) const;  // kNoTask when none
  common::TaskId pending(common::CoreId c) const;
  bool is_idle(common::CoreId c) const { return running(c) == common::kNoTask; }
  // Whether the thread has seen core c acknowledge its running task (a poll after the task
  // was sent); false for an idle core.
  bool acknowledged(common::CoreId c) const;
  // Whether c takes a task now: idle, or busy with an empty pending slot and its running task
  // acknowledged (PyPTO fills a pending slot only after the core's ACK: until then the task
  // just sent is what the AICPU holds as the core's pending one).
  bool has_free_slot(common::CoreId c) const {
    return pending(c) == common::kNoTask && (is_idle(c) || acknowledged(c));
  }
  // Thread t's fully idle cores of type ct; the last one is the most recently freed.
  std::size_t idle_count(common::ThreadId t, common::CoreType ct) const;
  common::CoreId idle_core(common::ThreadId t, common::CoreType ct, std::size_t i) const;
  // Thread t's busy cores of type ct with an empty pending slot and an acknowledged running
  // task (has_free_slot).
  std::uint32_t free_pending_count(common::ThreadId t, common::CoreType ct) const;
  // True if some thread other than t has published a fully idle core of type ct (flags
  // never published read "idle"; false on a one-thread machine).
  bool other_thread_idle(common::ThreadId t, common::CoreType ct) const;
  // Tasks of type ct of device task dt not yet sent to a core (0 if dt is not active).
  std::uint32_t remaining_unsent(common::DeviceTaskId dt, common::CoreType ct) const;
  // Tasks of every type (AIC, AIV, AICPU) of dt not yet sent or run (0 if dt is not
  // active): what PyPTO's tail-batch rule compares with a type's core count.
  std::uint64_t unsent_tasks(common::DeviceTaskId dt) const;
  // Tasks of type ct waiting in dt's shared ready queue (0 if dt is not active).
  std::size_t shared_queued(common::DeviceTaskId dt, common::CoreType ct) const;
  // Thread t's staging buffer of type ct (0 oldest): what other threads may steal.
  TaskListView staged(common::ThreadId t, common::CoreType ct) const;
  std::size_t staged_count(common::ThreadId t, common::CoreType ct) const {
    return staged(t, ct).size();
  }

  // Per-task figures. The duration estimate is the recorded duration when there is one,
  // else the backend's estimate (DurationEstimator), else 0.
  common::TimePs duration_estimate_ps(common::TaskId task) const;
  std::uint64_t bytes_read(common::TaskId task) const;
  std::uint64_t bytes_written(common::TaskId task) const;

 private:
  const Scheduler& s_;
};

}  // namespace pypto::sched
