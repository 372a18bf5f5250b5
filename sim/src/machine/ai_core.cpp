// SPDX-License-Identifier: Apache-2.0
#include "ai_core.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "hbm.h"
#include "sched_thread.h"

namespace pypto::sim {

using common::kNever;
using common::kNoTask;
using common::TaskId;
using common::TimePs;

namespace {

// Fewest ranges of a task, and rows of a run, that go to L2 as a run (AiCore::start()).
constexpr std::uint32_t kMinRunRows = 4;

// A range's size, direction, burst and L2 bit: the whole word after its address, so that the
// search for a run compares one word a row.
static_assert(sizeof(sched::MemAccess) == 16 && offsetof(sched::MemAccess, bytes) == 8,
              "a MemAccess is its address, then its size and flag bits in one 8-byte word");
inline std::uint64_t shape_of(const sched::MemAccess& m) {
  std::uint64_t v;
  std::memcpy(&v, reinterpret_cast<const char*>(&m) + 8, sizeof v);
  return v;
}

// Non-negative picoseconds below 2^62 (start() checks) to the nearest integer (std::llround
// is a libm call per value, and this runs five times per task). Through int64: the same
// value, without the unsigned conversion's branch for values from 2^63 on.
inline TimePs round_ps(double v) { return static_cast<TimePs>(static_cast<std::int64_t>(v + 0.5)); }
}  // namespace

AiCore::AiCore(sc_core::sc_module_name name, Machine& m, common::CoreId id)
    : sc_module(name), m_(m), id_(id), rank_(m.calendar->join(*this)) {}

void AiCore::assign(TaskId task, TimePs at_ps) {
  // start() reads the task's memory accesses one activation or a whole task later; the graph
  // is too large for the host's caches, so fetch them now (it changes no result).
  // The same for what start() and finish_running() read and write of the task itself: a
  // graph whose ready tasks spread over the whole id range (topo.json's one device task of
  // independent chains) misses the caches on each of them.
  if (m_.graph.has_memory()) __builtin_prefetch(m_.graph.mem.data() + m_.graph.mem_begin[task]);
  __builtin_prefetch(&m_.graph.recorded_ns[task]);
  // The successor list, which start() hands to Scheduler::prefetch_completion.
  __builtin_prefetch(m_.graph.succ.data() + m_.graph.succ_begin[task]);
  m_.observers.prefetch(task);
  // A running task that ended with nothing after it was left for its poll (arm()); it ends
  // here if the new task comes first.
  if (run_.task != kNoTask && run_.finish <= m_.now_ps() && pending_ == kNoTask && inbox_n_ == 0) {
    finish_running();
  }
  // A task written while the running one will certainly still run at `at_ps` lands in the
  // pending slot then; take it there now and save a wake-up (the common case: prefill).
  if (run_.task != kNoTask && pending_ == kNoTask && inbox_n_ == 0 && earliest_end() > at_ps) {
    pending_ = task;
    arm();  // the running task's end now starts this one
    return;
  }
  NPU_CHECK(inbox_n_ < 2, "more than two tasks written to one core");
  inbox_[inbox_n_++] = {task, at_ps};
  if (inbox_n_ == 2 && inbox_[1].at < inbox_[0].at) std::swap(inbox_[0], inbox_[1]);
  arm();
}

void AiCore::collect_some(TimePs t_ps, std::vector<TaskId>& out) {
  // A poll reads a completion only once it is visible (aicpu.completion_latency_ns).
  const TimePs lat = m_.tm.completion_latency_ps;
  int keep = 0;
  for (int i = 0; i < done_n_; ++i) {
    if (done_[i].end + lat <= t_ps) {
      out.push_back(done_[i].task);
    } else {
      done_[keep++] = done_[i];
    }
  }
  done_n_ = keep;
  // The running task's end is already known and due by the poll's time, although
  // SystemC has not reached it yet (the thread's clock runs ahead within a round).
  // A finish that a later HBM start could still delay is not collected early.
  if (keep == 0 && run_.task != kNoTask && !run_.collected && run_.finish != kNever &&
      run_.finish + lat <= t_ps && run_.final_from <= m_.now_ps()) {
    out.push_back(run_.task);
    run_.collected = true;
    // Nothing follows it on this core: it ends here, and the core did not wake for it.
    if (pending_ == kNoTask && inbox_n_ == 0) finish_running();
  }
}

std::string AiCore::describe() const {
  if (run_.task == kNoTask && pending_ == kNoTask && inbox_n_ == 0 && done_n_ == 0) return "";
  std::string s = std::string(name()) + " (core " + std::to_string(id_) + "):";
  for (int i = 0; i < done_n_; ++i) {
    s += " task " + std::to_string(done_[i].task) + " ended at " + std::to_string(done_[i].end) +
         " ps, not yet polled;";
  }
  if (run_.task != kNoTask) {
    s += " runs task " + std::to_string(run_.task) + " since " + std::to_string(run_.start) + " ps";
    if (run_.finish == kNever) {
      s += ", end unknown (its HBM transfer is in flight)";
    } else {
      s += ", ends at " + std::to_string(run_.finish) + " ps";
      if (run_.final_from > 0) s += " (final from " + std::to_string(run_.final_from) + " ps)";
      if (run_.collected) s += ", already polled";
    }
    s += ";";
  }
  if (pending_ != kNoTask) s += " task " + std::to_string(pending_) + " pending;";
  for (int i = 0; i < inbox_n_; ++i) {
    s += " task " + std::to_string(inbox_[i].task) + " arrives at " + std::to_string(inbox_[i].at) +
         " ps;";
  }
  return s;
}

SchedThread* AiCore::owner() {
  if (owner_ == nullptr) owner_ = m_.threads[m_.scheduler->owner(id_)];
  return owner_;
}

TimePs AiCore::earliest_end() const {
  if (run_.finish != kNever) return run_.finish;
  // An HBM transfer is in flight: the task ends no earlier than if it completed now.
  return std::max(run_.start, m_.now_ps()) + run_.pre +
         combine(run_.l2_read + m_.tm.hbm_latency_ps) + run_.post;
}

TimePs AiCore::combine(TimePs read_ps) const {
  return TaskCost::body(read_ps, run_.compute, run_.write, run_.overlap);
}

void AiCore::start(TaskId task, TimePs t0) {
  const auto& g = m_.graph;
  const auto& tm = m_.tm;
  clear_run();
  run_.task = task;
  run_.start = t0;
  m_.observers.task_started(task, id_, t0);
  if (g.has_recorded(task)) {
    run_.finish = t0 + g.recorded_ps(task);
  } else {
    std::uint64_t read_bytes = 0, write_bytes = 0, hit_read = 0, hbm_bytes = 0;
    if (g.has_memory()) {
      // Adds one range's traffic, given what L2 made of it.
      const auto account = [&](const sched::MemAccess& b, const L2Cache::Result& r) {
        const std::uint64_t moved = m_.cost.moved_bytes(b);
        if (b.is_write != 0) {
          write_bytes += moved;
        } else {
          read_bytes += moved;
          hit_read += r.hit_bytes == b.bytes ? moved : r.hit_bytes * moved / b.bytes;
          m_.l2_hit_bytes += r.hit_bytes;
        }
        hbm_bytes += r.miss_bytes + r.writeback_bytes;
        m_.l2_miss_bytes += r.miss_bytes;
      };
      // One range: past L2 all of it is HBM traffic (and L2 keeps its lines), else through L2.
      const auto one = [&](const sched::MemAccess& b) {
        if (b.no_l2 != 0) {
          (b.is_write != 0 ? write_bytes : read_bytes) += m_.cost.moved_bytes(b);
          hbm_bytes += b.bytes;
        } else {
          account(b, m_.l2.access(b.addr, b.bytes, b.is_write != 0));
        }
      };
      // A run of n ranges from g.mem[i] at `pitch` (one size, direction and burst) in one L2
      // call, priced from its sums: each row's moved bytes are the same where the rows move
      // in bursts shorter than themselves, or keep their offset in a GM block (mte_bytes
      // depends on the address only through that): a pitch of whole blocks, rows not wrapping.
      const auto run = [&](std::uint32_t i, std::uint32_t n, std::uint64_t pitch) {
        const sched::MemAccess& a = g.mem[i];
        const bool write = a.is_write != 0;
        if (!write && m_.l2_row_hits.size() < n) m_.l2_row_hits.resize(n);
        std::uint64_t* const row_hits = write ? nullptr : m_.l2_row_hits.data();
        const L2Cache::RowsResult r = m_.l2.access_rows(a.addr, a.bytes, pitch, n, write, row_hits);
        hbm_bytes += r.sum.miss_bytes + r.sum.writeback_bytes;
        m_.l2_miss_bytes += r.sum.miss_bytes;
        const std::uint64_t bytes = a.bytes;
        std::uint64_t span = 0;
        const bool same_moved =
            (a.burst_bytes != 0 && a.burst_bytes < bytes) ||
            (pitch % m_.chip.cost.mte_granule_bytes == 0 &&
             !__builtin_mul_overflow(pitch, n - 1, &span) && span <= ~std::uint64_t{0} - a.addr);
        if (write) {
          if (same_moved) {
            write_bytes += n * m_.cost.moved_bytes(a);
          } else {
            for (std::uint32_t k = 0; k < n; ++k) write_bytes += m_.cost.moved_bytes(g.mem[i + k]);
          }
          return;
        }
        m_.l2_hit_bytes += r.sum.hit_bytes;
        if (same_moved) {
          const std::uint64_t moved = m_.cost.moved_bytes(a);
          read_bytes += n * moved;
          hit_read += r.whole_hit_rows * moved;
          if (r.part_hit_rows == 0) return;
          for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint64_t h = row_hits[k];
            if (h != bytes) hit_read += h * moved / bytes;
          }
          return;
        }
        for (std::uint32_t k = 0; k < n; ++k) {
          const std::uint64_t moved = m_.cost.moved_bytes(g.mem[i + k]);
          const std::uint64_t h = row_hits[k];
          read_bytes += moved;
          hit_read += h == bytes ? moved : h * moved / bytes;
        }
      };
      const std::uint32_t begin = g.mem_begin[task], end = g.mem_begin[task + 1];
      // Runs pay from a tile's rows on: a task of a few ranges takes them one at a time.
      for (std::uint32_t i = begin; end - begin < kMinRunRows && i < end; ++i) one(g.mem[i]);
      for (std::uint32_t i = begin; end - begin >= kMinRunRows && i < end;) {
        const auto& a = g.mem[i];
        // The ranges after `a` of its size, direction and burst at one pitch (a tile's rows)
        // go to L2 in one call, which touches each row as access() would.
        // The size first: the CLI's few-range tasks rarely get past it.
        const std::uint64_t shape = shape_of(a);
        const auto same = [shape](const sched::MemAccess& b) { return shape_of(b) == shape; };
        if (a.no_l2 != 0 || i + 1 == end || g.mem[i + 1].bytes != a.bytes || !same(g.mem[i + 1])) {
          one(a);
          ++i;
          continue;
        }
        const std::uint64_t pitch = g.mem[i + 1].addr - a.addr;
        std::uint32_t n = 2;
        while (i + n < end && same(g.mem[i + n]) &&
               g.mem[i + n].addr - g.mem[i + n - 1].addr == pitch) {
          ++n;
        }
        if (n < kMinRunRows) {
          for (std::uint32_t k = 0; k < n; ++k) one(g.mem[i + k]);
        } else {
          run(i, n, pitch);
        }
        i += n;
      }
    }
    // The reads that hit go at L2 speed; the misses' HBM time is added as the flow runs.
    const TaskCost::Parts p = m_.cost.parts(task, read_bytes, hit_read, write_bytes);
    // The start plus every part (an upper bound of the finish without HBM) below the limit
    // keeps the conversions defined and the integer sums, HBM time included, below 2^64.
    const double end =
        static_cast<double>(t0) + p.pre_ps + p.post_ps + p.read_ps + p.write_ps + p.compute_ps;
    if (!(end < static_cast<double>(common::kTimeLimitPs))) {
      char cycle_ps[32];
      std::snprintf(cycle_ps, sizeof cycle_ps, "%.3g", tm.aicore_ps_per_cycle);
      throw_past_time_limit(std::string(name()) + " running task " + std::to_string(task) + " (" +
                                std::to_string(g.compute_cycles[task]) + " compute cycles of " +
                                cycle_ps + " ps each)",
                            end < 0x1p64 ? static_cast<TimePs>(end) : kNever);
    }
    run_.pre = round_ps(p.pre_ps);
    run_.post = round_ps(p.post_ps);
    run_.l2_read = round_ps(p.read_ps);
    run_.write = round_ps(p.write_ps);
    run_.compute = round_ps(p.compute_ps);
    run_.overlap = p.overlap;
    if (hbm_bytes == 0) {
      run_.finish = t0 + run_.pre + combine(run_.l2_read) + run_.post;
    } else {
      run_.flow_start = m_.now_ps();
      // The transfer's end is either promised now (every flow runs at the per-core cap) or
      // known when it completes; a promise may be revoked until it has passed.
      const TimePs flow_end = m_.hbm->start(hbm_bytes, id_);
      if (flow_end != kNever) {
        run_.final_from = flow_end;
        run_.finish = finish_after_flow(flow_end);
      }
    }
  }
  if (run_.finish != kNever) {
    check_time_limit(*this, run_.finish);
    owner()->on_finish_known(id_, visible(run_.finish), run_.final_from);
  }
  m_.scheduler->prefetch_completion(task);
}

