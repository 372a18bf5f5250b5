// SPDX-License-Identifier: Apache-2.0
// The chip's L2: line-granular, set-associative, LRU, write-allocate, write-back. Plain C++
// (no SystemC) so it can be tested on access patterns alone.
#pragma once

#include <cstdint>
#include <vector>

namespace pypto::sim {

class L2Cache {
 public:
  struct Result {
    std::uint64_t hit_bytes = 0;        // bytes served from resident lines
    std::uint64_t miss_bytes = 0;       // bytes of lines that had to be filled from HBM
                                        // (whole lines; writes that cover a whole line
                                        // allocate without a fill and count as hits)
    std::uint64_t writeback_bytes = 0;  // dirty lines evicted to make room
  };

  // size_bytes must be a multiple of line_bytes * ways; line_bytes a power of two.
  // Throws ConfigError otherwise.
  L2Cache(std::uint64_t size_bytes, std::uint32_t line_bytes, std::uint32_t ways);

  // Contract: called in simulated-time order by the core that moves the data. Touches
  // every line of [addr, addr + bytes), allocating on a miss (reads fill, writes allocate
  // and mark dirty), and updates LRU order.
  Result access(std::uint64_t addr, std::uint64_t bytes, bool is_write);

  // Line counts since construction; a whole-line write that allocates counts as a hit.
  std::uint64_t hit_lines() const { return hit_lines_; }
  std::uint64_t miss_lines() const { return miss_lines_; }
  std::uint64_t resident_lines() const;
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

  std::uint64_t hit_lines_ = 0, miss_lines_ = 0;
};

}  // namespace pypto::sim
