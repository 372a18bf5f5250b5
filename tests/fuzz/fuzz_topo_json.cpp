// SPDX-License-Identifier: Apache-2.0
// The topo.json reader (PyPTO's JSON topology of one device task), joined with the sample
// prof file.
#include "fuzz_trace_common.h"

PYPTO_FUZZ_TARGET(topo_json) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("topo.json", data, size);
  static const std::string prof = pypto::fuzz::sample("tilefwk_L1_prof_data.json");
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, prof); });
  return 0;
}
