// SPDX-License-Identifier: Apache-2.0
// Faults reserved buffers in on a thread of its own while another thread fills them.
//
// A first touch of fresh memory costs milliseconds a MiB on the project's VMs, whose host
// hands freed memory back and backs it again lazily, so a large reading would spend much of
// its thread's time zeroing pages (docs/performance-log.md, "First touches on the idle
// core"). A reader reserves its columns for the task count it estimates; a FaultAhead then
// moves those faults to the core the reading leaves idle, so the reading writes to memory
// already there. It pays only where the filling thread is the bound: a reader whose parse
// thread is (the fixed-latency one) would lose that thread's core to it. A run uses one too,
// for a whole graph's timeline, which it fills while the other core is idle (run_model).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "pypto/sched/task_graph.h"

namespace pypto::sim::trace_detail {

class FaultAhead {
 public:
  struct Span {
    const void* begin = nullptr;
    std::size_t bytes = 0;
  };
  // The spans of `v`'s first `elements` reserved elements (at most its capacity).
  template <class T>
  static Span span_of(const std::vector<T>& v, std::size_t elements) {
    return {v.data(), (elements < v.capacity() ? elements : v.capacity()) * sizeof(T)};
  }

  // Contract: starts a thread that faults `groups` in one after the other, the spans of a
  // group side by side (each up to the same fraction of its length, a step at a time, since
  // the reading fills them side by side). Spans under kMinBytes are left to the reading.
  // Only page tables change (MADV_POPULATE_WRITE): no byte is read or written here, so
  // racing the filling thread is harmless, and so is a span whose owner outgrew and freed it
  // (the memory is then the allocator's; a kernel before 5.14 refuses the call, a hint).
  explicit FaultAhead(std::vector<std::vector<Span>> groups);
  // Contract: stops the thread after the step it is on, and waits for it. Idempotent.
  void stop();
  ~FaultAhead() { stop(); }
  FaultAhead(const FaultAhead&) = delete;
  FaultAhead& operator=(const FaultAhead&) = delete;

  // Spans smaller than this fault in quickly enough on the filling thread (GraphFeed's rule
  // too).
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;
  // Bytes faulted in per step over a whole group: small enough to stay just ahead of the
  // reading at its start, large enough that the calls cost nothing next to the zeroing.
  static constexpr std::size_t kStepBytes = std::size_t{16} << 20;

 private:
  void run(std::vector<std::vector<Span>> groups);

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Faults in the pages of the span [begin, begin + bytes) from `done` (an address in it, where
// the last call stopped; begin at first) up to `fraction` of it (0..1; at 1 its last page
// too), and returns the new `done`. The one step that FaultAhead and the streamed run's
// reading (GraphFeed::populate_ahead) both take. A hint (MADV_POPULATE_WRITE): it changes
// no data, and a kernel before 5.14 refuses it.
std::uintptr_t fault_in_to(std::uintptr_t begin, std::size_t bytes, std::uintptr_t done,
                           double fraction);

// The spans a reader fills while it builds, for the `tasks` tasks and `edges` successors it
// estimated and reserved the graph for (reserve_graph): the graph's columns, recorded_start_ps
// left out (a reader fills it later, if at all), and the builder's own per-task columns
// (reserved here).
std::vector<FaultAhead::Span> building_spans(sched::TaskGraphBuilder& builder, std::size_t tasks,
                                             std::size_t edges);

}  // namespace pypto::sim::trace_detail
