// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "pypto/common/errors.h"
#include "pypto/common/suggest.h"

namespace pypto::sched {
namespace {

std::string number_text(ParamType t, double v) {
  if (t == ParamType::kBool) return v != 0 ? "true" : "false";
  if (t == ParamType::kInt) return std::to_string(static_cast<std::int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Parses text as a value of type t; false if it is not one.
bool parse_value(ParamType t, const std::string& text, double* out) {
  if (t == ParamType::kBool) {
    if (text == "1" || text == "true" || text == "True") {
      *out = 1;
    } else if (text == "0" || text == "false" || text == "False") {
      *out = 0;
    } else {
      return false;
    }
    return true;
  }
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) != 0) return false;
  std::size_t used = 0;
  try {
    if (t == ParamType::kInt) {
      *out = static_cast<double>(std::stoll(text, &used));
    } else {
      *out = std::stod(text, &used);
    }
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size() && std::isfinite(*out);
}

// A policy's or parameter's name: a letter or '_' first, then letters, digits, '_' (and for
// policies '.' and '-'): never a number (a device_sched_mode) nor text with '=' or spaces,
// which --policy-param, sweep labels and YAML keys could not carry.
bool valid_name(const std::string& n, bool policy) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) != 0 || n[0] == '_')) {
    return false;
  }
  return std::all_of(n.begin(), n.end(), [policy](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return std::isalnum(c) != 0 || c == '_' || (policy && (c == '.' || c == '-'));
  });
}

constexpr double kMaxExactInt = 9007199254740992.0;  // 2^53: every int up to it is a double

// Why a declared parameter cannot be used, empty when it can.
std::string param_problem(const ParamSpec& p) {
  if (!valid_name(p.name, false)) {
    return "is not a parameter name (letters, digits and '_', starting with a letter or '_')";
  }
  const std::pair<const char*, double> values[] = {
      {"default", p.default_value}, {"min", p.min}, {"max", p.max}};
  for (const auto& [what, v] : values) {
    if (std::isnan(v)) return std::string("has ") + what + " NaN; expected a number";
    if (p.type == ParamType::kInt && (std::floor(v) != v || std::fabs(v) > kMaxExactInt)) {
      return std::string("has ") + what + " " + number_text(ParamType::kFloat, v) +
             "; an int parameter's " + what + " is a whole number within +-2^53";
    }
  }
  if (!std::isfinite(p.default_value)) {
    return "has default " + number_text(ParamType::kFloat, p.default_value) +
           "; expected a finite number";
  }
  if (p.min > p.max) {
    return "has min " + number_text(p.type, p.min) + " above max " + number_text(p.type, p.max);
  }
  return "";
}

}  // namespace

std::string_view to_string(ParamType t) {
  switch (t) {
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kBool: return "bool";
  }
  return "?";
}

std::string describe_param(const ParamSpec& p) {
  std::string s(to_string(p.type));
  if (p.type != ParamType::kBool) {
    s += " in [" + number_text(p.type, p.min) + ", " + number_text(p.type, p.max) + "]";
  }
  return s + ", default " + number_text(p.type, p.default_value);
}

PolicyParams::PolicyParams(const std::vector<ParamSpec>& specs) {
  for (const auto& p : specs) values_.emplace_back(p.name, p.default_value);
}

double PolicyParams::get(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return v;
  }
  throw ModelError("policy asked for parameter '" + std::string(name) + "' it did not declare");
}

void PolicyParams::set(std::string_view name, double v) {
  for (auto& [n, old] : values_) {
    if (n == name) {
      old = v;
      return;
    }
  }
  throw ModelError("policy parameter '" + std::string(name) + "' is not declared");
}

Registry& Registry::global() {
  static Registry* r = [] {
    auto* reg = new Registry();
    register_builtin(*reg);
    for (Entry& e : reg->entries_) e.builtin = true;
    return reg;
  }();
  return *r;
}

void Registry::add(const std::string& name, const std::string& description, Factory make) {
  add(name, description, {}, [make = std::move(make)](const PolicyParams&) { return make(); });
}

