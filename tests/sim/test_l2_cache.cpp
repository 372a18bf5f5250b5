// SPDX-License-Identifier: Apache-2.0
// L2Cache on access patterns worked out by hand. Most cases use a tiny cache of 4 sets x 2 ways
// x 64 B lines (512 B): line L lives in set L % 4, so byte addresses 0, 256, 512, 768 all map
// to set 0.
#include <catch2/catch.hpp>

#include "pypto/sched/errors.h"
#include "pypto/sim/memory/l2_cache.h"

using Catch::Matchers::Contains;
using pypto::sim::L2Cache;

namespace {

constexpr std::uint64_t kLine = 64;

L2Cache tiny() { return L2Cache(512, 64, 2); }

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
  CHECK(c.miss_lines() == 2);
  CHECK(c.resident_lines() == 2);

  r = c.access(0, 128, false);
  CHECK(r.hit_bytes == 128);
  CHECK(r.miss_bytes == 0);
  CHECK(c.hit_lines() == 2);
  CHECK(c.miss_lines() == 2);
  CHECK(c.line_bytes() == 64);
}

TEST_CASE("L2: zero-byte access touches nothing", "[l2]") {
  L2Cache c = tiny();
  const auto r = c.access(100, 0, true);
  CHECK(r.hit_bytes + r.miss_bytes + r.writeback_bytes == 0);
  CHECK(c.hit_lines() + c.miss_lines() == 0);
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
  CHECK(c.hit_lines() == 8);
  CHECK(c.miss_lines() == 24);
}

TEST_CASE("L2: ways+1 lines cycling through one set always miss", "[l2]") {
  L2Cache c = tiny();
  // Lines 0, 4 and 8 all map to set 0 (2 ways); the other 6 lines of the cache stay empty.
  for (int round = 0; round < 3; ++round) {
    for (std::uint64_t addr : {0u, 256u, 512u}) CHECK_FALSE(read_hits(c, addr));
  }
  CHECK(c.miss_lines() == 9);
  CHECK(c.hit_lines() == 0);
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
  CHECK(r.hit_bytes == 128);
  CHECK(r.miss_bytes == 0);
  CHECK(c.hit_lines() == 2);
  CHECK(c.miss_lines() == 0);
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
  CHECK(c.miss_lines() == 4);
}

TEST_CASE("L2: a write covering whole middle lines fills only its partial ends", "[l2]") {
  L2Cache c = tiny();
  // [32, 160): line 0 partial 32 B (fill), line 1 whole (no fill), line 2 partial 32 B (fill).
  const auto r = c.access(32, 128, true);
  CHECK(r.hit_bytes == 64);
  CHECK(r.miss_bytes == 128);
  CHECK(c.hit_lines() == 1);
  CHECK(c.miss_lines() == 2);
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
  CHECK(r.hit_bytes == 1);
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
