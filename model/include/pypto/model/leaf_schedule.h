// SPDX-License-Identifier: Apache-2.0
// A leaf task's duration from its contents (docs/leaf-timing.md): its tile ops list-scheduled
// over the AICore's in-order pipes, each op starting when its operands are ready, its pipe
// is free and the buffer its result lives in has room. This is how PyPTO's cost model times
// a leaf (pypto-costmodel.md section 1.3): members of a merged leaf overlap, a matmul's
// K-steps load while the cube works, and a leaf whose tiles do not fit twice waits.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace pypto::model {

// The pipes of an AICore (one op in flight each, in program order).
enum class LeafPipe : std::uint8_t {
  kMte2,   // GM -> UB / L1 (loads)
  kMte1,   // L1 -> L0A / L0B (cube operands)
  kCube,   // mmad
  kVec,    // vector ops
  kMte3,   // UB -> GM (vector stores), L0C -> GM through the FixPipe (cube stores)
  kScalar  // scalar work: offsets of dynamic shapes
};
inline constexpr std::size_t kNumLeafPipes = 6;

// On-chip buffers a local tile may occupy (kNone: not limited, e.g. views).
enum class LeafBuffer : std::uint8_t { kNone, kUb, kL1, kL0a, kL0b, kL0c };
inline constexpr std::size_t kNumLeafBuffers = 6;

// One op of the leaf, in program order. dst and src index LeafProgram::local_bytes (-1:
// none). An op that reads its dst (an accumulating mmad) lists it in src too.
struct LeafOp {
  LeafPipe pipe = LeafPipe::kVec;
  std::uint32_t cycles = 0;
  std::int32_t dst = -1;
  std::int32_t src[3] = {-1, -1, -1};
};

struct LeafProgram {
  std::vector<LeafOp> ops;
  std::vector<std::uint64_t> local_bytes;                       // per local tile
  std::vector<LeafBuffer> local_buffer;                         // per local tile
  std::array<std::uint64_t, kNumLeafBuffers> capacity_bytes{};  // 0: unlimited
};

struct LeafTiming {
  std::uint64_t makespan_cycles = 0;                       // first op's start to last op's end
  std::array<std::uint64_t, kNumLeafPipes> busy_cycles{};  // per pipe
};

// List-schedules p's ops in program order: an op starts at the latest of its sources' ends,
// its pipe's last end, and, when it writes a local without reading it (a new instance of the
// local: reused tiles double-buffer), the time enough earlier instances of that buffer have
// been freed (an instance is freed when its last access in program order ends). A leaf that cannot
// fit its live locals in a buffer whatever the order is not held back by that buffer (the compiler
// checks single tiles against the buffers before). Deterministic; O(ops * live locals).
LeafTiming schedule_leaf(const LeafProgram& p);

}  // namespace pypto::model
