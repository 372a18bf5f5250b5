// SPDX-License-Identifier: Apache-2.0
// The op table: the one place that says what each kernel-IR op (frontend/pypto/IR.md) is, next
// to the table of tile instructions it compiles to (exec/tile_op_table.h, owned by the program
// format). A row per op; every other site reads them instead of keeping its own list:
//   ir_parse.cpp         IR names, operand forms (arity), which ops need a vec_tile
//   lower.cpp            family (which unit kind runs the op), fusable element-wise ops
//   emit_*.cpp           the tile instruction an element-wise or reduction op compiles to
//   task_cost.cpp        the cost-model op a tile instruction is priced as (native_dump.cpp too)
//   tile_exec.cpp        instruction names (diagnostics) and execution class (dispatch)
//   pypto._C.op_table()  the same rows for frontend/pypto/_ops/ (dtype rules, arity)
// Header-only (constexpr).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pypto/compiler/program.h"
#include "pypto/exec/tile_op_table.h"

namespace pypto::compiler {

// ---- kernel-IR ops ----------------------------------------------------------------------------

// Order is the table's (and the "supported: ..." list of the IR parser's message).
enum class OpKind : std::uint8_t {
  kAlloc,
  kFull,
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
  kWhere,
  kCast,
  kClone,
  kExpandClone,
  kSum,
  kAmax,
  kAmin,
  kView,
  kReshape,
  kTranspose,
  kPermute,
  kConcat,
  kMatmul,
  // Added for PyPTO compatibility (appended: earlier rows keep their positions).
  kCeil,
  kTrunc,
  kRound,
  kSign,
  kErf,
  kErfc,
  kSin,
  kCos,
  kLog1p,
  kExpm1,
  kLrelu,
  kTriu,
  kTril,
  kProd,
  kArgmax,
  kArgmin,
  kCumsum,
  kCumprod,
  kGather,
  kScatter,
  kScatterUpdate,
  kExp2,
  kLog2,
  kLog10,
  kCbrt,
  kCosh,
  kSinh,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kAtan2,
  kCopysign,
  kHypot,
  kFmod,
  kIsfinite,
  kIsnan,
  kIsinf,
  kSignbit,
  kGcd,
  kFloorDiv,
  kCeilDiv,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kBitwiseNot,
  kBitwiseLeftShift,
  kBitwiseRightShift,
  kArange,
  kSort,
  kArgsort,
  kLoadElems,  // pypto.experimental.load
};

// How an op is executed: the unit kind lowering makes of it and the emitter that runs it.
enum class OpFamily : std::uint8_t {
  kAlloc,    // storage only
  kEltwise,  // fusable into one AIV task per output tile (emit_elementwise.cpp)
  kReduce,   // sum/amax/amin/prod/argmax/argmin over axes (emit_reduce.cpp)
  kMatmul,   // AIC tasks per (batch, M tile, N tile) (emit_matmul.cpp)
  kPermute,  // permuted-stride load (emit_data_movement.cpp)
  kConcat,   // copies of regions (emit_data_movement.cpp)
  kView,     // alias, or a copy when lowering says so (emit_data_movement.cpp)
  kReshape,  // alias when expressible as a strided region, else copy
  kScan,     // cumsum/cumprod along one axis: the reduction's tiling, full-shape output
             // (emit_reduce.cpp); sort/argsort likewise, k entries along the axis
  kIndexed,  // gather/scatter/scatter_update/load: addresses from an index tensor's values
             // (emit_indexed.cpp)
};

// The operands an op takes ("inputs" of the IR statement).
enum class OpForm : std::uint8_t {
  kNullary,   // none
  kFill,      // one scalar
  kUnary,     // one tensor
  kBinary,    // a tensor, then a tensor of the same dtype or a scalar
  kSelect,    // a DT_BOOL tensor, then two tensors or scalars
  kPair,      // two tensors
  kVariadic,  // one or more tensors
  kParam,     // one tensor, then a scalar parameter of the op (lrelu's slope, round's
              // decimals, triu's diagonal): used as given, never rounded to the tensor's dtype
  kIndexed,   // a tensor, an integer index tensor, then (scatter, scatter_update) the
              // source: a tensor of the first's dtype, or (scatter) a scalar
  kMatmul,    // two tensors, then the bias and scale tensors its attrs announce
              // (extend_params)
  kRange,     // two scalars: the first value and the step (arange; the op states its dtype)
};

// Number of inputs of a form; -1: one or more.
constexpr int arity(OpForm f) {
  switch (f) {
    case OpForm::kNullary: return 0;
    case OpForm::kFill:
    case OpForm::kUnary: return 1;
    case OpForm::kBinary:
    case OpForm::kPair:
    case OpForm::kParam:
    case OpForm::kRange: return 2;
    case OpForm::kSelect: return 3;
    case OpForm::kVariadic:
    case OpForm::kIndexed:
    case OpForm::kMatmul: return -1;
  }
  return -1;
}

// Which tensor dtypes an op accepts and which dtype its result has.
enum class DTypeRule : std::uint8_t {
  kDeclared,  // no tensor input; the op states its dtype (alloc, full)
  kAny,       // any dtype (several inputs: all equal); the result keeps it (view may
              // reinterpret the bits as its "dtype" attribute says)
  kNumeric,   // not DT_BOOL; the result keeps the input's dtype
  kFloat,     // floating point only; the result keeps the input's dtype
  kCompare,   // any dtype (operands equal); the result is DT_BOOL
  kLogical,   // DT_BOOL only; the result is DT_BOOL
  kSelect,    // a DT_BOOL condition; the result has the dtype of the value operands
  kCast,      // any dtype; the result has the dtype the op states
  kMatmul,    // cube operand dtypes (fp16, bf16, fp32, int8, both equal); the result has the
              // dtype the op states (int8 accumulates in int32, the others in fp32)
  kIndex,     // not DT_BOOL; the result is DT_INT32 (argmax/argmin: indices along the axis)
  kIndexed,   // a non-bool tensor, an index tensor (DT_INT32/DT_INT64; scatter_update also
              // DT_INT16) and a source of the first's dtype; the result keeps that dtype
  kTest,      // not DT_BOOL; the result is DT_BOOL (isfinite, isnan, isinf, signbit)
  kInteger,   // integer dtypes only (not DT_BOOL, not floating); the result keeps the dtype
};

// DTypeRule::kMatmul: the operand dtypes the cube unit takes.
constexpr bool is_cube_dtype(DType d) {
  return d == DType::kFp16 || d == DType::kBf16 || d == DType::kFp32 || d == DType::kInt8;
}

// DTypeRule::kMatmul: the accumulator (L0C) dtype of a matmul over operands of dtype d.
constexpr DType cube_acc_dtype(DType d) { return d == DType::kInt8 ? DType::kInt32 : DType::kFp32; }

// How an element-wise op or a reduction computes on DT_BF16 operands. PyPTO's AutoCast pass
// (framework/src/passes/tensor_graph_pass/auto_cast.cpp, with the UNSUPPORT_BF16_OPS lists of
// framework/src/interface/operation/opcode.h) gives every op the vector unit cannot run on bf16
// fp32 operands and an fp32 result, and then drops the fp32 -> bf16 -> fp32 cast pairs between
// two such ops: a chain of them computes in fp32 and rounds to bf16 only where the value is
// stored or read by an op that runs on bf16. The pass runs on the whole function graph before
// it is split into fusion groups, so a chain stays fp32 across groups and through
// reductions (ROWSUM/ROWMAX/ROWMIN... are in both lists); a loop body is a function of its
// own, whose inputs keep their dtype. The element-wise and reduction emitters follow these
// rows (emit_elementwise.cpp, emit_reduce.cpp; ValueInfo::wide_uses). fp16 ops all run in fp16
// (rounded after each op): PyPTO's fp16 list is MOD/REM only in one version and adds add/sub/mul in
// a later one, and its own frontend test (st/interface/test_verify_frontend_jit.py) expects fp16
// add/mul rounded after each op.
enum class Bf16Compute : std::uint8_t {
  kNative,    // computed on bf16 tiles (rounded after the op)
  kFp32,      // in fp32 on every chip (in PyPTO's A2/A3 and 950 lists)
  kFp32A2A3,  // in fp32 on A2/A3; the 950's vector unit runs it on bf16
};

// No tile instruction: the op's emitter builds its own program (or none).
inline constexpr TileOpcode kNoTileOp = static_cast<TileOpcode>(0xFF);

struct OpInfo {
  OpKind kind;
  const char* name;  // IR name; also the Python function and the stem of leaf kernel names
  OpFamily family;
  OpForm form;
  DTypeRule dtype;
  bool needs_vec_tile;  // traced under pypto.set_vec_tile_shapes (tiles its own output)
  TileOpcode tile;      // element-wise and reduction ops: the instruction computing the op
  Bf16Compute bf16 = Bf16Compute::kNative;  // element-wise ops on DT_BF16 (see the enum)
};

namespace table {
using K = OpKind;
using F = OpFamily;
using O = OpForm;
using D = DTypeRule;
using T = TileOpcode;
using B = Bf16Compute;

inline constexpr OpInfo kOpTable[] = {
    // clang-format off
    // kind, name, family, form, dtype rule, needs_vec_tile, tile instruction[, bf16 compute]
  {K::kAlloc,       "alloc",        F::kAlloc,   O::kNullary,  D::kDeclared, false, kNoTileOp},
  {K::kFull,        "full",         F::kEltwise, O::kFill,     D::kDeclared, true,  T::kFill},
  {K::kAdd,         "add",          F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kAdd, B::kFp32},
  {K::kSub,         "sub",          F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kSub, B::kFp32},
  {K::kMul,         "mul",          F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kMul, B::kFp32},
  {K::kDiv,         "div",          F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kDiv, B::kFp32},
  {K::kMaximum,     "maximum",      F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kMaximum, B::kFp32A2A3},
  {K::kMinimum,     "minimum",      F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kMinimum, B::kFp32A2A3},
  {K::kRemainder,   "remainder",    F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kRemainder, B::kFp32},
  {K::kPow,         "pow",          F::kEltwise, O::kBinary,   D::kNumeric,  true,  T::kPow},
  {K::kEq,          "eq",           F::kEltwise, O::kBinary,   D::kCompare,  true,  T::kEq},
  {K::kNe,          "ne",           F::kEltwise, O::kBinary,   D::kCompare,  true,  T::kNe},
  {K::kLt,          "lt",           F::kEltwise, O::kBinary,   D::kCompare,  true,  T::kLt},
  {K::kLe,          "le",           F::kEltwise, O::kBinary,   D::kCompare,  true,  T::kLe},
  {K::kGt,          "gt",           F::kEltwise, O::kBinary,   D::kCompare,  true,  T::kGt},
  {K::kGe,          "ge",           F::kEltwise, O::kBinary,   D::kCompare,  true,  T::kGe},
  {K::kLogicalAnd,  "logical_and",  F::kEltwise, O::kBinary,   D::kLogical,  true,  T::kLogicalAnd},
  {K::kLogicalOr,   "logical_or",   F::kEltwise, O::kBinary,   D::kLogical,  true,  T::kLogicalOr},
  {K::kNeg,         "neg",          F::kEltwise, O::kUnary,    D::kNumeric,  true,  T::kNeg, B::kFp32A2A3},
  {K::kAbs,         "abs",          F::kEltwise, O::kUnary,    D::kNumeric,  true,  T::kAbs, B::kFp32},
  {K::kRelu,        "relu",         F::kEltwise, O::kUnary,    D::kNumeric,  true,  T::kRelu, B::kFp32},
  {K::kExp,         "exp",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kExp, B::kFp32},
  {K::kLog,         "log",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kLog, B::kFp32A2A3},
  {K::kSqrt,        "sqrt",         F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kSqrt, B::kFp32},
  {K::kRsqrt,       "rsqrt",        F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kRsqrt, B::kFp32},
  {K::kReciprocal,  "reciprocal",   F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kReciprocal, B::kFp32},
  {K::kSigmoid,     "sigmoid",      F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kSigmoid},
  {K::kTanh,        "tanh",         F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kTanh},
  {K::kFloor,       "floor",        F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kFloor},
  {K::kLogicalNot,  "logical_not",  F::kEltwise, O::kUnary,    D::kLogical,  true,  T::kLogicalNot},
  {K::kWhere,       "where",        F::kEltwise, O::kSelect,   D::kSelect,   true,  T::kWhere, B::kFp32A2A3},
  {K::kCast,        "cast",         F::kEltwise, O::kUnary,    D::kCast,     true,  T::kCast},
  {K::kClone,       "clone",        F::kEltwise, O::kUnary,    D::kAny,      false, T::kCopy},
  {K::kExpandClone, "expand_clone", F::kEltwise, O::kUnary,    D::kAny,      true,  T::kCopy},
  {K::kSum,         "sum",          F::kReduce,  O::kUnary,    D::kNumeric,  true,  T::kReduceSum, B::kFp32},
  {K::kAmax,        "amax",         F::kReduce,  O::kUnary,    D::kNumeric,  true,  T::kReduceMax, B::kFp32},
  {K::kAmin,        "amin",         F::kReduce,  O::kUnary,    D::kNumeric,  true,  T::kReduceMin, B::kFp32},
  {K::kView,        "view",         F::kView,    O::kUnary,    D::kAny,      false, kNoTileOp},
  {K::kReshape,     "reshape",      F::kReshape, O::kUnary,    D::kAny,      false, kNoTileOp},
  {K::kTranspose,   "transpose",    F::kPermute, O::kUnary,    D::kAny,      true,  kNoTileOp},
  {K::kPermute,     "permute",      F::kPermute, O::kUnary,    D::kAny,      true,  kNoTileOp},
  {K::kConcat,      "concat",       F::kConcat,  O::kVariadic, D::kAny,      true,  kNoTileOp},
  {K::kMatmul,      "matmul",       F::kMatmul,  O::kMatmul,   D::kMatmul,   false, T::kMatmul},
  {K::kCeil,        "ceil",         F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kCeil},
  {K::kTrunc,       "trunc",        F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kTrunc},
  {K::kRound,       "round",        F::kEltwise, O::kParam,    D::kFloat,    true,  T::kRound},
  {K::kSign,        "sign",         F::kEltwise, O::kUnary,    D::kNumeric,  true,  T::kSign, B::kFp32},
  {K::kErf,         "erf",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kErf},
  {K::kErfc,        "erfc",         F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kErfc},
  {K::kSin,         "sin",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kSin},
  {K::kCos,         "cos",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kCos},
  {K::kLog1p,       "log1p",        F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kLog1p},
  {K::kExpm1,       "expm1",        F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kExpm1},
  {K::kLrelu,       "lrelu",        F::kEltwise, O::kParam,    D::kFloat,    true,  T::kLrelu, B::kFp32},
  {K::kTriu,        "triu",         F::kEltwise, O::kParam,    D::kAny,      true,  T::kTriu, B::kFp32A2A3},
  {K::kTril,        "tril",         F::kEltwise, O::kParam,    D::kAny,      true,  T::kTril, B::kFp32A2A3},
  {K::kProd,        "prod",         F::kReduce,  O::kUnary,    D::kNumeric,  true,  T::kReduceProd},
  {K::kArgmax,      "argmax",       F::kReduce,  O::kUnary,    D::kIndex,    true,  T::kArgMax},
  {K::kArgmin,      "argmin",       F::kReduce,  O::kUnary,    D::kIndex,    true,  T::kArgMin},
  {K::kCumsum,      "cumsum",       F::kScan,    O::kUnary,    D::kNumeric,  true,  T::kCumSum},
  {K::kCumprod,     "cumprod",      F::kScan,    O::kUnary,    D::kNumeric,  true,  T::kCumProd},
  {K::kGather,      "gather",       F::kIndexed, O::kIndexed,  D::kIndexed,  true,  T::kGather},
  {K::kScatter,     "scatter",      F::kIndexed, O::kIndexed,  D::kIndexed,  true,  T::kScatter},
  {K::kScatterUpdate,  "scatter_update",     F::kIndexed, O::kIndexed,D::kIndexed,  true,  T::kScatterRows},
  {K::kExp2,           "exp2",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kExp2},
  {K::kLog2,           "log2",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kLog2},
  {K::kLog10,          "log10",         F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kLog10},
  {K::kCbrt,           "cbrt",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kCbrt},
  {K::kCosh,           "cosh",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kCosh, B::kFp32A2A3},
  {K::kSinh,           "sinh",          F::kEltwise, O::kUnary,    D::kFloat,    true,  T::kSinh, B::kFp32A2A3},
  {K::kTan,            "tan",           F::kEltwise, O::kUnary,  D::kFloat,    true,  T::kTan},
  {K::kAsin,           "asin",          F::kEltwise, O::kUnary,  D::kFloat,    true,  T::kAsin},
  {K::kAcos,           "acos",          F::kEltwise, O::kUnary,  D::kFloat,    true,  T::kAcos},
  {K::kAtan,           "atan",          F::kEltwise, O::kUnary,  D::kFloat,    true,  T::kAtan},
  {K::kAtan2,          "atan2",         F::kEltwise, O::kBinary, D::kFloat,    true,  T::kAtan2},
  {K::kCopysign,       "copysign",      F::kEltwise, O::kBinary, D::kFloat,    true,  T::kCopysign, B::kFp32A2A3},
  {K::kHypot,          "hypot",         F::kEltwise, O::kBinary, D::kFloat,    true,  T::kHypot},
  {K::kFmod,           "fmod",          F::kEltwise, O::kBinary, D::kNumeric,  true,  T::kFmod, B::kFp32},
  {K::kIsfinite,       "isfinite",      F::kEltwise, O::kUnary,  D::kTest,     true,  T::kIsFinite},
  {K::kIsnan,          "isnan",         F::kEltwise, O::kUnary,  D::kTest,     true,  T::kIsNan},
  {K::kIsinf,          "isinf",         F::kEltwise, O::kUnary,  D::kTest,     true,  T::kIsInf},
  {K::kSignbit,        "signbit",       F::kEltwise, O::kUnary,  D::kTest,     true,  T::kSignBit},
  {K::kGcd,            "gcd",           F::kEltwise, O::kBinary, D::kInteger,  true,  T::kGcd},
  {K::kFloorDiv,       "floor_div",     F::kEltwise, O::kBinary, D::kInteger,  true,  T::kFloorDiv},
  {K::kCeilDiv,        "ceil_div",      F::kEltwise, O::kBinary, D::kInteger,  true,  T::kCeilDiv},
  {K::kBitwiseAnd,     "bitwise_and",   F::kEltwise, O::kBinary, D::kInteger,  true,  T::kBitAnd},
  {K::kBitwiseOr,      "bitwise_or",    F::kEltwise, O::kBinary, D::kInteger,  true,  T::kBitOr},
  {K::kBitwiseXor,     "bitwise_xor",   F::kEltwise, O::kBinary, D::kInteger,  true,  T::kBitXor},
  {K::kBitwiseNot,     "bitwise_not",   F::kEltwise, O::kUnary,  D::kInteger,  true,  T::kBitNot},
  {K::kBitwiseLeftShift, "bitwise_left_shift", F::kEltwise, O::kBinary, D::kInteger, true,
   T::kShiftLeft},
  {K::kBitwiseRightShift, "bitwise_right_shift", F::kEltwise, O::kBinary, D::kInteger, true,
   T::kShiftRight},
  {K::kArange,         "arange",        F::kEltwise, O::kRange,  D::kDeclared, true,  T::kIota},
  {K::kSort, "sort", F::kScan, O::kUnary, D::kNumeric, true, T::kSortValues},
  {K::kArgsort, "argsort", F::kScan, O::kUnary, D::kIndex, true, T::kSortIndices},
  {K::kLoadElems, "load", F::kIndexed, O::kIndexed, D::kIndexed, true, T::kGatherElems},
    // clang-format on
};
}  // namespace table
using table::kOpTable;

inline constexpr std::size_t kNumOps = sizeof(kOpTable) / sizeof(kOpTable[0]);

// Row of op k. Contract: k is an OpKind enumerator (rows are in enum order, checked below).
constexpr const OpInfo& op_info(OpKind k) { return kOpTable[static_cast<std::size_t>(k)]; }

// The IR name of op k ("add").
constexpr const char* op_name(OpKind k) { return op_info(k).name; }

// The op named `name`, or nullptr.
inline const OpInfo* find_op(const char* name) {
  for (const OpInfo& e : kOpTable) {
    const char* a = e.name;
    const char* b = name;
    while (*a != 0 && *a == *b) ++a, ++b;
    if (*a == *b) return &e;
  }
  return nullptr;
}

// Names of the enums above, as pypto._C.op_table() reports them.
constexpr const char* to_string(OpFamily f) {
  constexpr const char* kNames[] = {"alloc",  "elementwise", "reduce",  "matmul", "permute",
                                    "concat", "view",        "reshape", "scan",   "indexed"};
  return kNames[static_cast<std::size_t>(f)];
}
constexpr const char* to_string(OpForm f) {
  constexpr const char* kNames[] = {"nullary",  "fill",  "unary",   "binary", "select", "pair",
                                    "variadic", "param", "indexed", "matmul", "range"};
  return kNames[static_cast<std::size_t>(f)];
}
constexpr const char* to_string(DTypeRule r) {
  constexpr const char* kNames[] = {"declared", "any",    "numeric", "float",  "compare",
                                    "logical",  "select", "cast",    "matmul", "index",
                                    "indexed",  "test",   "integer"};
  return kNames[static_cast<std::size_t>(r)];
}

// ---- tile instructions: their table belongs to the program format (exec/tile_op_table.h) ----

using exec::find_tile_op;
using exec::kNumTileOps;
using exec::kTileOpTable;
using exec::TileExec;
using exec::TileOpInfo;

namespace detail {
constexpr bool op_rows_in_enum_order() {
  for (std::size_t i = 0; i < kNumOps; ++i) {
    if (static_cast<std::size_t>(kOpTable[i].kind) != i) return false;
  }
  return true;
}
}  // namespace detail

static_assert(detail::op_rows_in_enum_order(), "kOpTable rows must follow OpKind order");
static_assert(kNumOps == static_cast<std::size_t>(OpKind::kLoadElems) + 1, "an OpKind has no row");

}  // namespace pypto::compiler
