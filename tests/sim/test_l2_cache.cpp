// SPDX-License-Identifier: Apache-2.0
// L2Cache on access patterns worked out by hand. Most cases use a tiny cache of 4 sets x 2 ways
// x 64 B lines (512 B): line L lives in set L % 4, so byte addresses 0, 256, 512, 768 all map
// to set 0.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/sim/memory/l2_cache.h"

using Catch::Matchers::Contains;
using pypto::sim::L2Cache;

namespace {

constexpr std::uint64_t kLine = 64;

L2Cache tiny() { return L2Cache(512, 64, 2); }

// Lines found resident (reads and writes) and lines filled from HBM.
std::uint64_t hits(const L2Cache& c) { return c.counters().read_hits + c.counters().write_hits; }
std::uint64_t fills(const L2Cache& c) {
  return c.counters().read_misses + c.counters().write_fills;
}

bool read_hits(L2Cache& c, std::uint64_t addr) {
  const auto r = c.access(addr, kLine, false);
  return r.hit_bytes == kLine && r.miss_bytes == 0;
}

}  // namespace

TEST_CASE("L2: first touch misses whole lines, the second touch hits", "[l2]") {
  L2Cache c = tiny();
  auto r = c.access(0, 128, false);
  CHECK(r.hit_bytes == 0);
  CHECK(r.miss_bytes == 128);
  CHECK(r.writeback_bytes == 0);
  CHECK(fills(c) == 2);
  CHECK(c.resident_lines() == 2);

  r = c.access(0, 128, false);
  CHECK(r.hit_bytes == 128);
  CHECK(r.miss_bytes == 0);
  CHECK(hits(c) == 2);
  CHECK(fills(c) == 2);
  CHECK(c.line_bytes() == 64);
}

TEST_CASE("L2: zero-byte access touches nothing", "[l2]") {
  L2Cache c = tiny();
  const auto r = c.access(100, 0, true);
  CHECK(r.hit_bytes + r.miss_bytes + r.writeback_bytes == 0);
  CHECK(hits(c) + fills(c) == 0);
  CHECK(c.resident_lines() == 0);
}

TEST_CASE("L2: a stream twice the cache size keeps only its newest half", "[l2]") {
  L2Cache c = tiny();
  // Lines 0..15: set s receives s, s+4, s+8, s+12 and keeps the last two.
  auto r = c.access(0, 1024, false);
  CHECK(r.miss_bytes == 1024);
  CHECK(c.resident_lines() == 8);
  // Lines 8..15 are resident.
  r = c.access(512, 512, false);
  CHECK(r.hit_bytes == 512);
  CHECK(r.miss_bytes == 0);
  // Lines 0..7 were evicted; re-reading them evicts 8..15 in LRU order, all misses.
  r = c.access(0, 512, false);
  CHECK(r.hit_bytes == 0);
  CHECK(r.miss_bytes == 512);
  CHECK(hits(c) == 8);
  CHECK(fills(c) == 24);
}

TEST_CASE("L2: ways+1 lines cycling through one set always miss", "[l2]") {
  L2Cache c = tiny();
  // Lines 0, 4 and 8 all map to set 0 (2 ways); the other 6 lines of the cache stay empty.
  for (int round = 0; round < 3; ++round) {
    for (std::uint64_t addr : {0u, 256u, 512u}) CHECK_FALSE(read_hits(c, addr));
  }
  CHECK(fills(c) == 9);
  CHECK(hits(c) == 0);
  CHECK(c.resident_lines() == 2);
  // The last round left set 0 holding 256 and 512 (0 was evicted by 512).
  CHECK(read_hits(c, 512));
  CHECK(read_hits(c, 256));
}

