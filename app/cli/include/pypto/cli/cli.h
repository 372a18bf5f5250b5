// SPDX-License-Identifier: Apache-2.0
// The commands of pypto-sim as a library (pypto_cli), so that one code path runs them in the
// native binary (tools/cli/src/main.cpp) and inside the Python module (pypto._C.cli_main),
// where Python policies (--policy-module FILE.py) are registered. The error boundary (each
// error type to one stderr line and an exit status) lives here only.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "pypto/common/errors.h"

namespace pypto::cli {

// A bad command line or a user file that cannot be used: one line on stderr, exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// What the process running the commands offers beyond C++. The native binary hands Python's
// work to an interpreter; the Python module does it in place.
struct Host {
  // Loads the --policy-module files of run, compare and policies before the command's
  // options are checked (their register_policy calls add to sched::Registry::global()).
  // Contract: returns once every file is loaded, or throws UsageError naming the file. The
  // native host does not return: it replaces the process with a Python running the same
  // command line. Null: the flag is an error saying `no_python`.
  std::function<void(const std::vector<std::string>& files)> load_policy_modules;
  // `pypto-sim sweep ARGS...` (args without "sweep"). Contract: returns the exit status, or
  // throws UsageError. Null: the command is an error saying `no_python`.
  std::function<int(const std::vector<std::string>& args)> sweep;
  // Contract: the one-line description of an exception raised by user code (a hook of a
  // Python policy), or "" when `e` is none; a non-empty answer exits with status 2.
  std::function<std::string(std::exception_ptr e)> describe_user_error;
  // Why Python is not available (the build has no Python module).
  std::string no_python;
};

// Runs one command line; args[0] is the program name. Contract: never throws; returns the
// exit status: 0 ok, 2 user error (flags, config, trace, the user's policy code), 3 internal
// error, 1 I/O failure, 130 interrupted (Ctrl-C, SIGTERM). A failed run leaves no file behind
// and says what it kept. One command line at a time per process (Ctrl-C handling and the
// policy registry are the process's); nothing else carries over from one to the next.
int main(const std::vector<std::string>& args, const Host& host);

}  // namespace pypto::cli
