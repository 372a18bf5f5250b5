// SPDX-License-Identifier: Apache-2.0
// One kernel call, from compiled kernel to results: the run loop of the SIM backend.
// instantiate (compiler) -> simulate (the SystemC model times the tasks) -> as the model
// completes each task, a TaskExecutor performs it on memory -> reports. The Python module
// only converts types and calls run_sim(); a later NPU backend drives the same loop with
// another executor.
//
// Example:
//   pypto::launch::SimRun r = pypto::launch::run_sim(*kernel, tensors, {{"n", 100}},
//                                                   LaunchOptions{}, chip, "out/run1");
//   // tensors' host memory now holds the outputs; r.result.stats, r.launch.log
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "pypto/common/types.h"
#include "pypto/compiler/compile.h"
#include "pypto/exec/tile_exec.h"
#include "pypto/model/chip_config.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"

namespace pypto::launch {

using compiler::CompiledKernel;
using compiler::Launch;
using compiler::LaunchOptions;
using compiler::LaunchTensor;
using Bindings = std::map<std::string, std::int64_t>;  // {dynamic-dim symbol: value}

// The functional half of a backend: performs a task's effect on memory.
class TaskExecutor {
 public:
  virtual ~TaskExecutor() = default;
  // Contract: called once per task of the launch, as the timing model completes it (a
  // topological order of the graph the model ran), or, on the device backend, on the stream
  // of the core that runs it, after every predecessor's call returned and concurrently with
  // calls for other tasks (so an implementation must allow concurrent calls for tasks that
  // do not depend on each other); may throw, which ends the run with that error. Task ids
  // index the launch's graph and programs.
  virtual void execute(common::TaskId t) = 0;
};

// SIM's executor: runs each task's tile program (exec/) on host memory, the caller's
// tensors as buffers 0..n-1 and a zeroed workspace of launch.workspace_bytes, which it
// owns, as buffer n. Concurrent calls are safe (each thread has its own scratch).
// Contract: `l` and the tensors' host memory outlive the executor.
class HostTileExecutor final : public TaskExecutor {
 public:
  HostTileExecutor(const Launch& l, const std::vector<LaunchTensor>& tensors);
  void execute(common::TaskId t) override;

 private:
  const Launch& launch_;
  std::vector<std::uint8_t> workspace_;
  exec::GlobalMemory mem_;
};

// Simulates a built launch with the runtime options of `l`'s instantiation, calling
// `executor` for each task as the model completes it. The workspace figures in the stats
// are the launch's own (l.graph.workspace).
// `l2`: the L2 to start from and leave the contents in (see sim::L2State); null: cold.
sim::SimResult simulate(const Launch& l, const model::ChipConfig& chip,
                        const sched::RuntimeOptions& runtime, TaskExecutor& executor,
                        sim::L2State* l2 = nullptr);

// L2 across calls. On a device consecutive kernels share the L2, so by default run_sim()
// keeps the L2 contents of this process's last SIM call on the same chip (name and L2
// geometry) and starts the next call from them: a tensor passed again at the same address
// hits where it is still resident, and output still dirty is written back when a later
// call evicts it. PYPTO_SIM_L2=cold in the environment (read at each call), or
// set_l2_warm_across_calls(false), starts every call cold. Replays (pypto-sim run) run
// one simulation per process and are always cold.
void set_l2_warm_across_calls(bool warm);
bool l2_warm_across_calls();  // the setting, before PYPTO_SIM_L2
// Forgets every kept L2: the next call starts cold.
void reset_l2();

// Where PyPTO's tooling looks for a SIM call's swimlane: its cost-model example takes the
// newest folder under ./output and reads CostModelSimulationOutput/merged_swimlane.json in it.
// Our run folder is that folder, so the file goes to
//   <report_dir>/CostModelSimulationOutput/merged_swimlane.json
// beside our own stats.json, trace.json and swim.json.
inline constexpr const char* kPyptoSimOutputFolder = "CostModelSimulationOutput";
inline constexpr const char* kMergedSwimlaneFile = "merged_swimlane.json";

struct SimRun {
  Launch launch;                   // graph, programs, workspace figures, runtime log lines
  sim::SimResult result;           // stats and timeline
  std::string report_dir;          // where the reports went; empty: none
  std::vector<std::string> files;  // every report file written
};

// The SIM backend's whole call: instantiate, simulate with a HostTileExecutor (outputs land
// in the tensors' host memory), and write the reports to `report_dir` unless it is empty:
// sim::write_reports' files and, when report.swim_json is set, PyPTO's merged swimlane
// (kPyptoSimOutputFolder/kMergedSwimlaneFile).
// Throws ConfigError for user errors (arguments, bindings, options), ModelError for bugs.
SimRun run_sim(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
               const Bindings& bindings, const LaunchOptions& opt, const model::ChipConfig& chip,
               const std::string& report_dir, const sim::ReportOptions& report = {});

// ---- A SIM call in two halves: outputs now, timing and reports in the background ----
// A call's outputs depend only on its tasks and their dependencies (TaskExecutor's contract:
// any topological order gives the same numbers), its timing only on the launch and the L2
// it starts from. submit_sim() computes the outputs on the calling thread and queues the
// timing run and the reports for the report worker: one thread per process that runs the
// queued calls one at a time, in submission order, so that the L2 kept across calls evolves
// in call order exactly as with run_sim(). run_sim(), set_l2_warm_across_calls() and
// reset_l2() first wait for the queue to drain.
class SimTicket {
 public:
  struct State;
  explicit SimTicket(std::shared_ptr<State> s) : s_(std::move(s)) {}
  // Blocks until the timing run and its reports are done; returns the run or rethrows its
  // error (ConfigError, ModelError, Interrupted, pypto::Error for a report that could not be
  // written). While waiting, interrupt_requested() on the calling thread is polled every
  // 50 ms: on a request every queued and running submission is cancelled (none leaves a
  // report) and this throws Interrupted.
  const SimRun& wait();
  bool done() const;
  // The instantiated launch (graph, log, tile-op count): available at once; the worker only
  // reads it.
  const Launch& launch() const;

