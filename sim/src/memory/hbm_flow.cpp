// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/memory/hbm_flow.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::sim {

namespace {

void check_rate(double bytes_per_ps, const char* what) {
  if (!(bytes_per_ps > 0) || !std::isfinite(bytes_per_ps)) {
    std::ostringstream os;
    os << "HBM " << what << " = " << bytes_per_ps
       << " bytes/ps is not valid; expected a finite value > 0";
    throw ConfigError(os.str());
  }
}

std::string gbps_text(double bytes_per_ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", bytes_per_ps * 1e3);  // bytes/ps -> GB/s
  return buf;
}

}  // namespace

HbmFlowModel::HbmFlowModel(double aggregate_bytes_per_ps, double per_flow_cap_bytes_per_ps)
    : agg_(aggregate_bytes_per_ps), cap_(per_flow_cap_bytes_per_ps) {
  check_rate(agg_, "aggregate bandwidth (hbm.aggregate_gbps)");
  check_rate(cap_, "per-core bandwidth (hbm.bytes_per_cycle_per_core)");
}

common::TimePs HbmFlowModel::finish_ps(const Flow& f) const {
  const double dv = f.finish_v - v_;
  if (!(dv > 0)) return t_;
  const double dt = std::ceil(dv / rate());
  // A finish past the time limit is refused rather than capped: a capped finish would never
  // be reached, and the transfer would stay in flight for ever.
  if (!(dt < static_cast<double>(common::kTimeLimitPs - t_))) {
    char left[32];
    std::snprintf(left, sizeof left, "%.3g", dv);
    throw ConfigError("HBM: a transfer with " + std::string(left) + " bytes left, at " +
                      gbps_text(rate()) + " GB/s with " + std::to_string(in_flight()) +
                      " in flight, would end after the model's time limit of 2^62 ps (about 53 "
                      "days of simulated time); raise hbm.aggregate_gbps (" +
                      gbps_text(agg_) +
                      " GB/s after overheads) or hbm.bytes_per_cycle_per_core / cores.freq_mhz "
                      "(per-core cap " +
                      gbps_text(cap_) + " GB/s)");
  }
  return t_ + static_cast<common::TimePs>(dt);
}

void HbmFlowModel::advance(common::TimePs now) {
  NPU_CHECK(now >= clock_ps_, "HBM flow model driven backwards in time");
  for (;;) {
    const common::TimePs te = heap_.empty() ? common::kNever : top_finish_ps();
    const common::TimePs tp = no_promises() ? common::kNever : promised_[promised_head_].end_ps;
    const common::TimePs tf = std::min(te, tp);
    if (tf > now) break;          // also when nothing is in flight: now < kNever
    top_finish_ps_ = kUnknownPs;  // flows leave below
    // t_ <= clock_ps_ always, and flows in flight are busy from clock_ps_ up to tf.
    if (tf > clock_ps_) {
      busy_ps_ += tf - clock_ps_;
      clock_ps_ = tf;
    }
    if (tp < te) {
      // Promised flows exist only while every flow runs at the cap, and the one leaving
      // keeps it so: nobody's rate changes, so the anchor stays (no rounding drift).
      while (!no_promises() && promised_[promised_head_].end_ps <= tf) pop_promised();
      if (in_flight() == 0) {
        v_ = 0;
        t_ = tf;
      }
      continue;
    }
    // Every flow whose finish, computed from the state before any of them leaves, rounds to
    // tf completes at tf; the survivors then share the bandwidth they free.
    const double r = rate();
    const double v0 = v_;
    const common::TimePs t0 = t_;
    const double v_at_tf = v0 + static_cast<double>(tf - t0) * r;
    double v_done = v_at_tf;
    bool removed = false;
    while (!heap_.empty()) {
      const Flow& f = heap_.top();
      const double dv = f.finish_v - v0;
      if (dv > 0 && std::ceil(dv / r) > static_cast<double>(tf - t0)) break;
      v_done = std::max(v_done, f.finish_v);
      finished_.push_back(f.tag);
      heap_.pop();
      removed = true;
    }
    // finish_ps() and the test above round alike, so the flow that set tf always leaves;
    // were it ever to stay, the loop would spin at tf for ever.
    NPU_CHECK(removed, "HBM flow model made no progress at " + std::to_string(tf) + " ps");
    t_ = tf;
    v_ = in_flight() == 0 ? 0.0 : v_done;  // restart from 0 when idle: keeps doubles precise
  }
  if (in_flight() != 0) busy_ps_ += now - clock_ps_;
  clock_ps_ = now;
  if (in_flight() == 0) {
    t_ = now;
    top_finish_ps_ = kUnknownPs;
  }
}

common::TimePs HbmFlowModel::start(common::TimePs now, std::uint64_t bytes, std::uint64_t tag,
                                   bool promise) {
  advance(now);
  // Re-anchor at `now`: the rate is about to change for everyone in flight.
  v_ += static_cast<double>(now - t_) * rate();
  t_ = now;
  top_finish_ps_ = kUnknownPs;
  const double finish_v = v_ + static_cast<double>(bytes);
  total_bytes_ += bytes;
  const double n = static_cast<double>(in_flight() + 1);
  if (agg_ / n >= cap_) {  // the same test as rate(): everyone, this one too, keeps the cap
    if (promise) {
      // At the cap from now to its end, as the flow would run if left to the event path.
      const double dt = std::ceil(static_cast<double>(bytes) / cap_);
      // A promise past the time limit is not made; finish_ps() then refuses the flow.
      if (now < common::kTimeLimitPs && dt < static_cast<double>(common::kTimeLimitPs - now)) {
        const common::TimePs end = now + static_cast<common::TimePs>(dt);
        push_promised(Promised{end, finish_v, seq_++, tag});
        return end;
      }
    }
  } else {
    // The flows slow down: every pending promise is withdrawn and its flow now follows the
    // shared rate like the others. Promises ending at or before `now` were kept (advance).
    for (std::size_t i = promised_head_; i < promised_.size(); ++i) {
      const Promised& p = promised_[i];
      heap_.push(Flow{p.finish_v, p.seq, p.tag});
      revoked_.push_back(p.tag);
    }
    promised_.clear();
    promised_head_ = 0;
  }
  heap_.push(Flow{finish_v, seq_++, tag});
  return common::kNever;
}

void HbmFlowModel::push_promised(const Promised& p) {
  // Ended entries go once they are half the vector: memory stays bounded by those in flight.
  if (promised_head_ >= 32 && 2 * promised_head_ >= promised_.size()) {
    promised_.erase(promised_.begin(),
                    promised_.begin() + static_cast<std::ptrdiff_t>(promised_head_));
    promised_head_ = 0;
  }
  // After every entry ending no later (the new promise has the highest seq): an insertion
  // step, as the entries it passes are few.
  promised_.push_back(p);
  std::size_t i = promised_.size() - 1;
  for (; i > promised_head_ && promised_[i - 1].end_ps > p.end_ps; --i) {
    promised_[i] = promised_[i - 1];
  }
  promised_[i] = p;
}

void HbmFlowModel::complete_until(common::TimePs now, std::vector<std::uint64_t>& done_tags) {
  advance(now);
  done_tags.insert(done_tags.end(), finished_.begin(), finished_.end());
  finished_.clear();
}

}  // namespace pypto::sim
