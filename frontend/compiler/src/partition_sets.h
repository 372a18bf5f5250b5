// SPDX-License-Identifier: Apache-2.0
// Private to the partition (partition.cpp): the root graph and the set structures it works on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

#include "pypto/common/types.h"

namespace pypto::compiler::detail {

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

// Byte intervals of one buffer (half-open), merged.
class IntervalSet {
 public:
  void add(std::uint64_t b, std::uint64_t e) {
    auto it = m_.upper_bound(b);
    if (it != m_.begin()) {
      auto p = std::prev(it);
      if (p->second >= b) {
        b = p->first;
        e = std::max(e, p->second);
        it = m_.erase(p);
      }
    }
    while (it != m_.end() && it->first <= e) {
      e = std::max(e, it->second);
      it = m_.erase(it);
    }
    m_.emplace(b, e);
  }
  bool covers(std::uint64_t b, std::uint64_t e) const {
    auto it = m_.upper_bound(b);
    if (it == m_.begin()) return false;
    --it;
    return it->first <= b && it->second >= e;
  }
  bool overlaps(std::uint64_t b, std::uint64_t e) const {
    auto it = m_.lower_bound(e);
    if (it == m_.begin()) return false;
    --it;
    return it->second > b;
  }

 private:
  std::map<std::uint64_t, std::uint64_t> m_;
};

class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : p_(n) { std::iota(p_.begin(), p_.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (p_[x] != x) x = p_[x] = p_[p_[x]];
    return x;
  }
  // The smaller index stays the root, so a set is named by its first task.
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    p_[b] = a;
  }
  std::vector<std::uint32_t> snapshot() const { return p_; }
  void restore(std::vector<std::uint32_t> p) { p_ = std::move(p); }

 private:
  std::vector<std::uint32_t> p_;
};

// Task-graph view of one root: dependency edges (data and ordering alike, so merged tasks keep
// every order), the isomorphism signature and PyPTO's latency estimate of every task.
struct RootGraph {
  std::uint32_t n = 0;
  std::vector<std::vector<std::uint32_t>> pred, succ;
  std::vector<std::uint64_t> sig, lat;
  std::vector<common::CoreType> core;
  std::vector<std::int32_t> scope;        // sg_set_scope id, -1: none
  std::vector<std::uint8_t> scope_flags;  // its kSgParallelMerge / kSgCrossScopeMerge bits
  std::vector<std::uint32_t> label;       // 1 + semantic label index, 0: none
  std::vector<std::uint32_t> data_preds;  // pred[t][0, data_preds[t]): t reads what they wrote
};

// PyPTO's isomorphism hash (supernode_graph_builder.cpp BuildHashValues, its default
// balanced form): each task's own signature combined forward with its producers' hashes and
// backward with its consumers', so tasks class together only where their places in the
// graph match (the steps of a chain, each with a different history, class apart). Only data
// edges count: PyPTO partitions before buffers are assigned, so a reused buffer's ordering
// edges are not part of a task's place. Neighbours combine in sorted order. Contract: `sig`
// holds the tasks' own signatures and every edge runs from a lower to a higher index.
inline void position_hashes(RootGraph& g) {
  std::vector<std::uint64_t> fwd(g.n), bwd(g.n), nb;
  const auto fold = [&nb](std::uint64_t h) {
    std::sort(nb.begin(), nb.end());
    for (const std::uint64_t v : nb) h = mix(h, v);
    return h;
  };
  // Each task's data consumers as one flat list (offsets per producer), filled in task order.
  std::vector<std::uint32_t> first(g.n + 1, 0);
  for (std::uint32_t t = 0; t < g.n; ++t) {
    nb.clear();
    for (std::uint32_t k = 0; k < g.data_preds[t]; ++k) {
      nb.push_back(fwd[g.pred[t][k]]);
      ++first[g.pred[t][k] + 1];
    }
    fwd[t] = fold(g.sig[t]);
  }
  for (std::uint32_t t = 0; t < g.n; ++t) first[t + 1] += first[t];
  std::vector<std::uint32_t> consumers(first[g.n]), fill(first.begin(), first.end() - 1);
  for (std::uint32_t t = 0; t < g.n; ++t) {
    for (std::uint32_t k = 0; k < g.data_preds[t]; ++k) consumers[fill[g.pred[t][k]]++] = t;
  }
  for (std::uint32_t t = g.n; t-- > 0;) {
    nb.clear();
    for (std::uint32_t i = first[t]; i < first[t + 1]; ++i) nb.push_back(bwd[consumers[i]]);
    bwd[t] = fold(g.sig[t]);
  }
  for (std::uint32_t t = 0; t < g.n; ++t) g.sig[t] = mix(fwd[t], bwd[t]);
}

// Quotient of the root graph by the sets of `uf`: the sets in topological order (each taken
// as early as its predecessors allow, ties by first task), or empty when it has a cycle.
inline std::vector<std::uint32_t> topo_sets(const RootGraph& g, UnionFind& uf) {
  std::vector<std::uint32_t> indeg(g.n, 0);
  std::vector<std::vector<std::uint32_t>> out(g.n);
  std::vector<std::uint32_t> sets;
  for (std::uint32_t t = 0; t < g.n; ++t) {
    const std::uint32_t a = uf.find(t);
    if (a == t) sets.push_back(t);
    for (const std::uint32_t s : g.succ[t]) {
      const std::uint32_t b = uf.find(s);
      if (a == b) continue;
      out[a].push_back(b);
      ++indeg[b];
    }
  }
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (const std::uint32_t s : sets) {
    if (indeg[s] == 0) ready.push(s);
  }
  std::vector<std::uint32_t> order;
  order.reserve(sets.size());
  while (!ready.empty()) {
    const std::uint32_t s = ready.top();
    ready.pop();
    order.push_back(s);
    for (const std::uint32_t b : out[s]) {
      if (--indeg[b] == 0) ready.push(b);
    }
  }
  if (order.size() != sets.size()) order.clear();
  return order;
}

}  // namespace pypto::compiler::detail