TEST_CASE("L2: touching a line protects it from LRU eviction", "[l2]") {
  L2Cache c = tiny();
  CHECK_FALSE(read_hits(c, 0));    // set 0: {0}
  CHECK_FALSE(read_hits(c, 256));  // set 0: {0, 256}
  CHECK(read_hits(c, 0));          // 0 is now the most recent
  CHECK_FALSE(read_hits(c, 512));  // evicts 256, the least recent
  CHECK(read_hits(c, 0));
  CHECK(read_hits(c, 512));
  CHECK_FALSE(read_hits(c, 256));
}

TEST_CASE("L2: only dirty evictions are written back", "[l2]") {
  L2Cache c = tiny();
  auto r = c.access(0, kLine, true);  // whole-line write: dirty line 0 in set 0
  CHECK(r.writeback_bytes == 0);
  c.access(256, kLine, false);      // clean line 4 in set 0
  r = c.access(512, kLine, false);  // evicts line 0 (LRU, dirty)
  CHECK(r.writeback_bytes == kLine);
  CHECK(r.miss_bytes == kLine);
  r = c.access(768, kLine, false);  // evicts line 4 (clean)
  CHECK(r.writeback_bytes == 0);

  // A write hit dirties a clean resident line; evicting it then writes back.
  r = c.access(512, 8, true);
  CHECK(r.hit_bytes == 8);
  CHECK(r.writeback_bytes == 0);
  c.access(768, kLine, false);    // 512 becomes LRU
  r = c.access(0, kLine, false);  // evicts 512, dirty by the hit
  CHECK(r.writeback_bytes == kLine);
  r = c.access(256, kLine, false);  // evicts 768, clean
  CHECK(r.writeback_bytes == 0);
}

TEST_CASE("L2: a whole-line write allocates without a fill", "[l2]") {
  L2Cache c = tiny();
  auto r = c.access(0, 128, true);
  // An allocation, not a hit: counting it as one showed plain streaming at a 50 % hit rate.
  CHECK(r.hit_bytes == 0);
  CHECK(r.alloc_bytes == 128);
  CHECK(r.miss_bytes == 0);
  CHECK(hits(c) == 0);
  CHECK(fills(c) == 0);
  CHECK(c.counters().write_allocations == 2);
  CHECK(c.dirty_lines() == 2);
  CHECK(c.resident_lines() == 2);
  // It is resident for a following read.
  r = c.access(0, 128, false);
  CHECK(r.hit_bytes == 128);
}

TEST_CASE("L2: partial lines count touched bytes on hits and whole lines on misses", "[l2]") {
  L2Cache c = tiny();
  // [32, 96): 32 B of line 0 and 32 B of line 1, both missing: two whole-line fills.
  auto r = c.access(32, 64, false);
  CHECK(r.hit_bytes == 0);
  CHECK(r.miss_bytes == 128);
  // [40, 140): line 0 24 B (hit), line 1 64 B (hit), line 2 12 B (miss, whole-line fill).
  r = c.access(40, 100, false);
  CHECK(r.hit_bytes == 88);
  CHECK(r.miss_bytes == 64);
  // Inside one line: 10 B of line 3 written, a partial write miss needs a fill.
  r = c.access(200, 10, true);
  CHECK(r.hit_bytes == 0);
  CHECK(r.miss_bytes == 64);
  CHECK(fills(c) == 4);
}

TEST_CASE("L2: a write covering whole middle lines fills only its partial ends", "[l2]") {
  L2Cache c = tiny();
  // [32, 160): line 0 partial 32 B (fill), line 1 whole (no fill), line 2 partial 32 B (fill).
  const auto r = c.access(32, 128, true);
  CHECK(r.hit_bytes == 0);
  CHECK(r.alloc_bytes == 64);
  CHECK(r.miss_bytes == 128);
  CHECK(hits(c) == 0);
  CHECK(fills(c) == 2);
  CHECK(c.counters().write_allocations == 3);
  CHECK(c.counters().write_fills == 2);
}

