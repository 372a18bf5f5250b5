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

inline constexpr int kMaxRank = 4;

// A strided box of global memory (a kernel parameter or the workspace). Element
// (i0, .., i{rank-1}) of the box lives at element index
//   offset_elems + sum_k i_k * stride[k]
// of buffer `buffer`, whose elements have type `dtype`. A stride of 0 broadcasts on load.
struct GlobalRegion {
  std::uint32_t buffer = 0;
  std::int64_t offset_elems = 0;
  DType dtype = DType::kFp32;
  std::uint8_t rank = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1};
  std::int64_t stride[kMaxRank] = {0, 0, 0, 0};
};

// A dense, row-major local tile. Values are held as double and rounded to `dtype` after
// every instruction that writes the tile, so results match torch's per-op rounding for
// fp16/bf16/fp32 and wrap like torch for the integer types. (int64 values are exact only up
// to 2^53 in magnitude, the precision of a double.)
struct LocalTile {
  DType dtype = DType::kFp32;
  std::uint8_t rank = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1};
};

enum class TileOpcode : std::uint8_t {
  // data movement
  kLoad,     // dst <- region (strides may be 0 = broadcast). region.shape <= dst.shape per
             // axis, a prefix box at the same indices; a smaller box keeps the rest of dst
             // (which an earlier instruction must have written, e.g. a kFill of zeros)
  kStore,    // region <- src (region.shape: the valid part, a prefix box of src; no stride 0
             // on an axis of extent > 1, which would write one element several times)
  kFill,     // dst <- scalar
  kCopy,     // dst <- src0 (same element count, row-major order: reshape)
  kPermute,  // dst <- src0 with axes permuted: dst axis k is src axis perm[k]
  kCast,     // dst <- src0 converted to dst's dtype, rounding per `cast_mode`
  // element-wise, same shapes (operand i is scalar[i] when scalar_operand bit i is set:
  // bit 1 for b, bit 0 for a in reflected ops)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kRemainder,
  kPow,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLogicalAnd,
  kLogicalOr,
  kNeg,
  kAbs,
  kRelu,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kReciprocal,
  kSigmoid,
  kTanh,
  kFloor,
  kLogicalNot,
  kWhere,  // dst <- src0 ? src1 : src2 (src1/src2 may be scalars: scalar_operand bits 1, 2)
  // reductions over the axes in reduce_mask; dst has size 1 on those axes (keepdim form)
  kReduceSum,
  kReduceMax,
  kReduceMin,
  // dst[.., M, N] (+)= src0[.., M, K] @ src1[.., K, N]; batch axes equal. accumulate=1 adds
  // to dst's current contents (K split across instructions); products summed in double.
  kMatmul,
  // Appended for PyPTO compatibility (earlier opcodes keep their values).
  // element-wise, one operand (scalar[1] is a parameter where noted, not an operand)
  kCeil,
  kTrunc,
  kRound,  // torch.round(x, decimals = scalar[1])
  kSign,
  kErf,
  kErfc,
  kSin,
  kCos,
  kLog1p,
  kExpm1,
  kLrelu,  // x < 0 ? x * scalar[1] : x
  // dst <- src0 on and above (triu) / below (tril) diagonal scalar[1] of the last two axes,
  // counted in the tile's own coordinates (the compiler shifts it by the tile's offset), else 0
  kTriu,
  kTril,
  // reductions over reduce_mask (keepdim form), like kReduceSum
  kReduceProd,
  kArgMax,  // the index along the one axis of reduce_mask of the first maximum (NaN wins)
  kArgMin,
  // inclusive scans along the one axis of reduce_mask; dst has src0's shape
  kCumSum,
  kCumProd,
  // Indexed ops (gather, scatter, scatter_update): their addresses depend on index values.
  // kGather: dst[c] <- src0[c with axis a replaced by src1[c]], where a is the one axis of
  //   reduce_mask, src1 (the index tile, an integer dtype) has dst's shape and src0 (the
  //   input window) holds the whole indexed extent along a and at least dst's extent on the
  //   other axes. An index outside [0, src0.shape[a]) throws.
  kGather,
  // kScatter: dst <- src0 (same shape), then for every element c of src1 (the index tile,
  //   no larger than src0 on any axis): dst[c with axis a replaced by src1[c]] (op)= src2[c]
  //   (scalar[2] when scalar_operand bit 2 is set; rounded to dst's dtype), where op is `=`
  //   (accumulate 0), `+` (1) or `*` (2), each update rounded to dst's dtype, in row-major
  //   order of src1. src2 has src1's shape.
  kScatter,
  // kScatterRows: global rows <- local rows (PyPTO's scatter_update). region: the whole
  //   destination tensor (rank r; a "row" is one index over its first r-1 axes in row-major
  //   order, the last axis its elements); src0: rows to write ([.., D], flattened to rows);
  //   src1: the row numbers (integer tile with as many elements as src0 has rows). Row i of
  //   src0 goes to row src1[i] of region; a row number outside the region throws.
  kScatterRows,
  // element-wise, one operand: round to TF32 (10 mantissa bits, fp32 range): scalar[1] = 0
  // truncates, 1 nearest-even, 2 nearest-away (matmul trans_mode and dequant scales)
  kTf32,
  // element-wise, one operand (float): 2^x, log2, log10, cube root, cosh, sinh
  kExp2,
  kLog2,
  kLog10,
  kCbrt,
  kCosh,
  kSinh,
  // element-wise, one operand (float): tan, asin, acos, atan
  kTan,
  kAsin,
  kAcos,
  kAtan,
  // element-wise, two operands: atan2(a, b) and copysign(a, b) and hypot(a, b) (float), fmod
  // (C remainder: the dividend's sign; integer fmod by zero throws)
  kAtan2,
  kCopysign,
  kHypot,
  kFmod,
  // element-wise tests, one operand of any numeric dtype; dst is DT_BOOL (0/1). Integer
  // operands are finite, never NaN or inf; signbit is the sign bit (true for -0.0 and -NaN)
  kIsFinite,
  kIsNan,
  kIsInf,
  kSignBit,
  // integer element-wise ops (integer tiles only, 64-bit arithmetic narrowed to dst):
  // gcd (non-negative, gcd(0, 0) = 0), floor and ceil division (division by zero throws),
  // bitwise and/or/xor/not, shifts (torch's: a shift count outside [0, bits) gives 0 to the
  // left and the sign fill to the right; the left shift wraps)
  kGcd,
  kFloorDiv,
  kCeilDiv,
  kBitAnd,
  kBitOr,
  kBitXor,
  kBitNot,
  kShiftLeft,
  kShiftRight,
  // dst[.., j] <- scalar[0] + (scalar[2] + j) * scalar[1] along the last axis (arange: start,
  // step and the tile's offset in the range; computed in double, rounded once to dst's dtype)
  kIota,
  // Sorts along the one axis of reduce_mask, stable, NaN as the largest value; dst keeps the
  // first dst.shape[axis] (k) of the sorted order (src0's shape elsewhere): kSortValues the
  // values (src0's dtype), kSortIndices their indices along the axis (an integer dtype).
  // scalar[1] != 0: descending (largest first; equal values keep their order).
  kSortValues,
  kSortIndices,
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

struct TileInstr {
  TileOpcode op = TileOpcode::kLoad;
  std::int32_t dst = -1;               // local tile index
  std::int32_t src[3] = {-1, -1, -1};  // local tile indices
  std::uint8_t scalar_operand = 0;     // bit i set: operand i is scalar[i] (not src[i])
  double scalar[3] = {0, 0, 0};
  GlobalRegion region;                         // kLoad / kStore
  std::uint8_t reduce_mask = 0;                // kReduce*: bit k = reduce axis k
  std::uint8_t perm[kMaxRank] = {0, 1, 2, 3};  // kPermute
  std::uint8_t accumulate = 0;                 // kMatmul; kScatter: 0 set, 1 add, 2 multiply
  CastMode cast_mode = CastMode::kNone;        // kCast
  std::uint8_t saturate = 0;                   // kCast: 1 = pypto SaturationMode.ON
};

// One leaf task's program.
struct TaskProgram {
  std::vector<LocalTile> locals;
  std::vector<TileInstr> instrs;
};

}  // namespace pypto::exec
