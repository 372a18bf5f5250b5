// SPDX-License-Identifier: Apache-2.0
#include "pypto/launch/device_run.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "pypto/common/errors.h"
#include "pypto/sched/registry.h"
#include "pypto/sim/simulation.h"
#ifdef PYPTO_HAVE_ATEN
#include "pypto/exec/aten_exec.h"
#endif

namespace pypto::launch {

namespace {

#ifdef PYPTO_HAVE_ATEN
// The ATen executor behind the TaskExecutor interface: the caller's tensors as buffers
// 0..n-1 (on `device`), a workspace the executor allocates there as buffer n.
class AtenTileExecutor final : public TaskExecutor {
 public:
  AtenTileExecutor(const Launch& l, const std::vector<LaunchTensor>& tensors,
                   const std::string& device)
      : launch_(l), exec_(buffers(tensors), l.workspace_bytes, device) {}
  void execute(common::TaskId t) override {
    NPU_CHECK(t < launch_.programs.size(), "task " + std::to_string(t) + " has no program");
    exec_.execute(launch_.programs[t]);
  }

 private:
  static exec::GlobalMemory buffers(const std::vector<LaunchTensor>& tensors) {
    exec::GlobalMemory m;
    for (const LaunchTensor& a : tensors) {
      m.base.push_back(a.data);
      m.size_bytes.push_back(a.size_bytes);
      m.dtype.push_back(a.dtype);
    }
    return m;
  }
  const Launch& launch_;
  exec::AtenExecutor exec_;
};
#endif

}  // namespace

bool device_supported(const std::string& device) {
  if (device == "cpu") return true;
#ifdef PYPTO_HAVE_ATEN
  return exec::AtenExecutor::device_available(device);
#else
  return false;
#endif
}

std::vector<std::string> device_executors() {
#ifdef PYPTO_HAVE_ATEN
  return {"tile", "aten"};
#else
  return {"tile"};
#endif
}

DeviceRun run_device(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                     const Bindings& bindings, const LaunchOptions& opt,
                     const model::ChipConfig& chip, const std::string& report_dir,
                     const std::string& device, const std::string& executor) {
  if (!device_supported(device)) {
    throw ConfigError("device backend: device '" + device +
                      "' cannot execute tasks in this build and process (executors: " +
                      (device_executors().size() > 1
                           ? std::string("'tile' on cpu, 'aten' on the devices ATen has here)")
                           : std::string("'tile' on cpu only; the ATen executor is not built)")));
  }
  const std::string ex = !executor.empty() ? executor : device == "cpu" ? "tile" : "aten";
  const std::vector<std::string> known = device_executors();
  if (std::find(known.begin(), known.end(), ex) == known.end()) {
    throw ConfigError("device backend: executor '" + ex + "' is not in this build (" +
                      (known.size() > 1 ? "'tile', 'aten'" : "'tile' only: no libtorch") + ")");
  }
  if (ex == "tile" && device != "cpu") {
    throw ConfigError("device backend: the tile executor runs on host memory; device '" + device +
                      "' needs executor 'aten'");
  }
  sched::validate(opt.runtime);
  DeviceRun run;
  run.device = device;
  run.executor = ex;
  run.policy = opt.runtime.policy;
  run.chip = chip.chip.name;
  run.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  run.shape.aic = chip.cores.aic;
  run.shape.aiv = chip.cores.aic * chip.cores.aiv_per_aic;
  run.shape.threads = sim::sched_thread_count(chip, opt.runtime.launch_sched_aicpu_num);
  run.shape.staging_capacity = chip.aicpu.staging_buffer_tasks;
  run.shape.parallelism = static_cast<std::uint32_t>(opt.runtime.device_sched_parallelism);
  std::unique_ptr<sched::Policy> policy = sched::Registry::global().create(run.policy);
  std::unique_ptr<TaskExecutor> task_executor;
  const sched::TaskGraph& g = run.launch.graph;
#ifdef PYPTO_HAVE_ATEN
  if (ex == "aten") {
    for (common::TaskId t = 0; t < run.launch.programs.size(); ++t) {
      std::string why;
      if (!exec::AtenExecutor::supports(run.launch.programs[t], &why)) {
        throw ConfigError("device backend: " + sched::describe_task(g, t) + ": " + why +
                          "; use executor 'tile' on cpu, or run_mode=SIM");
      }
    }
    task_executor = std::make_unique<AtenTileExecutor>(run.launch, tensors, device);
  }
#endif
  if (task_executor == nullptr)
    task_executor = std::make_unique<HostTileExecutor>(run.launch, tensors);
  device::RunOptions ro;
  ro.execute = [&](common::TaskId t, common::CoreId) {
    if (g.core_type[t] != common::CoreType::kHub) task_executor->execute(t);
  };
  run.result = device::run(g, run.shape, *policy, ro);
  if (!report_dir.empty()) {
    run.recording =
        device::write_recording(report_dir, g, run.shape, run.result, chip.chip.board_clock_mhz);
    run.report_dir = report_dir;
    run.files = {run.recording.prof, run.recording.topo, run.recording.dyn_topo};
    const std::string path = report_dir + "/device.json";
    std::ofstream f(path, std::ios::binary);
    f << device_json(run) << "\n";
    f.close();
    if (!f) throw Error("cannot write " + path);
    run.files.push_back(path);
  }
  return run;
}

std::string device_json(const DeviceRun& r) {
  using nlohmann::ordered_json;
  const device::RunResult& m = r.result;
  const sched::TaskGraph& g = r.launch.graph;
  std::uint64_t hubs = 0;
  for (const auto ct : g.core_type) hubs += ct == common::CoreType::kHub ? 1 : 0;
  ordered_json cores = ordered_json::object();
  for (int k = 0; k < 2; ++k) {
    const common::CoreId b = k == 0 ? 0 : r.shape.aic;
    const common::CoreId e = k == 0 ? r.shape.aic : r.shape.aic + r.shape.aiv;
    std::uint64_t busy = 0, tasks = 0;
    for (common::CoreId c = b; c < e && c < m.core_busy_ns.size(); ++c) {
      busy += m.core_busy_ns[c];
      tasks += m.core_tasks[c];
    }
    const double denom = static_cast<double>(e - b) * static_cast<double>(m.makespan_ns);
    cores[k == 0 ? "aic" : "aiv"] = {{"count", e - b},
                                     {"busy_ns", busy},
                                     {"utilization", denom > 0 ? busy / denom : 0.0},
                                     {"tasks", tasks}};
  }
  ordered_json threads = ordered_json::array();
  for (const auto& t : m.threads) {
    threads.push_back({{"rounds", t.rounds},
                       {"polls", t.polls},
                       {"resolves", t.resolves},
                       {"dispatches", t.dispatches},
                       {"busy_ns", t.busy_ps / 1000},
                       {"waits", t.waits}});
  }
  ordered_json j{
      {"backend", "device"},
      {"device", r.device},
      {"executor", r.executor},
      {"chip", r.chip},
      {"policy", r.policy},
      {"source", g.source},
      {"makespan_ns", m.makespan_ns},
      {"first_start_ns", m.first_start_ns},
      {"last_end_ns", m.last_end_ns},
      {"tasks", m.tasks},
      {"hub_tasks", hubs},
      {"device_tasks", g.device_tasks.size()},
      {"edges", g.num_edges()},
      {"sched_threads", r.shape.threads},
      {"tasks_per_s", m.makespan_ns > 0
                          ? static_cast<double>(m.tasks) * 1e9 / static_cast<double>(m.makespan_ns)
                          : 0.0},
      // Host overhead per task: the task span over the tasks, each task's own run included.
      {"task_span_ns_per_task",
       m.tasks > 0
           ? static_cast<double>(m.last_end_ns - m.first_start_ns) / static_cast<double>(m.tasks)
           : 0.0},
      {"startup_ns", m.startup_ns},
      {"wall_s", m.wall_s},
      {"cores", cores},
      {"threads", threads},
      {"recording",
       {{"prof", r.recording.prof},
        {"topo", r.recording.topo},
        {"dyn_topo", r.recording.dyn_topo}}},
  };
  return j.dump(2);
}

}  // namespace pypto::launch