TEST_CASE("L2: a non-power-of-two set count maps line % sets and wraps inside one access", "[l2]") {
  L2Cache c(3 * 2 * 64, 64, 2);  // 3 sets x 2 ways
  // Lines 2..7 in one access: sets 2, 0, 1, 2, 0, 1 -- two lines per set, all fit.
  auto r = c.access(2 * kLine, 6 * kLine, false);
  CHECK(r.miss_bytes == 6 * kLine);
  CHECK(c.resident_lines() == 6);
  r = c.access(2 * kLine, 6 * kLine, false);
  CHECK(r.hit_bytes == 6 * kLine);
  // Line 8 maps to set 2 = {2, 5}; 2 is the older of the two and goes.
  CHECK_FALSE(read_hits(c, 8 * kLine));
  CHECK(read_hits(c, 5 * kLine));
  CHECK_FALSE(read_hits(c, 2 * kLine));
  // Line 9 maps to set 0 = {3, 6}, untouched by the above.
  CHECK(read_hits(c, 3 * kLine));
  CHECK(read_hits(c, 6 * kLine));
}

TEST_CASE("L2: a default-sized A2 L2 holds its full capacity", "[l2]") {
  L2Cache c(192ull << 20, 512, 16);
  const std::uint64_t size = 192ull << 20;
  auto r = c.access(1ull << 32, size, false);
  CHECK(r.miss_bytes == size);
  CHECK(c.resident_lines() == size / 512);
  r = c.access(1ull << 32, size, false);
  CHECK(r.hit_bytes == size);
  CHECK(r.miss_bytes == 0);
}

TEST_CASE("L2: ranges at the top of the address space", "[l2]") {
  L2Cache c(4, 1, 2);  // 1-byte lines, 2 sets
  const std::uint64_t top = ~std::uint64_t{0};
  auto r = c.access(top, 1, true);  // line 2^64-1, written whole: no fill
  CHECK(r.alloc_bytes == 1);
  r = c.access(top - 1, 2, false);
  CHECK(r.hit_bytes == 1);
  CHECK(r.miss_bytes == 1);
  CHECK_THROWS_AS(c.access(top, 2, false), pypto::ModelError);
  L2Cache big = tiny();
  r = big.access(top - 127, 128, false);
  CHECK(r.miss_bytes == 128);
}

TEST_CASE("L2: the constructor rejects impossible geometries", "[l2][errors]") {
  CHECK_THROWS_AS(L2Cache(512, 48, 2), pypto::ConfigError);
  CHECK_THROWS_WITH(L2Cache(512, 48, 2),
                    Contains("l2.line_bytes = 48") && Contains("power of two"));
  CHECK_THROWS_WITH(L2Cache(512, 0, 2), Contains("l2.line_bytes = 0"));
  CHECK_THROWS_WITH(L2Cache(512, 64, 0), Contains("l2.ways = 0"));
  CHECK_THROWS_WITH(L2Cache(1000, 64, 2), Contains("l2.size = 1000") && Contains("128"));
  CHECK_THROWS_WITH(L2Cache(0, 64, 2), Contains("l2.size = 0"));
  CHECK_THROWS_WITH(L2Cache(1ull << 40, 512, 16), Contains("l2.size") && Contains("at most"));
}

// ---------------------------------------------------------------------------------------------
// Differential test against a reference model that states the policy in the most direct way:
// per set a list of resident lines, most recent first. L2Cache keeps a faster layout (compact
// per-set records with 32-bit tags and a nibble LRU order for 2..16 ways, 64-bit tags and
// stamps otherwise, converting from the first to the second when a tag does not fit 32 bits),
// and every layout must give the same Result and counters on every access.

namespace {

class ReferenceL2 {
 public:
  ReferenceL2(std::uint64_t size_bytes, std::uint64_t line_bytes, std::uint64_t ways)
      : line_bytes_(line_bytes), ways_(ways), sets_(size_bytes / line_bytes / ways) {
    sets_lru_.resize(sets_);
  }

