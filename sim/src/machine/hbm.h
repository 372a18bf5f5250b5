// SPDX-License-Identifier: Apache-2.0
// HBM as a SystemC module around HbmFlowModel: wakes only when a transfer completes.
#pragma once

#include <systemc>
#include <vector>

#include "machine.h"

namespace pypto::sim {

class Hbm : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Hbm);
  Hbm(sc_core::sc_module_name name, Machine& m);

  // Contract: called by a core at now; the core's on_flow_done() runs when it completes.
  void start(std::uint64_t bytes, sched::CoreId core);

 private:
  void step();
  void arm();
  Machine& m_;
  sc_core::sc_event ev_;
  std::vector<std::uint64_t> done_;
  sched::TimePs armed_ps_ = sched::kNever;  // time of the pending wake-up
};

}  // namespace pypto::sim
