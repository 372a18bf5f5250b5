// SPDX-License-Identifier: Apache-2.0
#include "pypto/model/chip_config.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::sim {
namespace {

constexpr double kPsPerUs = 1e6;  // a clock of f MHz has a period of 1e6 / f ps
constexpr double kPsPerNs = 1e3;

// Rounds to the nearest picosecond. A validated config stays far below the limit; the
// check guards a config that skipped validate() (a zero clock would give infinity).
sched::TimePs to_ps(double ps, const char* key) {
  if (!(ps >= 0 && ps < 9.0e18)) {
    throw ConfigError(std::string(key) + ": " + std::to_string(ps) +
                      " ps does not fit the simulated clock; check the value and its clock");
  }
  return static_cast<sched::TimePs>(std::llround(ps));
}

}  // namespace

DerivedTiming derive(const ChipConfig& c) {
  DerivedTiming d;
  d.aicore_ps_per_cycle = kPsPerUs / c.cores.freq_mhz;
  d.aicpu_ps_per_cycle = kPsPerUs / c.aicpu.freq_mhz;
  // cycles * 1e6 / f rather than cycles * (1e6 / f): one rounding, not two.
  const auto cpu = [&](std::uint32_t cycles, const char* key) {
    return to_ps(cycles * kPsPerUs / c.aicpu.freq_mhz, key);
  };
  const auto core = [&](std::uint32_t cycles, const char* key) {
    return to_ps(cycles * kPsPerUs / c.cores.freq_mhz, key);
  };

  d.poll_ps = cpu(c.aicpu.poll_cycles, "aicpu.poll_cycles");
  d.resolve_ps = cpu(c.aicpu.resolve_cycles, "aicpu.resolve_cycles");
  d.dispatch_ps = cpu(c.aicpu.dispatch_cycles, "aicpu.dispatch_cycles");
  d.device_task_build_ps = cpu(c.aicpu.device_task_build_cycles, "aicpu.device_task_build_cycles");
  d.stitch_per_task_ps = cpu(c.aicpu.stitch_cycles_per_task, "aicpu.stitch_cycles_per_task");
  d.submit_ps = cpu(c.aicpu.submit_cycles, "aicpu.submit_cycles");
  d.barrier_ps = cpu(c.aicpu.barrier_cycles, "aicpu.barrier_cycles");
  d.queue_op_ps = cpu(c.aicpu.queue_op_cycles, "aicpu.queue_op_cycles");
  d.fair_scan_per_thread_ps =
      cpu(c.aicpu.fair_scan_cycles_per_thread, "aicpu.fair_scan_cycles_per_thread");
  d.aicpu_launch_ps = to_ps(c.aicpu.launch_latency_ns * kPsPerNs, "aicpu.launch_latency_ns");

  d.aicore_start_ps = to_ps(c.cores.start_latency_ns * kPsPerNs, "cores.start_latency_ns");
  d.slot_switch_ps = core(c.cores.slot_switch_cycles, "cores.slot_switch_cycles");
  d.board_tick_ps = to_ps(kPsPerUs / c.chip.board_clock_mhz, "chip.board_clock_mhz");

  // GB/s is 1e9 bytes per second = 1e-3 bytes per ps.
  d.hbm_bytes_per_ps = c.hbm.aggregate_gbps * 1e9 / 1e12 *
                       (1.0 - c.hbm.refresh_overhead_pct / 100.0) *
                       (1.0 - c.hbm.turnaround_overhead_pct / 100.0);
  // Per-core rates are per AICore cycle: bytes/ps = bytes/cycle / ps-per-cycle.
  const double cycles_per_ps = c.cores.freq_mhz / kPsPerUs;
  d.hbm_core_bytes_per_ps = c.hbm.bytes_per_cycle_per_core * cycles_per_ps;
  d.l2_read_bytes_per_ps = c.l2.read_bytes_per_cycle * cycles_per_ps;
  d.l2_write_bytes_per_ps = c.l2.write_bytes_per_cycle * cycles_per_ps;
  d.hbm_latency_ps = to_ps(c.hbm.latency_ns * kPsPerNs, "hbm.latency_ns");
  d.l2_hit_latency_ps = core(c.l2.hit_latency_cycles, "l2.hit_latency_cycles");

  d.aiv = c.cores.aic * c.cores.aiv_per_aic;
  return d;
}

}  // namespace pypto::sim