void Registry::add(const std::string& name, const std::string& description,
                   std::vector<ParamSpec> params, ParamFactory make) {
  if (name.empty()) throw ConfigError("a policy needs a non-empty name");
  if (!valid_name(name, true)) {
    throw ConfigError("policy name '" + name +
                      "': expected letters, digits, '_', '.' or '-', starting with a letter or "
                      "'_' (a number reads as a device_sched_mode)");
  }
  if (contains(name)) throw ConfigError("policy '" + name + "' is already registered");
  for (std::size_t i = 0; i < params.size(); ++i) {
    ParamSpec& p = params[i];
    if (p.type == ParamType::kBool) {
      p.min = 0;
      p.max = 1;
    }
    if (p.name.empty()) throw ConfigError("policy '" + name + "': a parameter needs a name");
    if (const std::string why = param_problem(p); !why.empty()) {
      throw ConfigError("policy '" + name + "': parameter '" + p.name + "' " + why);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (params[j].name == p.name) {
        throw ConfigError("policy '" + name + "': parameter '" + p.name + "' declared twice");
      }
    }
    if (p.default_value < p.min || p.default_value > p.max) {
      throw ConfigError("policy '" + name + "': parameter '" + p.name + "' has its default " +
                        number_text(p.type, p.default_value) + " outside its range");
    }
  }
  entries_.push_back({name, description, std::move(params), std::move(make)});
}

bool Registry::remove(const std::string& name) {
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& e) { return e.name == name; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

bool Registry::contains(const std::string& name) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.name == name; });
}

const Registry::Entry& Registry::find(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& e : entries_) {
    if (e.name == name) return e;
    names.push_back(e.name);
  }
  std::string msg = "unknown policy '" + name + "'; known policies:";
  for (const auto& n : names) msg += " " + n;
  if (const auto guess = common::closest_match(name, names))
    msg += "; did you mean '" + *guess + "'?";
  throw ConfigError(msg);
}

PolicyParams Registry::resolve(const std::string& name, const ParamText& params) const {
  const Entry& e = find(name);
  PolicyParams out(e.params);
  for (const auto& kv : params) {
    // Not a structured binding: C++17 lambdas cannot capture those (clang rejects it).
    const std::string& key = kv.first;
    const std::string& text = kv.second;
    const auto spec = std::find_if(e.params.begin(), e.params.end(),
                                   [&](const ParamSpec& p) { return p.name == key; });
    if (spec == e.params.end()) {
      std::string msg = "policy '" + name + "': unknown parameter '" + key + "'";
      if (e.params.empty()) throw ConfigError(msg + " (it takes no parameters)");
      std::vector<std::string> names;
      std::string list;
      for (const auto& p : e.params) {
        names.push_back(p.name);
        list += (list.empty() ? "" : ", ") + p.name;
      }
      if (const auto guess = common::closest_match(key, names))
        msg += "; did you mean '" + *guess + "'?";
      throw ConfigError(msg + " (parameters: " + list + ")");
    }
    double v = 0;
    if (!parse_value(spec->type, text, &v)) {
      throw ConfigError("policy '" + name + "': parameter " + key + " = '" + text + "' is not " +
                        (spec->type == ParamType::kInt     ? "an integer"
                         : spec->type == ParamType::kFloat ? "a number"
                                                           : "a bool (true/false/1/0)"));
    }
    if (v < spec->min || v > spec->max) {
      throw ConfigError("policy '" + name + "': parameter " + key + " = " + text +
                        " is out of range [" + number_text(spec->type, spec->min) + ", " +
                        number_text(spec->type, spec->max) + "]");
    }
    out.set(key, v);
  }
  return out;
}

std::unique_ptr<Policy> Registry::create(const std::string& name) const {
  return create(name, ParamText{});
}

std::unique_ptr<Policy> Registry::create(const std::string& name, const ParamText& params) const {
  const PolicyParams p = resolve(name, params);
  return find(name).make(p);
}

std::pair<std::string, std::string> parse_param_assignment(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw ConfigError("policy parameter '" + text + "': expected key=value");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace pypto::sched
