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
  std::uint32_t line_bytes_ = 0, line_shift_ = 0, ways_ = 0;
  std::uint64_t sets_ = 0;
  // Per way: tag (line address), LRU stamp and dirty bit, set-major; valid only below
  // fill_ of its set.
  std::vector<std::uint64_t> tag_;
  std::vector<std::uint64_t> stamp_;
  std::vector<std::uint8_t> dirty_;
  // Per set: ways in use. Lines are never invalidated, so a set fills ways 0, 1, ... in
  // order: hits scan only the filled ways and a miss in a set that is not full takes the
  // next way without an LRU scan (halves the cost of cold fills).
  std::vector<std::uint32_t> fill_;
  std::uint64_t clock_ = 0;
  std::uint64_t hit_lines_ = 0, miss_lines_ = 0;
};

}  // namespace pypto::sim
