// SPDX-License-Identifier: Apache-2.0
// Private to the compiler: the parsed kernel IR (frontend/pypto/IR.md) and the plan that
// lowering makes of it (fusion groups, materialised values, absorbed writes). Everything
// here is immutable after compile(); instantiate() only reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pypto/compiler/compile.h"
#include "pypto/compiler/op_table.h"

namespace pypto::compiler::detail {

// ---- expressions --------------------------------------------------------------------------

using ExprId = std::int32_t;
inline constexpr ExprId kNoExpr = -1;

enum class ExprKind : std::uint8_t {
  kConst,
  kSym,
  kAdd,
  kSub,
  kMul,
  kFloorDiv,
  kMod,
  kMin,
  kMax,  // integer, n-ary folds left
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,  // boolean result
  kAnd,
  kOr,
  kNot,   // boolean operands
  kInt,   // the 0/1 integer value of a boolean (PyPTO's comparisons are C integers)
  kLoad,  // element of an integer tensor parameter
};

struct ExprNode {
  ExprKind kind = ExprKind::kConst;
  bool is_bool = false;
  std::int64_t value = 0;      // kConst
  std::int32_t slot = -1;      // kSym: symbol slot; kLoad: parameter index
  std::int32_t first_arg = 0;  // into Kernel::expr_args
  std::int32_t num_args = 0;
};

// ---- values ---------------------------------------------------------------------------------

enum class StorageClass : std::uint8_t {
  kRootInner,  // lives and dies inside one root instance: per-root bump allocator
  kLaunch,     // crosses root instances: its own workspace region for the whole launch
};

struct ValueInfo {
  std::int64_t ir_id = 0;
  std::vector<ExprId> shape;
  std::vector<ExprId> valid;  // empty: valid == shape
  DType dtype = DType::kFp32;
  bool static_extent = true;  // shape and valid shape are constants
  std::string shape_key;      // canonical text of shape (fusion compares it)
  int param = -1;             // parameter index, or -1
  // Tensor.set_cache_policy(NONE_CACHEABLE, True): a parameter's traffic bypasses L2 (PyPTO
  // applies the policy to function inputs only; on other values it has no effect).
  bool no_l2 = false;
  bool nz = false;        // a parameter declared TILEOP_NZ (the fractal layout on the device)
  int def_stmt = -1;      // producing op statement, or -1 for parameters
  std::vector<int> uses;  // statements that read or write it (inputs, write src/dst)
  // Decided by lowering:
  bool materialised = false;  // has its own storage (not a local-only tile or an alias)
  bool copy_view = false;     // view/reshape that must copy (copy semantics would differ)
  int base = -1;              // value whose storage it aliases (itself when it has storage)
  StorageClass storage = StorageClass::kRootInner;
  bool parallel_copies = false;  // made inside a parallel loop: one region per parallel slot
  int launch_slot = -1;          // kLaunch: index of its workspace region
  // A bf16 value a fusion group stores or a reduction makes: the element-wise ops and
  // reductions of its own body that read it from memory. Those that compute in fp32 on the
  // chip read its producer's fp32 result, not the rounded bf16 one (PyPTO's AutoCast works on
  // the whole function graph, before fusion; EmitContext::reads_fp32 decides per chip).
  std::vector<int> wide_uses;
  int wide_slot = -1;  // kLaunch with wide_uses: workspace region of its fp32 copy
  // A value whose only fate is to be assembled whole into a parameter (through reshapes
  // only): it is computed in that parameter's storage (PyPTO's in-place assemble and
  // reshape), and the write then copies nothing. -1: none. Checked again at launch.
  int home = -1;
};

// ---- statements -----------------------------------------------------------------------------

// OpKind, op_info() and op_name() come from the op table (pypto/compiler/op_table.h).

// Fusable into one AIV task per tile.
inline bool is_elementwise(OpKind k) { return op_info(k).family == OpFamily::kEltwise; }

struct Operand {
  int value = -1;         // tensor operand (value index), or -1 for a scalar
  double constant = 0;    // scalar constant
  ExprId expr = kNoExpr;  // run-time integer scalar
};

struct CubeTile {
  std::int64_t m[2] = {0, 0};
  std::int64_t k[3] = {0, 0, 0};
  std::int64_t n[2] = {0, 0};
};

// A convolution's tiles (pypto.conv lowered to a matmul over its img2col matrix): the sizes
// PyPTO's set_conv_tile_shapes buffer rules read. Present when `conv.c0 > 0`. For
// conv_backward_input (`backward_input`) the same fields hold set_convbp_input_tile_shapes'
// sizes: tileML0/tileKL0/tileNL0, houtL1/woutL1, coutL1/tileKL1/tileNL1.
struct ConvTile {
  std::int64_t hw_l0 = 0, k_l0 = 0, n_l0 = 0;   // TileL0Info: tileH x tileW, tileK, tileN
  std::int64_t hin_l1 = 0, win_l1 = 0;          // input rows/columns one L1 tile reads
  std::int64_t k_al1 = 0, k_bl1 = 0, n_l1 = 0;  // CeilAlign(tileCin x kernel, C0); tileN
  std::int64_t c0 = 0;                          // 32 bytes of the operand dtype, in elements
  bool backward_input = false;                  // conv_backward_input's rules, not conv's
};

struct LoopInfo;

enum class StmtKind : std::uint8_t { kOp, kWrite, kLoop };

// sg_set_scope's (id, allow_parallel_merge, allow_cross_scope_merge) flags.
constexpr std::uint8_t kSgParallelMerge = 1;    // the id's ops on parallel branches merge too
constexpr std::uint8_t kSgCrossScopeMerge = 2;  // the id's leaf may merge with unscoped ones

struct Stmt {
  StmtKind kind = StmtKind::kOp;
  std::string loc;
  int segment = 0;                     // straight-line run of its body (a root when executed)
  bool in_parallel = false;            // inside a pypto.loop(parallel=True)
  std::vector<std::int64_t> vec_tile;  // empty: none
  std::int32_t sg_scope = -1;          // pass_options sg_set_scope id in force; -1: none
  std::uint8_t sg_flags = 0;           // its kSgParallelMerge / kSgCrossScopeMerge bits
  bool combine_axis = false;           // operation option: trailing broadcasts inline (kOp)
  std::string label;                   // pypto.set_semantic_label in force; empty: none

