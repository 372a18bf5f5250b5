// SPDX-License-Identifier: Apache-2.0
#include "pypto/launch/launch.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/sim/trace/native_writer.h"

namespace pypto::launch {

HostTileExecutor::HostTileExecutor(const Launch& l, const std::vector<LaunchTensor>& tensors)
    : launch_(l), workspace_(l.workspace_bytes, 0) {
  for (const LaunchTensor& a : tensors) {
    mem_.base.push_back(a.data);
    mem_.size_bytes.push_back(a.size_bytes);
    mem_.dtype.push_back(a.dtype);
  }
  mem_.base.push_back(workspace_.data());
  mem_.size_bytes.push_back(workspace_.size());
  mem_.dtype.push_back(sim::DType::kInt8);
}

void HostTileExecutor::execute(sched::TaskId t) {
  NPU_CHECK(t < launch_.programs.size(), "task " + std::to_string(t) + " has no program");
  // One scratch per calling thread: the device backend calls this from every core's stream
  // at once (the memory description is only read).
  thread_local exec::ExecScratch scratch;
  exec::execute(launch_.programs[t], mem_, scratch);
}

sim::SimResult simulate(const Launch& l, const sim::ChipConfig& chip,
                        const sched::RuntimeOptions& runtime, TaskExecutor& executor,
                        sim::L2State* l2) {
  sim::SimOptions so;
  so.runtime = runtime;
  so.on_task_done = [&executor](sched::TaskId t) { executor.execute(t); };
  so.l2_state = l2;
  // A pending interruption (the Python module's KeyboardInterrupt poll) stops the run.
  so.progress_every_tasks = 4096;
  so.progress = [](std::uint64_t done, std::uint64_t total) {
    if (interrupt_requested()) {
      throw Interrupted("interrupted while simulating (" + std::to_string(done) + " of " +
                        std::to_string(total) + " tasks done); no report written");
    }
  };
  return sim::simulate(l.graph, chip, so);
}

namespace {

// The kept L2s, one per chip. The mutex is held for a whole warm run: two threads running
// SIM calls share one L2 in call order, as two streams on one device would.
struct L2Registry {
  std::mutex mu;
  bool warm = true;
  std::map<std::string, sim::L2State> states;
};

L2Registry& registry() {
  static L2Registry r;
  return r;
}

std::string l2_key(const sim::ChipConfig& chip) {
  return chip.chip.name + "/" + std::to_string(chip.l2.size_kib) + "KiB/" +
         std::to_string(chip.l2.line_bytes) + "B/" + std::to_string(chip.l2.ways) + "w";
}

bool env_says_cold() {
  const char* v = std::getenv("PYPTO_SIM_L2");
  return v != nullptr && std::strcmp(v, "cold") == 0;
}

}  // namespace

void set_l2_warm_across_calls(bool warm) {
  L2Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  r.warm = warm;
  if (!warm) r.states.clear();
}

bool l2_warm_across_calls() {
  L2Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  return r.warm;
}

void reset_l2() {
  L2Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  r.states.clear();
}

SimRun run_sim(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
               const Bindings& bindings, const LaunchOptions& opt, const sim::ChipConfig& chip,
               const std::string& report_dir, const sim::ReportOptions& report) {
  SimRun run;
  run.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  HostTileExecutor executor(run.launch, tensors);
  L2Registry& reg = registry();
  std::unique_lock<std::mutex> lock(reg.mu);
  if (reg.warm && !env_says_cold()) {
    run.result = simulate(run.launch, chip, opt.runtime, executor, &reg.states[l2_key(chip)]);
  } else {
    lock.unlock();
    run.result = simulate(run.launch, chip, opt.runtime, executor);
  }
  if (lock.owns_lock()) lock.unlock();
  if (!report_dir.empty()) {
    // One atomic set: the merged swimlane is renamed with the others, stats.json last.
    sim::ReportOptions ro = report;
    if (ro.swim_json)
      ro.merged_swimlane = std::string(kPyptoSimOutputFolder) + "/" + kMergedSwimlaneFile;
    run.files = sim::write_reports(report_dir, run.launch.graph, chip, run.result, ro);
    run.report_dir = report_dir;
  }
  return run;
}

TimedLaunch instantiate_timed(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                              const Bindings& bindings, const LaunchOptions& opt,
                              const sim::ChipConfig& chip) {
  TimedLaunch r;
  const auto t0 = std::chrono::steady_clock::now();
  r.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void write_launch_trace(const Launch& l, const sim::ChipConfig& chip, std::ostream& out) {
  sim::write_native_trace(l.graph, nullptr, chip.chip.name, "pypto compiler: " + l.graph.source,
                          out, [&](sched::TaskId t, std::string& line) {
                            return compiler::append_task_ops(l, t, chip, line);
                          });
}

void dump_trace(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                const Bindings& bindings, const LaunchOptions& opt, const sim::ChipConfig& chip,
                const std::string& path) {
  const Launch l = compiler::instantiate(k, tensors, bindings, opt, chip);
  OutputFile f(path);
  write_launch_trace(l, chip, f.stream());
  f.commit();
}

}  // namespace pypto::launch
