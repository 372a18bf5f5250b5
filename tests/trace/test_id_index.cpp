// SPDX-License-Identifier: Apache-2.0
// IdIndex (sim/src/trace/id_index.h), the readers' task id -> index map: ids in order go to
// its array, the rest to its hash; against std::unordered_map on sequences that start dense
// and then leave the order (a gap, an id repeated, an id from far away), for both key types.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "id_index.h"

using pypto::trace::detail::IdIndex;

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

namespace {

using pypto::trace::detail::SeqIdIndex;

// SeqIdIndex against a map keyed by seq << 32 | id (what it replaced): every insert's
// result, every pair's value, and pairs never inserted.
void check_seq_against_map(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& keys) {
  SeqIdIndex index;
  std::unordered_map<std::uint64_t, std::uint32_t> ref;
  std::uint32_t next = 0;
  for (const auto& [seq, id] : keys) {
    const std::uint32_t v = next++;
    const auto it = ref.try_emplace(std::uint64_t{seq} << 32 | id, v).first;
    REQUIRE(index.insert(seq, id, v) == it->second);
  }
  for (const auto& [k, v] : ref) {
    REQUIRE(index.find(static_cast<std::uint32_t>(k >> 32), static_cast<std::uint32_t>(k)) == v);
  }
  for (const std::uint32_t seq : {0u, 1u, 2u, 7u, 999u, 0xFFFFFFFFu}) {
    for (const std::uint32_t id : {0u, 1u, 499u, 500u, 4000u, 0xFFFFFFFEu}) {
      if (ref.count(std::uint64_t{seq} << 32 | id) == 0) {
        REQUIRE(index.find(seq, id) == SeqIdIndex::kAbsent);
      }
    }
  }
  index.clear();
  for (const auto& [k, v] : ref) {
    REQUIRE(index.find(static_cast<std::uint32_t>(k >> 32), static_cast<std::uint32_t>(k)) ==
            SeqIdIndex::kAbsent);
  }
}

}  // namespace

TEST_CASE("SeqIdIndex: (seq, taskId) pairs map as a hash map of seq << 32 | id does", "[trace]") {
  using Keys = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  // dyn_topo.txt's usual shape: seqs in order, each numbering its tasks from 0.
  Keys in_order;
  for (std::uint32_t seq = 0; seq < 5; ++seq) {
    for (std::uint32_t id = 0; id < 500; ++id) in_order.push_back({seq, id});
  }
  check_seq_against_map(in_order);
  // Seqs that skip numbers and come back (lines of two seqs interleaved), a repeated pair,
  // ids out of order within a seq.
  Keys mixed;
  for (std::uint32_t id = 0; id < 300; ++id) mixed.push_back({7, id});
  for (std::uint32_t id = 0; id < 300; ++id) mixed.push_back({2, id});
  for (std::uint32_t id = 300; id < 600; ++id) mixed.push_back({7, id});
  mixed.push_back({2, 17});
  mixed.push_back({7, 900});
  for (std::uint32_t id = 600; id < 700; ++id) mixed.push_back({7, id});
  mixed.push_back({0xFFFFFFFFu, 0});
  check_seq_against_map(mixed);
  // Random pairs over a few seqs, with repeats.
  std::mt19937_64 rng(11);
  Keys random;
  for (int i = 0; i < 5000; ++i) {
    random.push_back(
        {static_cast<std::uint32_t>(rng() % 9), static_cast<std::uint32_t>(rng() % 3000)});
  }
  check_seq_against_map(random);
}
