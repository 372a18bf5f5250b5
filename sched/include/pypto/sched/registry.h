// SPDX-License-Identifier: Apache-2.0
// Policies by name. The built-ins are registered explicitly in sched/src/builtin.cpp (no
// static-initialisation magic); plug-ins call add() before the simulation starts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pypto/sched/policy.h"

namespace pypto::sched {

class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Policy>()>;
  struct Entry {
    std::string name;
    std::string description;
    Factory make;
  };

  // The process-wide registry with the built-ins already added.
  static Registry& global();

  // Contract: throws ConfigError if `name` is taken.
  void add(const std::string& name, const std::string& description, Factory make);
  template <class P>
  void add(const std::string& name, const std::string& description) {
    add(name, description, [] { return std::make_unique<P>(); });
  }

  // Throws ConfigError listing the known names and a "did you mean" for an unknown name.
  std::unique_ptr<Policy> create(const std::string& name) const;
  bool contains(const std::string& name) const;
  const std::vector<Entry>& list() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// Adds fifo, l2_affinity, fair and l2_fair (device_sched_mode 0..3).
void register_builtin(Registry& r);

}  // namespace pypto::sched
