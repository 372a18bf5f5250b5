// SPDX-License-Identifier: Apache-2.0
#include "pypto/launch/launch.h"

#include <chrono>
#include <fstream>

#include "pypto/common/errors.h"

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
  exec::execute(launch_.programs[t], mem_, scratch_);
}

sim::SimResult simulate(const Launch& l, const sim::ChipConfig& chip,
                        const sched::RuntimeOptions& runtime, TaskExecutor& executor) {
  sim::SimOptions so;
  so.runtime = runtime;
  so.on_task_done = [&executor](sched::TaskId t) { executor.execute(t); };
  return sim::simulate(l.graph, chip, so);
}

SimRun run_sim(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
               const Bindings& bindings, const LaunchOptions& opt, const sim::ChipConfig& chip,
               const std::string& report_dir, const sim::ReportOptions& report) {
  SimRun run;
  run.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  HostTileExecutor executor(run.launch, tensors);
  run.result = simulate(run.launch, chip, opt.runtime, executor);
  if (!report_dir.empty()) {
    run.files = sim::write_reports(report_dir, run.launch.graph, chip, run.result, report);
    const std::string merged = report_dir + "/" + kPyptoSimOutputFolder + "/" + kMergedSwimlaneFile;
    if (report.swim_json &&
        sim::write_merged_swimlane(merged, run.launch.graph, run.result, report))
      run.files.push_back(merged);
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

void dump_trace(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                const Bindings& bindings, const LaunchOptions& opt, const sim::ChipConfig& chip,
                const std::string& path) {
  const Launch l = compiler::instantiate(k, tensors, bindings, opt, chip);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write " + path);
  compiler::write_native_trace(l, chip, f);
}

}  // namespace pypto::launch
