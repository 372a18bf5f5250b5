// SPDX-License-Identifier: Apache-2.0
#include "pypto/sim/systemc_context.h"

#include <cstdlib>
#include <systemc>

namespace pypto::sim {

void fresh_systemc_context() {
  ::setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);  // keep stdout for our own output
  // The very first context is never deleted: SystemC's own static objects refer to it
  // until the process exits.
  static bool used = false;
  static sc_core::sc_simcontext* const original = sc_core::sc_get_curr_simcontext();
  if (used) {
    sc_core::sc_simcontext* old = sc_core::sc_curr_simcontext;
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    if (old != original) delete old;
  }
  used = true;
  // Errors inside the kernel become exceptions; informational chatter is dropped.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
}

}  // namespace pypto::sim
