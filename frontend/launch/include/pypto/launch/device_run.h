// SPDX-License-Identifier: Apache-2.0
// One kernel call on the hardware backend (run_mode=NPU with an explicit device): the same
// instantiation and stitching as run_sim, the same TaskExecutor, but dispatched by the
// wall-clock runtime of device/ (real schedule threads and core streams) instead of timed
// by the SystemC model, and a board-format recording of what it measured.
//
// Example:
//   pypto::launch::DeviceRun r = pypto::launch::run_device(*kernel, tensors, {{"n", 100}},
//                                                         LaunchOptions{}, chip, "out/run1",
//                                                         "cpu");
//   // tensors hold the outputs; r.result.makespan_ns; r.recording.prof, r.recording.topo
#pragma once

#include <string>
#include <vector>

#include "pypto/device/device.h"
#include "pypto/launch/launch.h"

namespace pypto::launch {

struct DeviceRun {
  Launch launch;
  std::string device;    // the device the tasks ran on ("cpu")
  std::string executor;  // "tile" (exec/'s tile executor) or "aten" (exec/aten)
  std::string chip;      // the chip preset whose cores and threads the run has
  std::string policy;
  sched::MachineShape shape;  // the chip's cores and schedule threads, as SIM uses them
  device::RunResult result;
  std::string report_dir;            // empty: no reports
  device::RecordingPaths recording;  // empty paths when no reports
  std::vector<std::string> files;    // every file written
};

// The devices run_device executes tasks on in this build and process: "cpu" always; a torch
// device such as "cuda" where the ATen executor is built and ATen can place tensors there.
bool device_supported(const std::string& device);
// The executors this build has: "tile" (the tile executor of exec/ on host memory, the one
// SIM uses, so results equal SIM's bit for bit; cpu only) and, with libtorch, "aten" (each
// tile instruction one ATen op on the tensors' device; torch's numbers).
std::vector<std::string> device_executors();

// The hardware backend's whole call: instantiate (as run_sim), run the tasks through the
// `executor` ("tile": a HostTileExecutor; "aten": the ATen executor on `device`; empty:
// "tile" on cpu, else "aten") under device::run with the chip's core counts and schedule threads
// and the launch's policy, and, unless `report_dir` is empty, write device.json (device_json) and
// the board recording (device::write_recording, in ticks of chip.chip.board_clock_mhz) there.
// Throws ConfigError for user errors (arguments, options, an unsupported device or executor, a task
// with an instruction the executor does not implement: before any task runs).
DeviceRun run_device(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                     const Bindings& bindings, const LaunchOptions& opt,
                     const model::ChipConfig& chip, const std::string& report_dir,
                     const std::string& device, const std::string& executor = "");

// device.json: what the run measured (makespan, tasks per second, per core type busy time
// and utilisation, per thread rounds/polls/dispatches, the recording's paths), as JSON text.
std::string device_json(const DeviceRun& r);

}  // namespace pypto::launch
