// SPDX-License-Identifier: Apache-2.0
// Compute cost of tile ops (DESIGN.md "Costs and timing"): cube mmad tiles and vector ops.
// Memory movement (copy-in/copy-out) is not priced here: the simulator prices it through
// L2 and HBM as they are when the task runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/model/chip_config.h"

namespace pypto::model {

// Element types the cost model and the frontend know. Sizes in bytes via dtype_bytes().
// kUInt8 comes last so the older members keep their values.
enum class DType : std::uint8_t {
  kFp32,
  kFp16,
  kBf16,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kBool,
  kUInt8
};
std::uint32_t dtype_bytes(DType d);
// "fp32"/"float32"/"float", "fp16"/"float16"/"half", "bf16"/"bfloat16", "int8", "int16",
// "int32"/"int", "int64"/"long", "bool", "uint8" (ASCII case-insensitive). Returns false and leaves
// *out untouched for anything else.
bool parse_dtype(std::string_view s, DType* out);
// Canonical name ("fp32", "fp16", "bf16", "int8", "int16", "int32", "int64", "bool").
std::string_view to_string(DType d);

struct TileOp {
  std::string op;  // "mmad", "add", "exp", "sum", ...; copies are "copy_in"/"copy_out"
  DType dtype = DType::kFp32;
  std::vector<std::int64_t> shape;  // mmad: {M, K, N}; others: the tile's shape
};

// The AICore pipe a tile op occupies (the simulator overlaps pipes inside a task).
// kNone: pure views (view, reshape, assemble) that move no data and use no pipe.
enum class TilePipe : std::uint8_t { kNone, kMte2, kCube, kVec, kMte3 };

// AICore cycles of one tile op on its pipe; 0 for copies and pure views.
//  - mmad, shape {M, K, N}: F = ceil(M/cube_m)*ceil(N/cube_n)*ceil(K/k0) fractal cycles, plus
//    ceil(F * cost.cube_bank_conflict_pct / 100) stall cycles, plus cost.cube_fixed_cycles,
//    k0 = cube_k * 2 / dtype_bytes (16 fp16/bf16, 32 int8, 8 fp32); other dtypes are rejected.
//  - vector ops, B = product(shape) * dtype_bytes (the input tile for reductions):
//    ceil(B / cost.vec_bytes_per_cycle) * factor(op) + start_latency(op).
// Throws TraceError for an unknown op name, a negative dimension, an mmad shape that is not
// {M, K, N}, an unsupported mmad dtype or a cost above 2^32-1 cycles (the caller adds file
// and line). Throws ConfigError if the chip has a zero cube fractal or vector width.
std::uint32_t tile_op_cycles(const TileOp& op, const ChipConfig& chip);

// True when op names a known tile op.
bool is_known_tile_op(std::string_view op);

// Pipe of a known tile op; throws TraceError (same message as tile_op_cycles) otherwise.
TilePipe tile_op_pipe(std::string_view op);

// Every known tile op name, sorted (for error messages and --help style listings).
std::vector<std::string> known_tile_ops();

}  // namespace pypto::model
