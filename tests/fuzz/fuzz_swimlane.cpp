// SPDX-License-Identifier: Apache-2.0
// The reader of PyPTO's merged swimlane (merged_swimlane.json).
#include "fuzz_trace_common.h"

PYPTO_FUZZ_TARGET(swimlane) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("merged_swimlane.json", data, size);
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, ""); });
  return 0;
}
