// SPDX-License-Identifier: Apache-2.0
// The native trace reader (traces/FORMAT.md) behind format detection.
#include "fuzz_trace_common.h"

PYPTO_FUZZ_TARGET(native_trace) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("native.ndjson", data, size);
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, ""); });
  return 0;
}