  L2Cache::Result access(std::uint64_t addr, std::uint64_t bytes, bool is_write) {
    L2Cache::Result r;
    if (bytes == 0) return r;
    const std::uint64_t end = addr + (bytes - 1);  // last byte, inclusive
    for (std::uint64_t line = addr / line_bytes_;; ++line) {
      const std::uint64_t lo = std::max(addr, line * line_bytes_);
      const std::uint64_t hi = std::min(end, line * line_bytes_ + (line_bytes_ - 1));
      const std::uint64_t touched = hi - lo + 1;
      auto& set = sets_lru_[line % sets_];
      auto it =
          std::find_if(set.begin(), set.end(), [&](const Entry& e) { return e.line == line; });
      if (it != set.end()) {
        Entry e = *it;
        e.dirty = e.dirty || is_write;
        set.erase(it);
        set.insert(set.begin(), e);
        r.hit_bytes += touched;
        ++(is_write ? n.write_hits : n.read_hits);
      } else {
        if (set.size() == ways_) {
          if (set.back().dirty) {
            r.writeback_bytes += line_bytes_;
            ++n.writebacks;
          }
          set.pop_back();
        }
        set.insert(set.begin(), Entry{line, is_write});
        if (is_write) ++n.write_allocations;
        if (is_write && touched == line_bytes_) {
          r.alloc_bytes += touched;
        } else {
          r.miss_bytes += line_bytes_;
          ++(is_write ? n.write_fills : n.read_misses);
        }
      }
      if (line == end / line_bytes_) break;
    }
    return r;
  }

  std::uint64_t resident_lines() const {
    std::uint64_t k = 0;
    for (const auto& s : sets_lru_) k += s.size();
    return k;
  }
  std::uint64_t dirty_lines() const {
    std::uint64_t k = 0;
    for (const auto& s : sets_lru_) {
      for (const Entry& e : s) k += e.dirty;
    }
    return k;
  }

  L2Cache::Counters n;

 private:
  struct Entry {
    std::uint64_t line;
    bool dirty;
  };
  std::uint64_t line_bytes_, ways_, sets_;
  std::vector<std::vector<Entry>> sets_lru_;
};

// Runs `ops` random accesses on both models and compares after each; returns the number of
// accesses that were compared. Addresses come from a window of 3x the cache starting at one
// of `bases` (chosen per access; only bases[0] for the first `first_base_only` accesses), so
// lines are reused, evicted and written back often.
std::uint64_t run_differential(std::uint64_t sets, std::uint32_t line_bytes, std::uint32_t ways,
                               const std::vector<std::uint64_t>& bases, std::uint64_t seed, int ops,
                               int first_base_only = 0) {
  const std::uint64_t size = sets * ways * line_bytes;
  L2Cache fast(size, line_bytes, ways);
  ReferenceL2 ref(size, line_bytes, ways);
  std::mt19937_64 rng(seed);
  const std::uint64_t window = 3 * size;
  std::uint64_t compared = 0;
  std::uint64_t prev_addr = 0, prev_bytes = 0;
  for (int i = 0; i < ops; ++i) {
    const std::uint64_t base = i < first_base_only ? bases[0] : bases[rng() % bases.size()];
    std::uint64_t addr = base + rng() % window;
    std::uint64_t bytes = 0;
    switch (rng() % 4) {
      case 0:  // within a line or two, unaligned
        bytes = rng() % (2 * line_bytes + 1);
        break;
      case 1:  // whole aligned lines
        addr -= addr % line_bytes;
        bytes = line_bytes * (1 + rng() % (2 * sets));
        break;
      case 2:  // a long unaligned range, up to the whole cache and beyond
        bytes = 1 + rng() % (size + size / 2);
        break;
      default:  // re-touch part of the previous range: a consumer reading what its producer
                // just wrote (each line still its set's most recent), or writing it again
        if (prev_bytes == 0) {
          bytes = 1 + rng() % (4 * line_bytes);
        } else {
          // At most 64 lines: the reference model pays per line, and the pieces of a range
          // (what the check walks) show as well in 64 lines as in a whole cache's worth.
          const std::uint64_t skip = rng() % prev_bytes;
          addr = prev_addr + skip;
          bytes = 1 + rng() % std::min<std::uint64_t>(prev_bytes - skip, 64 * line_bytes);
        }
        break;
    }
    // Keep the range below 2^64 (the wrap check has its own test).
    if (bytes > 0 && bytes - 1 > ~std::uint64_t{0} - addr) bytes = ~std::uint64_t{0} - addr + 1;
    const bool is_write = rng() % 2 == 0;
    prev_addr = addr;
    prev_bytes = bytes;
    const L2Cache::Result got = fast.access(addr, bytes, is_write);
    const L2Cache::Result want = ref.access(addr, bytes, is_write);
    INFO("sets " << sets << " line " << line_bytes << " ways " << ways << " seed " << seed << " op "
                 << i << ": access(" << addr << ", " << bytes << ", "
                 << (is_write ? "write" : "read") << ")");
    REQUIRE(got.hit_bytes == want.hit_bytes);
    REQUIRE(got.miss_bytes == want.miss_bytes);
    REQUIRE(got.writeback_bytes == want.writeback_bytes);
    REQUIRE(got.alloc_bytes == want.alloc_bytes);
    REQUIRE(fast.counters().read_hits == ref.n.read_hits);
    REQUIRE(fast.counters().read_misses == ref.n.read_misses);
    REQUIRE(fast.counters().write_hits == ref.n.write_hits);
    REQUIRE(fast.counters().write_allocations == ref.n.write_allocations);
    REQUIRE(fast.counters().write_fills == ref.n.write_fills);
    REQUIRE(fast.counters().writebacks == ref.n.writebacks);
    REQUIRE(fast.resident_lines() == ref.resident_lines());
    REQUIRE(fast.dirty_lines() == ref.dirty_lines());
    ++compared;
  }
  return compared;
}

}  // namespace

