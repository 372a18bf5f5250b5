// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/memory/l2_cache.h"

#include <string>

#include "pypto/sched/errors.h"

namespace pypto::sim {

namespace {

// 64 M lines is 32 GiB of L2 at 512 B lines, far above any chip we model; the bound keeps a
// typo in l2.size_kib from turning into a multi-gigabyte allocation (or bad_alloc).
constexpr std::uint64_t kMaxLines = std::uint64_t{1} << 26;

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

L2Cache::L2Cache(std::uint64_t size_bytes, std::uint32_t line_bytes, std::uint32_t ways) {
  if (!is_power_of_two(line_bytes)) {
    throw ConfigError("l2.line_bytes = " + std::to_string(line_bytes) +
                      " is not valid; expected a power of two (e.g. 512)");
  }
  if (ways == 0) throw ConfigError("l2.ways = 0 is not valid; expected at least 1");
  const std::uint64_t set_bytes = std::uint64_t{line_bytes} * ways;
  if (size_bytes == 0 || size_bytes % set_bytes != 0) {
    throw ConfigError("l2.size = " + std::to_string(size_bytes) +
                      " bytes is not valid; expected a positive multiple of l2.line_bytes * "
                      "l2.ways = " +
                      std::to_string(line_bytes) + " * " + std::to_string(ways) + " = " +
                      std::to_string(set_bytes) + " bytes");
  }
  const std::uint64_t lines = size_bytes / line_bytes;
  if (lines > kMaxLines) {
    throw ConfigError("l2.size = " + std::to_string(size_bytes) + " bytes with l2.line_bytes = " +
                      std::to_string(line_bytes) + " gives " + std::to_string(lines) +
                      " lines; expected at most " + std::to_string(kMaxLines));
  }
  line_bytes_ = line_bytes;
  while ((std::uint64_t{1} << line_shift_) < line_bytes) ++line_shift_;
  ways_ = ways;
  sets_ = size_bytes / set_bytes;
  tag_.assign(lines, 0);
  stamp_.assign(lines, 0);
  dirty_.assign(lines, 0);
  fill_.assign(sets_, 0);
}

L2Cache::Result L2Cache::access(std::uint64_t addr, std::uint64_t bytes, bool is_write) {
  Result r;
  if (bytes == 0) return r;
  NPU_CHECK(bytes - 1 <= ~std::uint64_t{0} - addr, "L2 access range wraps past 2^64");

  const std::uint64_t last_byte = addr + (bytes - 1);
  const std::uint64_t first_line = addr >> line_shift_;
  const std::uint64_t last_line = last_byte >> line_shift_;
  const std::uint64_t mask = line_bytes_ - 1;
  // Bytes touched in the first and last line; every line in between is touched whole.
  const std::uint64_t head_bytes = first_line == last_line ? bytes : line_bytes_ - (addr & mask);
  const std::uint64_t tail_bytes = (last_byte & mask) + 1;

  // One division per call: consecutive lines map to consecutive sets, so walk the set index
  // instead of taking line % sets_ per line (the L2 is rarely a power-of-two number of sets).
  std::uint64_t set = first_line % sets_;
  std::uint64_t* const tags = tag_.data();
  std::uint64_t* const stamps = stamp_.data();
  std::uint8_t* const dirty = dirty_.data();
  std::uint32_t* const fill = fill_.data();
  const std::uint32_t ways = ways_;

  for (std::uint64_t line = first_line;; ++line) {
    const std::uint64_t touched =
        line == first_line ? head_bytes : (line == last_line ? tail_bytes : line_bytes_);
    const std::uint64_t base = set * ways;
    std::uint64_t* const set_tags = tags + base;

    const std::uint32_t filled = fill[set];
    std::uint32_t way = 0;
    while (way < filled && set_tags[way] != line) ++way;

    if (way < filled) {  // hit
      stamps[base + way] = ++clock_;
      if (is_write) dirty[base + way] = 1;
      r.hit_bytes += touched;
      ++hit_lines_;
    } else {
      // Victim: the next empty way, or in a full set the way with the oldest stamp.
      std::uint64_t* const set_stamps = stamps + base;
      std::uint32_t victim = filled;
      if (filled < ways) {
        fill[set] = filled + 1;
      } else {
        victim = 0;
        std::uint64_t oldest = set_stamps[0];
        for (std::uint32_t w = 1; w < ways; ++w) {
          if (set_stamps[w] < oldest) {
            oldest = set_stamps[w];
            victim = w;
          }
        }
      }
      const std::uint64_t slot = base + victim;
      if (dirty[slot]) r.writeback_bytes += line_bytes_;  // empty ways are never dirty
      tags[slot] = line;
      stamps[slot] = ++clock_;
      dirty[slot] = is_write ? 1 : 0;
      if (is_write && touched == line_bytes_) {
        // The write supplies every byte of the line: allocate without reading HBM.
        r.hit_bytes += touched;
        ++hit_lines_;
      } else {
        r.miss_bytes += line_bytes_;
        ++miss_lines_;
      }
    }

    if (line == last_line) break;
    if (++set == sets_) set = 0;
  }
  return r;
}

std::uint64_t L2Cache::resident_lines() const {
  std::uint64_t n = 0;
  for (const std::uint32_t f : fill_) n += f;
  return n;
}

}  // namespace pypto::sim
