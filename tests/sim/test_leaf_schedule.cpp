// SPDX-License-Identifier: Apache-2.0
// The list schedule of a leaf's tile ops over the AICore's pipes (pypto/model/leaf_schedule.h),
// on programs whose schedule is worked out by hand in the comments.
#include <catch2/catch.hpp>

#include "pypto/model/leaf_schedule.h"

using pypto::model::LeafBuffer;
using pypto::model::LeafOp;
using pypto::model::LeafPipe;
using pypto::model::LeafProgram;
using pypto::model::schedule_leaf;

namespace {

LeafOp op(LeafPipe pipe, std::uint32_t cycles, std::int32_t dst, std::int32_t s0 = -1,
          std::int32_t s1 = -1, std::int32_t s2 = -1) {
  LeafOp o;
  o.pipe = pipe;
  o.cycles = cycles;
  o.dst = dst;
  o.src[0] = s0;
  o.src[1] = s1;
  o.src[2] = s2;
  return o;
}

// One vector member: load (10) -> op (20) -> store (5), its two tiles `in` and `out`.
void member(LeafProgram& p, std::int32_t in, std::int32_t out) {
  p.ops.push_back(op(LeafPipe::kMte2, 10, in));
  p.ops.push_back(op(LeafPipe::kVec, 20, out, in));
  p.ops.push_back(op(LeafPipe::kMte3, 5, -1, out));
}

LeafProgram vector_members(int n, std::uint64_t ub_bytes) {
  LeafProgram p;
  p.local_bytes.assign(2 * n, 100);
  p.local_buffer.assign(2 * n, LeafBuffer::kUb);
  p.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kUb)] = ub_bytes;
  for (int m = 0; m < n; ++m) member(p, 2 * m, 2 * m + 1);
  return p;
}

}  // namespace

TEST_CASE("leaf schedule: one member runs its pipes in a chain") {
  const auto t = schedule_leaf(vector_members(1, 0));
  CHECK(t.makespan_cycles == 35);
  CHECK(t.busy_cycles[static_cast<std::size_t>(LeafPipe::kMte2)] == 10);
  CHECK(t.busy_cycles[static_cast<std::size_t>(LeafPipe::kVec)] == 20);
}

TEST_CASE("leaf schedule: merged members overlap on their pipes") {
  // MTE2 [0,10] [10,20]; vector [10,30] [30,50]; MTE3 [30,35] [50,55].
  CHECK(schedule_leaf(vector_members(2, 0)).makespan_cycles == 55);
  // Four members: the vector pipe is the bottleneck, 10 + 4 * 20 + 5.
  CHECK(schedule_leaf(vector_members(4, 0)).makespan_cycles == 95);
}

TEST_CASE("leaf schedule: a buffer that holds one member's tiles serialises the members") {
  // UB of 200 bytes: member 2's load waits until member 1's input is freed (its op ends at
  // 30): MTE2 [30,40]; its op waits for member 1's output to be stored (35) and its own
  // load (40): [40,60]; store [60,65].
  CHECK(schedule_leaf(vector_members(2, 200)).makespan_cycles == 65);
  // Room for both members: as unlimited.
  CHECK(schedule_leaf(vector_members(2, 400)).makespan_cycles == 55);
  // A buffer smaller than one member's tiles does not hold the leaf back.
  CHECK(schedule_leaf(vector_members(2, 50)).makespan_cycles == 55);
}

TEST_CASE("leaf schedule: a reused operand tile double-buffers the K steps of a matmul") {
  // Locals: 0 A, 1 B (reused every K step), 2 the accumulator. Per step: load A (10), load B
  // (10), mmad (30) accumulating from the second step. Loads of step k+1 run during the mmad
  // of step k: 20 + 3 * 30.
  LeafProgram p;
  p.local_bytes = {100, 100, 100};
  p.local_buffer = {LeafBuffer::kL1, LeafBuffer::kL1, LeafBuffer::kL0c};
  for (int k = 0; k < 3; ++k) {
    p.ops.push_back(op(LeafPipe::kMte2, 10, 0));
    p.ops.push_back(op(LeafPipe::kMte2, 10, 1));
    p.ops.push_back(op(LeafPipe::kCube, 30, 2, 0, 1, k > 0 ? 2 : -1));
  }
  CHECK(schedule_leaf(p).makespan_cycles == 110);
  // L1 with room for one A and one B only: step k+1's loads wait for step k's mmad.
  p.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kL1)] = 200;
  // A1 [0,10] B1 [10,20] mm1 [20,50]; A2 waits for A1's free at 50: [50,60], B2 [60,70],
  // mm2 [70,100]; A3 [100,110], B3 [110,120], mm3 [120,150].
  CHECK(schedule_leaf(p).makespan_cycles == 150);
}

TEST_CASE("leaf schedule: an empty leaf takes no time") {
  CHECK(schedule_leaf(LeafProgram{}).makespan_cycles == 0);
}
