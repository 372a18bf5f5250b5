// SPDX-License-Identifier: Apache-2.0
// The device-side runtime of the schedule AICPU threads (DESIGN.md "Agents" and "The four
// device_sched_mode policies"): per-core running/pending slots as the threads believe
// them, per-device-task shared ready queues, per-thread staging buffers, dependency
// resolution (HUB nodes inline), the last-wave rule, device-task drain and barrier, and
// parallel-loop device tasks. Timing-agnostic: every action goes through a Hal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pypto/sched/hal.h"
#include "pypto/sched/machine_view.h"
#include "pypto/sched/policy.h"
#include "pypto/sched/task_graph.h"

namespace pypto::sched {

struct MachineShape {
  std::uint32_t aic = 0;      // AIC cores, ids [0, aic)
  std::uint32_t aiv = 0;      // AIV cores, ids [aic, aic + aiv); cluster k owns aic + 2k, +1
  std::uint32_t threads = 1;  // schedule threads; thread i owns a contiguous block of
                              // clusters (its AICs and their AIVs)
  std::uint32_t staging_capacity = 256;  // per-thread local ready buffer
  std::uint32_t parallelism = 1;         // device_sched_parallelism
};

// What one poll round did, for the backend's wake-up bookkeeping.
struct RoundResult {
  std::uint32_t completions = 0;                                   // tasks observed finished
  std::uint32_t dispatches = 0;                                    // tasks sent to cores
  bool pushed_shared[common::kNumDispatchTypes] = {false, false};  // new work for other threads
  bool in_flight = false;  // the thread still has tasks on its cores
  bool all_sent = false;   // a device task sent its last task: idle threads must
                           // wake to drain and reach the barrier
  bool suspended = false;  // Hal::yield_before_shared asked to pause: the round is not
                           // over, and the next run_round of this thread continues it
  struct Finished {
    common::DeviceTaskId dt;
    common::TimePs time_ps;  // serial: the last barrier arrival; parallel: when it was observed
  };
  std::vector<Finished> finished_device_tasks;  // completed during this round
};

// A schedule thread's statistics: the one record both backends report (stats.json's
// aicpu.threads). The scheduler counts the rounds as they run; the backend adds what only
// it sees (Scheduler::count_skipped_rounds, Scheduler::add_busy_ps).
struct ThreadStats {
  std::uint64_t rounds = 0, polls = 0, resolves = 0, dispatches = 0;
  std::uint64_t pending_kept_free = 0;  // Policy::fill_pending_slot answered false
  // Time in poll rounds by the backend's clock: the simulator counts the rounds that
  // completed or dispatched something, the device backend every round (host time).
  common::TimePs busy_ps = 0;
};

class Scheduler {
 public:
  // Contract: graph and policy outlive the scheduler. Throws ConfigError if a device task
  // needs a core type the machine lacks. policy.setup runs at the first admit.
  Scheduler(const TaskGraph& graph, const MachineShape& shape, Policy& policy);
  ~Scheduler();

  // Contract: the estimator (nullptr: none) outlives the scheduler; MachineView's
  // duration_estimate_ps uses it for tasks without a recorded duration.
  void set_estimator(const DurationEstimator* estimator) { estimator_ = estimator; }

  // Device-task admission. Serial device tasks run alone; device tasks of one parallel
  // group run up to `parallelism` at once.
  // Contract: admissible() is true for the next device task in order.
  bool admissible(common::DeviceTaskId dt) const;
  // Makes dt's zero-predecessor tasks ready (HUBs resolved at once, AICPU tasks run by
  // `hal` on thread 0). Returns the number of resolve edges walked while building.
  std::uint64_t admit(common::DeviceTaskId dt, Hal& hal);
  std::uint32_t active_device_tasks() const;
  bool all_done() const { return done_device_tasks_ == graph_.device_tasks.size(); }

  // One poll round of thread t (DESIGN.md order: poll, send-before-resolve, resolve,
  // flush, dispatch, publish), or the next piece of it: before each operation on shared
  // state the round asks hal.yield_before_shared and, on true, returns with `suspended`
  // set; the next call for t continues from there. The fields of a result describe only
  // the piece that call ran. Contract: called by the backend whenever thread t runs; all
  // effects go through hal; other threads' calls may come between the pieces of t's round.
  RoundResult run_round(common::ThreadId t, Hal& hal);
  // True while thread t's round is suspended at a yield point.
  bool in_round(common::ThreadId t) const;
  // Contract: called from the Hal during run_round(t); true if the piece of the round run so
  // far has results its caller acts on only once the piece returns (shared pushes, finished
  // device tasks, a device task's last send).
  bool piece_has_results(common::ThreadId t) const;

  // Whether thread t could place a task of type ct now (an idle core, or a free pending
  // slot it may fill) and work exists for it: used by backends to skip idle rounds.
  bool has_dispatchable_work(common::ThreadId t) const;
  bool has_in_flight(common::ThreadId t) const;
  // Thread t's cores that hold a task, in the order a poll round reads them: the first n
  // entries of out, n returned. out keeps at least the thread's core count of entries (the
  // rest unspecified), so that a caller asking again reuses them without zeroing.
  std::size_t in_flight_cores(common::ThreadId t, std::vector<common::CoreId>& out) const;
  // True while any ready queue of an admitted device task is non-empty.
  bool shared_work_left() const;

  const ThreadStats& stats(common::ThreadId t) const;
  // Contract: the backend did not run `rounds` poll rounds of thread t because each would
  // have polled `polls_each` busy cores and found nothing (an event-driven backend skips
  // them); they count as rounds and polls that ran.
  void count_skipped_rounds(common::ThreadId t, std::uint64_t rounds, std::uint64_t polls_each);
  // Contract: thread t was busy for busy_ps by the backend's clock (the backend decides
  // which rounds count: see ThreadStats::busy_ps).
  void add_busy_ps(common::ThreadId t, common::TimePs busy_ps);
  const MachineShape& shape() const { return shape_; }
  const TaskGraph& graph() const { return graph_; }
  common::ThreadId owner(common::CoreId c) const;
  // Ready tasks waiting in shared queues and staging buffers, per type (counter tracks).
  std::uint64_t ready_depth(common::CoreType ct) const;
  // Contract: a hint, changing no state and no result: `task` is running and will complete;
  // fetches into the host's caches what resolving its completion reads (its successors'
  // predecessor counts, types and device tasks). A backend calls it when the task starts,
  // long before the completion is polled: on a graph far larger than the caches, with its
  // ready tasks spread over the whole id range, each of those reads was a cache miss.
  void prefetch_completion(common::TaskId task) const;

  // Contract: diagnostics only. One line per admitted device task (tasks sent, completed,
  // queued, which threads the barrier still waits for) and one per thread holding tasks or
  // a suspended round (its cores' running/pending tasks as the runtime believes them).
  std::string describe_state() const;

 private:
  friend class MachineView;
  struct Impl;
  const TaskGraph& graph_;
  MachineShape shape_;
  std::unique_ptr<Impl> impl_;
  std::uint64_t done_device_tasks_ = 0;
  const DurationEstimator* estimator_ = nullptr;
};

}  // namespace pypto::sched