TEST_CASE("L2: random accesses match a list-based LRU reference for every way count", "[l2]") {
  // Ways 1 and above 16 use the generic layout, 2..16 the compact one with 4, 8 or 16 slots
  // (fewer ways than slots included). Set counts include 1 and non-powers of two.
  for (const std::uint32_t ways : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 64u}) {
    for (const std::uint64_t sets : {1u, 3u, 4u, 7u}) {
      for (const std::uint32_t line_bytes : {1u, 64u}) {
        const std::uint64_t seed = ways * 1000 + sets * 10 + line_bytes;
        CHECK(run_differential(sets, line_bytes, ways, {0}, seed, 400) == 400);
      }
    }
  }
}

TEST_CASE("L2: tile-shaped traffic over many sets keeps matching the reference", "[l2]") {
  // Sets are stored in runs (pieces) that split and merge with the accesses; many sets and
  // ranges of whole and partial lines starting anywhere exercise splits at both ends, merges
  // with both neighbours and runs that wrap past the last set, several times in one access.
  for (const std::uint32_t ways : {2u, 5u, 8u, 16u}) {
    for (const std::uint64_t sets : {64u, 65u, 200u, 4097u}) {
      CHECK(run_differential(sets, 64, ways, {0, 1u << 20}, ways * 31 + sets, 1500) == 1500);
    }
  }
}

