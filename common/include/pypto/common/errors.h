// SPDX-License-Identifier: Apache-2.0
// Typed errors. User-input errors (ConfigError, TraceError) are thrown before simulation
// starts and say where the problem is and how to fix it; ModelError is an internal
// invariant violation. Clients catch them at one boundary (the CLI maps each to an exit
// code, the Python module to an exception class). They live in `pypto` itself, the one name
// every library and client catches; the rest of common/ is `pypto::common`.
#pragma once

#include <stdexcept>
#include <string>

namespace pypto {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad configuration value, option or command-line flag.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A malformed, truncated or inconsistent trace file.
class TraceError : public Error {
 public:
  using Error::Error;
};

// A scheduling policy's hook answered outside its contract (an index past the list it was
// given, a core it may not fill), or its decisions stopped the run: the policy's author's
// code, so a user error, never the model's.
class PolicyError : public Error {
 public:
  using Error::Error;
};

// A broken internal invariant (a bug in the model, never the user's fault).
class ModelError : public Error {
 public:
  using Error::Error;
};

// The run was interrupted by a signal (or, in the Python module, by a pending
// KeyboardInterrupt). Not a user error: the CLI maps it to exit status 130
// (pypto/common/interrupt.h raises it).
class Interrupted : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_model_error(const char* file, int line, const std::string& msg);

}  // namespace pypto

// Never compiled out: the model's invariants are cheap compared to what a silent wrong
// answer costs a user.
#define NPU_CHECK(cond, msg)                                            \
  do {                                                                  \
    if (!(cond)) ::pypto::throw_model_error(__FILE__, __LINE__, (msg)); \
  } while (0)