  // kOp
  OpKind op = OpKind::kAlloc;
  std::vector<Operand> inputs;
  int out = -1;
  CubeTile cube;
  bool has_cube = false;
  std::vector<int> dims;  // sum/amax/amin: reduced axes; transpose/permute: perm
  bool keepdim = false;
  CastMode cast_mode = CastMode::kNone;
  bool saturate = false;        // cast: satmode ON (clamp to the target's range)
  std::vector<ExprId> offsets;  // view offsets; write offsets
  bool a_trans = false, b_trans = false;
  int concat_dim = 0;
  // matmul extend_params: inputs[2..] are the bias and the scale tensor when present
  int bias_input = -1;          // index into inputs of the [1, N] bias, or -1
  int scale_tensor_input = -1;  // index into inputs of the [1, N] per-channel scale, or -1
  double scale = 0;             // per-tensor dequant scale; 0: none
  bool relu = false;            // ReLuType.RELU on the accumulator
  int trans_mode = 0;           // TF32 rounding of fp32 operands: 0 none, 1 rint, 2 round
  ConvTile conv;                // a convolution's tiles: its rules replace the cube tile's
  // scatter: 0 set, 1 add, 2 multiply (PyPTO's reduce=None/'add'/'multiply')
  int scatter_reduce = 0;
  // sort/argsort (topk): the k first values along dims[0], largest first when descending
  std::int64_t sort_k = 0;
  bool descending = false;

  // kWrite
  int dst = -1;
  int src = -1;

