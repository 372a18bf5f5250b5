// SPDX-License-Identifier: Apache-2.0
// A run YAML: the runtime options of a replay (and the policy's parameters) in a file, for
// `pypto-sim run/compare --run-config FILE`. Every key is a runtime option of the
// kRuntimeOptionSpecs table that replay acts on, or policy_params:
//
//   device_sched_mode: critical_path   # a policy name or PyPTO's mode 0..3
//   launch_sched_aicpu_num: 3
//   policy_params: {unit_cost: true}
#pragma once

#include <string>
#include <vector>

#include "pypto/sched/runtime_options.h"

namespace pypto::sim {

// Contract: applies the file's options to o (keys it does not name keep their value) and
// returns the keys the file sets, in file order. Throws ConfigError naming the file, line
// and key for an unknown key (with a suggestion), a value the table rejects, or a parameter
// the policy does not declare.
std::vector<std::string> load_run_config(const std::string& path, sched::RuntimeOptions& o);

}  // namespace pypto::sim
