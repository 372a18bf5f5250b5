// SPDX-License-Identifier: Apache-2.0
// The table of tile instructions (program.h's TileOpcode), made from their list (tile_ops.def): a
// row per instruction with its name, how the executor runs it, and the cost-model op it is priced
// as. The executor dispatches on it, the cost model (frontend/compiler/src/task_cost.cpp) prices
// with it, and the compiler's op table (pypto/compiler/op_table.h) maps each kernel-IR op to one
// of these rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pypto/exec/program.h"

namespace pypto::exec {

// How the executor runs an instruction (one handler per class).
enum class TileExec : std::uint8_t {
  kLoad,
  kStore,
  kFill,
  kCopy,
  kPermute,
  kCast,
  kBinary,  // element-wise, two operands
  kUnary,   // element-wise, one operand
  kWhere,
  kReduce,  // over the axes of reduce_mask
  kMatmul,
  kTriangle,     // triu/tril
  kScan,         // cumsum/cumprod along one axis
  kGather,       // indexed read along one axis of a local window
  kScatter,      // indexed update along one axis of a local window
  kScatterRows,  // indexed row writes to global memory
  kSort,         // sort/top-k along one axis (values or indices)
  kGatherElems,  // indexed element reads from global memory
};

struct TileOpInfo {
  TileOpcode op;
  const char* name;  // diagnostics ("reduce_sum")
  TileExec exec;
  const char* cost_op;         // the cost-model op (configs' tile_op_cycles rows) it is priced as;
                               // nullptr: data movement, priced by the simulator through L2 and HBM
  const char* scalar_cost_op;  // the row when an operand is a scalar; nullptr: cost_op's
};

// A row per tile_ops.def row, in opcode order.
inline constexpr TileOpInfo kTileOpTable[] = {
#define PYPTO_TILE_OP(op, name, exec, cost_op, scalar_cost_op) \
  {TileOpcode::op, name, TileExec::exec, cost_op, scalar_cost_op},
#include "pypto/exec/tile_ops.def"
};

inline constexpr std::size_t kNumTileOps = sizeof(kTileOpTable) / sizeof(kTileOpTable[0]);

// Row of instruction op, or nullptr for a value that is no TileOpcode (a corrupt program).
constexpr const TileOpInfo* find_tile_op(TileOpcode op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kNumTileOps ? &kTileOpTable[i] : nullptr;
}

}  // namespace pypto::exec
