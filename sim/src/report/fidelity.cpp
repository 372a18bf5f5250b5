// SPDX-License-Identifier: Apache-2.0
// Replay metrics: how the simulated schedule compares with the recorded one task by task,
// not only by makespan. traces/FORMAT.md "Replay metrics" defines every figure; the
// hand-worked example there is tests/sim/test_report_fidelity.cpp.
#include <algorithm>
#include <boost/sort/spreadsort/integer_sort.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/sim/report.h"

namespace pypto::sim {
namespace {

using common::kNever;
using common::TaskId;
using common::TimePs;

constexpr double kPsPerUs = 1e6;

// Nearest rank: the value at 1-based rank ceil(p/100 * n) of the ascending values (the
// median of an even count is the lower middle value). v must not be empty; reorders it
// (a selection, not a sort: linear time, and the value at a rank does not depend on the order
// the elements arrive in).
template <class T>
T percentile(std::vector<T>& v, double p) {
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  const auto at = v.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

// Fractional ranks (1-based; tied values share the mean of the ranks they span) of the n
// values value(0) .. value(n-1). The values are sorted together with their positions rather
// than through an index comparator: the same ranks (they depend on the values alone), without
// a random read per comparison. By value alone, with Boost's radix-based integer_sort: tied
// values may come in any order, as every one of them gets the same mean rank, and the sort's
// cost per value does not grow with the count as a comparison sort's does (at 10M tasks
// std::sort was a twentieth of a replay). The values are read through a function, so a
// caller need not keep them in a vector of their own beside the sort's.
// Twice the rank is kept (an integer below 2^32 for fewer than 2^31 values: 4 B a task
// instead of a double's 8); halving it gives exactly the double the mean rank would be.
// The ranks go to `r` and the sort runs in `scratch` (both resized to n: memory made before
// is reused).
template <class ValueAt>
void twice_ranks(std::size_t n, ValueAt value, std::vector<RankEntry>& scratch,
                 std::vector<std::uint32_t>& r) {
  NPU_CHECK(n < (std::size_t{1} << 31), "replay metrics: more than 2^31 compared tasks");
  static_assert(sizeof(RankEntry) == 12);
  std::vector<RankEntry>& order = scratch;
  order.resize(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = {value(i), static_cast<std::uint32_t>(i)};
  boost::sort::spreadsort::integer_sort(
      order.begin(), order.end(),
      [](const RankEntry& e, unsigned shift) { return e.value >> shift; },
      [](const RankEntry& a, const RankEntry& b) { return a.value < b.value; });
  r.resize(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && order[j + 1].value == order[i].value) ++j;
    // The mean of the 1-based ranks i+1 .. j+1, doubled.
    const auto twice_mean = static_cast<std::uint32_t>(i + j + 2);
    for (std::size_t k = i; k <= j; ++k) r[order[k].index] = twice_mean;
    i = j + 1;
  }
}

// Pearson correlation of the ranks (from twice_ranks()); false when either side has no
// spread.
bool spearman(const std::vector<std::uint32_t>& twice_a, const std::vector<std::uint32_t>& twice_b,
              double& rho) {
  if (twice_a.size() < 2) return false;
  const double n = static_cast<double>(twice_a.size());
  const double mean = (n + 1.0) / 2.0;  // the mean of any fractional ranking of n values
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < twice_a.size(); ++i) {
    const double a = static_cast<double>(twice_a[i]) / 2.0;
    const double b = static_cast<double>(twice_b[i]) / 2.0;
    sab += (a - mean) * (b - mean);
    saa += (a - mean) * (a - mean);
    sbb += (b - mean) * (b - mean);
  }
  if (saa == 0 || sbb == 0) return false;
  rho = sab / std::sqrt(saa * sbb);
  return true;
}

// Every task, each after all its predecessors (Kahn's algorithm, ties in task order).
std::vector<TaskId> topological_order(const sched::TaskGraph& g) {
  const std::size_t n = g.num_tasks();
  std::vector<std::uint32_t> left(g.pred_count);
  std::vector<TaskId> order;
  order.reserve(n);
  for (TaskId t = 0; t < n; ++t) {
    if (left[t] == 0) order.push_back(t);
  }
  for (std::size_t q = 0; q < order.size(); ++q) {
    const TaskId t = order[q];
    for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) {
      if (--left[g.succ[e]] == 0) order.push_back(g.succ[e]);
    }
  }
  NPU_CHECK(order.size() == n, "replay metrics: the task graph has a cycle");
  return order;
}

// Latest end among each task's predecessors ("ready time"), kNever when it has none with a
// time, walking `order` (topological_order(g)); end(t) is a compared task's end (read only
// for those). A task outside the compared set (a HUB, a task without a record) passes its own
// ready time on as its end, so a wait is measured through HUBs to the real producers. The
// maximum does not depend on which topological order is walked.
// The times go to `ready` (memory made before is reused).
template <class EndOf>
void last_predecessor_end(const sched::TaskGraph& g, const std::vector<TaskId>& order,
                          const std::vector<char>& timed, EndOf end, std::vector<TimePs>& ready) {
  ready.assign(g.num_tasks(), kNever);
  for (const TaskId t : order) {
    const TimePs own_end = timed[t] ? end(t) : ready[t];
    if (own_end == kNever) continue;
    for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) {
      const TaskId s = g.succ[e];
      if (ready[s] == kNever || own_end > ready[s]) ready[s] = own_end;
    }
  }
}

