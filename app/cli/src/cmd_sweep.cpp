// SPDX-License-Identifier: Apache-2.0
// pypto-sim sweep: a grid of policies, parameters and traces. It is pypto.sweep, in Python:
// the host runs it (the native binary hands the command line to an interpreter).
#include <string>
#include <vector>

#include "command.h"

namespace pypto::cli {

int cmd_sweep(Context& ctx, int argc, char** argv) {
  if (!ctx.host.sweep) throw UsageError("sweep: " + ctx.host.no_python);
  return ctx.host.sweep(std::vector<std::string>(argv + 1, argv + argc));
}

}  // namespace pypto::cli
