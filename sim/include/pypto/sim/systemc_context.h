// SPDX-License-Identifier: Apache-2.0
// A fresh SystemC simulation context per run. SystemC keeps its kernel in a global context
// that allows one elaboration, so every model that runs in a process after another
// (simulate(), or a client's own SystemC model) installs a new one first. Public so that
// every SystemC model of the process goes through this one function: it alone knows which
// context is the original that must never be deleted.
#pragma once

namespace pypto::sim {

// Contract: called before any module of the next run is constructed, and never while a
// simulation is running. Also routes SystemC errors to exceptions and silences its
// informational messages and copyright banner.
void fresh_systemc_context();

}  // namespace pypto::sim