TimePs AiCore::finish_after_flow(TimePs flow_end_ps) const {
  const TimePs hbm_ps = flow_end_ps - run_.flow_start + m_.tm.hbm_latency_ps;
  return run_.start + run_.pre + combine(run_.l2_read + hbm_ps) + run_.post;
}

void AiCore::on_flow_done() {
  run_.finish = finish_after_flow(m_.now_ps());
  check_time_limit(*this, run_.finish);
  run_.final_from = 0;
  owner()->on_finish_known(id_, visible(run_.finish), 0);
  arm();
}

void AiCore::on_flow_revoked() {
  const TimePs old_finish = run_.finish;
  const TimePs old_final_from = run_.final_from;
  NPU_CHECK(run_.task != kNoTask && old_finish != kNever && !run_.collected &&
                old_final_from > m_.now_ps(),
            "an HBM promise was revoked after it could be relied on");
  run_.finish = kNever;
  run_.final_from = 0;
  owner()->on_finish_revoked(id_, visible(old_finish), old_final_from);
  arm();  // drop the wake-up at the old finish
}

void AiCore::finish_running() {
  const TaskId task = run_.task;
  const TimePs end = run_.finish;
  if (!run_.collected) done_[done_n_++] = {task, end};
  busy_ps_ += end - run_.start;
  ++tasks_;
  const TimePs begin = run_.start;
  clear_run();
  m_.task_done(task, id_, begin, end);
  if (pending_ != kNoTask) {
    const TaskId next = pending_;
    pending_ = kNoTask;
    start(next, end + m_.tm.slot_switch_ps);
  }
}

void AiCore::arm() {
  // A running task's end wakes the core only when a task follows it here; otherwise the
  // poll that reads the end (collect) or the next task written (assign) ends it.
  TimePs next = pending_ != kNoTask || inbox_n_ > 0 ? run_.finish : kNever;
  if (inbox_n_ > 0) next = std::min(next, inbox_[0].at);
  // Only ever one pending wake-up, at the earliest thing this core has to do.
  m_.calendar->set(rank_, next);
}

void AiCore::act() {
  try {
    m_.count_event();
    const TimePs now = m_.now_ps();
    if (run_.task != kNoTask && run_.finish <= now) finish_running();
    while (inbox_n_ > 0 && inbox_[0].at <= now) {
      const TaskId task = inbox_[0].task;
      inbox_[0] = inbox_[1];
      --inbox_n_;
      if (run_.task == kNoTask) {
        start(task, now);
      } else {
        NPU_CHECK(pending_ == kNoTask, "a task was written over a full pending slot");
        pending_ = task;
      }
    }
    arm();
  } catch (...) {
    m_.fail(std::current_exception());
  }
}

}  // namespace pypto::sim
