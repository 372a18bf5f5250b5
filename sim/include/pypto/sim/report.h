// SPDX-License-Identifier: Apache-2.0
// What a run leaves behind: stats.json (the numbers), trace.json (Chrome trace events for
// Perfetto: a track per core and per AICPU thread, an X event per task, dependency
// flows, ready-queue counters) and swim.json (PyPTO's swimlane shape), plus the summary
// tables printed by the CLI.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pypto/model/chip_config.h"
#include "pypto/sched/task_graph.h"
#include "pypto/sim/simulation.h"

namespace pypto::sim {

// PyPTO's merge hints of a compiled leaf task (trace/swimlane_writer.h).
using LeafMergeHint = trace::LeafMergeHint;

// The name of PyPTO's bubble analysis, written beside the merged swimlane.
inline constexpr const char* kBubbleAnalysisFile = "bubble_analysis.log";

struct ReportOptions {
  bool trace_json = true;
  bool swim_json = true;
  std::size_t max_flow_edges = 200'000;  // dependency arrows beyond this are left out
  // Also PyPTO's merged swimlane, at this path relative to the report folder (empty: not),
  // and its bubble analysis (kBubbleAnalysisFile) in the same folder.
  std::string merged_swimlane;
  // write_reports calls this with each file's path before writing it (the CLI's progress
  // line names the file being written). Contract: it may throw; the files are then removed
  // as on any other failure. Empty: not called.
  std::function<void(const std::string& path)> on_file;
  // Per task (empty: none): the merged swimlane shows them as PyPTO's do.
  std::vector<LeafMergeHint> leaf_hints;
};

// Wall-clock seconds of a command's other phases, for the summary's wall line; the simulate
// phase is SimStats::wall_s.
struct PhaseWall {
  double read_s = 0;
  double write_s = 0;
};

// The replay metrics of traces/FORMAT.md "Replay metrics": simulated per-task start/end
// (ps, indexed by task) against g.recorded_start_ps and g.recorded_ns. Contract: g has
// recorded starts, and both vectors have g.num_tasks() entries.
ReplayFidelity replay_fidelity(const sched::TaskGraph& g,
                               const std::vector<std::uint64_t>& start_ps,
                               const std::vector<std::uint64_t>& end_ps);

// A value and its index as the replay metrics' rank sort holds them: 12 bytes, not a pair's
// 16 (at the end of a large run the sort's block is part of its peak of resident memory).
#pragma pack(push, 4)
struct RankEntry {
  std::uint64_t value;
  std::uint32_t index;
};
#pragma pack(pop)

// The recorded half of the replay metrics: what depends on the graph and its recorded times
// alone (the compared tasks, their start ranks and ready times), so that it can be worked
// out while the model runs (simulate() does so on a second thread for large graphs).
struct RecordedReplay {
  std::vector<char> timed;                 // per task: compared (recorded start, not a HUB)
  std::vector<common::TaskId> set;         // the compared tasks, in task order
  std::vector<std::uint64_t> start_ps;     // per compared task: start - the first start
  std::vector<std::uint32_t> twice_ranks;  // per compared task: twice the fractional rank of
                                           // its start (an integer; ties share a half rank)
  std::vector<std::uint64_t> ready_ps;     // per task: latest recorded end of a predecessor
  std::vector<common::TaskId> order;       // every task, each after its predecessors: the
                                           // simulated ready times walk it too
  // The simulated half's working memory, sized here so that its first touches (2-6 ms a MiB
  // on the project's VMs; docs/performance-log.md, "Freed memory is kept for reuse") fall on the
  // thread that runs beside the model rather than after the run: the rank sort's entries (the
  // recorded sort's own, kept), the simulated ranks and the simulated ready times. They are part of
  // the run's peak either way.
  std::vector<RankEntry> rank_scratch;
  std::vector<std::uint32_t> sim_twice_ranks;
  std::vector<std::uint64_t> sim_ready_ps;
};
// Contract: g has recorded starts (g.recorded_start_ps is not empty).
RecordedReplay recorded_replay(const sched::TaskGraph& g);
// Tasks from which a half of the replay metrics gets a thread of its own (below it a thread
// costs more than it saves): the recorded half during the run, the simulated ranks after it.
inline constexpr std::size_t kReplayThreadFromTasks = 1 << 16;
// The same metrics as replay_fidelity, from the graph's recorded half worked out before.
// Contract: `recorded` is recorded_replay(g), taken over (its parts are freed as they are
// used, so that the run's peak memory does not hold both halves whole); the vectors as for
// replay_fidelity.
ReplayFidelity replay_fidelity(const sched::TaskGraph& g, RecordedReplay&& recorded,
                               const std::vector<std::uint64_t>& start_ps,
                               const std::vector<std::uint64_t>& end_ps);

// stats.json content. Keys are ordered and numbers exact, so two runs of the same input
// and config give byte-identical files apart from the wall-clock fields (wall_s,
// tasks_per_s).
nlohmann::ordered_json stats_json(const SimResult& r);

// Every file write_reports may write or remove in its folder (opt.merged_swimlane aside):
// what a client checks against its inputs before a run, so that no report replaces one.
inline constexpr const char* kReportFiles[] = {"stats.json", "trace.json", "swim.json", "topo.json",
                                               "aicpu.data"};

class GraphReports;

// Writes stats.json, trace.json and swim.json (and opt.merged_swimlane) into dir (created if
// needed). Returns the paths written, stats.json first. Atomic as a set: every file is
// written to a temporary in dir and renamed once all are complete, stats.json last; an
// earlier run's stats.json, trace.json and swim.json in dir are removed. Contract: on any
// exception (pypto::Error if a file cannot be written, Interrupted on Ctrl-C) no report
// file, no temporary and no folder this call created is left. `ahead`: the graph-only
// reports start_graph_reports began for this dir, graph and options (null: none); they are
// taken over and waited for once this call's own files are written (they overlap; an error
// of theirs is thrown as this call's own), and the files are the same as without them.
std::vector<std::string> write_reports(const std::string& dir, const sched::TaskGraph& g,
                                       const model::ChipConfig& chip, const SimResult& r,
                                       const ReportOptions& opt, GraphReports* ahead = nullptr);

// The reports that depend on the graph alone (topo.json, beside swim.json), written ahead on a
// thread of their own while the model runs; write_reports then commits them with the others.
// Made by start_graph_reports; empty when there is nothing to write ahead.
class GraphReports {
 public:
  GraphReports();
  GraphReports(GraphReports&&) noexcept;
  GraphReports& operator=(GraphReports&&) noexcept;
  // Contract: waits for the writer; what was written and not handed to write_reports is
  // removed, and so is every folder start_graph_reports made that is still empty.
  ~GraphReports();
  struct State;

