// SPDX-License-Identifier: Apache-2.0
// Internal interface between read_trace() and the per-format readers, and what the pricing
// pass needs of them (not installed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pypto/sched/task_graph.h"
#include "pypto/trace/trace_loader.h"

namespace pypto::trace::detail {

// The readers: each gives the graph with its work unpriced (pricing.h).
// traces/FORMAT.md; streamed, never holds the whole file.
ReadTrace load_native(const std::string& path, const LoadOptions& opts);

// dyn_topo.txt or topo.json joined with opts.prof_path.
ReadTrace load_board(const std::string& path, TraceFormat format, const LoadOptions& opts);

// PyPTO's fixed-latency task graph JSON.
ReadTrace load_fixed_latency(const std::string& path);

// PyPTO's merged swimlane (merged_swimlane.json); its times are µs, priced already.
ReadTrace load_swimlane(const std::string& path);

// The line of the native trace at `path` that holds task `task` (its "id"); 0 if none. For
// messages of the pricing pass, which keeps no line per task: it reads the file again.
std::uint64_t native_task_line(const std::string& path, std::uint64_t task);

// Moves a reader's own per-task column along with the graph's when TaskGraphBuilder::finish
// reordered the tasks (`new_pos` as it gives it; empty: the order was kept).
template <class T>
void permute_column(std::vector<T>& col, const std::vector<common::TaskId>& new_pos) {
  if (new_pos.empty()) return;
  std::vector<T> out(col.size());
  for (std::size_t t = 0; t < col.size(); ++t) out[new_pos[t]] = std::move(col[t]);
  col.swap(out);
}

// Size of an input file; TraceError naming the path if it is missing, a directory or not a
// regular file (a device such as /dev/zero, a pipe: the readers open a file twice).
std::uint64_t input_file_size(const std::string& path);

// Bytes of a reader's buffer for a file of `file_bytes`: a chunk, or less for a small file
// (the buffer is zero-filled, and a fresh page's first touch is what costs; the readers run
// per fuzz input too). The 64 spare bytes let the read that finds the end of file fit.
inline std::size_t read_buffer_bytes(std::uint64_t file_bytes, std::size_t chunk_bytes) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, file_bytes + 64));
}

// Refuses (TraceError) a trace whose estimated memory, `tasks` x `bytes_per_task`, exceeds
// the memory available (opts.memory_available_bytes, else available_memory_bytes()).
// `basis` says where the figures come from, for the message.
void check_fits_memory(const std::string& path, double tasks, double bytes_per_task,
                       const std::string& basis, const LoadOptions& opts);
// The same for `need_bytes` estimated as `basis` says; available_bytes 0: ask the OS.
void check_fits_memory(const std::string& path, double need_bytes, const std::string& basis,
                       std::uint64_t available_bytes);

// Reserves the per-task columns the readers fill for `n` tasks (and `succ_begin` for n + 1).
inline void reserve_task_columns(sched::TaskGraph& g, std::size_t n) {
  g.core_type.reserve(n);
  g.root.reserve(n);
  g.kernel.reserve(n);
  g.orig_id.reserve(n);
  g.recorded_ns.reserve(n);
  g.compute_cycles.reserve(n);
  g.tiles.reserve(n);
  g.succ_begin.reserve(n + 1);
}

// Reserves the graph's task columns for `tasks` tasks and `edges` edges, estimated from the
// density of the first part of a file: a reservation costs address space, not memory, until
// it is used, and saves the copies and the up to 2x overshoot of growing by doubling.
inline void reserve_graph(sched::TaskGraph& g, double tasks, double edges) {
  reserve_task_columns(g, static_cast<std::size_t>(std::min(tasks * 1.1, 4e9)));
  g.succ.reserve(static_cast<std::size_t>(std::min(edges * 1.1, 4e9)));
}

// A number for messages: up to 6 significant digits, exponent when large ("50", "1e-09").
std::string compact(double v);

// 1-based line and column of byte offset `pos` in `text`.
struct LineCol {
  std::size_t line = 1, col = 1;
  // Contract: moves the position past `text` (a newline starts the next line).
  void advance(std::string_view text);
};
LineCol line_col(std::string_view text, std::size_t pos);

// Converts a duration in ticks of a clock_mhz clock to nanoseconds (rounded to nearest) for
// TaskGraph::recorded_ns; TraceError (with `where` as prefix) if it does not fit.
std::uint32_t ticks_to_ns(std::uint64_t ticks, double clock_mhz, const std::string& where);

// If the file at `path` has a JSON syntax error, the TraceError for it: nlohmann's parser
// run over the file without building anything, "path:line:col: invalid JSON: ...", or for a
// number too large for a double one that also names the record (`top_name` for elements of
// the top-level array, "record" for those of a "tasks" array) and the key. Returns if the
// file is valid JSON.
void check_json_syntax(const std::string& path, const char* top_name = "record");

// 1-based line and column of byte offset `pos` of the file at `path`.
LineCol file_line_col(const std::string& path, std::uint64_t pos);

}  // namespace pypto::trace::detail
