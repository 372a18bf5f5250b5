// SPDX-License-Identifier: Apache-2.0
// pypto._C.Policy and friends (policy_bindings.cpp): scheduling policies in Python.
#pragma once

#include <pybind11/pybind11.h>

namespace pypto::bindings {

void bind_policies(pybind11::module_& m);

}  // namespace pypto::bindings