// Frees a vector's memory now (clear() keeps its capacity).
template <class T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

void wait_percentiles(std::vector<std::int64_t>& waits, double out[3]) {
  if (waits.empty()) return;
  const double ps[3] = {10, 50, 90};
  for (int i = 0; i < 3; ++i) out[i] = static_cast<double>(percentile(waits, ps[i])) / kPsPerUs;
}

}  // namespace

RecordedReplay recorded_replay(const sched::TaskGraph& g) {
  const std::size_t n = g.num_tasks();
  NPU_CHECK(g.recorded_start_ps.size() == n, "replay metrics need a recorded time for every task");
  RecordedReplay r;
  r.timed.assign(n, 0);
  r.set.reserve(n);  // address space for the HUBs' share, not memory: never touched
  for (TaskId t = 0; t < n; ++t) {
    if (g.core_type[t] != common::CoreType::kHub && g.has_recorded_start(t)) {
      r.timed[t] = 1;
      r.set.push_back(t);
    }
  }
  if (r.set.empty()) return r;
  // Relative to the first start among the compared tasks.
  TimePs rec0 = kNever;
  for (const TaskId t : r.set) rec0 = std::min(rec0, g.recorded_start_ps[t]);
  r.start_ps.resize(r.set.size());
  for (std::size_t i = 0; i < r.set.size(); ++i)
    r.start_ps[i] = g.recorded_start_ps[r.set[i]] - rec0;
  twice_ranks(
      r.start_ps.size(), [&](std::size_t i) { return r.start_ps[i]; }, r.rank_scratch,
      r.twice_ranks);
  // Waits: a task's start minus the latest end of its predecessors.
  r.order = topological_order(g);
  last_predecessor_end(
      g, r.order, r.timed,
      [&](TaskId t) {
        const TimePs dur = g.has_recorded(t) ? g.recorded_ps(t) : 0;
        return g.recorded_start_ps[t] + dur;
      },
      r.ready_ps);
  // The simulated half's (the sort's entries are kept above): written now, so faulted in.
  r.sim_twice_ranks.assign(r.set.size(), 0);
  r.sim_ready_ps.assign(n, kNever);
  return r;
}

ReplayFidelity replay_fidelity(const sched::TaskGraph& g,
                               const std::vector<std::uint64_t>& start_ps,
                               const std::vector<std::uint64_t>& end_ps) {
  return replay_fidelity(g, recorded_replay(g), start_ps, end_ps);
}

