// SPDX-License-Identifier: Apache-2.0
// Task id -> task index for the readers that resolve successors named by id: open addressing
// in one array (8 bytes a slot for 32-bit ids, 12 for 64-bit keys; at most 3/4 full, which
// with Fibonacci hashing and linear probing costs about two probes a lookup), instead of a
// node per task.
#pragma once

#include <cstdint>
#include <vector>

namespace pypto::sim::trace_detail {

template <class Key>
class IdIndex {
 public:
  static constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;

  // Contract: maps `key` to `value` unless `key` is there already; returns the value the
  // key maps to after the call (the earlier one for a key seen before).
  std::uint32_t insert(Key key, std::uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    std::size_t i = slot_of(key);
    while (slots_[i].value != kAbsent) {
      if (slots_[i].key == key) return slots_[i].value;
      i = (i + 1) & mask_;
    }
    slots_[i] = {key, value};
    ++size_;
    return value;
  }
  // Contract: the value of `key`, kAbsent if it is not there.
  std::uint32_t find(Key key) const {
    if (slots_.empty()) return kAbsent;
    std::size_t i = slot_of(key);
    while (slots_[i].value != kAbsent) {
      if (slots_[i].key == key) return slots_[i].value;
      i = (i + 1) & mask_;
    }
    return kAbsent;
  }
  void reserve(std::size_t n) {
    while (slots_.size() * 3 < n * 4) grow();
  }
  void clear() {
    std::vector<Slot>().swap(slots_);
    size_ = 0;
    mask_ = 0;
    shift_ = 64;
  }

 private:
  struct __attribute__((packed)) Slot {
    Key key = 0;
    std::uint32_t value = kAbsent;
  };
  // Fibonacci hashing: the top bits of key * 2^64/phi. (Keeping consecutive ids in
  // consecutive slots made long runs that collided with each other.)
  std::size_t slot_of(Key key) const {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull) >>
                                    shift_);
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    shift_ = 64;
    for (std::size_t n = slots_.size(); n > 1; n >>= 1) --shift_;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.value != kAbsent) insert(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace pypto::sim::trace_detail
