// SPDX-License-Identifier: Apache-2.0
// HBM as a fluid flow model: every transfer in flight gets an equal share of the aggregate
// bandwidth, capped by what one core can draw. When a transfer starts or ends the others'
// rates change. Equal shares let us keep one "virtual service" clock V(t) with
// dV/dt = rate(n): a flow of B bytes started at V0 ends when V reaches V0 + B, so each
// start/end is O(log n). Plain C++, driven by the SystemC Hbm module.
#pragma once

#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#include "pypto/common/types.h"

namespace pypto::sim {

class HbmFlowModel {
 public:
  // aggregate and per-flow rates in bytes per picosecond (both > 0).
  HbmFlowModel(double aggregate_bytes_per_ps, double per_flow_cap_bytes_per_ps);

  // Contract: `now` never decreases across calls. Starts a transfer of `bytes` (> 0)
  // carrying an opaque tag returned when it completes.
  //
  // With `promise` set, and if every transfer in flight (this one included) still runs at
  // the per-flow cap, the transfer's end is fixed unless a later start pushes the count
  // above floor(aggregate / cap): start() then returns that end and complete_until() never
  // reports the tag. Otherwise (and always without `promise`) it returns kNever and the
  // completion is reported by complete_until(). A start that makes the flows slow down
  // withdraws every promise still pending: see take_revoked().
  common::TimePs start(common::TimePs now, std::uint64_t bytes, std::uint64_t tag,
                       bool promise = false);

  // Appends the tags whose promised end was withdrawn since the last call, in the order the
  // promises would have ended, and forgets them. Their completions are reported by
  // complete_until() like any unpromised transfer.
  void take_revoked(std::vector<std::uint64_t>& tags) {
    if (revoked_.empty()) return;  // inline: asked after every start, rarely with any
    tags.insert(tags.end(), revoked_.begin(), revoked_.end());
    revoked_.clear();
  }

  // Time at which the earliest transfer that complete_until() will report completes if
  // nothing else starts (kNever if none; promised transfers are not counted). Rounded up to
  // a whole picosecond. Throws ConfigError when that time would pass common::kTimeLimitPs
  // (bandwidths too low for the bytes in flight): the run cannot finish, and is stopped.
  // Inline: asked after every start, mostly with nothing unpromised in flight.
  common::TimePs next_completion() const {
    if (!finished_.empty()) return clock_ps_;  // already complete, not yet handed out
    if (heap_.empty()) return common::kNever;
    return top_finish_ps();
  }

  // Advances to `now` and appends, in completion order, the tags of unpromised transfers that
  // have completed at or before `now`. Throws like next_completion().
  void complete_until(common::TimePs now, std::vector<std::uint64_t>& done_tags);

  std::size_t in_flight() const { return heap_.size() + (promised_.size() - promised_head_); }
  std::uint64_t total_bytes() const { return total_bytes_; }
  // Time with at least one transfer in flight (for achieved bandwidth).
  common::TimePs busy_ps() const { return busy_ps_; }

 private:
  // Per-flow bytes/ps with the current number of flows (inline: several calls per transfer).
  double rate() const {
    const std::size_t n = in_flight();
    return n == 0 ? 0.0 : std::min(cap_, agg_ / static_cast<double>(n));
  }
  void advance(common::TimePs now);

  struct Flow {
    double finish_v;
    std::uint64_t seq;  // FIFO tie-break for equal finish, keeps results deterministic
    std::uint64_t tag;
    bool operator>(const Flow& o) const {
      return finish_v != o.finish_v ? finish_v > o.finish_v : seq > o.seq;
    }
  };
  // Completion time of f from the current state, rounded up to a whole ps; never before t_.
  // next_completion() and complete_until() both use it, so complete_until(next_completion())
  // always completes at least one flow whatever the floating-point rounding.
  common::TimePs finish_ps(const Flow& f) const;
  // finish_ps(heap_.top()), kept until the state it reads (the top, the anchor, the number in
  // flight) changes: the next start or wake-up mostly asks again for the same one.
  common::TimePs top_finish_ps() const {
    if (top_finish_ps_ == kUnknownPs) top_finish_ps_ = finish_ps(heap_.top());
    return top_finish_ps_;
  }
  static constexpr common::TimePs kUnknownPs = ~common::TimePs{0};  // never a finish time
  mutable common::TimePs top_finish_ps_ = kUnknownPs;

  double agg_, cap_;
  // Anchor: virtual service v_ (bytes delivered to each flow in flight) at time t_. It moves
  // only when the set of flows changes, so predictions do not drift with how often the
  // caller polls.
  double v_ = 0;
  common::TimePs t_ = 0;
  common::TimePs clock_ps_ = 0;  // latest `now` seen (monotonicity check, busy_ps_)
  std::uint64_t seq_ = 0;
  std::uint64_t total_bytes_ = 0;
  common::TimePs busy_ps_ = 0;
  // Unpromised flows, by virtual finish.
  std::priority_queue<Flow, std::vector<Flow>, std::greater<>> heap_;
  // Promised flows, by promised end. They exist only while every flow runs at the cap, so
  // one leaving changes no rate and needs no re-anchoring; finish_v is kept for the day the
  // promise is withdrawn and the flow joins heap_.
  struct Promised {
    common::TimePs end_ps;
    double finish_v;
    std::uint64_t seq;
    std::uint64_t tag;
  };
  // Sorted by (end_ps, seq) from promised_head_ on; the entries before it have ended. A sorted
  // run, not a heap: a new promise mostly ends after those in flight (it starts last), so it
  // goes in at or near the back, and the earliest leaves by a step of the head.
  std::vector<Promised> promised_;
  std::size_t promised_head_ = 0;
  bool no_promises() const { return promised_head_ == promised_.size(); }
  void push_promised(const Promised& p);
  void pop_promised() {
    if (++promised_head_ == promised_.size()) {
      promised_.clear();
      promised_head_ = 0;
    }
  }
  std::vector<std::uint64_t> revoked_;
  // Tags of flows that advance() found complete (start() may pass a completion time before
  // the caller asked for it); complete_until() hands them out in order.
  std::vector<std::uint64_t> finished_;
};

}  // namespace pypto::sim
