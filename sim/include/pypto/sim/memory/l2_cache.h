// SPDX-License-Identifier: Apache-2.0
// The chip's L2: line-granular, set-associative, LRU, write-allocate, write-back. Plain C++
// (no SystemC) so it can be tested on access patterns alone. The contents may outlive one
// simulation (SimOptions::l2_state carries them from one kernel call to the next); the
// counters are per run (reset_counters()).
#pragma once

#include <cstdint>
#include <vector>

namespace pypto::sim {

class L2Cache {
 public:
  struct Result {
    std::uint64_t hit_bytes = 0;        // bytes touched in resident lines (reads or writes)
    std::uint64_t miss_bytes = 0;       // bytes of lines filled from HBM: read misses and
                                        // writes that allocate a line they cover partly
    std::uint64_t alloc_bytes = 0;      // writes that allocate a line they cover whole: no
                                        // fill, no HBM traffic now (written back on eviction)
    std::uint64_t writeback_bytes = 0;  // dirty lines evicted to make room
  };

  // Line counts since construction or the last reset_counters(). Reads and writes apart: a
  // write that allocates a line is neither a hit nor a read miss, so counting it as a hit
  // (as a single hit rate does) shows a plain stream, read once and written once, at 50 %.
  struct Counters {
    std::uint64_t read_hits = 0;          // read of a resident line
    std::uint64_t read_misses = 0;        // read of a line not resident: filled from HBM
    std::uint64_t write_hits = 0;         // write to a resident line
    std::uint64_t write_allocations = 0;  // write to a line not resident: a way allocated
    std::uint64_t write_fills = 0;        // of those, lines written partly: filled from HBM
    std::uint64_t writebacks = 0;         // dirty lines evicted (written to HBM)
  };

  // size_bytes must be a multiple of line_bytes * ways; line_bytes a power of two.
  // Throws ConfigError otherwise.
  L2Cache(std::uint64_t size_bytes, std::uint32_t line_bytes, std::uint32_t ways);

  // Contract: called in simulated-time order by the core that moves the data. Touches
  // every line of [addr, addr + bytes), allocating on a miss (reads fill, writes allocate
  // and mark dirty), and updates LRU order.
  Result access(std::uint64_t addr, std::uint64_t bytes, bool is_write);

  const Counters& counters() const { return counters_; }
  // Contract: zeroes the counters and keeps every line, dirty bit and the LRU order.
  void reset_counters() { counters_ = Counters{}; }
  std::uint64_t resident_lines() const;
  // Lines written and not yet written back: HBM traffic still owed when a run ends.
  std::uint64_t dirty_lines() const;
  std::uint64_t size_bytes() const { return sets_ * ways_ * line_bytes_; }
  std::uint32_t ways() const { return ways_; }
  std::uint32_t line_bytes() const { return line_bytes_; }

 private:
  // Two layouts hold the same state. access() is the simulator's hottest function (a task
  // touches ~200 lines), so most caches use the compact one; the generic one covers the rest.
  //
  // Compact (2..16 ways): one record per set, so a set's metadata is one or two host cache
  // lines and a range's consecutive sets are consecutive records (80 B per 16-way set instead
  // of 276 B spread over four arrays). A tag is line / sets + 1 (0 = empty way) and fits 32
  // bits; LRU order is a permutation of 4-bit way numbers, so a hit is a move-to-front and
  // the victim is the last nibble, with no clock that could overflow. Empty ways sit at the
  // LRU end in ascending order, so a set fills ways 0, 1, ... like the generic layout.
  template <unsigned kSlots>
  struct alignas(16) CompactSet {
    std::uint32_t tag[kSlots];  // slots at or above ways_ stay 0 forever
    std::uint64_t order;        // nibble i = the way at recency rank i (0 = most recent)
    std::uint16_t dirty;        // bit w = way w is dirty
  };

  // Generic (1 way, more than 16 ways, or from the first line whose tag needs more than 32
  // bits on): per way a 64-bit line address, a 64-bit LRU stamp and a dirty byte, set-major.

  // The lines one access touches and the bytes it touches in the first and the last.
  struct Lines {
    std::uint64_t first, last, head_bytes, tail_bytes;
  };
  template <unsigned kSlots, bool kWrite>
  Result access_compact(std::vector<CompactSet<kSlots>>& sets, const Lines& l);
  Result access_generic(const Lines& l, bool is_write);
  // Moves the compact state into the generic arrays, keeping every line, dirty bit and the
  // LRU order of every set; the cache stays generic afterwards.
  template <unsigned kSlots>
  void convert_to_generic(std::vector<CompactSet<kSlots>>& sets);
  template <unsigned kSlots>
  std::uint64_t compact_resident(const std::vector<CompactSet<kSlots>>& sets) const;
  template <unsigned kSlots>
  std::uint64_t compact_dirty(const std::vector<CompactSet<kSlots>>& sets) const;

  std::uint32_t line_bytes_ = 0, line_shift_ = 0, ways_ = 0;
  std::uint64_t sets_ = 0;

  unsigned compact_slots_ = 0;  // 4, 8 or 16 while compact (which vector is live), else 0
  std::vector<CompactSet<4>> compact4_;
  std::vector<CompactSet<8>> compact8_;
  std::vector<CompactSet<16>> compact16_;
  std::uint64_t compact_line_limit_ = 0;  // first line whose tag does not fit 32 bits
  std::uint64_t lru_active_ = 0;          // nibbles 0 .. ways_-1 of an order word

  // Generic layout. Per set: ways in use. Lines are never invalidated, so a set fills ways
  // 0, 1, ... in order: hits scan only the filled ways and a miss in a set that is not full
  // takes the next way without an LRU scan.
  std::vector<std::uint64_t> tag_;
  std::vector<std::uint64_t> stamp_;
  std::vector<std::uint8_t> dirty_;
  std::vector<std::uint32_t> fill_;
  std::uint64_t clock_ = 0;

  Counters counters_;
};

}  // namespace pypto::sim
