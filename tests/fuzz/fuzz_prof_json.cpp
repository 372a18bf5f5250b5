// SPDX-License-Identifier: Apache-2.0
// The board profile reader (tilefwk_L1_prof_data.json, --prof): the input is the prof file,
// joined with the sample dyn_topo.txt.
#include "fuzz_trace_common.h"

PYPTO_FUZZ_TARGET(prof_json) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("prof.json", data, size);
  static const std::string topo = pypto::fuzz::sample("dyn_topo.txt");
  pypto::fuzz::run_one([&] { pypto::fuzz::load(topo, path); });
  return 0;
}
