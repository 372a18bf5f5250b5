// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/runtime_options.h"

#include <cctype>

#include "pypto/sched/errors.h"
#include "pypto/sched/registry.h"

namespace pypto::sched {
namespace {

void check_range(const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) {
    throw ConfigError(std::string("runtime.") + key + ": " + std::to_string(v) +
                      " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                      "]");
  }
}

}  // namespace

std::string policy_for_mode(std::int64_t mode) {
  static const char* kNames[] = {"fifo", "l2_affinity", "fair", "l2_fair"};
  check_range("device_sched_mode", mode, 0, 3);
  return kNames[mode];
}

std::string parse_policy(const std::string& value) {
  if (!value.empty() && (std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-')) {
    std::size_t used = 0;
    long long mode = 0;
    try {
      mode = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size()) {
      throw ConfigError("runtime.device_sched_mode: '" + value +
                        "' is neither a number in [0, 3] nor a policy name");
    }
    return policy_for_mode(mode);
  }
  Registry::global().create(value);  // throws with the known names and a suggestion
  return value;
}

void validate(const RuntimeOptions& o) {
  if (!Registry::global().contains(o.policy)) Registry::global().create(o.policy);
  check_range("stitch_function_max_num", o.stitch_function_max_num, 1,
              RuntimeOptions::kMaxStitch);
  check_range("max_workspace_kb", o.max_workspace_kb, 0, RuntimeOptions::kMaxWorkspaceKb);
  check_range("valid_shape_optimize", o.valid_shape_optimize, 0, 1);
  check_range("device_sched_parallelism", o.device_sched_parallelism, 1,
              RuntimeOptions::kMaxParallelism);
  // 1..7 as in PyPTO's option schema; a value above the chip's maximum falls back to the
  // automatic count when the machine is built.
  check_range("launch_sched_aicpu_num", o.launch_sched_aicpu_num, 1,
              RuntimeOptions::kMaxSchedAicpu);
  if (o.launch_early_mode != -1) check_range("launch_early_mode", o.launch_early_mode, 0, 2);
}

}  // namespace pypto::sched
