// SPDX-License-Identifier: Apache-2.0
#include "pypto/launch/device_run.h"

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "pypto/common/errors.h"
#include "pypto/sched/registry.h"
#include "pypto/sim/simulation.h"

namespace pypto::launch {

bool device_supported(const std::string& device) { return device == "cpu"; }

DeviceRun run_device(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                     const Bindings& bindings, const LaunchOptions& opt,
                     const sim::ChipConfig& chip, const std::string& report_dir,
                     const std::string& device) {
  if (!device_supported(device)) {
    throw ConfigError("device backend: device '" + device +
                      "' cannot execute tasks in this build (it executes on 'cpu' only; the "
                      "ATen executor for torch devices is not built)");
  }
  sched::validate(opt.runtime);
  DeviceRun run;
  run.device = device;
  run.policy = opt.runtime.policy;
  run.chip = chip.chip.name;
  run.launch = compiler::instantiate(k, tensors, bindings, opt, chip);
  run.shape.aic = chip.cores.aic;
  run.shape.aiv = chip.cores.aic * chip.cores.aiv_per_aic;
  run.shape.threads = sim::sched_thread_count(chip, opt.runtime.launch_sched_aicpu_num);
  run.shape.staging_capacity = chip.aicpu.staging_buffer_tasks;
  run.shape.parallelism = static_cast<std::uint32_t>(opt.runtime.device_sched_parallelism);
  std::unique_ptr<sched::Policy> policy = sched::Registry::global().create(run.policy);
  HostTileExecutor executor(run.launch, tensors);
  device::RunOptions ro;
  const sched::TaskGraph& g = run.launch.graph;
  ro.execute = [&](sched::TaskId t, sched::CoreId) {
    if (g.core_type[t] != sched::CoreType::kHub) executor.execute(t);
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
  for (const auto ct : g.core_type) hubs += ct == sched::CoreType::kHub ? 1 : 0;
  ordered_json cores = ordered_json::object();
  for (int k = 0; k < 2; ++k) {
    const sched::CoreId b = k == 0 ? 0 : r.shape.aic;
    const sched::CoreId e = k == 0 ? r.shape.aic : r.shape.aic + r.shape.aiv;
    std::uint64_t busy = 0, tasks = 0;
    for (sched::CoreId c = b; c < e && c < m.core_busy_ns.size(); ++c) {
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
                       {"busy_ns", t.busy_ns},
                       {"waits", t.waits}});
  }
  ordered_json j{
      {"backend", "device"},
      {"device", r.device},
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
