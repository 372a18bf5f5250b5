// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/runtime_options.h"

#include <cctype>

#include "pypto/common/errors.h"
#include "pypto/common/suggest.h"
#include "pypto/sched/registry.h"

namespace pypto::sched {
namespace {

using IntField = std::int64_t RuntimeOptions::*;

// The RuntimeOptions field of a kInt option (nullptr: the option has no integer field: the
// policy is a name, run_mode is the frontend's, ready_on_host_tensors is a list). A switch
// without default, so that -Wswitch names a RuntimeOption added without a decision here.
IntField int_field(RuntimeOption id) {
  switch (id) {
    case RuntimeOption::kStitchFunctionMaxNum: return &RuntimeOptions::stitch_function_max_num;
    case RuntimeOption::kMaxWorkspaceKb: return &RuntimeOptions::max_workspace_kb;
    case RuntimeOption::kValidShapeOptimize: return &RuntimeOptions::valid_shape_optimize;
    case RuntimeOption::kDeviceSchedParallelism: return &RuntimeOptions::device_sched_parallelism;
    case RuntimeOption::kLaunchSchedAicpuNum: return &RuntimeOptions::launch_sched_aicpu_num;
    case RuntimeOption::kLaunchEarlyMode: return &RuntimeOptions::launch_early_mode;
    case RuntimeOption::kDeviceSchedMode:
    case RuntimeOption::kRunMode:
    case RuntimeOption::kReadyOnHostTensors:
    // Held as "given or not": optional_field.
    case RuntimeOption::kStitchFunctionNumInitial:
    case RuntimeOption::kStitchFunctionNumStep:
    case RuntimeOption::kStitchFunctionSize:
    // Accepted only: validated, then nothing holds them.
    case RuntimeOption::kStitchFunctionInnerMemory:
    case RuntimeOption::kStitchFunctionOutcastMemory:
    case RuntimeOption::kStitchCfgcacheSize:
    case RuntimeOption::kCfgcacheDeviceTaskNum:
    case RuntimeOption::kCfgcacheRootTaskNum:
    case RuntimeOption::kCfgcacheLeafTaskNum:
    case RuntimeOption::kTripleStreamSched:
    case RuntimeOption::kCount: return nullptr;
  }
  return nullptr;
}

using OptionalField = std::optional<std::int64_t> RuntimeOptions::*;

// The RuntimeOptions field of a kInt option that acts only when given (std::nullopt until
// then); nullptr for every other option.
OptionalField optional_field(RuntimeOption id) {
  switch (id) {
    case RuntimeOption::kStitchFunctionNumInitial:
      return &RuntimeOptions::stitch_function_num_initial;
    case RuntimeOption::kStitchFunctionNumStep: return &RuntimeOptions::stitch_function_num_step;
    case RuntimeOption::kStitchFunctionSize: return &RuntimeOptions::stitch_function_size;
    default: return nullptr;
  }
}

RuntimeOption id_of(const OptionSpec& spec) {
  return static_cast<RuntimeOption>(&spec - kRuntimeOptionSpecs.data());
}

std::string where(const OptionSpec& spec) { return "runtime." + std::string(spec.name); }

std::string range_text(const OptionSpec& spec) {
  return "[" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
}

// "12" -> 12; false for anything but a whole decimal integer.
bool parse_int(const std::string& text, std::int64_t* out) {
  std::size_t used = 0;
  try {
    *out = std::stoll(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size() && !text.empty() && !std::isspace(static_cast<unsigned char>(text[0]));
}

}  // namespace

const OptionSpec& find_runtime_option(std::string_view name) {
  for (const OptionSpec& s : kRuntimeOptionSpecs) {
    if (s.name == name) return s;
  }
  std::vector<std::string> names;
  std::string list;
  for (const OptionSpec& s : kRuntimeOptionSpecs) {
    names.emplace_back(s.name);
    list += (list.empty() ? "" : ", ") + std::string(s.name);
  }
  std::string msg = "runtime: unknown option '" + std::string(name) + "'";
  if (const auto guess = common::closest_match(std::string(name), names)) {
    msg += "; did you mean '" + *guess + "'?";
  }
  throw ConfigError(msg + " (options: " + list + ")");
}

void check_runtime_option(const OptionSpec& spec, std::int64_t v) {
  if (spec.type == OptionType::kStringList) {
    throw ConfigError(where(spec) + ": expected a list of strings, got the integer " +
                      std::to_string(v));
  }
  if (spec.out_of_range == OutOfRange::kAutomatic) return;
  if (spec.has_auto_value && v == spec.auto_value) return;
  if (v < spec.min || v > spec.max) {
    std::string msg =
        where(spec) + ": " + std::to_string(v) + " is out of range " + range_text(spec);
    if (spec.has_auto_value) msg += " (or " + std::to_string(spec.auto_value) + " for the default)";
    throw ConfigError(msg);
  }
}

void set_runtime_option(RuntimeOptions& o, std::string_view name, std::int64_t value) {
  const OptionSpec& spec = find_runtime_option(name);
  check_runtime_option(spec, value);
  if (spec.type == OptionType::kPolicy) {
    o.policy = std::string(kModePolicies[static_cast<std::size_t>(value)]);
    return;
  }
  const RuntimeOption id = id_of(spec);
  if (const IntField f = int_field(id)) o.*f = value;
  if (const OptionalField f = optional_field(id)) o.*f = value;
  if (id == RuntimeOption::kStitchFunctionMaxNum) o.stitch_function_max_num_given = true;
}

void set_runtime_option(RuntimeOptions& o, std::string_view name, const std::string& text) {
  const OptionSpec& spec = find_runtime_option(name);
  if (spec.type == OptionType::kPolicy) {
    o.policy = parse_policy(text);
    return;
  }
  if (spec.type == OptionType::kStringList) {
    throw ConfigError(where(spec) + ": expected a list of strings, got '" + text + "'");
  }
  std::int64_t v = 0;
  if (!parse_int(text, &v)) {
    // Digits that overflow 64 bits are a number out of range, not "not an integer".
    const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    const bool digits =
        text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos;
    throw ConfigError(where(spec) + ": '" + text + "' " +
                      (digits ? "is out of range (it does not fit 64 bits)" : "is not an integer") +
                      " (expected " + range_text(spec) + ")");
  }
  set_runtime_option(o, name, v);
}

void set_runtime_option(RuntimeOptions& o, std::string_view name,
                        const std::vector<std::string>& values) {
  const OptionSpec& spec = find_runtime_option(name);
  if (spec.type != OptionType::kStringList) {
    throw ConfigError(where(spec) + ": expected an integer in " + range_text(spec) +
                      ", got a list");
  }
  o.ready_on_host_tensors = values;
}

std::string runtime_option_help(const OptionSpec& spec) {
  std::string h(spec.doc);
  if (spec.type == OptionType::kPolicy) h += ", or a registered policy name";
  if (spec.type == OptionType::kStringList) return h;
  h += " (" + range_text(spec);
  if (!spec.unit.empty()) h += " " + std::string(spec.unit);
  if (spec.fixed_default) h += ", default " + std::to_string(spec.default_value);
  return h + ")";
}

std::string policy_for_mode(std::int64_t mode) {
  const OptionSpec& spec = spec_of(RuntimeOption::kDeviceSchedMode);
  check_runtime_option(spec, mode);
  return std::string(kModePolicies[static_cast<std::size_t>(mode)]);
}

std::string parse_policy(const std::string& value) {
  if (!value.empty() && (std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-')) {
    std::int64_t mode = 0;
    if (!parse_int(value, &mode)) {
      const OptionSpec& spec = spec_of(RuntimeOption::kDeviceSchedMode);
      throw ConfigError(where(spec) + ": '" + value + "' is neither a number in " +
                        range_text(spec) + " nor a policy name");
    }
    return policy_for_mode(mode);
  }
  try {
    Registry::global().create(value);  // throws with the known names and a suggestion
  } catch (const ConfigError& e) {
    const OptionSpec& spec = spec_of(RuntimeOption::kDeviceSchedMode);
    throw ConfigError(where(spec) + ": " + e.what() + " (or a mode in " + range_text(spec) + ")");
  }
  return value;
}

void validate(const RuntimeOptions& o) {
  Registry::global().resolve(o.policy, o.policy_params);
  for (const OptionSpec& spec : kRuntimeOptionSpecs) {
    if (const IntField f = int_field(id_of(spec))) check_runtime_option(spec, o.*f);
    const OptionalField f = optional_field(id_of(spec));
    if (f != nullptr && (o.*f).has_value()) check_runtime_option(spec, *(o.*f));
  }
}

}  // namespace pypto::sched
