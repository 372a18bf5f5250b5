// SPDX-License-Identifier: Apache-2.0
// pypto._C.cli_main (cli_bindings.cpp): the pypto-sim commands inside the Python module.
#pragma once

#include <pybind11/pybind11.h>

namespace pypto::bindings {

void bind_cli(pybind11::module_& m);

}  // namespace pypto::bindings
