// SPDX-License-Identifier: Apache-2.0
// Helpers the trace library's tests share: a sample's path, loading a trace with the
// default chip, and finding a task by its seqNo and id.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "pypto/model/chip_config.h"
#include "pypto/trace/trace_loader.h"

namespace pypto::testing {

inline std::string sample(const std::string& name) {
  return std::string(PYPTO_SOURCE_DIR) + "/traces/samples/" + name;
}

inline trace::LoadedTrace load(const std::string& path, const std::string& prof = "") {
  trace::LoadOptions o;
  o.prof_path = prof;
  return trace::load_trace(path, o, model::ChipConfig{});
}

// Index of the task with (seqNo, orig id).
inline common::TaskId find(const sched::TaskGraph& g, std::uint32_t seq, std::uint32_t orig) {
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (g.orig_id[t] == orig && g.device_tasks[g.device_task[t]].seq_no == seq) return t;
  }
  FAIL("no task " << orig << " in seqNo " << seq);
  return 0;
}

}  // namespace pypto::testing