  // kLoop
  int loop = -1;  // index into Kernel::loops
};

struct Variant {
  ExprId guard = kNoExpr;
  std::vector<int> body;  // statement indices
  std::vector<int> plan;  // unit indices in order; a Loop is a unit of kind kLoop
};

struct LoopInfo {
  int stmt = -1;
  std::int32_t index_slot = -1;
  ExprId start = kNoExpr, stop = kNoExpr, step = kNoExpr;
  bool parallel = false;
  bool submit_before_loop = false;
  bool has_nested_loop = false;
  std::vector<std::int64_t> unroll;  // descending, ends with 1
  std::vector<Variant> variants;
};

// ---- plan -----------------------------------------------------------------------------------

enum class UnitKind : std::uint8_t {
  kEltwise,    // fusion group: one AIV task per output tile
  kReduce,     // sum/amax/amin
  kMatmul,     // AIC tasks per (batch, M tile, N tile)
  kIndexed,    // gather/scatter/scatter_update (emit_indexed.cpp)
  kPermute,    // transpose/permute: permuted-stride load
  kConcat,     // copies of regions
  kCopyWrite,  // a Write not absorbed into its producer: tiled copy
  kView,       // alias (or copy when copy_view)
  kReshape,    // alias when expressible as a strided region, else copy
  kAlloc,      // storage only
  kLoop,
};

struct Unit {
  UnitKind kind = UnitKind::kEltwise;
  std::vector<int> ops;         // statements (kEltwise: the chain; others: the one op)
  std::vector<int> writes;      // absorbed Write statements (stores to their dst)
  std::vector<int> ext_inputs;  // kEltwise: values loaded from memory
  std::vector<int> stores;      // kEltwise: values stored to their own storage
  int stmt = -1;                // kCopyWrite: the write; kLoop: the loop statement
  bool dynamic = false;         // extents depend on symbols (dynamic-shape leaf)
  std::string kernel;           // leaf kernel name
  std::string loc;              // of the first statement (messages)
};

// ---- kernel ---------------------------------------------------------------------------------

struct Param {
  std::string name;
  int value = -1;
  DType dtype = DType::kFp32;
  std::vector<ExprId> shape;
  bool written = false;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  std::vector<std::string> symbols;     // dynamic-dimension symbols: slots 0..n-1
  std::vector<std::string> slot_names;  // every slot: symbols, then loop indices
  std::vector<ExprNode> exprs;
  std::vector<ExprId> expr_args;
  std::vector<ValueInfo> values;
  std::vector<Stmt> stmts;
  std::vector<LoopInfo> loops;
  std::vector<Variant> variants;  // kernel body
  std::vector<Unit> units;
  int num_launch_slots = 0;
  bool has_parallel_loop = false;
};

// Lowering (lower.cpp): decides materialisation, aliases, fusion groups and absorbed writes,
// and fills Variant::plan, Kernel::units and the lowering fields of ValueInfo.
void lower(Kernel& k);

// Evaluation context of instantiate(): symbol values, and the tensors that `load` reads.
struct Env {
  std::vector<std::int64_t> slot;
  std::vector<std::uint8_t> bound;
  const std::vector<LaunchTensor>* tensors = nullptr;
  const std::vector<std::string>* ready_on_host = nullptr;
  bool* waits_for_aicore = nullptr;
  const std::string* loc = nullptr;  // statement being evaluated (messages)
};

// Evaluates an integer or boolean expression (booleans as 0/1) with Python floor semantics.
// Throws ConfigError naming *env.loc for a division by zero, an overflow, an unbound symbol
// or a `load` outside its tensor.
std::int64_t eval(const Kernel& k, ExprId e, Env& env);
bool is_const(const Kernel& k, ExprId e);

}  // namespace pypto::compiler::detail

namespace pypto::compiler {

class CompiledKernel {
 public:
  detail::Kernel k;
};

}  // namespace pypto::compiler
