// SPDX-License-Identifier: Apache-2.0
// The ATen executor: runs a leaf task's program (program.h) as ATen operations on views of
// the launch's buffers, on the device those buffers live on ("cpu"; "cuda" or "npu" where
// ATen in the process has it). It is the hardware backend's path to a torch device: the same
// programs the tile executor runs on host memory, each instruction ATen ops (ATen dispatches
// them to the device), called from the runtime's C++ threads without the GIL. Every
// instruction of the op table (tile_op_table.h) runs, with the tile executor's semantics:
// where that is no single ATen op (one rounding from double, cast rounding modes and
// saturation, TF32, cbrt, decimal rounding, indexed ops with duplicate indices, stable sorts)
// it is composed of ATen ops on the same device, never copied to the host, and equals SIM's
// bits; the transcendental ops (exp, tanh, atan2, ...) are torch's own approximations, within
// one ulp of the tile executor's correctly rounded values, and sums/matmuls accumulate in
// torch's order. Index errors and integer division by zero throw ModelError, as in SIM.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pypto/exec/program.h"
#include "pypto/exec/tile_exec.h"

namespace pypto::exec {

class AtenExecutor {
 public:
  // `buffers`: the caller's tensors (pointers on `device`, which they must outlive); the
  // executor appends a zeroed workspace of `workspace_bytes` that it allocates on `device`
  // and owns, as the last buffer. Throws ConfigError for a device ATen cannot use here.
  AtenExecutor(const GlobalMemory& buffers, std::uint64_t workspace_bytes,
               const std::string& device);
  ~AtenExecutor();

  // Runs one task's program. Contract: concurrent calls for tasks that do not depend on
  // each other are safe. Throws ModelError for a malformed program.
  void execute(const TaskProgram& p) const;

  // Whether every instruction of p is one this executor implements (every opcode of the op
  // table); otherwise false, with *why naming the first that is not (a corrupt opcode).
  static bool supports(const TaskProgram& p, std::string* why);

  // Whether ATen in this process can allocate a tensor on `device` ("cpu", "cuda", "npu"
  // where torch_npu registered it, "cuda:1", ...): the string parses as a c10::Device and a
  // one-element allocation there succeeds. Cached per string; thread-safe.
  static bool device_available(const std::string& device);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pypto::exec
