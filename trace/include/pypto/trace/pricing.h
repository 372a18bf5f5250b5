// SPDX-License-Identifier: Apache-2.0
// The pricing pass: what a trace's tasks cost on a chip, applied after reading. A reader
// (trace_loader.h) validates everything that does not depend on the chip and leaves the rest
// here, per task in the graph's order; price_trace() applies the chip's cost model to it. So
// a recording is read once, whichever chip it is then priced for (--chip auto picks the chip
// from what the recording holds).
//
// What each format leaves unpriced:
//  - native: the tile ops of each task ("ops", priced by tile_op_cycles into compute cycles;
//    the graph's compute_cycles hold the record's "cycles" until then);
//  - board recordings: each recorded task's execStart/execEnd in board ticks (recorded_ns,
//    recorded_start_ps and the recorded makespan at chip.board_clock_mhz);
//  - fixed-latency graphs: each task's execTime in AICore cycles (recorded_ns at
//    cores.freq_mhz);
//  - merged swimlanes: nothing (their times are µs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/model/cost_model.h"

namespace pypto::trace {

struct ReadTrace;
struct LoadedTrace;

struct UnpricedWork {
  // The file messages name: the trace, or for a board recording its prof file.
  std::string path;

  // ---- native traces ----
  struct OpList {
    std::vector<model::TileOp> ops;  // validated names, dtypes and dimensions
    std::uint64_t line = 0;          // a line that lists it (the first one its parser saw)
  };
  static constexpr std::uint32_t kNoOps = 0xFFFFFFFFu;
  std::vector<OpList> op_lists;
  // Per task, its index in op_lists or kNoOps; empty when no task has ops.
  std::vector<std::uint32_t> task_ops;

  // ---- board recordings ----
  static constexpr std::uint32_t kNoProf = 0xFFFFFFFFu;
  // Per task, execEnd - execStart of its prof record in ticks, and the record's ordinal in
  // the prof file (kNoProf: no record; the task is a zero-cost dependency node). The graph's
  // recorded_start_ps hold execStart in ticks until priced. Empty for other formats.
  std::vector<std::uint64_t> dur_ticks;
  std::vector<std::uint32_t> prof_ord;
  // The prof file's blocks, for messages ("block 3 (blockIdx 5), record 7").
  struct ProfBlock {
    std::uint64_t first_ord = 0;  // ordinal of its first record
    bool has_block_idx = false;
    std::uint32_t block_idx = 0;
  };
  std::vector<ProfBlock> prof_blocks;
  // The recording's first execStart and last execEnd (ticks) and where they are.
  std::uint64_t min_start_ticks = 0, max_end_ticks = 0;
  std::string min_start_where, max_end_where;
  // The first execStart and last execEnd of the AIC/AIV records (PyPTO's AICore end to end,
  // the recorded makespan); start above end when there is none.
  std::uint64_t aicore_start_ticks = ~std::uint64_t(0), aicore_end_ticks = 0;

  // ---- fixed-latency graphs ----
  // Per task, execTime as written (cycles >= 0; a HUB's is 0): a non-negative integer (raw),
  // a negative zero (raw 0) or a double (raw holds its bits).
  enum class Number : std::uint8_t { kUint, kInt, kFloat };
  struct Cycles {
    std::uint64_t raw = 0;
    Number kind = Number::kUint;
  };
  std::vector<Cycles> exec_cycles;
};

// Applies `chip` to what `t` left unpriced and returns the trace ready to simulate.
// Throws TraceError naming the file and line (or record) where a cost does not fit: an op
// list the cost model refuses or prices above 2^32-1 cycles, a task's ops and "cycles" above
// 2^32-1, a duration above 2^32-2 ns, a recording longer than the model's time limit;
// ConfigError when the chip cannot price an op (a zero cube fractal or vector width).
LoadedTrace price_trace(ReadTrace&& t, const model::ChipConfig& chip);

}  // namespace pypto::trace
