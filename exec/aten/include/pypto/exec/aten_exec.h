// SPDX-License-Identifier: Apache-2.0
// The ATen executor: runs a leaf task's program (program.h) as ATen operations on views of
// the launch's buffers, on the device those buffers live on ("cpu"; "cuda" where ATen was
// built with it). It is the hardware backend's path to a torch device: the same programs the
// tile executor runs on host memory, each instruction one ATen op (ATen dispatches it to the
// device), called from the runtime's C++ threads without the GIL. Numbers are ATen's
// (torch's kernels: for + - * / and data movement the tile executor's bits, for exp and the
// other transcendental ops torch's own approximations, within a few ulp).
// Instructions outside the families it implements are rejected before anything runs.
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

  // Whether every instruction of p is one this executor implements; otherwise false, with
  // *why naming the first that is not (the instruction and the families it runs).
  static bool supports(const TaskProgram& p, std::string* why);

  // Whether ATen in this process can place tensors on `device` ("cpu", "cuda", ...).
  static bool device_available(const std::string& device);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pypto::exec
