// SPDX-License-Identifier: Apache-2.0
#include "pypto/model/chip_config.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::model {
namespace {

constexpr double kPsPerUs = 1e6;  // a clock of f MHz has a period of 1e6 / f ps
constexpr double kPsPerNs = 1e3;

std::string compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

constexpr const char* kLimitText = "the model's time limit of 2^62 ps (about 53 days)";

// Rounds to the nearest picosecond. A validated config stays far below the limit unless a
// clock is set absurdly slow (a zero clock, from a config that skipped validate(), would
// give infinity).
common::TimePs to_ps(double ps, const char* key) {
  if (!(ps >= 0 && ps < static_cast<double>(common::kTimeLimitPs))) {
    throw ConfigError(std::string(key) + ": " + compact(ps) + " ps does not fit " + kLimitText);
  }
  return static_cast<common::TimePs>(std::llround(ps));
}

// `cycles` of a `mhz` clock in ps. Too long is the clock's fault: the cycle counts have
// small ranges, so the message blames the clock and names the count it was applied to.
common::TimePs cycles_to_ps(std::uint32_t cycles, double mhz, const char* clock_key,
                            const char* key) {
  const double ps = cycles * kPsPerUs / mhz;
  if (!(ps >= 0 && ps < static_cast<double>(common::kTimeLimitPs))) {
    throw ConfigError(std::string(clock_key) + " = " + compact(mhz) + " MHz is too slow: " + key +
                      " (" + std::to_string(cycles) + " cycles) would last " + compact(ps) +
                      " ps, past " + kLimitText + "; raise " + clock_key);
  }
  return static_cast<common::TimePs>(std::llround(ps));
}

}  // namespace

DerivedTiming derive(const ChipConfig& c) {
  DerivedTiming d;
  d.aicore_ps_per_cycle = kPsPerUs / c.cores.freq_mhz;
  d.aicpu_ps_per_cycle = kPsPerUs / c.aicpu.freq_mhz;
  // cycles * 1e6 / f rather than cycles * (1e6 / f): one rounding, not two.
  const auto cpu = [&](std::uint32_t cycles, const char* key) {
    return cycles_to_ps(cycles, c.aicpu.freq_mhz, "aicpu.freq_mhz", key);
  };
  const auto core = [&](std::uint32_t cycles, const char* key) {
    return cycles_to_ps(cycles, c.cores.freq_mhz, "cores.freq_mhz", key);
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
  d.completion_latency_ps =
      to_ps(c.aicpu.completion_latency_ns * kPsPerNs, "aicpu.completion_latency_ns");

  d.aicore_start_ps = to_ps(c.cores.start_latency_ns * kPsPerNs, "cores.start_latency_ns");
  d.slot_switch_ps = core(c.cores.slot_switch_cycles, "cores.slot_switch_cycles");
  d.board_tick_ps = cycles_to_ps(1, c.chip.board_clock_mhz, "chip.board_clock_mhz", "one tick");

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

}  // namespace pypto::model
