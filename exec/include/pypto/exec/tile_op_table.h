// SPDX-License-Identifier: Apache-2.0
// The table of tile instructions (program.h's TileOpcode): a row per instruction with its name,
// how the executor runs it, and the cost-model op it is priced as. The executor dispatches on
// it, the cost model (frontend/compiler/src/task_cost.cpp) prices with it, and the compiler's
// op table (pypto/compiler/op_table.h) maps each kernel-IR op to one of these rows.
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
  const char* cost_op;  // the cost-model op (configs' tile_op_cycles rows) it is priced as;
                        // nullptr: data movement, priced by the simulator through L2 and HBM
};

inline constexpr TileOpInfo kTileOpTable[] = {
    // clang-format off
    {TileOpcode::kLoad,       "load",        TileExec::kLoad,    nullptr},
    {TileOpcode::kStore,      "store",       TileExec::kStore,   nullptr},
    {TileOpcode::kFill,       "fill",        TileExec::kFill,    "full"},
    {TileOpcode::kCopy,       "copy",        TileExec::kCopy,    "clone"},
    {TileOpcode::kPermute,    "permute",     TileExec::kPermute, "transpose"},
    {TileOpcode::kCast,       "cast",        TileExec::kCast,    "cast"},
    {TileOpcode::kAdd,        "add",         TileExec::kBinary,  "add"},
    {TileOpcode::kSub,        "sub",         TileExec::kBinary,  "sub"},
    {TileOpcode::kMul,        "mul",         TileExec::kBinary,  "mul"},
    {TileOpcode::kDiv,        "div",         TileExec::kBinary,  "div"},
    {TileOpcode::kMaximum,    "maximum",     TileExec::kBinary,  "maximum"},
    {TileOpcode::kMinimum,    "minimum",     TileExec::kBinary,  "minimum"},
    // The cost table has no rows for remainder, floor and the logical ops; they are priced as
    // the op of the same class: remainder is a division plus a correction, floor a rounding
    // conversion, the logical ops one compare-like pass.
    {TileOpcode::kRemainder,  "remainder",   TileExec::kBinary,  "div"},
    {TileOpcode::kPow,        "pow",         TileExec::kBinary,  "pow"},
    {TileOpcode::kEq,         "eq",          TileExec::kBinary,  "eq"},
    {TileOpcode::kNe,         "ne",          TileExec::kBinary,  "ne"},
    {TileOpcode::kLt,         "lt",          TileExec::kBinary,  "lt"},
    {TileOpcode::kLe,         "le",          TileExec::kBinary,  "le"},
    {TileOpcode::kGt,         "gt",          TileExec::kBinary,  "gt"},
    {TileOpcode::kGe,         "ge",          TileExec::kBinary,  "ge"},
    {TileOpcode::kLogicalAnd, "logical_and", TileExec::kBinary,  "eq"},
    {TileOpcode::kLogicalOr,  "logical_or",  TileExec::kBinary,  "eq"},
    {TileOpcode::kNeg,        "neg",         TileExec::kUnary,   "neg"},
    {TileOpcode::kAbs,        "abs",         TileExec::kUnary,   "abs"},
    {TileOpcode::kRelu,       "relu",        TileExec::kUnary,   "relu"},
    {TileOpcode::kExp,        "exp",         TileExec::kUnary,   "exp"},
    {TileOpcode::kLog,        "log",         TileExec::kUnary,   "log"},
    {TileOpcode::kSqrt,       "sqrt",        TileExec::kUnary,   "sqrt"},
    {TileOpcode::kRsqrt,      "rsqrt",       TileExec::kUnary,   "rsqrt"},
    {TileOpcode::kReciprocal, "reciprocal",  TileExec::kUnary,   "reciprocal"},
    {TileOpcode::kSigmoid,    "sigmoid",     TileExec::kUnary,   "sigmoid"},
    {TileOpcode::kTanh,       "tanh",        TileExec::kUnary,   "tanh"},
    {TileOpcode::kFloor,      "floor",       TileExec::kUnary,   "cast"},
    {TileOpcode::kLogicalNot, "logical_not", TileExec::kUnary,   "eq"},
    {TileOpcode::kWhere,      "where",       TileExec::kWhere,   "where"},
    {TileOpcode::kReduceSum,  "reduce_sum",  TileExec::kReduce,  "sum"},
    {TileOpcode::kReduceMax,  "reduce_max",  TileExec::kReduce,  "amax"},
    {TileOpcode::kReduceMin,  "reduce_min",  TileExec::kReduce,  "amin"},
    {TileOpcode::kMatmul,     "matmul",      TileExec::kMatmul,  "mmad"},
    // Priced as the cost-table op of the same class (no rows of their own): rounding ops as a
    // conversion, erf/erfc/sin/cos/log1p/expm1 as a transcendental (exp), sign as abs, lrelu as a
    // multiply, triu/tril as a select, prod/scans as a reduction pass, argmax/argmin as amax/amin.
    {TileOpcode::kCeil,       "ceil",        TileExec::kUnary,   "cast"},
    {TileOpcode::kTrunc,      "trunc",       TileExec::kUnary,   "cast"},
    {TileOpcode::kRound,      "round",       TileExec::kUnary,   "cast"},
    {TileOpcode::kSign,       "sign",        TileExec::kUnary,   "abs"},
    {TileOpcode::kErf,        "erf",         TileExec::kUnary,   "exp"},
    {TileOpcode::kErfc,       "erfc",        TileExec::kUnary,   "exp"},
    {TileOpcode::kSin,        "sin",         TileExec::kUnary,   "exp"},
    {TileOpcode::kCos,        "cos",         TileExec::kUnary,   "exp"},
    {TileOpcode::kLog1p,      "log1p",       TileExec::kUnary,   "log"},
    {TileOpcode::kExpm1,      "expm1",       TileExec::kUnary,   "exp"},
    {TileOpcode::kLrelu,      "lrelu",       TileExec::kUnary,   "mul"},
    {TileOpcode::kTriu,       "triu",        TileExec::kTriangle, "where"},
    {TileOpcode::kTril,       "tril",        TileExec::kTriangle, "where"},
    {TileOpcode::kReduceProd, "reduce_prod", TileExec::kReduce,  "prod"},
    {TileOpcode::kArgMax,     "argmax",      TileExec::kReduce,  "amax"},
    {TileOpcode::kArgMin,     "argmin",      TileExec::kReduce,  "amin"},
    {TileOpcode::kCumSum,     "cumsum",      TileExec::kScan,    "sum"},
    {TileOpcode::kCumProd,    "cumprod",     TileExec::kScan,    "prod"},
    // Indexed ops: gather/scatter as one select pass over their output tile; scatter_rows
    // is data movement (its bytes are priced as the region it declares).
    {TileOpcode::kGather,     "gather",      TileExec::kGather,  "where"},
    {TileOpcode::kScatter,    "scatter",     TileExec::kScatter, "where"},
    {TileOpcode::kScatterRows, "scatter_rows", TileExec::kScatterRows, nullptr},
    {TileOpcode::kTf32,       "tf32",        TileExec::kUnary,   "cast"},
    // Transcendentals priced as exp/log; cbrt as sqrt.
    {TileOpcode::kExp2,       "exp2",        TileExec::kUnary,   "exp"},
    {TileOpcode::kLog2,       "log2",        TileExec::kUnary,   "log"},
    {TileOpcode::kLog10,      "log10",       TileExec::kUnary,   "log"},
    {TileOpcode::kCbrt,       "cbrt",        TileExec::kUnary,   "sqrt"},
    {TileOpcode::kCosh,       "cosh",        TileExec::kUnary,   "exp"},
    {TileOpcode::kSinh,       "sinh",        TileExec::kUnary,   "exp"},
    // Inverse and other trigonometric ops as a transcendental (exp); copysign as abs; hypot
    // as sqrt; fmod and the integer divisions as div; the tests and bitwise ops as one
    // compare-like pass; iota as a fill.
    {TileOpcode::kTan,        "tan",         TileExec::kUnary,   "exp"},
    {TileOpcode::kAsin,       "asin",        TileExec::kUnary,   "exp"},
    {TileOpcode::kAcos,       "acos",        TileExec::kUnary,   "exp"},
    {TileOpcode::kAtan,       "atan",        TileExec::kUnary,   "exp"},
    {TileOpcode::kAtan2,      "atan2",       TileExec::kBinary,  "exp"},
    {TileOpcode::kCopysign,   "copysign",    TileExec::kBinary,  "abs"},
    {TileOpcode::kHypot,      "hypot",       TileExec::kBinary,  "sqrt"},
    {TileOpcode::kFmod,       "fmod",        TileExec::kBinary,  "div"},
    {TileOpcode::kIsFinite,   "isfinite",    TileExec::kUnary,   "eq"},
    {TileOpcode::kIsNan,      "isnan",       TileExec::kUnary,   "eq"},
    {TileOpcode::kIsInf,      "isinf",       TileExec::kUnary,   "eq"},
    {TileOpcode::kSignBit,    "signbit",     TileExec::kUnary,   "eq"},
    {TileOpcode::kGcd,        "gcd",         TileExec::kBinary,  "div"},
    {TileOpcode::kFloorDiv,   "floor_div",   TileExec::kBinary,  "div"},
    {TileOpcode::kCeilDiv,    "ceil_div",    TileExec::kBinary,  "div"},
    {TileOpcode::kBitAnd,     "bitwise_and", TileExec::kBinary,  "eq"},
    {TileOpcode::kBitOr,      "bitwise_or",  TileExec::kBinary,  "eq"},
    {TileOpcode::kBitXor,     "bitwise_xor", TileExec::kBinary,  "eq"},
    {TileOpcode::kBitNot,     "bitwise_not", TileExec::kUnary,   "eq"},
    {TileOpcode::kShiftLeft,  "shift_left",  TileExec::kBinary,  "eq"},
    {TileOpcode::kShiftRight, "shift_right", TileExec::kBinary,  "eq"},
    {TileOpcode::kIota,       "iota",        TileExec::kFill,    "full"},
    // A sort is priced as one amax pass over its source (the cost table has no sort row;
    // this underestimates a vector sort's log-depth passes).
    {TileOpcode::kSortValues, "sort_values", TileExec::kSort,    "amax"},
    {TileOpcode::kSortIndices, "sort_indices", TileExec::kSort,  "amax"},
    // Data movement: priced as the stand-in region the compiler declares for its bytes.
    {TileOpcode::kGatherElems, "gather_elems", TileExec::kGatherElems, nullptr},
    // clang-format on
};

inline constexpr std::size_t kNumTileOps = sizeof(kTileOpTable) / sizeof(kTileOpTable[0]);

// Row of instruction op, or nullptr for a value that is no TileOpcode (a corrupt program).
constexpr const TileOpInfo* find_tile_op(TileOpcode op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kNumTileOps ? &kTileOpTable[i] : nullptr;
}

namespace detail {
constexpr bool tile_rows_in_enum_order() {
  for (std::size_t i = 0; i < kNumTileOps; ++i) {
    if (static_cast<std::size_t>(kTileOpTable[i].op) != i) return false;
  }
  return true;
}
}  // namespace detail

static_assert(detail::tile_rows_in_enum_order(), "kTileOpTable rows must follow TileOpcode order");
static_assert(kNumTileOps == static_cast<std::size_t>(TileOpcode::kGatherElems) + 1,
              "a TileOpcode has no row");

}  // namespace pypto::exec
