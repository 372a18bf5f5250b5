// SPDX-License-Identifier: Apache-2.0
// The dyn_topo.txt reader (PyPTO's CSV task DAG), joined with the sample prof file.
#include "fuzz_trace_common.h"

PYPTO_FUZZ_TARGET(dyn_topo) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("dyn_topo.txt", data, size);
  static const std::string prof = pypto::fuzz::sample("tilefwk_L1_prof_data.json");
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, prof); });
  return 0;
}
