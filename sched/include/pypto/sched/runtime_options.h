// SPDX-License-Identifier: Apache-2.0
// The runtime_options of pypto.frontend.jit that the device runtime honours, with the
// names, ranges and defaults of the PyPTO documentation. The CLI flags and the Python
// options dict both land here and are validated by the same code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pypto::sched {

struct RuntimeOptions {
  // Policy, by registry name ("fifo", "l2_affinity", "fair", "l2_fair" or a plug-in).
  // device_sched_mode 0..3 maps to the four built-ins.
  std::string policy = "fifo";
  std::int64_t stitch_function_max_num = 128;    // 1..1024 roots per device task
  std::int64_t max_workspace_kb = 0;             // 0..2^31-1; >0 enables memory-driven mode
  std::int64_t valid_shape_optimize = 0;         // 0/1
  std::vector<std::string> ready_on_host_tensors;
  std::int64_t device_sched_parallelism = 1;     // 1..8
  std::int64_t launch_sched_aicpu_num = 7;       // 1..7 (schema); >chip max or <=0 -> auto
  std::int64_t launch_early_mode = -1;           // 0..2; -1 = the chip's default

  // Range limits, the single place they live.
  static constexpr std::int64_t kMaxStitch = 1024;
  static constexpr std::int64_t kMaxWorkspaceKb = 2147483647;
  static constexpr std::int64_t kMaxParallelism = 8;
  static constexpr std::int64_t kMaxSchedAicpu = 7;
  static constexpr std::int64_t kMaxLeafTasksPerDeviceTask = 60000;
  static constexpr std::int64_t kMaxRootsPerDeviceTask = 1024;
};

// Maps device_sched_mode 0..3 to a built-in policy name; throws ConfigError otherwise.
std::string policy_for_mode(std::int64_t mode);

// Accepts "0".."3" or a policy name; throws ConfigError naming the option on failure.
std::string parse_policy(const std::string& value);

// Throws ConfigError naming the first option out of range ("runtime.<key>: <value> is out
// of range [min, max]").
void validate(const RuntimeOptions& o);

}  // namespace pypto::sched
