// SPDX-License-Identifier: Apache-2.0
// The op table: the one place that says what each kernel-IR op (frontend/pypto/IR.md) is, next
// to the table of tile instructions it compiles to (exec/tile_op_table.h, owned by the program
// format). Both are made from a list of rows (ir_ops.def, exec's tile_ops.def) that gives each
// op's enumerator and its table row at once; every other site reads them instead of keeping its
// own list:
//   ir_parse.cpp         IR names, operand forms (arity), which ops need a vec_tile
//   lower.cpp            family (which unit kind runs the op), fusable element-wise ops
//   emit_*.cpp           the tile instruction an element-wise or reduction op compiles to
//   task_cost.cpp        the cost-model op a tile instruction is priced as
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

// A row each in ir_ops.def, in its order.
enum class OpKind : std::uint8_t {
#define PYPTO_IR_OP(kind, name, family, form, dtype, needs_vec_tile, tile, bf16) kind,
#include "pypto/compiler/ir_ops.def"
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
  kLogical,   // DT_BOOL or a number (not 0 is true); the result is DT_BOOL
  kSelect,    // a DT_BOOL condition; the result has the dtype of the value operands
  kCast,      // any dtype; the result has the dtype the op states
  kMatmul,    // cube operand dtypes (fp16, bf16, fp32, int8, both equal); the result has the
              // dtype the op states (int8 accumulates in int32, the others in fp32; a scaled
              // int8 result is quantized: kCubeQuantCast)
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

// DTypeRule::kMatmul: the conversion of a scaled accumulator to an int8 result (quantization,
// PyPTO's matmul page, table 5). PyPTO does not state the fixpipe's rounding: nearest with ties
// to even, saturated to [-128, 127], is pypto-sim's assumption (docs/python.md).
struct CubeQuantCast {
  CastMode mode;
  bool saturate;
};
constexpr CubeQuantCast kCubeQuantCast{CastMode::kRint, true};

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
using T = TileOpcode;  // ir_ops.def's tile column

// A row per ir_ops.def row, in OpKind order.
inline constexpr OpInfo kOpTable[] = {
#define PYPTO_IR_OP(kind, name, family, form, dtype, needs_vec_tile, tile, bf16) \
  {OpKind::kind,   name, OpFamily::family, OpForm::form, DTypeRule::dtype,       \
   needs_vec_tile, tile, Bf16Compute::bf16},
#include "pypto/compiler/ir_ops.def"
};
}  // namespace table
using table::kOpTable;

inline constexpr std::size_t kNumOps = sizeof(kOpTable) / sizeof(kOpTable[0]);

// Row of op k. Contract: k is an OpKind enumerator (rows and enumerators come from one list).
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

}  // namespace pypto::compiler