TEST_CASE("L2: one-line strided rows switch to per-set records and keep matching", "[l2]") {
  // Row segments of a strided tile touch one line each, so every set becomes its own piece
  // and the cache moves to one record per set after the first window of accesses; the
  // contents must carry over exactly and later traffic of any shape keep matching.
  for (const std::uint32_t ways : {3u, 8u, 16u}) {
    const std::uint64_t sets = 300, line_bytes = 64, size = sets * ways * line_bytes;
    L2Cache fast(size, line_bytes, ways);
    ReferenceL2 ref(size, line_bytes, ways);
    std::mt19937_64 rng(ways);
    for (int i = 0; i < 12000; ++i) {
      const bool rows = i < 8000;  // the first 4096-access window is all rows
      const std::uint64_t addr =
          rows ? (rng() % (4 * size / 1024)) * 1024 + (rng() % 2) * 32 : rng() % (3 * size);
      const std::uint64_t bytes = rows ? 32 : 1 + rng() % (40 * line_bytes);
      const bool is_write = rng() % 3 == 0;
      const L2Cache::Result got = fast.access(addr, bytes, is_write);
      const L2Cache::Result want = ref.access(addr, bytes, is_write);
      INFO("ways " << ways << " op " << i);
      REQUIRE(got.hit_bytes == want.hit_bytes);
      REQUIRE(got.miss_bytes == want.miss_bytes);
      REQUIRE(got.writeback_bytes == want.writeback_bytes);
      REQUIRE(got.alloc_bytes == want.alloc_bytes);
      if (i % 97 == 0 || i == 4095 || i == 4096) {
        REQUIRE(fast.resident_lines() == ref.resident_lines());
        REQUIRE(fast.dirty_lines() == ref.dirty_lines());
      }
    }
    REQUIRE(fast.counters().read_hits == ref.n.read_hits);
    REQUIRE(fast.counters().read_misses == ref.n.read_misses);
    REQUIRE(fast.counters().write_allocations == ref.n.write_allocations);
    REQUIRE(fast.counters().write_fills == ref.n.write_fills);
    REQUIRE(fast.counters().writebacks == ref.n.writebacks);
  }
}

TEST_CASE("L2: long runs on one set keep matching the reference", "[l2]") {
  // Every access lands in the same few ways, so hits come from every LRU rank and the
  // per-set order is rewritten thousands of times.
  for (const std::uint32_t ways : {2u, 4u, 8u, 13u, 16u, 20u}) {
    CHECK(run_differential(1, 64, ways, {0}, 99 + ways, 5000) == 5000);
  }
}

TEST_CASE("L2: tags that outgrow 32 bits keep every line, dirty bit and LRU order", "[l2]") {
  // The compact layout stores line / sets + 1 in 32 bits. The first line whose tag does not
  // fit moves the whole cache to the generic layout mid-stream: 300 accesses near 0 fill the
  // compact sets first, then accesses near 0, on both sides of that boundary and at the top
  // of the address space must keep matching the reference.
  for (const std::uint32_t ways : {2u, 6u, 16u}) {
    for (const std::uint64_t sets : {1u, 5u}) {
      const std::uint32_t line_bytes = 64;
      const std::uint64_t size = sets * ways * line_bytes;
      const std::uint64_t first_wide_line = 0xFFFFFFFFull * sets;  // tag 2^32, no longer fits
      const std::uint64_t boundary = first_wide_line * line_bytes;
      const std::vector<std::uint64_t> bases = {0, 0, 0, boundary - 2 * size,
                                                ~std::uint64_t{0} - 3 * size + 1};
      CHECK(run_differential(sets, line_bytes, ways, bases, ways * 7 + sets, 900, 300) == 900);
    }
  }
}

