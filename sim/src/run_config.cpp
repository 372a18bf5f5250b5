// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/run_config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <string>

#include "pypto/common/errors.h"
#include "pypto/common/suggest.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/registry.h"

namespace pypto::sim {
namespace {

std::string at(const std::string& path, const YAML::Node& n) {
  return path + ":" + std::to_string(n.Mark().line + 1);
}

}  // namespace

std::vector<std::string> load_run_config(const std::string& path, sched::RuntimeOptions& o) {
  // Read as a chip config file is (size cap, no pipe, one document, distinct plain keys).
  const YAML::Node root = model::load_yaml_file(path, "run config");
  std::vector<std::string> keys;
  if (root.IsNull()) return keys;
  if (!root.IsMap()) throw ConfigError(path + ": expected a map of runtime options");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    keys.push_back(key);
    const YAML::Node& v = kv.second;
    const std::string where = at(path, kv.first) + ": " + key;
    if (key == "policy_params") {
      if (!v.IsMap() && !v.IsNull()) throw ConfigError(where + ": expected a map of parameters");
      for (const auto& p : v) {
        if (!p.second.IsScalar()) {
          throw ConfigError(where + "." + p.first.as<std::string>() + ": expected a value");
        }
        o.policy_params[p.first.as<std::string>()] = p.second.as<std::string>();
      }
      continue;
    }
    std::vector<std::string> names{"policy_params"};
    bool known = false, integer = false;
    for (const sched::OptionSpec& s : sched::kRuntimeOptionSpecs) {
      if ((s.acts_on & sched::kActsReplay) == 0) continue;
      names.emplace_back(s.name);
      known |= s.name == key;
      integer |= s.name == key && s.type == sched::OptionType::kInt;
    }
    if (!known) {
      std::string msg = where + ": not a runtime option of a replay";
      if (const auto guess = common::closest_match(key, names))
        msg += "; did you mean '" + *guess + "'?";
      throw ConfigError(msg);
    }
    if (!v.IsScalar()) throw ConfigError(where + ": expected a value");
    if (integer) {
      // Read strictly, as a chip config is: a quoted number is a string, and a leading zero
      // is octal to YAML 1.1 but decimal to 1.2, so neither is guessed at.
      const std::string& text = v.Scalar();
      const std::size_t d = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
      if (v.Tag() == "!") {
        throw ConfigError(at(path, v) + ": " + key +
                          ": expected an integer, got the quoted string \"" + text +
                          "\"; write it without quotes");
      }
      if (text.size() > d + 1 && text[d] == '0' &&
          std::isdigit(static_cast<unsigned char>(text[d + 1]))) {
        throw ConfigError(at(path, v) + ": " + key + ": \"" + text +
                          "\" has a leading zero (octal in YAML 1.1, decimal in 1.2); write the "
                          "decimal value without it");
      }
    }
    try {
      sched::set_runtime_option(o, key, v.as<std::string>());
    } catch (const ConfigError& e) {
      throw ConfigError(at(path, v) + ": " + e.what());
    }
  }
  try {
    sched::validate(o);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  return keys;
}

}  // namespace pypto::sim
