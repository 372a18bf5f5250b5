// SPDX-License-Identifier: Apache-2.0
// The functional content of leaf tasks: what a task does to memory, as a short program of
// tile instructions over the task's local tiles (its UB/L1/L0 buffers). The compiler
// (lowering + instantiation) writes these; the executor (tile_exec.h) runs each task's
// program on host memory when the timing model completes the task, in simulated order.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pypto/model/cost_model.h"  // DType

namespace pypto::exec {

using model::DType;

// The most axes a tensor, tile or region has (PyPTO's tile ops take 5-entry layouts: 3-D
// convolution's NCDHW, repeat_kv's [B, N_kv, G, S, D]). The one owner of the limit: the
// Python frontend reads it as pypto._C.max_rank.
inline constexpr int kMaxRank = 5;

// A strided box of global memory (a kernel parameter or the workspace). Element
// (i0, .., i{rank-1}) of the box lives at element index
//   offset_elems + sum_k i_k * stride[k]
// of buffer `buffer`, whose elements have type `dtype`. A stride of 0 broadcasts on load.
// The small fields come first so that they share one 8-byte word (96 bytes, not 104).
struct GlobalRegion {
  std::uint32_t buffer = 0;
  DType dtype = DType::kFp32;
  std::uint8_t rank = 0;
  std::int64_t offset_elems = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1, 1};
  std::int64_t stride[kMaxRank] = {};
};

// A dense, row-major local tile. Values are held as double and rounded to `dtype` after
// every instruction that writes the tile, so results match torch's per-op rounding for
// fp16/bf16/fp32 and wrap like torch for the integer types. (int64 values are exact only up
// to 2^53 in magnitude, the precision of a double.)
struct LocalTile {
  DType dtype = DType::kFp32;
  std::uint8_t rank = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1, 1};
};

// The tile instructions: a row each in tile_ops.def (its semantics there, the common ones below).
enum class TileOpcode : std::uint8_t {
#define PYPTO_TILE_OP(op, name, exec, cost_op, scalar_cost_op) op,
#include "pypto/exec/tile_ops.def"
};

// Semantics execute() (tile_exec.h) implements (torch CPU, x86-64, where the two could differ):
//  - Operands are exact values of their tile's dtype; each op computes in double and rounds
//    once to dst's dtype. For + - * / and sqrt this equals torch's fp32 opmath for fp16/bf16
//    and fp32 arithmetic for fp32 (double rounding is innocuous at these precisions);
//    transcendental ops are correctly rounded rather than torch's (SLEEF) approximations.
//  - A scalar operand is first rounded to the dtype of the tile it combines with (the other
//    operand of a binary op; dst for kWhere), as torch does with a Python scalar
//    (x_fp16 + 0.1 adds fp16(0.1)). Two scalar operands are used as given.
//  - Integer results wrap two's-complement; + - * on integer tiles are done in 64-bit integer
//    arithmetic. Conversions from a floating value to an integer dtype truncate like
//    torch's .to(): NaN, inf and values outside int32 (int64 for kInt64) give torch's x86
//    result (INT32_MIN / INT64_MIN, then the low bits for int8/int16).
//  - kDiv: true division rounded to dst; with an integer dst and integer operands it is C
//    division truncating toward zero. kRemainder: result has the divisor's sign (fmod-based
//    for floats). Integer division or remainder by zero throws (torch raises
//    ZeroDivisionError).
//  - kMaximum/kMinimum, kReduceMax/kReduceMin propagate NaN. kRelu keeps NaN.
//  - kReduceSum accumulates in double (int64 for integer sources) and rounds once (torch
//    accumulates fp16/bf16 in fp32 and fp32 pairwise in fp32: last-bit differences are
//    possible on long fp32 reductions).
//  - kCast to a floating dtype rounds per cast_mode: kNone/kRint nearest-even, kRound
//    nearest-away, kFloor down, kCeil up, kTrunc toward zero, kOdd round-to-odd; a cast to the
//    same floating dtype with kRint/kRound/kFloor/kCeil/kTrunc rounds to an integral value
//    (AscendC's float->float cast). To an integer dtype: kNone/kTrunc truncate, kRint
//    half-even, kRound half-away, kFloor, kCeil; kOdd is rejected. `saturate` clamps to
//    the dtype's finite range instead (NaN -> 0 for integers, stays NaN for floats).

// Name of an opcode without the k ("load", "reduce_sum", ...), for diagnostics.
std::string_view to_string(TileOpcode op);

enum class CastMode : std::uint8_t { kNone, kRint, kRound, kFloor, kCeil, kTrunc, kOdd };

// A launch holds one per tile op (~250k for a 4096x4096 chain of 61 ops), so the byte-sized
// fields are packed in front of the 4- and 8-byte ones: 152 bytes, not 168.
struct TileInstr {
  TileOpcode op = TileOpcode::kLoad;
  std::uint8_t scalar_operand = 0;       // bit i set: operand i is scalar[i] (not src[i])
  std::uint8_t reduce_mask = 0;          // kReduce*: bit k = reduce axis k
  std::uint8_t accumulate = 0;           // kMatmul; kScatter: 0 set, 1 add, 2 multiply
  CastMode cast_mode = CastMode::kNone;  // kCast
  std::uint8_t saturate = 0;             // kCast: 1 = pypto SaturationMode.ON
  // kLoad of a trailing-axis broadcast: 1 = the vector unit expands it to dst's shape after the
  // move (PyPTO without combine_axis). Timing only: the load itself already broadcasts.
  std::uint8_t expand = 0;
  std::uint8_t perm[kMaxRank] = {0, 1, 2, 3, 4};  // kPermute
  std::int32_t dst = -1;                          // local tile index
  std::int32_t src[3] = {-1, -1, -1};             // local tile indices
  double scalar[3] = {0, 0, 0};
  GlobalRegion region;  // kLoad / kStore
};

// The initializers above list kMaxRank entries each: a new limit needs them extended too.
static_assert(GlobalRegion{}.shape[kMaxRank - 1] == 1 && LocalTile{}.shape[kMaxRank - 1] == 1 &&
                  TileInstr{}.perm[kMaxRank - 1] == kMaxRank - 1,
              "every axis of a default shape is 1 and the default perm is the identity");

// One leaf task's program.
struct TaskProgram {
  std::vector<LocalTile> locals;
  std::vector<TileInstr> instrs;
};

}  // namespace pypto::exec