 private:
  friend GraphReports start_graph_reports(const std::string&, const sched::TaskGraph&,
                                          const ReportOptions&);
  friend std::vector<std::string> write_reports(const std::string&, const sched::TaskGraph&,
                                                const model::ChipConfig&, const SimResult&,
                                                const ReportOptions&, GraphReports*);
  std::unique_ptr<State> s_;
};
// Starts writing dir's graph-only reports (dir created if needed) when `opt` asks for them
// and the graph is large enough to gain from a thread. Contract: g outlives the result and
// is not changed while it lives; dir and opt are those later given to write_reports.
GraphReports start_graph_reports(const std::string& dir, const sched::TaskGraph& g,
                                 const ReportOptions& opt);

// Writes PyPTO's merged swimlane to `path` (parent folders created): the Chrome trace that
// PyPTO's tools/profiling/draw_swim_lane.py makes from swim.json and the topology, and that
// its cost-model tooling reads after a SIM call. Shape: {"traceEvents": [...]}, times in
// microseconds; pid 1 "Machine View"; a thread per core, tid 1000 + 2 * (blockIdx + 1),
// named AIC_<blockIdx + 1> / AIV_<blockIdx + 1> (tid + 1: a second lane for tasks that
// overlap on one core); an "X" event per task, cat "event", named
// "<seqNo>-<funcId>-<opIdx>-<root>-<leaf>(<kernel name>)" with PyPTO's args keys;
// "machine-view-last-dep" s/f flow pairs for dependencies (at most opt.max_flow_edges);
// ReadyCount_AIC / _AIV / _Total counters. Contract: r holds a timeline of g (otherwise
// nothing is written and false returned). Throws pypto::Error if the file cannot be written;
// the file is written to a temporary and renamed when complete (never left half-written).
bool write_merged_swimlane(const std::string& path, const sched::TaskGraph& g, const SimResult& r,
                           const ReportOptions& opt = {});

// What trace.json leaves out, one line each (empty when nothing): dependency arrows beyond
// opt.max_flow_edges, AICPU spans beyond SimOptions::max_aicpu_events. The CLI prints these
// so that a viewer's missing arrows or spans are never a silent surprise.
std::vector<std::string> trace_notes(const sched::TaskGraph& g, const SimResult& r,
                                     const ReportOptions& opt);

// Human-readable summary of one run (the CLI's stdout). With `phases` the wall line is the
// sum of reading, simulating and writing, each named; without, the simulation's wall alone.
std::string summary_table(const SimResult& r, const PhaseWall* phases = nullptr);

// Side-by-side table of several runs of the same trace (first run is the baseline).
std::string compare_table(const std::vector<SimResult>& runs);

}  // namespace pypto::sim
