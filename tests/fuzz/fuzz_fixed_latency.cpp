// SPDX-License-Identifier: Apache-2.0
// The reader of PyPTO's fixed-latency task graph JSON.
#include "fuzz_trace_common.h"

PYPTO_FUZZ_TARGET(fixed_latency) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("fixed_latency.json", data, size);
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, ""); });
  return 0;
}
