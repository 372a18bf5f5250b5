// SPDX-License-Identifier: Apache-2.0
// Private to the partition (partition.cpp): the set structures it works on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

namespace pypto::compiler::detail {

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

}  // namespace pypto::compiler::detail
