// SPDX-License-Identifier: Apache-2.0
// Policies by name, with their parameters. A policy declares its parameters (name, type,
// default, range, doc) once, where it is registered; every front end (pypto-sim flags,
// `pypto-sim policies`, Python) reads them from here. The built-ins are registered
// explicitly in sched/src/builtin.cpp (no static-initialisation magic); plug-ins call
// add() before the simulation starts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pypto/sched/policy.h"

namespace pypto::sched {

enum class ParamType : std::uint8_t { kInt, kFloat, kBool };
std::string_view to_string(ParamType t);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kInt;
  double default_value = 0;
  double min = 0;  // inclusive range (kBool: 0..1)
  double max = 0;
  std::string doc;  // one line
};

// Parameter values as given by a user (CLI --policy-param, YAML, Python), by name.
using ParamText = std::map<std::string, std::string>;

// The checked values of one policy's declared parameters (defaults where not given).
class PolicyParams {
 public:
  PolicyParams() = default;
  explicit PolicyParams(const std::vector<ParamSpec>& specs);

  // Contract: the value of a declared parameter; ModelError for an undeclared name (the
  // policy asked for a parameter it did not declare).
  double get(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const { return static_cast<std::int64_t>(get(name)); }
  bool get_bool(std::string_view name) const { return get(name) != 0; }
  const std::vector<std::pair<std::string, double>>& values() const { return values_; }
  void set(std::string_view name, double v);

 private:
  std::vector<std::pair<std::string, double>> values_;
};

class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Policy>()>;
  using ParamFactory = std::function<std::unique_ptr<Policy>(const PolicyParams&)>;
  struct Entry {
    std::string name;
    std::string description;
    std::vector<ParamSpec> params;
    ParamFactory make;
    bool builtin = false;  // one of register_builtin's (a stalled run is then the model's bug)
  };

  // The process-wide registry with the built-ins already added.
  static Registry& global();

  // Contract: throws ConfigError if `name` is taken or not a name (letters, digits, '_', '.',
  // '-', starting with a letter or '_': a number would read as a device_sched_mode), or a
  // parameter is not a name, declared twice, has a bound or default that is not a number
  // (NaN; an infinite default), min > max, its default outside its range, or (kInt) a
  // bound or default that is no whole number within +-2^53 (exact in a double).
  void add(const std::string& name, const std::string& description, Factory make);
  void add(const std::string& name, const std::string& description, std::vector<ParamSpec> params,
           ParamFactory make);
  template <class P>
  void add(const std::string& name, const std::string& description) {
    add(name, description, [] { return std::make_unique<P>(); });
  }
  // Removes a plug-in; false if there is none of that name.
  bool remove(const std::string& name);

  // Throws ConfigError listing the known names and a "did you mean" for an unknown name,
  // and for parameters the policy does not declare (with a suggestion), values that do not
  // parse as the parameter's type or lie outside its range.
  std::unique_ptr<Policy> create(const std::string& name) const;
  std::unique_ptr<Policy> create(const std::string& name, const ParamText& params) const;
  PolicyParams resolve(const std::string& name, const ParamText& params) const;
  const Entry& find(const std::string& name) const;
  bool contains(const std::string& name) const;
  const std::vector<Entry>& list() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// "key=value" -> {key, value}; throws ConfigError naming the text otherwise.
std::pair<std::string, std::string> parse_param_assignment(const std::string& text);

// A parameter's range and default for listings: "int in [0, 4294967295], default 1".
std::string describe_param(const ParamSpec& p);

// Adds fifo, l2_affinity, fair and l2_fair (device_sched_mode 0..3), then critical_path,
// work_stealing and random.
void register_builtin(Registry& r);

}  // namespace pypto::sched
