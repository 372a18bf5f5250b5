// SPDX-License-Identifier: Apache-2.0
// pypto._C.Policy and friends (policy_bindings.cpp): scheduling policies in Python.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace pypto::bindings {

void bind_policies(pybind11::module_& m);

// Whether `name` is a policy registered from Python (register_policy): its hooks need the
// interpreter, so a run under it stays on the calling thread.
bool is_python_policy(const std::string& name);

}  // namespace pypto::bindings
