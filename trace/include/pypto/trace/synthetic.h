// SPDX-License-Identifier: Apache-2.0
// Synthetic task traces in the native format (traces/FORMAT.md), for tests, benchmarks and
// policy comparisons at scales no board recording reaches. The output has no "dt": the
// loader stitches the roots into device tasks by the runtime options, as the control-flow
// AICPU would.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace pypto::trace {

struct SyntheticSpec {
  std::uint64_t tasks = 1000;  // 1 .. 2^32-2
  // "mix" (chains, fan-out/fan-in and pipelined loop bodies, mixed AIC/AIV, some roots
  // carry a dependency into the next), "chain" (one long dependency chain), "fanout" (per
  // root: producer -> parallel consumers -> join), "loops" (per root: prologue AIV ->
  // matmul AIC -> epilogue AIV ..., each epilogue accumulating into the next root's),
  // "independent" (no edges; task i is AIC when i % 3 == 0, else AIV).
  std::string shape = "mix";
  std::uint32_t seed = 1;
  bool memory = true;     // "mem": a consumer reads exactly the region its producer wrote
  bool recorded = false;  // "dur" per task; "independent" uses 1000 ns for every task
  // Recorded durations are whole multiples of this (rounded down, at least one step): one
  // board tick (20 ns at 50 MHz) makes them survive PyPTO's tick-based formats exactly.
  // 1 leaves them as they are.
  std::uint32_t dur_step_ns = 1;
  std::uint32_t tasks_per_root = 8;
};

// Writes the trace. Deterministic: the same spec gives the same bytes on every platform
// (std::mt19937_64 with integer arithmetic only). Throws ConfigError for an unknown shape,
// tasks == 0, tasks_per_root == 0 or
// dur_step_ns == 0.
//
// Example: SyntheticSpec spec; spec.tasks = 1000000; spec.shape = "loops";
//          std::ofstream file("loops.ndjson"); write_synthetic_trace(spec, file);
void write_synthetic_trace(const SyntheticSpec& spec, std::ostream& out);

}  // namespace pypto::trace
