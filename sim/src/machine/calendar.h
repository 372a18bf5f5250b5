// SPDX-License-Identifier: Apache-2.0
// The run's one calendar of wake-ups (internal to sim/). Every agent of the model (cores,
// HBM, schedule threads, control flow) keeps at most one pending wake-up here instead of a
// SystemC event of its own; one SystemC process advances simulated time from each time due
// to the next and, at each, runs the agents due then in the model's tie order:
//
//   time, then the agent's rank (the order in which agents joined the calendar).
//
// simulate() makes agents join in the order cores by id, HBM, schedule threads by id,
// control flow, so results are defined by the model, not by the SystemC kernel's choice
// among processes due at one time. An agent woken for the current time by another one runs
// within that time, in rank order among the agents still due at it. An acting agent may
// also go on past the current time when no other agent is due before it there
// (advance_to): the SystemC process then catches up at its next activation.
//
// SystemC's time is a coarse clock of the model (temporal decoupling, as TLM's quantum): one
// activation runs every time due within kQuantumPs of SystemC's time at it, moving the
// model's time from each to the next, then sleeps until the next time due. Results do not
// depend on the quantum: the calendar alone decides the order.
#pragma once

#include <cstdint>
#include <systemc>
#include <type_traits>
#include <vector>

#include "pypto/common/types.h"

namespace pypto::sim {

// What the calendar wakes: an agent of the model.
class CalendarAgent {
 public:
  // Contract: called by the calendar at the agent's pending wake-up time (now), which the
  // calendar has already dropped; the agent may ask for a new one.
  virtual void act() = 0;

 protected:
  ~CalendarAgent() = default;
};

class Calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Calendar);
  explicit Calendar(sc_core::sc_module_name name);

  // Contract: before the simulation starts; returns the agent's rank (0, 1, ... in the order
  // of joining), which decides ties at one time: the lower rank acts first.
  std::uint32_t join(CalendarAgent& agent);

  // Contract: the agent of `rank` is woken at t_ps (>= now), or at its pending wake-up if
  // that is earlier (as a SystemC event keeps the earlier of two notifications).
  void wake_at(std::uint32_t rank, common::TimePs t_ps) {
    if (t_ps < time_[rank]) set(rank, t_ps);
  }
  // Contract: the agent's pending wake-up becomes t_ps (>= now; kNever: none).
  void set(std::uint32_t rank, common::TimePs t_ps) {
    if (t_ps == time_[rank]) return;
    time_[rank] = t_ps;
    // The acting agent's entry is placed once it has acted (most agents re-arm themselves).
    if (rank != acting_) place(rank);
  }
  // The agent's pending wake-up (kNever: none).
  common::TimePs pending(std::uint32_t rank) const { return time_[rank]; }

  // The model's current time: SystemC's at each activation, later within it (the quantum,
  // advance_to).
  common::TimePs now() const { return now_; }
  // True if an agent other than the acting one (`rank`) is due before that one would act
  // at t_ps >= now in the tie order.
  bool due_before(common::TimePs t_ps, std::uint32_t rank) const {
    if (!wide_ && t_ps < kNarrowLimitPs) return due_before_in(narrow_, narrow_key(t_ps, rank));
    return wide_ ? due_before_in(wide_heap_, wide_key(t_ps, rank))
                 : due_before_in(narrow_, wide_key(t_ps, rank));
  }
  // Contract: called by the acting agent `rank` when !due_before(t_ps, rank): the model's
  // time moves on to t_ps with no other agent acting in between (the acting agent would
  // have been the next to act at t_ps anyway).
  void advance_to(common::TimePs t_ps) { now_ = t_ps; }

  // Contract: no agent acts after the one acting now (the run failed); SystemC stops too.
  void stop();

 private:
  // A heap entry: the tie order of the model in one number (time, then rank). A 64-bit
  // one (kRankBits for the rank) while every time is below kNarrowLimitPs and every rank
  // fits; past that the heap becomes 128-bit (widen) for the rest of the run. One order.
  using Narrow = std::uint64_t;
  using Wide = unsigned __int128;
  static constexpr unsigned kRankBits = 8;
  static constexpr common::TimePs kNarrowLimitPs = common::TimePs{1} << (64 - kRankBits);
  static Narrow narrow_key(common::TimePs t_ps, std::uint32_t rank) {
    return (t_ps << kRankBits) | rank;
  }
  static Wide wide_key(common::TimePs t_ps, std::uint32_t rank) {
    return (static_cast<Wide>(t_ps) << 32) | rank;
  }
  static Wide wide_of(Narrow k) { return wide_key(k >> kRankBits, rank_of(k)); }
  static Wide wide_of(Wide k) { return k; }
  static std::uint32_t rank_of(Narrow k) {
    return static_cast<std::uint32_t>(k & ((Narrow{1} << kRankBits) - 1));
  }
  static std::uint32_t rank_of(Wide k) { return static_cast<std::uint32_t>(k); }
  static common::TimePs time_of(Narrow k) { return k >> kRankBits; }
  static common::TimePs time_of(Wide k) { return static_cast<common::TimePs>(k >> 32); }
  // a < b in the tie order; keys of one width compare as they are (the common case: no
  // 128-bit conversion on the 64-bit heap).
  template <class A, class B>
  static bool key_less(A a, B b) {
    if constexpr (std::is_same_v<A, B>) {
      return a < b;
    } else {
      return wide_of(a) < wide_of(b);
    }
  }
  template <class H, class K>
  static bool due_before_in(const std::vector<H>& heap, K k) {
    // The acting agent keeps its entry while it acts; the others' earliest is then below it.
    if (rank_of(heap[0]) != rank_of(k)) return key_less(heap[0], k);
    return (heap.size() > 1 && key_less(heap[1], k)) || (heap.size() > 2 && key_less(heap[2], k));
  }

  void run();
  template <class K>
  void run_due(std::vector<K>& heap, common::TimePs horizon);
  void place(std::uint32_t rank);  // moves the agent's entry to time_[rank]
  template <class K>
  void place_in(std::vector<K>& heap, std::uint32_t i, K k);
  template <class K>
  void sift_up(std::vector<K>& heap, std::uint32_t i, K k);
  template <class K>
  void sift_down(std::vector<K>& heap, std::uint32_t i, K k);
  template <class K>
  void remove_at(std::vector<K>& heap, std::uint32_t i);
  void widen();
  bool empty() const { return wide_ ? wide_heap_.empty() : narrow_.empty(); }
  common::TimePs front_time() const {
    return wide_ ? time_of(wide_heap_.front()) : time_of(narrow_.front());
  }

  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};
  // How far one activation runs ahead of SystemC's time: a SystemC timestep costs ~600
  // instructions, and distinct times are ~50 ns apart in a busy chip.
  static constexpr common::TimePs kQuantumPs = 1'000'000;
  std::vector<CalendarAgent*> agents_;  // by rank
  std::vector<common::TimePs> time_;    // by rank: pending wake-up (kNever: none)
  std::vector<std::uint32_t> slot_;     // by rank: position in the heap (kAbsent: none)
  std::vector<Narrow> narrow_;          // the pending wake-ups, a binary min-heap ...
  std::vector<Wide> wide_heap_;         // ... or, once widened, this one
  bool wide_ = false;
  std::uint32_t acting_ = kAbsent;  // the agent acting now
  common::TimePs now_ = 0;
  bool stopped_ = false;
};

}  // namespace pypto::sim
