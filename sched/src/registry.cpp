// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/registry.h"

#include <algorithm>

#include "pypto/common/errors.h"
#include "pypto/common/suggest.h"

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
  if (const auto guess = closest_match(name, names)) msg += "; did you mean '" + *guess + "'?";
  throw ConfigError(msg);
}

}  // namespace pypto::sched
