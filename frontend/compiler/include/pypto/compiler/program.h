// SPDX-License-Identifier: Apache-2.0
// The functional content of leaf tasks: what a task does to memory, as a short program of
// tile instructions over the task's local tiles (its UB/L1/L0 buffers). The compiler
// (lowering + instantiation) writes these; the SIM backend executes each task's program
// on host memory when the timing model completes the task, in simulated order.
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/sim/cost_model.h"  // DType

namespace pypto::compiler {

using sim::DType;

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
// fp16/bf16/fp32 and wrap like torch for the integer types.
struct LocalTile {
  DType dtype = DType::kFp32;
  std::uint8_t rank = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1};
};

enum class TileOpcode : std::uint8_t {
  // data movement
  kLoad,    // dst <- region (region.shape == dst.shape; strides may be 0 = broadcast)
  kStore,   // region <- src (region.shape: the valid part, a prefix box of src)
  kFill,    // dst <- scalar
  kCopy,    // dst <- src0 (same element count, row-major order: reshape)
  kPermute, // dst <- src0 with axes permuted: dst axis k is src axis perm[k]
  kCast,    // dst <- src0 converted to dst's dtype, rounding per `cast_mode`
  // element-wise, same shapes (operand b may be the scalar when scalar_operand == 1)
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kRemainder, kPow,
  kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr,
  kNeg, kAbs, kRelu, kExp, kLog, kSqrt, kRsqrt, kReciprocal, kSigmoid, kTanh, kFloor,
  kLogicalNot,
  kWhere,   // dst <- src0 ? src1 : src2 (src1/src2 may be scalars: scalar_operand bits 1, 2)
  // reductions over the axes in reduce_mask; dst has size 1 on those axes (keepdim form)
  kReduceSum, kReduceMax, kReduceMin,
  // dst[.., M, N] (+)= src0[.., M, K] @ src1[.., K, N]; batch axes equal. accumulate=1 adds
  // to dst's current contents (K split across instructions); products summed in double.
  kMatmul,
};

enum class CastMode : std::uint8_t { kNone, kRint, kRound, kFloor, kCeil, kTrunc, kOdd };

struct TileInstr {
  TileOpcode op = TileOpcode::kLoad;
  std::int32_t dst = -1;                   // local tile index
  std::int32_t src[3] = {-1, -1, -1};      // local tile indices
  std::uint8_t scalar_operand = 0;         // bit i set: operand i is scalar[i] (not src[i])
  double scalar[3] = {0, 0, 0};
  GlobalRegion region;                     // kLoad / kStore
  std::uint8_t reduce_mask = 0;            // kReduce*: bit k = reduce axis k
  std::uint8_t perm[kMaxRank] = {0, 1, 2, 3};  // kPermute
  std::uint8_t accumulate = 0;             // kMatmul
  CastMode cast_mode = CastMode::kNone;    // kCast
};

// One leaf task's program.
struct TaskProgram {
  std::vector<LocalTile> locals;
  std::vector<TileInstr> instrs;
};

// Global memory of one launch: buffer i is `size_bytes[i]` bytes at `base[i]` (host
// memory: the caller's tensors, then the workspace).
struct GlobalMemory {
  std::vector<std::uint8_t*> base;
  std::vector<std::uint64_t> size_bytes;
  std::vector<DType> dtype;  // element type each buffer was declared with (diagnostics)
};

// Reusable scratch space for execute() (local tiles), so tasks do not allocate.
struct ExecScratch {
  std::vector<std::vector<double>> tiles;
};

// Runs one task's program. Throws pypto::ModelError (naming the instruction) if a region
// falls outside its buffer or shapes disagree: a compiler bug, never silent corruption.
void execute(const TaskProgram& p, const GlobalMemory& mem, ExecScratch& scratch);

// Round-trip a double through a dtype the way torch stores it (fp16/bf16 round to
// nearest even, integers wrap two's-complement, bool is != 0). Exposed for tests.
double round_to_dtype(double v, DType d);

}  // namespace pypto::compiler
