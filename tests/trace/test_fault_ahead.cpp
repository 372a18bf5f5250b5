// SPDX-License-Identifier: Apache-2.0
// FaultAhead (sim/src/trace/fault_ahead.h), the readers' helper that faults reserved columns
// in on a thread of its own: the pages become resident, no byte changes (the filling thread
// may have written some already), spans too small to be worth a thread are left alone, and
// stop() returns promptly whatever is left.
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fault_ahead.h"

using pypto::sim::trace_detail::building_spans;
using pypto::sim::trace_detail::FaultAhead;

namespace {

// Anonymous memory of its own, so that residency starts at none (a vector's heap block may
// share pages with memory already touched).
struct Mapping {
  explicit Mapping(std::size_t n) : bytes(n) {
    p = static_cast<unsigned char*>(
        ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(p != MAP_FAILED);
    // Small pages, so that residency is counted page by page here.
    ::madvise(p, n, MADV_NOHUGEPAGE);
  }
  ~Mapping() { ::munmap(p, bytes); }
  std::size_t resident_pages() const {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((bytes + page - 1) / page);
    REQUIRE(::mincore(p, bytes, in.data()) == 0);
    std::size_t n = 0;
    for (const unsigned char c : in) n += c & 1;
    return n;
  }
  unsigned char* p = nullptr;
  std::size_t bytes = 0;
};

bool populate_supported() {
  Mapping m(std::size_t{1} << 16);
  return ::madvise(m.p, m.bytes, MADV_POPULATE_WRITE) == 0;
}

}  // namespace

TEST_CASE("FaultAhead makes every page of its spans resident and changes no byte") {
  if (!populate_supported()) {
    WARN("not run: this kernel has no MADV_POPULATE_WRITE (before 5.14)");
    return;
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t a_bytes = 3 * FaultAhead::kStepBytes + 5 * page + 123;  // not page-sized
  const std::size_t b_bytes = 2 * FaultAhead::kMinBytes;
  Mapping a(a_bytes + page), b(b_bytes), c(b_bytes), small(FaultAhead::kMinBytes);
  // What the filling thread wrote before: kept.
  for (std::size_t i = 0; i < 3 * page; ++i) a.p[i] = static_cast<unsigned char>(i * 7 + 1);
  REQUIRE(a.resident_pages() == 3);
  {
    FaultAhead ahead(
        {{{a.p, a_bytes}, {b.p, b_bytes}, {small.p, FaultAhead::kMinBytes - 1}}, {{c.p, b_bytes}}});
    // Groups go in order, so the last one resident means it is done (the destructor would
    // stop it where it is).
    for (int i = 0; i < 5000 && c.resident_pages() < b_bytes / page; ++i) ::usleep(1000);
  }
  CHECK(a.resident_pages() == (a_bytes + page - 1) / page);
  CHECK(b.resident_pages() == b_bytes / page);
  CHECK(c.resident_pages() == b_bytes / page);
  for (std::size_t i = 0; i < 3 * page; ++i) {
    REQUIRE(a.p[i] == static_cast<unsigned char>(i * 7 + 1));
  }
  for (std::size_t i = 3 * page; i < a_bytes; i += 997) REQUIRE(a.p[i] == 0);
  // A span under kMinBytes is left to the filling thread.
  CHECK(small.resident_pages() == 0);
}

TEST_CASE("FaultAhead with only small spans starts no work, and stop() is idempotent") {
  Mapping small(FaultAhead::kMinBytes);
  FaultAhead ahead({{{small.p, FaultAhead::kMinBytes - 1}}, {}});
  ahead.stop();
  ahead.stop();
  CHECK(small.resident_pages() == 0);
}

TEST_CASE("building_spans covers the columns a reader fills, up to the estimate") {
  pypto::sched::TaskGraphBuilder builder("test");
  pypto::sched::TaskGraph& g = builder.graph();
  const std::size_t tasks = 1 << 20, edges = 3 << 20;
  g.core_type.reserve(tasks + tasks / 10);
  g.root.reserve(tasks + tasks / 10);
  g.succ.reserve(edges + edges / 10);
  g.recorded_start_ps.reserve(tasks);
  const std::vector<FaultAhead::Span> spans = building_spans(builder, tasks, edges);
  const auto has = [&](const void* p, std::size_t bytes) {
    for (const auto& s : spans) {
      if (s.begin == p) return s.bytes == bytes;
    }
    return false;
  };
  CHECK(has(g.core_type.data(), tasks * sizeof(g.core_type[0])));
  CHECK(has(g.root.data(), tasks * 4));
  CHECK(has(g.succ.data(), edges * 4));
  // The join fills the recorded starts later: not in the reading's spans.
  for (const auto& s : spans)
    CHECK(s.begin != static_cast<const void*>(g.recorded_start_ps.data()));
  // The builder's own two per-task columns, reserved for the graph's capacity.
  std::size_t own = 0;
  builder.reserve_own_columns([&](const std::vector<std::uint32_t>& col) {
    CHECK(col.capacity() >= tasks);
    own += has(col.data(), tasks * 4) ? 1 : 0;
  });
  CHECK(own == 2);
}