ReplayFidelity replay_fidelity(const sched::TaskGraph& g, RecordedReplay&& recorded,
                               const std::vector<std::uint64_t>& start_ps,
                               const std::vector<std::uint64_t>& end_ps) {
  const std::size_t n = g.num_tasks();
  NPU_CHECK(g.recorded_start_ps.size() == n && start_ps.size() == n && end_ps.size() == n &&
                recorded.timed.size() == n,
            "replay metrics need a recorded and a simulated time for every task");
  ReplayFidelity f;
  const std::vector<TaskId>& set = recorded.set;
  f.tasks = set.size();
  if (set.empty()) return f;

  // The simulated side relative to its own first start among the compared tasks. Read
  // where needed rather than kept in a vector: this pass's blocks are a large run's peak of
  // resident memory, whose bytes are first touches (on the project's VMs ~2 ms a MiB;
  // docs/performance-log.md).
  TimePs sim0 = kNever;
  for (const TaskId t : set) sim0 = std::min(sim0, start_ps[t]);
  auto sim_start = [&](std::size_t i) { return start_ps[set[i]] - sim0; };
  // The simulated side's ranks and ready times are independent of each other: the ranks go
  // to a second thread on large runs (a sort and a graph walk), the same values either way.
  std::vector<std::uint32_t>& sim_ranks = recorded.sim_twice_ranks;
  std::exception_ptr rank_error;  // an allocation failure on the second thread
  auto rank_side = [&] {
    try {
      twice_ranks(set.size(), sim_start, recorded.rank_scratch, sim_ranks);
      release(recorded.rank_scratch);
    } catch (...) {
      rank_error = std::current_exception();
    }
  };
  std::thread second;
  if (set.size() >= kReplayThreadFromTasks) {
    second = std::thread(rank_side);
  } else {
    rank_side();
  }
  std::vector<TimePs>& sim_ready = recorded.sim_ready_ps;
  try {
    last_predecessor_end(
        g, recorded.order, recorded.timed, [&](TaskId t) { return end_ps[t]; }, sim_ready);
  } catch (...) {
    if (second.joinable()) second.join();
    throw;
  }
  if (second.joinable()) second.join();
  if (rank_error) std::rethrow_exception(rank_error);
  // Each part is freed once used: on a large graph these blocks make the run's peak of
  // resident memory.
  release(recorded.order);
  f.has_spearman = spearman(recorded.twice_ranks, sim_ranks, f.spearman);
  release(sim_ranks);
  release(recorded.twice_ranks);
  // The start errors, in place of the recorded starts.
  std::vector<TimePs>& error = recorded.start_ps;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const TimePs rec = recorded.start_ps[i], sim = sim_start(i);
    error[i] = rec > sim ? rec - sim : sim - rec;
  }
  f.start_error_median_us = static_cast<double>(percentile(error, 50)) / kPsPerUs;
  f.start_error_p90_us = static_cast<double>(percentile(error, 90)) / kPsPerUs;
  release(error);
  const std::vector<TimePs>& rec_ready = recorded.ready_ps;
  // Room for every compared task: no regrowth (each a copy into fresh memory), and the
  // pages past the tasks that have a wait are never touched.
  std::vector<std::int64_t> rec_wait, sim_wait;
  rec_wait.reserve(set.size());
  sim_wait.reserve(set.size());
  for (const TaskId t : set) {
    if (rec_ready[t] == kNever || sim_ready[t] == kNever) continue;
    rec_wait.push_back(static_cast<std::int64_t>(g.recorded_start_ps[t]) -
                       static_cast<std::int64_t>(rec_ready[t]));
    sim_wait.push_back(static_cast<std::int64_t>(start_ps[t]) -
                       static_cast<std::int64_t>(sim_ready[t]));
  }
  f.wait_tasks = rec_wait.size();
  release(sim_ready);
  release(recorded.ready_ps);
  wait_percentiles(rec_wait, f.recorded_wait_us);
  wait_percentiles(sim_wait, f.simulated_wait_us);
  return f;
}

}  // namespace pypto::sim
