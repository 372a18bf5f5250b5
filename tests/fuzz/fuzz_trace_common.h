// SPDX-License-Identifier: Apache-2.0
// Shared by the trace-reader targets: the chip and the sample files they join with.
#pragma once

#include <string>

#include "fuzz_common.h"
#include "pypto/model/config_loader.h"
#include "pypto/trace/trace_loader.h"

namespace pypto::fuzz {

inline const model::ChipConfig& a2_chip() {
  static const model::ChipConfig c = model::load_chip_preset("a2");
  return c;
}

// A file of traces/samples/ (PYPTO_SOURCE_DIR is the source tree, set by CMake).
inline std::string sample(const char* name) {
  return std::string(PYPTO_SOURCE_DIR) + "/traces/samples/" + name;
}

// Loads the trace at `path` as `pypto-sim run` does (format detection, then the reader).
inline void load(const std::string& path, const std::string& prof_path) {
  trace::LoadOptions opts;
  opts.prof_path = prof_path;
  const trace::LoadedTrace t = trace::load_trace(path, opts, a2_chip());
  (void)t;
}

}  // namespace pypto::fuzz
