// SPDX-License-Identifier: Apache-2.0
// HBM as a SystemC module around HbmFlowModel: wakes only when a transfer whose end was not
// known at its start completes.
#pragma once

#include <systemc>
#include <vector>

#include "machine.h"

namespace pypto::sim {

class Hbm : public sc_core::sc_module, private CalendarAgent {
 public:
  Hbm(sc_core::sc_module_name name, Machine& m);

  // Contract: called by a core at now. Returns the transfer's end when it is fixed unless a
  // later start slows the flows down (see HbmFlowModel::start); the core then gets
  // on_flow_revoked() if that happens, and on_flow_done() when the transfer completes.
  // Returns kNever otherwise: on_flow_done() runs when it completes.
  common::TimePs start(std::uint64_t bytes, common::CoreId core);

 private:
  void act() override;
  void arm();
  Machine& m_;
  std::uint32_t rank_;  // in the calendar
  std::vector<std::uint64_t> done_, revoked_;
};

}  // namespace pypto::sim
