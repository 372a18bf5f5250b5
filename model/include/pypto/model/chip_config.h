// SPDX-License-Identifier: Apache-2.0
// Every number the model uses, as written in configs/<chip>.yaml (natural units: MHz,
// cycles, bytes). The defaults below are the Atlas A2 values of DESIGN.md and are the
// only place defaults live; a preset overrides them. derive() converts to picoseconds.
#pragma once

#include <cstdint>
#include <string>

#include "pypto/common/types.h"

namespace pypto::model {

struct ChipConfig {
  struct Chip {
    std::string name = "a2";
    std::string description = "Atlas A2 (910B)";
    std::uint32_t launch_early_mode_default = 0;  // 950: 2, A2/A3: 0
    double board_clock_mhz = 50.0;                // tick rate of recorded board traces
  } chip;

  struct Cores {
    std::uint32_t aic = 24;         // cube cores = clusters
    std::uint32_t aiv_per_aic = 2;  // vector cores per cluster
    double freq_mhz = 1850.0;       // AICore clock
    std::uint32_t ub_kib = 192;
    std::uint32_t l1_kib = 512;
    std::uint32_t l0a_kib = 64;
    std::uint32_t l0b_kib = 64;
    std::uint32_t l0c_kib = 128;
    std::uint32_t cube_m = 16, cube_n = 16, cube_k = 16;  // fractal
    std::uint32_t start_latency_ns = 5000;                // AICore kernel launch to first handshake
    std::uint32_t handshake_cores = 4;      // dispatch starts once this many said hello
    std::uint32_t slot_switch_cycles = 20;  // pending -> running when the current ends
  } cores;

  struct Aicpu {
    std::uint32_t count = 6;              // AICPUs on the chip
    std::uint32_t max_sched_threads = 4;  // launch_sched_aicpu_num above this -> auto
    std::uint32_t cores_per_thread = 8;   // auto count = min(max, ceil(aic / this))
    double freq_mhz = 1800.0;
    std::uint32_t poll_cycles = 240;      // per core polled
    std::uint32_t resolve_cycles = 390;   // per successor edge resolved
    std::uint32_t dispatch_cycles = 200;  // per task dispatched
    std::uint32_t device_task_build_cycles = 10000;
    std::uint32_t stitch_cycles_per_task = 30;  // per leaf task of a root being stitched
    std::uint32_t submit_cycles = 100;
    std::uint32_t barrier_cycles = 300;  // all schedule threads meet between device tasks
    std::uint32_t queue_op_cycles = 40;  // shared ready-queue lock + op
    std::uint32_t fair_scan_cycles_per_thread = 20;  // mode 2/3 idle-flag scan
    std::uint32_t launch_latency_ns = 3000;          // AICPU kernel start-up
    // A task's end on its core to its FIN being readable by a poll (the core's write of its
    // completion register and the path to the AICPU); 0: seen at once.
    std::uint32_t completion_latency_ns = 0;
    std::uint32_t staging_buffer_tasks = 256;  // per-thread local ready buffer
  } aicpu;

  struct L2 {
    std::uint64_t size_kib = 192 * 1024;
    std::uint32_t line_bytes = 512;
    std::uint32_t ways = 16;
    std::uint32_t hit_latency_cycles = 50;     // AICore cycles
    std::uint32_t read_bytes_per_cycle = 110;  // per core
    std::uint32_t write_bytes_per_cycle = 86;  // per core
  } l2;

  struct Hbm {
    std::uint64_t size_gib = 64;
    std::uint32_t bytes_per_cycle_per_core = 32;  // GM rate a single core can draw
    double aggregate_gbps = 1600.0;               // shared by all transfers in flight
    std::uint32_t latency_ns = 150;
    // Losses a real part shows against the pin bandwidth: refresh cycles, and bus
    // turnarounds / row misses of a read-write mix. The flow model runs at
    // aggregate_gbps * (1 - refresh/100) * (1 - turnaround/100).
    double refresh_overhead_pct = 4.0;
    double turnaround_overhead_pct = 6.0;
  } hbm;

