// SPDX-License-Identifier: Apache-2.0
#include "calendar.h"

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
  heap_.reserve(agents_.size());
  return static_cast<std::uint32_t>(agents_.size() - 1);
}

void Calendar::stop() {
  stopped_ = true;
  sc_core::sc_stop();
}

void Calendar::place(std::uint32_t rank) {
  const TimePs t = time_[rank];
  const std::uint32_t i = slot_[rank];
  if (t == kNever) {
    if (i != kAbsent) remove_at(i);
    return;
  }
  const Key k = key(t, rank);
  if (i == kAbsent) {
    heap_.push_back(k);
    sift_up(static_cast<std::uint32_t>(heap_.size() - 1), k);
  } else if (k < heap_[i]) {
    sift_up(i, k);
  } else {
    sift_down(i, k);
  }
}

void Calendar::sift_up(std::uint32_t i, Key k) {
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!(k < heap_[parent])) break;
    heap_[i] = heap_[parent];
    slot_[rank_of(heap_[i])] = i;
    i = parent;
  }
  heap_[i] = k;
  slot_[rank_of(k)] = i;
}

void Calendar::sift_down(std::uint32_t i, Key k) {
  const auto n = static_cast<std::uint32_t>(heap_.size());
  for (;;) {
    std::uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
    if (!(heap_[child] < k)) break;
    heap_[i] = heap_[child];
    slot_[rank_of(heap_[i])] = i;
    i = child;
  }
  heap_[i] = k;
  slot_[rank_of(k)] = i;
}

void Calendar::remove_at(std::uint32_t i) {
  slot_[rank_of(heap_[i])] = kAbsent;
  const Key last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  if (i > 0 && last < heap_[(i - 1) / 2]) {
    sift_up(i, last);
  } else {
    sift_down(i, last);
  }
}

void Calendar::run() {
  if (stopped_ || heap_.empty()) return;
  const TimePs sc_now = sc_core::sc_get_curr_simcontext()->time_stamp().value();
  if (sc_now > now_) now_ = sc_now;
  // Times due before the horizon run in this activation, as SystemC would run them in
  // activations of their own (nothing else is scheduled in SystemC: the order is the same).
  const TimePs horizon = sc_now + kQuantumPs;
  while (!heap_.empty()) {
    const TimePs due = static_cast<TimePs>(heap_.front() >> 32);
    if (due > now_) {
      if (due >= horizon) break;
      now_ = due;
    }
    // The agent keeps its entry while it acts and is placed by what it asked for.
    const std::uint32_t r = rank_of(heap_.front());
    acting_ = r;
    time_[r] = kNever;
    agents_[r]->act();
    acting_ = kAbsent;
    if (stopped_) return;
    place(r);
  }
  if (!heap_.empty()) {
    next_trigger(sc_core::sc_time::from_value(static_cast<TimePs>(heap_.front() >> 32) - sc_now));
  }
}

}  // namespace pypto::sim