TEST_CASE("L2: the largest 32-bit tag stays compact and the next line converts", "[l2]") {
  // 16 ways x 3 sets x 64 B. Line (2^32 - 1) * 3 - 1 has tag 2^32 - 1, the largest that fits.
  L2Cache c(3 * 16 * 64, 64, 16);
  const std::uint64_t last_narrow = (0xFFFFFFFFull * 3 - 1) * kLine;
  // Fill set 2 (lines 2, 5, 8, ... and the narrow-tag line): the narrow-tag line first, dirty.
  c.access(last_narrow, kLine, true);
  for (std::uint64_t i = 1; i < 16; ++i) c.access((3 * i + 2) * kLine, kLine, false);
  CHECK(c.resident_lines() == 16);
  CHECK(read_hits(c, last_narrow));  // now the most recent of set 2; line 5 is the LRU
  // The next line (set 0, tag 2^32) converts the layout.
  auto r = c.access(last_narrow + kLine, kLine, false);
  CHECK(r.miss_bytes == kLine);
  CHECK(c.resident_lines() == 17);
  r = c.access(50 * kLine, kLine, false);  // set 2: evicts line 5, clean
  CHECK(r.writeback_bytes == 0);
  CHECK_FALSE(read_hits(c, 5 * kLine));  // evicts line 8
  CHECK(read_hits(c, last_narrow));      // most recent again: [narrow, 5, 50, 47, ..., 11]
  // 15 misses push out 11..47, 50 and 5, all clean; the 16th evicts the dirty narrow line.
  std::uint64_t writeback = 0;
  for (std::uint64_t i = 0; i < 15; ++i) {
    writeback += c.access((3 * (1000 + i) + 2) * kLine, kLine, false).writeback_bytes;
  }
  CHECK(writeback == 0);
  r = c.access((3 * 2000 + 2) * kLine, kLine, false);
  CHECK(r.writeback_bytes == kLine);
  CHECK_FALSE(read_hits(c, last_narrow));
}

TEST_CASE("L2: a plain stream reads 0 % hits and counts its writes as allocations", "[l2]") {
  // y = f(x) over a buffer: every input line read once, every output line written once.
  L2Cache c(1 << 20, 512, 16);
  for (std::uint64_t off = 0; off < (256u << 10); off += 4096) {
    c.access(off, 4096, false);
    c.access((1u << 30) + off, 4096, true);
  }
  const auto& n = c.counters();
  CHECK(n.read_hits == 0);
  CHECK(n.read_misses == 512);
  CHECK(n.write_allocations == 512);
  CHECK(n.write_hits == 0);
  // The output is still in L2, dirty: the write-back is owed.
  CHECK(c.dirty_lines() == 512);
  // reset_counters() keeps the contents: reading the output again hits.
  c.reset_counters();
  c.access(1u << 30, 256u << 10, false);
  CHECK(c.counters().read_hits == 512);
  CHECK(c.counters().read_misses == 0);
}