  struct Cost {
    std::uint32_t mte_read_latency_cycles = 350;   // GM -> UB/L1 fixed part
    std::uint32_t mte_write_latency_cycles = 200;  // UB/L0C -> GM fixed part
    // The vector unit's width, which a reduction streams its input at (other vector ops are
    // timed by PyPTO's per-op board fit in cost_model.cpp).
    std::uint32_t vec_bytes_per_cycle = 256;
    // Vector op times: PyPTO's per-op fit of board-measured times (PostSimulatorA2A3), a fixed
    // part per 2-D slice of a tile and a part per byte (PyPTO's a x 2; fp32 div/exp/log/sqrt
    // and int32 mul take half: PyPTO fits those per element). cost_model.cpp maps ops to rows.
    double vec_add_fixed_ns = 18.8;
    double vec_add_ps_per_byte = 4.80914;
    double vec_sub_fixed_ns = 21.52;
    double vec_sub_ps_per_byte = 3.28088;
    double vec_mul_fixed_ns = 14.19;
    double vec_mul_ps_per_byte = 3.27412;
    double vec_div_fixed_ns = 24.62;
    double vec_div_ps_per_byte = 7.65708;
    double vec_adds_fixed_ns = 22.1;
    double vec_adds_ps_per_byte = 1.52528;
    double vec_muls_fixed_ns = 15.0;
    double vec_muls_ps_per_byte = 1.9054;
    double vec_sqrt_fixed_ns = 21.97;
    double vec_sqrt_ps_per_byte = 7.34716;
    double vec_exp_fixed_ns = 25.97;
    double vec_exp_ps_per_byte = 6.98716;
    double vec_reciprocal_fixed_ns = 9.89;
    double vec_reciprocal_ps_per_byte = 1.97346;
    double vec_expand_fixed_ns = 14.0;
    double vec_expand_ps_per_byte = 1.16;
    double vec_cast_fixed_ns = 15.687;
    double vec_cast_ps_per_byte = 1.825;
    // Reductions: the fit's fixed part (ROWSUMLINE, ROWMAX_SINGLE); their input streams at
    // vec_bytes_per_cycle.
    double vec_rowsum_fixed_ns = 72.88;
    double vec_rowmax_fixed_ns = 8.88;
    // GM is moved in aligned blocks of this size: a transfer pays for every block it touches,
    // so short rows at a large stride cost a whole block each.
    std::uint32_t mte_granule_bytes = 512;
    // The cube's rows of this many bytes (min..max) that lie back to back, a K step spanning
    // whole rows, move as one burst; shorter or longer ones move row by row.
    std::uint32_t cube_row_merge_min_bytes = 64;
    std::uint32_t cube_row_merge_max_bytes = 256;
    // MTE1 moves a cube operand from L1 into L0A (left) or L0B (right) per cycle.
    std::uint32_t l1_to_l0a_bytes_per_cycle = 512;
    std::uint32_t l1_to_l0b_bytes_per_cycle = 256;
    std::uint32_t cube_fixed_cycles = 20;  // pipeline start and drain per mmad tile
    // Cycles the cube stalls on L0A/L0B bank conflicts and operand-feed gaps, in percent of
    // its fractal cycles.
    double cube_bank_conflict_pct = 8.0;
    std::uint32_t task_overhead_cycles = 100;  // leaf prologue/epilogue
    // A leaf compiled for dynamic shapes computes its offsets and sizes at run time; with
    // valid_shape_optimize the full (main) blocks of a dynamic loop use the static leaf.
    std::uint32_t dynamic_shape_overhead_cycles = 200;
  } cost;

  struct Workspace {
    std::uint64_t capacity_mib = 16 * 1024;  // device memory reserved for workspace
  } workspace;
};

// ChipConfig converted once to the units the model runs in.
struct DerivedTiming {
  double aicore_ps_per_cycle = 0;
  double aicpu_ps_per_cycle = 0;
  common::TimePs poll_ps = 0, resolve_ps = 0, dispatch_ps = 0;
  common::TimePs device_task_build_ps = 0, stitch_per_task_ps = 0, submit_ps = 0, barrier_ps = 0;
  common::TimePs queue_op_ps = 0, fair_scan_per_thread_ps = 0;
  common::TimePs aicpu_launch_ps = 0, aicore_start_ps = 0, slot_switch_ps = 0;
  common::TimePs completion_latency_ps = 0;
  common::TimePs board_tick_ps = 0;  // exact only for integer-ps ticks (50 MHz, 1 GHz)
  double hbm_bytes_per_ps = 0;       // aggregate, after refresh and turnaround losses
  double hbm_core_bytes_per_ps = 0;  // single-core cap
  double l2_read_bytes_per_ps = 0, l2_write_bytes_per_ps = 0;  // per core
  common::TimePs hbm_latency_ps = 0, l2_hit_latency_ps = 0;
  std::uint32_t aiv = 0;  // aic * aiv_per_aic
};

DerivedTiming derive(const ChipConfig& c);

// Bytes an MTE transfer of [addr, addr + bytes) moves between GM and a core: every
// cost.mte_granule_bytes block it touches, whole. Moved in bursts of burst_bytes (0: one
// burst), every burst pays its own blocks (bursts taken as starting on a block). 0 for an
// empty range.
inline std::uint64_t mte_bytes(std::uint64_t addr, std::uint64_t bytes, const ChipConfig& c,
                               std::uint64_t burst_bytes = 0) {
  if (bytes == 0) return 0;
  const std::uint64_t g = c.cost.mte_granule_bytes;
  if (burst_bytes != 0 && burst_bytes < bytes) {
    const std::uint64_t bursts = (bytes + burst_bytes - 1) / burst_bytes;
    return bursts * ((burst_bytes + g - 1) / g) * g;
  }
  const std::uint64_t first = addr / g, last = (addr + bytes - 1) / g;
  return (last - first + 1) * g;
}

// The cores a board recording ran on, from the blockIdx of its prof blocks. PyPTO numbers a
// chip's cores AIC first (blockIdx 0 .. aic-1), then AIV (aic .. aic+aiv-1), so the AIV
// numbering tells the AIC count: a recording with AIV blockIdx 20..59 ran on 20 clusters.
struct RecordedCores {
  bool any_aic = false, any_aiv = false;
  std::uint32_t max_aic_block = 0;                     // highest AIC blockIdx
  std::uint32_t min_aiv_block = 0, max_aiv_block = 0;  // lowest and highest AIV blockIdx
};

}  // namespace pypto::model
