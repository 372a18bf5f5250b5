// SPDX-License-Identifier: Apache-2.0
// IdIndex (sim/src/trace/id_index.h), the readers' task id -> index map: ids in order go to
// its array, the rest to its hash; against std::unordered_map on sequences that start dense
// and then leave the order (a gap, an id repeated, an id from far away), for both key types.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "id_index.h"

using pypto::sim::trace_detail::IdIndex;

namespace {

template <class Key>
void check_against_map(const std::vector<Key>& keys, std::size_t reserve) {
  IdIndex<Key> index;
  std::unordered_map<Key, std::uint32_t> ref;
  if (reserve > 0) index.reserve(reserve);
  std::uint32_t next = 0;
  for (const Key k : keys) {
    const std::uint32_t v = next++;
    const auto [it, inserted] = ref.try_emplace(k, v);
    // insert returns the value the key maps to after the call: the first one for a repeat.
    REQUIRE(index.insert(k, v) == it->second);
    (void)inserted;
  }
  for (const auto& [k, v] : ref) REQUIRE(index.find(k) == v);
  // Keys never inserted: next to the dense run, inside gaps, far away.
  for (const Key k : {Key(keys.size()), Key(keys.size() + 1), Key(12345678), Key(~Key(0) - 1)}) {
    if (ref.count(k) == 0) REQUIRE(index.find(k) == IdIndex<Key>::kAbsent);
  }
  index.clear();
  for (const auto& [k, v] : ref) REQUIRE(index.find(k) == IdIndex<Key>::kAbsent);
}

template <class Key>
void check_sequences() {
  std::mt19937_64 rng(7);
  for (const std::size_t reserve : {std::size_t(0), std::size_t(64), std::size_t(5000)}) {
    // Dense only (the common case): 0 .. n-1.
    std::vector<Key> dense;
    for (Key k = 0; k < 3000; ++k) dense.push_back(k);
    check_against_map(dense, reserve);
    // Dense, then an id repeated (a duplicate the reader reports), then a gap: the rest
    // goes to the hash, including ids that would have continued the run.
    std::vector<Key> mixed = dense;
    mixed.push_back(17);
    mixed.push_back(3005);
    for (Key k = 3000; k < 4000; ++k) mixed.push_back(k);  // 3000..3004 after 3005
    mixed.push_back(3005);
    check_against_map(mixed, reserve);
    // Not dense from the start: the array stays empty.
    std::vector<Key> shuffled = dense;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    check_against_map(shuffled, reserve);
    // Random ids over a wide range, with repeats.
    std::vector<Key> random;
    for (int i = 0; i < 4000; ++i) random.push_back(static_cast<Key>(rng() % 100000));
    check_against_map(random, reserve);
  }
}

}  // namespace

TEST_CASE("IdIndex: ids in order and out of order map as a hash map does", "[trace]") {
  check_sequences<std::uint32_t>();
  check_sequences<std::uint64_t>();
}

TEST_CASE("IdIndex: 64-bit keys (dyn_topo's seq << 32 | taskId) past the dense run", "[trace]") {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    for (std::uint64_t id = 0; id < 500; ++id) keys.push_back(seq << 32 | id);
  }
  check_against_map(keys, 1500);
}
