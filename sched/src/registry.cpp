// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/registry.h"

#include <algorithm>

#include "pypto/sched/errors.h"

namespace pypto::sched {

Registry& Registry::global() {
  static Registry* r = [] {
    auto* reg = new Registry();
    register_builtin(*reg);
    return reg;
  }();
  return *r;
}

void Registry::add(const std::string& name, const std::string& description, Factory make) {
  if (contains(name)) throw ConfigError("policy '" + name + "' is already registered");
  if (name.empty()) throw ConfigError("a policy needs a non-empty name");
  entries_.push_back({name, description, std::move(make)});
}

bool Registry::contains(const std::string& name) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.name == name; });
}

std::unique_ptr<Policy> Registry::create(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& e : entries_) {
    if (e.name == name) return e.make();
    names.push_back(e.name);
  }
  std::string msg = "unknown policy '" + name + "'; known policies:";
  for (const auto& n : names) msg += " " + n;
  const std::string guess = closest_match(name, names);
  if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
  throw ConfigError(msg);
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    // Levenshtein distance, two rows.
    std::vector<std::size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t sub = prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  // Close means at most a third of the word differs (and at least one edit allowed).
  const std::size_t limit = std::max<std::size_t>(1, (word.size() + 2) / 3);
  return best_d <= limit ? best : std::string();
}

}  // namespace pypto::sched
