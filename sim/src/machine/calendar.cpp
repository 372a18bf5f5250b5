// SPDX-License-Identifier: Apache-2.0
#include "calendar.h"

#include <type_traits>

namespace pypto::sim {

using common::kNever;
using common::TimePs;

Calendar::Calendar(sc_core::sc_module_name name) : sc_module(name) {
  // Initialised: the first activation, at time 0, runs the agents due then and arms the
  // next time; each later activation re-arms itself with next_trigger.
  SC_METHOD(run);
}

std::uint32_t Calendar::join(CalendarAgent& agent) {
  agents_.push_back(&agent);
  time_.push_back(kNever);
  slot_.push_back(kAbsent);
  const auto rank = static_cast<std::uint32_t>(agents_.size() - 1);
  if (rank >> kRankBits != 0) widen();
  narrow_.reserve(agents_.size());
  wide_heap_.reserve(wide_ ? agents_.size() : 0);
  return rank;
}

void Calendar::stop() {
  stopped_ = true;
  sc_core::sc_stop();
}

// Every entry as a 128-bit key in the same place: the order, and so the heap, is the same.
void Calendar::widen() {
  wide_heap_.clear();
  wide_heap_.reserve(agents_.size());
  for (const Narrow k : narrow_) wide_heap_.push_back(wide_of(k));
  narrow_.clear();
  wide_ = true;
}

void Calendar::place(std::uint32_t rank) {
  const TimePs t = time_[rank];
  const std::uint32_t i = slot_[rank];
  if (!wide_) {
    if (t < kNarrowLimitPs) return place_in(narrow_, i, narrow_key(t, rank));
    if (t == kNever) {
      if (i != kAbsent) remove_at(narrow_, i);
      return;
    }
    widen();
  }
  if (t == kNever) {
    if (i != kAbsent) remove_at(wide_heap_, i);
    return;
  }
  place_in(wide_heap_, i, wide_key(t, rank));
}

// The entry at i (kAbsent: none) becomes k.
template <class K>
[[gnu::always_inline]] inline void Calendar::place_in(std::vector<K>& heap, std::uint32_t i, K k) {
  if (i == kAbsent) {
    heap.push_back(k);
    sift_up(heap, static_cast<std::uint32_t>(heap.size() - 1), k);
  } else if (k < heap[i]) {
    sift_up(heap, i, k);
  } else {
    sift_down(heap, i, k);
  }
}

template <class K>
void Calendar::sift_up(std::vector<K>& heap, std::uint32_t i, K k) {
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!(k < heap[parent])) break;
    heap[i] = heap[parent];
    slot_[rank_of(heap[i])] = i;
    i = parent;
  }
  heap[i] = k;
  slot_[rank_of(k)] = i;
}

template <class K>
void Calendar::sift_down(std::vector<K>& heap, std::uint32_t i, K k) {
  const auto n = static_cast<std::uint32_t>(heap.size());
  for (;;) {
    std::uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap[child + 1] < heap[child]) ++child;
    if (!(heap[child] < k)) break;
    heap[i] = heap[child];
    slot_[rank_of(heap[i])] = i;
    i = child;
  }
  heap[i] = k;
  slot_[rank_of(k)] = i;
}

template <class K>
void Calendar::remove_at(std::vector<K>& heap, std::uint32_t i) {
  slot_[rank_of(heap[i])] = kAbsent;
  const K last = heap.back();
  heap.pop_back();
  if (i == heap.size()) return;
  if (i > 0 && last < heap[(i - 1) / 2]) {
    sift_up(heap, i, last);
  } else {
    sift_down(heap, i, last);
  }
}

void Calendar::run() {
  if (stopped_ || empty()) return;
  const TimePs sc_now = sc_core::sc_get_curr_simcontext()->time_stamp().value();
  if (sc_now > now_) now_ = sc_now;
  // Times due before the horizon run in this activation, as SystemC would run them in
  // activations of their own (nothing else is scheduled in SystemC: the order is the same).
  const TimePs horizon = sc_now + kQuantumPs;
  if (!wide_) run_due(narrow_, horizon);
  if (wide_ && !stopped_) run_due(wide_heap_, horizon);  // also after a widening
  if (stopped_) return;
  if (!empty()) next_trigger(sc_core::sc_time::from_value(front_time() - sc_now));
}

// The agents due before the horizon, in order; returns early when the heap is widened.
template <class K>
void Calendar::run_due(std::vector<K>& heap, TimePs horizon) {
  while (!heap.empty()) {
    const TimePs due = time_of(heap.front());
    if (due > now_) {
      if (due >= horizon) break;
      now_ = due;
    }
    // The agent keeps its entry while it acts and is placed by what it asked for.
    const std::uint32_t r = rank_of(heap.front());
    acting_ = r;
    time_[r] = kNever;
    agents_[r]->act();
    acting_ = kAbsent;
    if (stopped_) return;
    // Most agents ask for a later time, which only moves their entry down (its key only
    // grows: the new time is at least the one it acted at), or for none.
    const TimePs t = time_[r];
    if (wide_ == std::is_same_v<K, Wide>) {  // `heap` is still the live one
      if (t == kNever) {
        remove_at(heap, slot_[r]);
        continue;
      }
      if (std::is_same_v<K, Narrow> && t < kNarrowLimitPs) {
        sift_down(heap, slot_[r], static_cast<K>(narrow_key(t, r)));
        continue;
      }
    }
    place(r);
    if (wide_ != std::is_same_v<K, Wide>) return;
  }
}

}  // namespace pypto::sim
