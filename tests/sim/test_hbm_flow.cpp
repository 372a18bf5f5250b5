// SPDX-License-Identifier: Apache-2.0
// HbmFlowModel against finish times worked out by hand. Rates are in bytes/ps and chosen so
// most numbers are exact.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/sim/memory/hbm_flow.h"

using Catch::Matchers::Contains;
using pypto::sim::HbmFlowModel;
using Tags = std::vector<std::uint64_t>;

TEST_CASE("HBM: a lone transfer takes bytes / min(cap, aggregate)", "[hbm]") {
  HbmFlowModel agg_limited(1.0, 2.0);
  agg_limited.start(0, 1000, 42);
  CHECK(agg_limited.in_flight() == 1);
  CHECK(agg_limited.next_completion() == 1000);

  Tags done;
  agg_limited.complete_until(999, done);
  CHECK(done.empty());
  agg_limited.complete_until(1000, done);
  CHECK(done == Tags{42});
  CHECK(agg_limited.in_flight() == 0);
  CHECK(agg_limited.next_completion() == pypto::common::kNever);

  // The per-flow cap limits a lone flow: 1000 B at 0.25 B/ps.
  HbmFlowModel cap_limited(1.0, 0.25);
  cap_limited.start(100, 1000, 7);
  CHECK(cap_limited.next_completion() == 4100);
}

TEST_CASE("HBM: two equal transfers share the aggregate and take twice as long", "[hbm]") {
  HbmFlowModel m(1.0, 1.0);
  m.start(0, 1000, 1);
  m.start(0, 1000, 2);
  CHECK(m.next_completion() == 2000);
  Tags done;
  m.complete_until(1999, done);
  CHECK(done.empty());
  m.complete_until(2000, done);
  CHECK(done == Tags{1, 2});
}

TEST_CASE("HBM: when the per-flow cap binds, a second transfer does not slow the first", "[hbm]") {
  HbmFlowModel m(1.0, 0.5);  // two flows at 0.5 B/ps each use exactly the aggregate
  m.start(0, 1000, 1);
  m.start(0, 1000, 2);
  CHECK(m.next_completion() == 2000);  // same as one alone at the cap
  m.start(0, 1000, 3);                 // a third one does: 1/3 B/ps each
  CHECK(m.next_completion() == 3000);
}

TEST_CASE("HBM: a second transfer starting midway", "[hbm]") {
  SECTION("aggregate-limited") {
    // A: 1000 B at t=0 alone at 1 B/ps; by t=500 it has 500 B left. B starts: 0.5 B/ps each,
    // A ends at 1500. B has 500 B by then and finishes alone at 1 B/ps at 2000.
    HbmFlowModel m(1.0, 1.0);
    m.start(0, 1000, 'A');
    m.start(500, 1000, 'B');
    CHECK(m.next_completion() == 1500);
    Tags done;
    m.complete_until(1500, done);
    CHECK(done == Tags{'A'});
    CHECK(m.next_completion() == 2000);
    m.complete_until(2000, done);
    CHECK(done == Tags{'A', 'B'});
    CHECK(m.busy_ps() == 2000);
    CHECK(m.total_bytes() == 2000);
  }
  SECTION("with a cap") {
    // Cap 0.75, aggregate 1. A: 1500 B at t=0 at 0.75 B/ps has 750 B left at t=1000. B (1000 B)
    // starts: 0.5 B/ps each, A ends at 2500. B then has 250 B left at 0.75 B/ps: 333.3 ps,
    // ends at 2833.3, rounded up to 2834.
    HbmFlowModel m(1.0, 0.75);
    m.start(0, 1500, 'A');
    CHECK(m.next_completion() == 2000);
    m.start(1000, 1000, 'B');
    CHECK(m.next_completion() == 2500);
    Tags done;
    m.complete_until(2500, done);
    CHECK(done == Tags{'A'});
    CHECK(m.next_completion() == 2834);
    m.complete_until(2833, done);
    CHECK(done.size() == 1);
    m.complete_until(2834, done);
    CHECK(done == Tags{'A', 'B'});
  }
}

TEST_CASE("HBM: equal finishes complete in start order", "[hbm]") {
  HbmFlowModel m(1.0, 1.0);
  m.start(100, 500, 7);
  m.start(100, 500, 3);
  m.start(100, 500, 5);
  CHECK(m.next_completion() == 1600);
  Tags done;
  m.complete_until(1600, done);
  CHECK(done == Tags{7, 3, 5});
}

TEST_CASE("HBM: busy time counts only time with a transfer in flight", "[hbm]") {
  HbmFlowModel m(1.0, 1.0);
  Tags done;
  m.start(0, 1000, 1);
  m.complete_until(1000, done);
  m.complete_until(3000, done);  // idle from 1000 to 3000
  m.start(3000, 1000, 2);
  m.complete_until(3500, done);
  CHECK(m.busy_ps() == 1500);
  m.complete_until(5000, done);
  CHECK(done == Tags{1, 2});
  CHECK(m.busy_ps() == 2000);
  CHECK(m.total_bytes() == 2000);
}

