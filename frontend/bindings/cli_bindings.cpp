// SPDX-License-Identifier: Apache-2.0
// pypto._C.cli_main: the commands of pypto-sim (pypto_cli) run inside the Python module, whose
// policy registry holds the policies registered from Python. The native binary comes here
// through pypto/_cli.py for --policy-module FILE.py and sweep; the Python side of the host
// (loading the files, describing a hook's exception in one line) is in that module too.
#include "cli_bindings.h"

#include <pybind11/stl.h>

#include <exception>
#include <string>
#include <vector>

#include "policy_bindings.h"
#include "pypto/cli/cli.h"
#include "pypto/common/interrupt.h"

namespace py = pybind11;

namespace pypto::bindings {
namespace {

py::object bridge() { return py::module_::import("pypto._cli"); }

// The CLI's line for a Python exception (pypto._cli.describe_exception).
std::string describe(const py::error_already_set& e) {
  try {
    const py::object trace = e.trace() ? py::reinterpret_borrow<py::object>(e.trace()) : py::none();
    return bridge().attr("describe_exception")(e.value(), trace).cast<std::string>();
  } catch (const std::exception&) {
    return std::string("Python error: ") + e.what();
  }
}

}  // namespace

void bind_cli(py::module_& m) {
  m.def(
      "cli_main",
      [](const std::vector<std::string>& argv, bool install_signal_handlers) {
        cli::Host host;
        host.load_policy_modules = [](const std::vector<std::string>& files) {
          py::gil_scoped_acquire gil;
          try {
            const InPython running;
            bridge().attr("load_policy_modules")(files);
          } catch (const py::error_already_set& e) {
            if (e.matches(PyExc_KeyboardInterrupt) && common::interrupt_signal() != 0) {
              throw Interrupted("interrupted while loading --policy-module " + files.front());
            }
            throw cli::UsageError(describe(e));
          }
        };
        host.sweep = [](const std::vector<std::string>& args) {
          py::gil_scoped_acquire gil;
          try {
            return bridge().attr("run_sweep")(args).cast<int>();
          } catch (const py::error_already_set& e) {
            throw cli::UsageError("sweep: " + describe(e));
          }
        };
        host.describe_user_error = [](std::exception_ptr p) -> std::string {
          py::gil_scoped_acquire gil;
          try {
            std::rethrow_exception(p);
          } catch (const py::error_already_set& e) {
            return describe(e);
          } catch (...) {
            return "";
          }
        };
        // Only a process that is the CLI (python -m pypto._cli) takes over Ctrl-C and SIGTERM;
        // elsewhere they stay Python's, seen when the command ends.
        if (install_signal_handlers) {
          common::install_interrupt_handlers("pypto-sim");
          forward_signals_to_python();
          // A signal Python's own handler took just before is KeyboardInterrupt now (exit
          // 130 in pypto._cli), not later inside a policy file's loading (a load error).
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        }
        int code = 0;
        {
          // The simulation runs without the GIL, as SIM calls do; Python hooks take it per
          // call.
          py::gil_scoped_release nogil;
          code = cli::main(argv, host);
        }
        // A signal handed to Python that no Python code saw (it left just then) must not
        // raise later, after the command's own line.
        if (common::interrupt_signal() != 0 && PyErr_CheckSignals() != 0) PyErr_Clear();
        return code;
      },
      py::arg("argv"), py::arg("install_signal_handlers") = false,
      "Runs a pypto-sim command line (argv[0] the program name) with the policies registered "
      "in this process; returns its exit status (the messages go to stderr).");
}

}  // namespace pypto::bindings
