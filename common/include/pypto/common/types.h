// SPDX-License-Identifier: Apache-2.0
// Basic vocabulary shared by the runtime (sched/), the simulator (sim/) and the frontend.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace pypto::common {

// Simulated time. Everything in the model is kept in integer picoseconds so that
// different clock domains (AICore 1.85 GHz, AICPU 1.8 GHz, board counters 50 MHz)
// combine without drift and results are bit-for-bit deterministic.
using TimePs = std::uint64_t;
inline constexpr TimePs kNever = std::numeric_limits<TimePs>::max();
// The latest simulated time the model represents: 2^62 ps, about 53 days. Every event time
// is checked against it, so that sums of a few times never wrap around 2^64; a run that
// would pass it stops with a ConfigError naming what got there (sim/src/machine/machine.h).
inline constexpr TimePs kTimeLimitPs = TimePs{1} << 62;

// Saturating arithmetic for times built from file and config values: a result that would
// wrap becomes kNever, which every time-limit check refuses.
constexpr TimePs add_ps(TimePs a, TimePs b) { return a > kNever - b ? kNever : a + b; }
constexpr TimePs mul_ps(TimePs a, std::uint64_t n) {
  return n != 0 && a > kNever / n ? kNever : a * n;
}

using TaskId = std::uint32_t;        // dense index into TaskGraph arrays
using DeviceTaskId = std::uint32_t;  // dense index into TaskGraph::device_tasks
using CoreId = std::uint32_t;        // index into the machine's core list (AIC first, then AIV)
using ThreadId = std::uint32_t;      // schedule AICPU thread index
inline constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();
inline constexpr CoreId kNoCore = std::numeric_limits<CoreId>::max();
// kNoCore in a per-task 16-bit core column (both backends' timelines): a task that ran on
// no core (AICPU tasks run on a schedule thread; HUBs are resolved without running).
inline constexpr std::uint16_t kNoCore16 = 0xFFFF;

// Where a task runs. HUB tasks are zero-cost dependency nodes resolved inline by the
// AICPU and never dispatched; AICPU tasks run on the schedule thread that resolves them.
enum class CoreType : std::uint8_t { kAic = 0, kAiv = 1, kAicpu = 2, kHub = 3 };
inline constexpr int kNumDispatchTypes = 2;  // AIC and AIV have cores and ready queues

constexpr std::string_view to_string(CoreType t) {
  switch (t) {
    case CoreType::kAic: return "AIC";
    case CoreType::kAiv: return "AIV";
    case CoreType::kAicpu: return "AICPU";
    case CoreType::kHub: return "HUB";
  }
  return "?";
}

// Parses "AIC", "AIV", "HUB", "AICPU"/"AI-CPU", tolerating a board suffix such as "AIC_0".
std::optional<CoreType> parse_core_type(std::string_view s);

constexpr bool is_dispatchable(CoreType t) { return t == CoreType::kAic || t == CoreType::kAiv; }

}  // namespace pypto::common
