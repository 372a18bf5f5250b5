// SPDX-License-Identifier: Apache-2.0
// Task id -> task index for the readers that resolve successors named by id. Ids that come
// as 0, 1, 2, ... (PyPTO numbers a device task's tasks so, and pypto-sim gen does) go into a
// plain array indexed by id: inserting them appends, a successor's lookup lands near the ids
// just read. The first id out of that order starts a hash table for it and every later id:
// open addressing in one array (8 bytes a slot for 32-bit ids, 12 for 64-bit keys; at most
// 3/4 full, which with Fibonacci hashing and linear probing costs about two probes a lookup).
// At 10M tasks the hash's probes were a fifth of a fixed-latency run, each a cache miss.
#pragma once

#include <cstdint>
#include <vector>

namespace pypto::trace::detail {

template <class Key>
class IdIndex {
 public:
  static constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;

  // Contract: maps `key` to `value` unless `key` is there already; returns the value the
  // key maps to after the call (the earlier one for a key seen before).
  std::uint32_t insert(Key key, std::uint32_t value) {
    if (key < dense_.size()) return dense_[static_cast<std::size_t>(key)];
    // The array grows only while the hash is empty: then every key below its size is in it,
    // and every key in the hash is above it.
    if (size_ == 0 && key == dense_.size()) {
      dense_.push_back(value);
      return value;
    }
    if (slots_.empty())
      reserve_slots(reserve_hint_ > dense_.size() ? reserve_hint_ - dense_.size() : 0);
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    return insert_hashed(key, value);
  }
  // Contract: the value of `key`, kAbsent if it is not there.
  std::uint32_t find(Key key) const {
    if (key < dense_.size()) return dense_[static_cast<std::size_t>(key)];
    if (slots_.empty()) return kAbsent;
    std::size_t i = slot_of(key);
    while (slots_[i].value != kAbsent) {
      if (slots_[i].key == key) return slots_[i].value;
      i = (i + 1) & mask_;
    }
    return kAbsent;
  }
  // Contract: room for `n` keys without growing, in the array while the keys come in order
  // (the hash takes its room when the first key out of order comes).
  void reserve(std::size_t n) {
    reserve_hint_ = n;
    if (size_ == 0) {
      dense_.reserve(n);
    } else {
      reserve_slots(n > dense_.size() ? n - dense_.size() : 0);
    }
  }
  void clear() {
    std::vector<std::uint32_t>().swap(dense_);
    reserve_hint_ = 0;
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
  void reserve_slots(std::size_t n) {
    while (slots_.size() * 3 < n * 4) grow();
  }
  // The hash's own insert (insert() without the array's rule): grow() re-inserts through it,
  // so a rehash never moves a key into the array.
  std::uint32_t insert_hashed(Key key, std::uint32_t value) {
    std::size_t i = slot_of(key);
    while (slots_[i].value != kAbsent) {
      if (slots_[i].key == key) return slots_[i].value;
      i = (i + 1) & mask_;
    }
    slots_[i] = {key, value};
    ++size_;
    return value;
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
      if (s.value != kAbsent) insert_hashed(s.key, s.value);
    }
  }
  std::vector<std::uint32_t> dense_;  // dense_[k]: the value of key k, for keys 0 .. size-1
  std::size_t reserve_hint_ = 0;
  std::vector<Slot> slots_;
  std::size_t size_ = 0;  // keys in the hash
  std::size_t mask_ = 0;
  int shift_ = 64;
};

// (seq, id) -> value, for ids that start again at 0 in every seq (dyn_topo.txt numbers each
// device task's tasks so, under its seqNo): one IdIndex per seq, so each seq's ids in order go
// to an array of their own, 4 bytes a task, and a lookup lands near the ids just read. (One
// IdIndex over seq << 32 | id kept only the first seq in its array: at 10M tasks the rest were
// hash probes that missed the cache, a fifth of a dyn_topo.txt run.) The seqs themselves go
// through an IdIndex too: in order, a seq's index is found by an array read.
class SeqIdIndex {
 public:
  static constexpr std::uint32_t kAbsent = IdIndex<std::uint32_t>::kAbsent;

  // Contract: maps (seq, id) to `value` unless the pair is there already; returns the value
  // the pair maps to after the call (the earlier one for a pair seen before).
  std::uint32_t insert(std::uint32_t seq, std::uint32_t id, std::uint32_t value) {
    if (seq != last_seq_ || per_seq_.empty()) {
      last_slot_ = slot_of_seq_.insert(seq, static_cast<std::uint32_t>(per_seq_.size()));
      if (last_slot_ == per_seq_.size()) per_seq_.emplace_back();
      last_seq_ = seq;
    }
    return per_seq_[last_slot_].insert(id, value);
  }
  // Contract: the value of (seq, id), kAbsent if the pair is not there.
  std::uint32_t find(std::uint32_t seq, std::uint32_t id) const {
    const std::uint32_t slot = slot_of_seq_.find(seq);
    return slot == kAbsent ? kAbsent : per_seq_[slot].find(id);
  }
  void clear() {
    slot_of_seq_.clear();
    std::vector<IdIndex<std::uint32_t>>().swap(per_seq_);
    last_seq_ = 0;
    last_slot_ = 0;
  }

 private:
  IdIndex<std::uint32_t> slot_of_seq_;           // seq -> its position in per_seq_
  std::vector<IdIndex<std::uint32_t>> per_seq_;  // id -> value, one map per seq
  // The seq of the last insert and its slot: a file's lines come a seq at a time.
  std::uint32_t last_seq_ = 0, last_slot_ = 0;
};

}  // namespace pypto::trace::detail