TEST_CASE("HBM: a start after an unreported completion still frees the bandwidth", "[hbm]") {
  HbmFlowModel m(1.0, 1.0);
  m.start(0, 1000, 1);
  m.start(1500, 1000, 2);  // 1 finished at 1000; the caller has not asked yet
  CHECK(m.in_flight() == 1);
  CHECK(m.next_completion() == 1500);  // due already: hand it out now
  Tags done;
  m.complete_until(1500, done);
  CHECK(done == Tags{1});
  CHECK(m.next_completion() == 2500);  // 2 ran alone at full rate
  CHECK(m.busy_ps() == 1000);
}

TEST_CASE("HBM: polling does not move the predicted completion", "[hbm]") {
  HbmFlowModel m(0.1, 0.03);  // rates that are not exact in binary
  m.start(0, 777, 1);
  m.start(13, 555, 2);
  m.start(29, 1234, 3);
  const auto t = m.next_completion();
  Tags done;
  for (pypto::common::TimePs p = 30; p < t; p += 997) m.complete_until(p, done);
  CHECK(done.empty());
  CHECK(m.next_completion() == t);
  m.complete_until(t, done);
  CHECK_FALSE(done.empty());
}

TEST_CASE("HBM: complete_until(next_completion()) always makes progress", "[hbm]") {
  // Awkward rates and sizes, starts interleaved with completions; a livelock would spin here.
  HbmFlowModel m(1.6, 0.0592);
  std::uint64_t x = 12345;
  const auto rnd = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % n;
  };
  pypto::common::TimePs now = 0;
  std::uint64_t started = 0, completed = 0, bytes = 0;
  Tags done;
  for (int step = 0; step < 20000; ++step) {
    if (started < 5000 && (m.in_flight() == 0 || rnd(3) != 0)) {
      now += rnd(50);
      const std::uint64_t b = 1 + rnd(70000);
      m.start(now, b, started++);
      bytes += b;
    } else if (m.in_flight() > 0) {
      const auto t = m.next_completion();
      REQUIRE(t != pypto::common::kNever);
      REQUIRE(t >= now);
      now = t;
      done.clear();
      m.complete_until(now, done);
      REQUIRE_FALSE(done.empty());
      completed += done.size();
    }
  }
  while (m.in_flight() > 0) {
    now = m.next_completion();
    done.clear();
    m.complete_until(now, done);
    REQUIRE_FALSE(done.empty());
    completed += done.size();
  }
  CHECK(completed == started);
  CHECK(m.total_bytes() == bytes);
  // Never faster than the aggregate allows.
  CHECK(static_cast<double>(bytes) / static_cast<double>(m.busy_ps()) <= 1.6 + 1e-9);
}

TEST_CASE("HBM: zero-byte transfer completes at once", "[hbm]") {
  HbmFlowModel m(1.0, 1.0);
  m.start(10, 0, 9);
  CHECK(m.next_completion() == 10);
  Tags done;
  m.complete_until(10, done);
  CHECK(done == Tags{9});
}

TEST_CASE("HBM: time may not run backwards", "[hbm][errors]") {
  HbmFlowModel m(1.0, 1.0);
  m.start(100, 10, 1);
  Tags done;
  CHECK_THROWS_AS(m.complete_until(50, done), pypto::ModelError);
}

TEST_CASE("HBM: non-positive rates are configuration errors", "[hbm][errors]") {
  CHECK_THROWS_AS(HbmFlowModel(0.0, 1.0), pypto::ConfigError);
  CHECK_THROWS_WITH(HbmFlowModel(0.0, 1.0), Contains("hbm.aggregate_gbps") && Contains("> 0"));
  CHECK_THROWS_WITH(HbmFlowModel(1.0, -2.0),
                    Contains("hbm.bytes_per_cycle_per_core") && Contains("-2"));
  CHECK_THROWS_WITH(HbmFlowModel(std::nan(""), 1.0), Contains("aggregate"));
  CHECK_THROWS_WITH(HbmFlowModel(1.0, std::numeric_limits<double>::infinity()),
                    Contains("per-core"));
}

TEST_CASE("HBM: a transfer that would end past the time limit is refused, not left in flight",
          "[hbm][limits]") {
  // 1e-15 B/ps (1e-12 GB/s): 64 KiB would take 6.6e19 ps, past 2^62 ps. The finish used to be
  // capped below kNever; advance() then never retired the flow and spun for ever.
  HbmFlowModel m(1e-15, 1.0);
  m.start(0, 65536, 1);
  CHECK_THROWS_AS(m.next_completion(), pypto::ConfigError);
  CHECK_THROWS_WITH(m.next_completion(),
                    Contains("time limit of 2^62 ps") && Contains("hbm.aggregate_gbps"));
  Tags done;
  CHECK_THROWS_AS(m.complete_until(1000, done), pypto::ConfigError);
  // Just inside the limit it completes, at the exact end.
  HbmFlowModel ok(1.0 / (1ull << 40), 1.0);
  ok.start(0, 1u << 20, 2);
  CHECK(ok.next_completion() == (1ull << 60));
  ok.complete_until(1ull << 60, done);
  CHECK(done == Tags{2});
}
