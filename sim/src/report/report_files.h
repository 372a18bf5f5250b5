// SPDX-License-Identifier: Apache-2.0
// Private to the reports: the writer of each report file (a .cpp each), and what more than one
// of them shares. write_reports (write_reports.cpp) runs the writers; the graph-only worker
// (graph_reports.cpp) runs topo.json's ahead of it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pypto/common/output_file.h"
#include "pypto/sim/report.h"

namespace pypto::sim {
namespace report {

// ps as ns, the unit of stats.json and the summary tables.
inline double ns(std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; }

// First task start to last task end: what a board recording's makespan measures.
inline std::uint64_t task_span_ps(const SimStats& s) {
  return s.last_end_ps - std::min(s.first_start_ps, s.last_end_ps);
}

// How far the simulated task span is from the recorded makespan, in percent.
inline double replay_error_pct(const SimStats& s) {
  if (s.recorded_makespan_ps == 0) return 0.0;
  return (double(task_span_ps(s)) - double(s.recorded_makespan_ps)) /
         double(s.recorded_makespan_ps) * 100.0;
}

// Every TextOut::kCheckEvery records a writer looks for Ctrl-C and for a failed write (a full
// disk stops the writer instead of it formatting the rest of a large trace for nothing).
// Throws Interrupted, or pypto::Error for a failed write.
void check_writer(common::OutputFile& f);

// Kernel names as JSON strings, escaped once each.
std::vector<std::string> json_kernel_names(const sched::TaskGraph& g);
// Task t's kernel name of `names` (json_kernel_names(g)); "task" when the graph names none.
inline std::string_view json_kernel_of(const std::vector<std::string>& names,
                                       const sched::TaskGraph& g, common::TaskId t) {
  return names.empty() ? std::string_view("\"task\"") : std::string_view(names[g.kernel[t]]);
}

// A simulated time in the chip's board-counter ticks (nearest), as swim.json and aicpu.data
// carry them.
inline std::uint64_t board_ticks(std::uint64_t ps, double ticks_per_ps) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(ps) * ticks_per_ps));
}

// The placed tasks of each core in start order (ties: task order): what every per-core
// report (swim.json, aicpu.data, the merged swimlane) walks. Contract: tl is a timeline of g
// on `cores` cores.
std::vector<std::vector<common::TaskId>> tasks_by_core(const sched::TaskGraph& g,
                                                       const Timeline& tl, std::uint32_t cores);

// The per-core walks read several columns of tasks spread over the whole graph (a core runs
// every 70th task or so): fetching a few tasks ahead hides most of the cache misses.
inline constexpr std::size_t kPrefetchAhead = 8;
inline void prefetch_task(const sched::TaskGraph& g, const Timeline& tl, common::TaskId t) {
  __builtin_prefetch(&tl.start_ps[t]);
  __builtin_prefetch(&tl.end_ps[t]);
  __builtin_prefetch(&g.device_task[t]);
  __builtin_prefetch(&g.kernel[t]);
  __builtin_prefetch(&g.orig_id[t]);
}

// Creates `dir` and its parents; returns the top-most folder it made (empty: none), so that
// a failed write can take away what it added. Throws pypto::Error when it cannot.
std::filesystem::path make_folder(const std::filesystem::path& dir);
// Removes the folders make_folder made, if they are still empty (never anything else).
void remove_made_folders(const std::filesystem::path& dir, const std::filesystem::path& top);

// Below a few thousand tasks the files take less time than starting a thread.
inline constexpr std::size_t kParallelWriteTasks = 1 << 14;

// The writers, one per report file: each writes its file's text to `out` and finishes it.
// Contract: r holds a timeline of g where the file shows one (all but topo.json); per_core is
// tasks_by_core(g, r.timeline, cores). Throws pypto::Error when the file cannot be written and
// Interrupted on Ctrl-C (both checked every TextOut::kCheckEvery records).
//
// trace.json (trace_json.cpp): Chrome trace events for Perfetto.
void write_trace_json(common::OutputFile& out, const sched::TaskGraph& g, const SimResult& r,
                      const ReportOptions& opt);
// swim.json (swim_json.cpp): PyPTO's swimlane shape, in board-counter ticks.
void write_swim_json(common::OutputFile& out, const sched::TaskGraph& g,
                     const model::ChipConfig& chip, const SimResult& r,
                     const std::vector<std::vector<common::TaskId>>& per_core);
// topo.json (topo_json.cpp): PyPTO's topology of the graph; depends on the graph alone.
void write_topo_json(common::OutputFile& out, const sched::TaskGraph& g);
// aicpu.data (aicpu_data.cpp): PyPTO's device log records.
void write_aicpu_data(common::OutputFile& out, const sched::TaskGraph& g,
                      const model::ChipConfig& chip, const SimResult& r,
                      const std::vector<std::vector<common::TaskId>>& per_core);
// PyPTO's merged swimlane (merged_swimlane.cpp), as sim::write_merged_swimlane describes it,
// and, where `bubbles` is given, its bubble analysis (trace::write_bubble_analysis) into it.
void write_merged_swimlane_to(common::OutputFile& out, const sched::TaskGraph& g,
                              const SimResult& r, const ReportOptions& opt,
                              common::OutputFile* bubbles = nullptr);

}  // namespace report

// The graph-only reports written ahead (graph_reports.cpp): the worker thread and the file it
// writes, until write_reports takes that file over.
struct GraphReports::State {
  std::string dir;
  std::filesystem::path made;                // the top-most folder start_graph_reports made
  std::unique_ptr<common::OutputFile> topo;  // topo.json's temporary
  std::thread writer;
  std::exception_ptr error;  // the writer's
  bool taken = false;        // write_reports took the file over, and the folder with it

  void wait() {
    if (writer.joinable()) writer.join();
  }
  ~State() {
    wait();
    if (taken) return;
    topo.reset();  // removes the temporary
    report::remove_made_folders(dir, made);
  }
};

}  // namespace pypto::sim