TEST_CASE("L2: a run of rows in one call matches the rows one by one", "[l2]") {
  // access_rows() shares the per-access setup of a tile's rows; its sums, every row's hit
  // bytes, the counters and the contents (checked by the Results of the traffic that follows)
  // must be those of access() per row. Runs of one-line rows move the cache to per-set
  // records within the first window; pitches of a whole L2 or more, pitch 0, partial lines,
  // the 32-bit tag limit and single accesses in between are all mixed in.
  for (const std::uint32_t ways : {1u, 2u, 5u, 8u, 16u, 17u}) {
    for (const std::uint64_t sets : {1u, 7u, 64u, 300u}) {
      const std::uint64_t line_bytes = 64, size = sets * ways * line_bytes;
      L2Cache rows(size, line_bytes, ways), one(size, line_bytes, ways);
      std::mt19937_64 rng(ways * 1000 + sets);
      const std::uint64_t wide = 0xFFFFFFFFull * sets * line_bytes;  // first line of a wide tag
      std::vector<std::uint64_t> got;
      for (int i = 0; i < 1500; ++i) {
        const std::uint64_t base = i > 1200 && rng() % 4 == 0 ? wide - 2 * size : 0;
        // Every other run starts on a line: its rows of up to a line then lie in one line each.
        const std::uint64_t offset = rng() % (3 * size);
        const std::uint64_t addr =
            base + (rng() % 2 == 0 ? offset / line_bytes * line_bytes : offset);
        const std::uint64_t kind = rng() % 6;
        const std::uint64_t bytes = kind == 0   ? 1 + rng() % (3 * line_bytes)
                                    : kind == 5 ? 0
                                                : 1 + rng() % line_bytes;
        const std::uint64_t pitch = kind == 1   ? 0
                                    : kind == 2 ? size * (1 + rng() % 2) + 64 * (rng() % 3)
                                    : kind == 3 ? bytes
                                                : line_bytes * (1 + rng() % 16);
        const std::uint64_t count = rng() % 3 == 0 ? 1 : 1 + rng() % 40;
        const bool is_write = rng() % 3 == 0;
        const bool hits_wanted = rng() % 4 != 0;
        got.assign(count, ~std::uint64_t{0});
        const L2Cache::RowsResult run = rows.access_rows(addr, bytes, pitch, count, is_write,
                                                         hits_wanted ? got.data() : nullptr);
        L2Cache::RowsResult want;
        for (std::uint64_t k = 0; k < count; ++k) {
          const L2Cache::Result r = one.access(addr + k * pitch, bytes, is_write);
          INFO("ways " << ways << " sets " << sets << " op " << i << " row " << k << " of " << count
                       << ": rows(" << addr << ", " << bytes << ", pitch " << pitch << ", "
                       << (is_write ? "write" : "read") << ")");
          REQUIRE(got[k] == (hits_wanted ? r.hit_bytes : ~std::uint64_t{0}));
          want.sum.hit_bytes += r.hit_bytes;
          want.sum.miss_bytes += r.miss_bytes;
          want.sum.writeback_bytes += r.writeback_bytes;
          want.sum.alloc_bytes += r.alloc_bytes;
          want.whole_hit_rows += bytes != 0 && r.hit_bytes == bytes;
          want.part_hit_rows += r.hit_bytes != 0 && r.hit_bytes != bytes;
        }
        INFO("ways " << ways << " sets " << sets << " op " << i << ": rows(" << addr << ", "
                     << bytes << ", pitch " << pitch << ", count " << count << ", "
                     << (is_write ? "write" : "read") << ")");
        REQUIRE(run.sum.hit_bytes == want.sum.hit_bytes);
        REQUIRE(run.sum.miss_bytes == want.sum.miss_bytes);
        REQUIRE(run.sum.writeback_bytes == want.sum.writeback_bytes);
        REQUIRE(run.sum.alloc_bytes == want.sum.alloc_bytes);
        REQUIRE(run.whole_hit_rows == want.whole_hit_rows);
        REQUIRE(run.part_hit_rows == want.part_hit_rows);
        REQUIRE(rows.counters().read_hits == one.counters().read_hits);
        REQUIRE(rows.counters().read_misses == one.counters().read_misses);
        REQUIRE(rows.counters().write_hits == one.counters().write_hits);
        REQUIRE(rows.counters().write_allocations == one.counters().write_allocations);
        REQUIRE(rows.counters().write_fills == one.counters().write_fills);
        REQUIRE(rows.counters().writebacks == one.counters().writebacks);
        if (i % 50 == 0) {
          REQUIRE(rows.resident_lines() == one.resident_lines());
          REQUIRE(rows.dirty_lines() == one.dirty_lines());
        }
      }
      REQUIRE(rows.resident_lines() == one.resident_lines());
      REQUIRE(rows.dirty_lines() == one.dirty_lines());
    }
  }
}

TEST_CASE("L2: a run of rows that wraps past 2^64 fails as its rows do", "[l2][errors]") {
  // The rows before the one that wraps are done, as calls one by one would do them.
  L2Cache rows(4 * 2 * 64, 64, 2), one(4 * 2 * 64, 64, 2);
  std::vector<std::uint64_t> got(3);
  const std::uint64_t top = ~std::uint64_t{0} - 200;
  CHECK_THROWS_WITH(rows.access_rows(top, 64, 100, 3, false, got.data()),
                    Contains("wraps past 2^64"));
  one.access(top, 64, false);
  one.access(top + 100, 64, false);
  CHECK_THROWS_WITH(one.access(top + 200, 64, false), Contains("wraps past 2^64"));
  CHECK(rows.counters().read_misses == one.counters().read_misses);
  CHECK(rows.counters().read_misses == 4);  // each of the two rows done spans two lines
  CHECK(rows.resident_lines() == one.resident_lines());
}