 private:
  std::shared_ptr<State> s_;
};

// Instantiates the call, executes its tasks on the tensors' host memory (device task after
// device task, each in a topological order; polls interrupt_requested()), and queues the
// timing run and the reports (written as run_sim() writes them). The tensors may be reused
// as soon as this returns. `chip` and `runtime` are copied; the L2 setting (warm or cold,
// PYPTO_SIM_L2) is read now. Throws what run_sim() throws for the first half.
SimTicket submit_sim(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                     const Bindings& bindings, const LaunchOptions& opt,
                     const model::ChipConfig& chip, const std::string& report_dir,
                     const sim::ReportOptions& report = {});

// How much the report worker may hold: a pending run keeps its whole launch (graph, task
// programs) until it is timed, and a loop that calls a large cached kernel faster than the
// worker times it (the worker idles while the machine is busy) would otherwise grow without
// limit. submit_sim() waits, as SimTicket::wait() does, while the queued and running runs
// reach either limit; a single run larger than max_tasks is taken when nothing is pending.
struct ReportQueueLimits {
  // A pending run holds ~3 KiB a task, a one-task run a few KiB; so the defaults keep the
  // queue near 200 MiB at most (tools/bench_report_queue.py measures it).
  std::size_t max_runs = 4096;
  std::uint64_t max_tasks = 1 << 16;  // tasks of all pending runs together
};
// Contract: affects later submissions only; both fields must be >= 1 (ConfigError if not).
void set_report_queue_limits(const ReportQueueLimits& limits);
ReportQueueLimits report_queue_limits();

// Starts the report worker's thread now (run_sim's first call would), so that a kernel's first
// call does not pay for it; idempotent.
void start_report_worker();

// Blocks until every submitted run is done (their results and errors stay with their
// tickets), polling interrupt_requested() as SimTicket::wait() does.
void wait_submitted_sims();

// The errors of submitted runs that failed (not by cancellation) and whose ticket nobody
// waited for, as "<report_dir>: <message>", each returned once: so that no failure goes
// unsaid (the Python module prints them at exit).
std::vector<std::string> take_unobserved_sim_failures();

// Executes every task of `l` with `executor`, device task after device task, each in a
// topological order (ready tasks lowest id first). Polls interrupt_requested().
void execute_in_dependency_order(const Launch& l, TaskExecutor& executor);

// instantiate() with its wall time, for the compile-throughput benchmark.
struct TimedLaunch {
  Launch launch;
  double seconds = 0;
};
TimedLaunch instantiate_timed(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                              const Bindings& bindings, const LaunchOptions& opt,
                              const model::ChipConfig& chip);

// Writes a built launch as a native trace (traces/FORMAT.md) with its tile ops, which
// `pypto-sim run` replays with the same device tasks, edges, memory ranges and durations.
void write_launch_trace(const Launch& l, const model::ChipConfig& chip, std::ostream& out);

// Instantiates the call and writes it as a native trace (traces/FORMAT.md) to `path`, which
// `pypto-sim run` replays. Throws pypto::Error if the file cannot be written.
void dump_trace(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                const Bindings& bindings, const LaunchOptions& opt, const model::ChipConfig& chip,
                const std::string& path);

}  // namespace pypto::launch
