// SPDX-License-Identifier: Apache-2.0
// Reading task traces into a TaskGraph. The format is detected from content:
//  - native pypto-sim NDJSON (traces/FORMAT.md), streamed in chunks through simdjson;
//  - PyPTO board recordings: dyn_topo.txt (CSV) or topo.json, joined with
//    tilefwk_L1_prof_data.json (--prof) on (seqNo, taskId);
//  - PyPTO's fixed-latency task graph JSON;
//  - PyPTO's merged swimlane (merged_swimlane.json): tasks, recorded times and dependency
//    arrows of a board recording drawn as a Chrome trace.
// Reading needs no chip: a reader gives the graph with its work unpriced (tile ops, board
// ticks, AICore cycles; pricing.h), and the pricing pass applies a chip to it. A recording is
// read once even when what it holds chooses the chip (--chip auto: recorded_cores).
// Every user error is a TraceError naming the file and line (or record) and what was
// expected.
//
// Example: ReadTrace r = read_trace("dyn_topo.txt", opts);  // opts.prof_path: the recording
//          // r.trace.recorded_cores may choose the chip (model::fitting_chip_presets)
//          LoadedTrace t = price_trace(std::move(r), chip);  // or load_trace(path, opts, chip)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "pypto/model/chip_config.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sched/task_graph.h"
#include "pypto/trace/pricing.h"

namespace pypto::trace {

enum class TraceFormat { kNative, kDynTopo, kTopoJson, kFixedLatency, kSwimlane };
const char* to_string(TraceFormat f);

// Looks at the first bytes of the file; throws TraceError if it matches no format.
TraceFormat detect_trace_format(const std::string& path);

struct LoadOptions {
  std::string prof_path;  // tilefwk_L1_prof_data.json for dyn_topo/topo.json; may be empty
  // Native traces without device-task ids are stitched by the runtime's rules
  // (stitch_function_max_num roots, <=60000 leaf tasks per device task).
  sched::RuntimeOptions runtime;
  // Memory the load and the run may use, in bytes; 0: what the machine has available now
  // (MemAvailable, and the cgroup's limit when one is set). A native trace whose estimate
  // (tasks x bytes per task, from its first chunk) exceeds it is refused before it is read.
  std::uint64_t memory_available_bytes = 0;
  // Reading progress, for a person watching (the CLI's progress line): bytes read so far of
  // the total of the files this load reads (the trace, and --prof for board recordings).
  // Contract: called on the loading thread, with non-decreasing read_bytes <= total_bytes;
  // the native reader calls it after every chunk (a few MiB), whole-file readers once per
  // file after reading it. It may throw (the load stops and the exception propagates). Empty:
  // not called, and the read costs nothing more.
  std::function<void(std::uint64_t read_bytes, std::uint64_t total_bytes)> progress;
};

// Memory available to this process now, in bytes (MemAvailable, bounded by the cgroup's
// memory.max - memory.current); 0 if unknown.
std::uint64_t available_memory_bytes();

// A trace read and priced: what a simulation runs.
struct LoadedTrace {
  sched::TaskGraph graph;
  TraceFormat format = TraceFormat::kNative;
  std::string chip_hint;  // chip named in the trace header, if any
  // Board recordings: non-HUB tasks of the topology without a prof record. They are kept as
  // zero-cost dependency nodes (recorded 0 ns), as DESIGN.md prescribes; callers report the
  // count because a large one means the prof file and the topology do not match.
  std::uint64_t unrecorded_tasks = 0;
  // topo.json (one device task, seqNo 0): prof records of other seqNos, which are skipped.
  std::uint64_t ignored_prof_records = 0;
  // Merged swimlanes: the tasks of its "Fake Core" lane (tasks of the topology without a
  // record, HUBs among them), kept as zero-cost dependency nodes; of those, how many were
  // joined with another drawn at the same time (a flow arrow cannot tell them apart).
  std::uint64_t placeholder_tasks = 0;
  std::uint64_t merged_placeholders = 0;
  // Of the placeholders, those whose hints name a compiled leaf (a nonzero leafHash and
  // operands; a HUB has neither): tasks that ran on a core without a record, whose time the
  // replay cannot include.
  std::uint64_t kernel_placeholders = 0;
  // Merged swimlanes: flow arrows from or to a placeholder that end before they start (a
  // placeholder's position is drawn, not recorded), dropped as no dependency the run had.
  std::uint64_t dropped_placeholder_arrows = 0;
  // Board recordings whose prof blocks carry blockIdx (merged swimlanes: lanes numbered
  // blockIdx + 1): the cores they ran on, to check or choose the chip
  // (model::check_recorded_cores, model::fitting_chip_presets).
  std::optional<model::RecordedCores> recorded_cores;
};

// A trace read but not priced: `trace` is complete except for the columns the chip prices
// (the graph's compute_cycles, recorded_ns, recorded_start_ps and recorded_makespan_ps, as
// `work` says), which price_trace() fills.
struct ReadTrace {
  LoadedTrace trace;
  UnpricedWork work;
};

// Reads and validates (ids, edges, missing prof records) without a chip.
ReadTrace read_trace(const std::string& path, const LoadOptions& opts);

// read_trace, then price_trace with `chip` (tile ops by its cost model, board ticks by
// chip.board_clock_mhz, fixed-latency cycles by cores.freq_mhz).
LoadedTrace load_trace(const std::string& path, const LoadOptions& opts,
                       const model::ChipConfig& chip);

}  // namespace pypto::trace
