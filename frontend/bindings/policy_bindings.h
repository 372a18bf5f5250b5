// SPDX-License-Identifier: Apache-2.0
// pypto._C.Policy and friends (policy_bindings.cpp): scheduling policies in Python.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "pypto/sched/registry.h"

namespace pypto::bindings {

void bind_policies(pybind11::module_& m);

// Whether `name` is a policy registered from Python (register_policy): its hooks need the
// interpreter, so a run under it stays on the calling thread.
bool is_python_policy(const std::string& name);

// A policy's parameters from Python values, strictly by their declared types: an int
// parameter takes an int (not a bool, a float or a str), a float one an int or a finite
// float, a bool one a bool. Throws TypeError (wrong type) or ConfigError (an int outside
// the range, a NaN) naming the policy, the parameter and the value; unknown names pass
// through for Registry::resolve to name.
sched::ParamText policy_param_text(const std::string& policy, const pybind11::dict& params);

// Marks C++ code calling into Python (a hook, a --policy-module file, a policy's
// constructor) while it lives: a Ctrl-C or SIGTERM that the CLI's own handlers catch then
// also raises KeyboardInterrupt in that Python code (see forward_signals_to_python), so
// code that never returns still stops.
class InPython {
 public:
  InPython();
  ~InPython();
  InPython(const InPython&) = delete;
  InPython& operator=(const InPython&) = delete;
};

// Has the CLI's signal handlers (pypto/common/interrupt.h) hand each signal to Python while
// an InPython lives. Contract: called after install_interrupt_handlers.
void forward_signals_to_python();

// While one lives, the simulation loop and the report writers poll Python's signal check
// (module.cpp): Ctrl-C stops a long call, and the KeyboardInterrupt is raised as the call's
// Interrupted leaves it. Contract: made on the thread holding the GIL, which then releases it.
class PollPythonSignals {
 public:
  PollPythonSignals();
  ~PollPythonSignals();
  PollPythonSignals(const PollPythonSignals&) = delete;
  PollPythonSignals& operator=(const PollPythonSignals&) = delete;
  // A KeyboardInterrupt a poll took that no Interrupted carried out (the call ended just
  // then) is set as Python's error again; true if there was one. Contract: GIL held.
  static bool restore_pending();
};

}  // namespace pypto::bindings
