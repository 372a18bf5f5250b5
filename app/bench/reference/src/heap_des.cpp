// SPDX-License-Identifier: Apache-2.0
// The no-SystemC reference: the minimal loop of minimal_runtime.h driven by a plain
// std::priority_queue of timed events. Event semantics mirror sc_event's timed notify (a
// pending earlier notification wins; a thread's round drops its pending wake-ups), so the
// two reference models do the same work and differ only in the kernel.
#include <chrono>
#include <cstdint>
#include <queue>
#include <vector>

#include "minimal_runtime.h"
#include "pypto/bench/reference.h"

namespace pypto::bench {
namespace {

using common::CoreId;
using common::kNever;
using common::ThreadId;
using common::TimePs;
using detail::MinimalRuntime;

struct HeapBackend {
  struct Event {
    TimePs time;
    std::uint64_t seq;    // ties pop in notification order: deterministic
    std::uint32_t agent;  // threads [0, threads), then cores
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap;
  std::vector<TimePs> armed;  // per agent: time of its pending event, kNever if none
  std::uint32_t threads = 0;
  std::uint64_t seq = 0;
  TimePs now_ps = 0;

  TimePs now() const { return now_ps; }
  void arm(std::uint32_t agent, TimePs at) {
    if (at >= armed[agent]) return;  // the earlier pending notification wins
    armed[agent] = at;
    heap.push({at, seq++, agent});
  }
  void notify_core(CoreId c, TimePs at) { arm(threads + c, at); }
  void wake_thread(ThreadId t, TimePs at) { arm(t, at); }
};

}  // namespace

MinimalResult run_heap_des(const sched::TaskGraph& g, const MinimalCosts& costs) {
  const auto wall0 = std::chrono::steady_clock::now();
  MinimalResult res;
  {
    HeapBackend b;
    MinimalRuntime<HeapBackend> rt(g, costs, b);
    b.threads = rt.num_threads();
    b.armed.assign(rt.num_threads() + rt.num_cores(), kNever);
    rt.start();
    for (ThreadId t = 0; t < rt.num_threads(); ++t) b.arm(t, 0);
    while (!b.heap.empty()) {
      const HeapBackend::Event e = b.heap.top();
      b.heap.pop();
      if (b.armed[e.agent] != e.time) continue;  // superseded by an earlier notification
      b.armed[e.agent] = kNever;                 // fired; a thread's round also drops it (cancel)
      b.now_ps = e.time;
      if (e.agent < b.threads) {
        rt.thread_round(e.agent);
      } else {
        rt.core_event(e.agent - b.threads);
      }
    }
    res.tasks_done = rt.tasks_done();
    res.makespan_ps = rt.makespan_ps();
    res.activations = rt.activations();
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  NPU_CHECK(res.tasks_done == g.num_tasks(), "heap event loop completed " +
                                                 std::to_string(res.tasks_done) + " of " +
                                                 std::to_string(g.num_tasks()) + " tasks");
  return res;
}

}  // namespace pypto::bench
