// SPDX-License-Identifier: Apache-2.0
#include "pypto/model/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "pypto/common/errors.h"

namespace pypto::model {

namespace {

// The single table of tile ops. A vector op's time follows PyPTO's A2A3 cost model, whose
// per-op coefficients are a linear fit of board-measured op times (reference/pypto-costmodel.md
// section 3); the chip YAML holds them per fitted row (cost.vec_<row>_fixed_ns and
// _ps_per_byte, sources beside them), and each op here names the row it is timed by: PyPTO's
// own, or for ops PyPTO fits no row for, the row of the op they compile to or resemble.
// Reductions take their row's fixed part and stream the input at cost.vec_bytes_per_cycle
// (`factor` passes): PyPTO fits their per-byte part to the smallest operand (the reduced
// result), which says nothing of the reduced width. Cube and data-movement rows have no
// vector row: mmad is priced from the fractal, copies through L2/HBM by the simulator, and
// views cost nothing.
enum class Fit : std::uint8_t {
  kNone,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kAdds,
  kMuls,
  kSqrt,
  kExp,
  kReciprocal,
  kExpand,
  kCast,
  kRowSum,
  kRowMax
};

// How the per-byte part applies to a dtype.
enum class Rate : std::uint8_t {
  kPerByte,   // every dtype
  kFp32Elem,  // half per byte for fp32 (div, exp, log, sqrt: fitted per element)
  kInt32Elem  // half per byte for int32 (mul)
};

struct OpInfo {
  std::string_view name;
  TilePipe pipe;
  Fit fit;
  Rate rate;
  std::uint32_t factor;  // reductions: passes over the input at cost.vec_bytes_per_cycle
};

constexpr OpInfo kOps[] = {
    // Data movement and views: 0 cycles here.
    {"copy_in", TilePipe::kMte2, Fit::kNone, Rate::kPerByte, 0},
    {"copy_out", TilePipe::kMte3, Fit::kNone, Rate::kPerByte, 0},
    {"view", TilePipe::kNone, Fit::kNone, Rate::kPerByte, 0},
    {"reshape", TilePipe::kNone, Fit::kNone, Rate::kPerByte, 0},
    {"assemble", TilePipe::kNone, Fit::kNone, Rate::kPerByte, 0},
    // Cube.
    {"mmad", TilePipe::kCube, Fit::kNone, Rate::kPerByte, 0},
    // Vector, element-wise on two tiles.
    {"add", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"sub", TilePipe::kVec, Fit::kSub, Rate::kPerByte, 0},
    {"mul", TilePipe::kVec, Fit::kMul, Rate::kInt32Elem, 0},
    {"div", TilePipe::kVec, Fit::kDiv, Rate::kFp32Elem, 0},
    {"maximum", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},  // vmax: ADD's row
    {"minimum", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"eq", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},  // compares and selects: WHERE = ADD
    {"ne", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"lt", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"le", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"gt", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"ge", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"where", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    {"clip", TilePipe::kVec, Fit::kAdd, Rate::kPerByte, 0},
    // Vector, a tile and a scalar.
    {"adds", TilePipe::kVec, Fit::kAdds, Rate::kPerByte, 0},
    {"subs", TilePipe::kVec, Fit::kAdds, Rate::kPerByte, 0},
    {"muls", TilePipe::kVec, Fit::kMuls, Rate::kInt32Elem, 0},
    {"divs", TilePipe::kVec, Fit::kMuls, Rate::kPerByte, 0},
    // Vector, one tile.
    {"neg", TilePipe::kVec, Fit::kMuls, Rate::kPerByte, 0},   // NEG = MULS
    {"abs", TilePipe::kVec, Fit::kMuls, Rate::kPerByte, 0},   // one-pass unary: NEG's row
    {"relu", TilePipe::kVec, Fit::kMuls, Rate::kPerByte, 0},  // max with 0: MULS's row
    {"cast", TilePipe::kVec, Fit::kCast, Rate::kPerByte, 0},
    {"transpose", TilePipe::kVec, Fit::kCast, Rate::kPerByte, 0},  // one pass: CAST's row
    {"clone", TilePipe::kVec, Fit::kExpand, Rate::kPerByte, 0},    // a UB copy: EXPAND's row
    {"expand_clone", TilePipe::kVec, Fit::kExpand, Rate::kPerByte, 0},
    {"full", TilePipe::kVec, Fit::kExpand, Rate::kPerByte, 0},  // vector_dup: EXPAND's row
    {"fill", TilePipe::kVec, Fit::kExpand, Rate::kPerByte, 0},
    {"exp", TilePipe::kVec, Fit::kExp, Rate::kFp32Elem, 0},
    {"log", TilePipe::kVec, Fit::kExp, Rate::kFp32Elem, 0},  // LN = EXP
    {"sqrt", TilePipe::kVec, Fit::kSqrt, Rate::kFp32Elem, 0},
    {"rsqrt", TilePipe::kVec, Fit::kSqrt, Rate::kFp32Elem, 0},
    {"reciprocal", TilePipe::kVec, Fit::kReciprocal, Rate::kPerByte, 0},
    {"pow", TilePipe::kVec, Fit::kExp, Rate::kFp32Elem, 0},  // transcendental: EXP's row
    {"sigmoid", TilePipe::kVec, Fit::kExp, Rate::kFp32Elem, 0},
    {"tanh", TilePipe::kVec, Fit::kExp, Rate::kFp32Elem, 0},
    // Vector, reductions and row-wise softmax-style ops (shape is the input tile).
    {"sum", TilePipe::kVec, Fit::kRowSum, Rate::kPerByte, 4},
    {"prod", TilePipe::kVec, Fit::kRowSum, Rate::kPerByte, 4},
    {"rowsum", TilePipe::kVec, Fit::kRowSum, Rate::kPerByte, 4},
    {"softmax", TilePipe::kVec, Fit::kRowSum, Rate::kPerByte, 4},
    {"amax", TilePipe::kVec, Fit::kRowMax, Rate::kPerByte, 4},
    {"amin", TilePipe::kVec, Fit::kRowMax, Rate::kPerByte, 4},
    {"rowmax", TilePipe::kVec, Fit::kRowMax, Rate::kPerByte, 4},
    {"rowmin", TilePipe::kVec, Fit::kRowMax, Rate::kPerByte, 4},
};

// The chip's fixed ns and ps per byte of a fitted row (reductions: no per-byte part).
struct FitValues {
  double fixed_ns;
  double ps_per_byte;
};
FitValues fit_values(Fit f, const ChipConfig::Cost& c) {
  switch (f) {
    case Fit::kNone: return {0, 0};
    case Fit::kAdd: return {c.vec_add_fixed_ns, c.vec_add_ps_per_byte};
    case Fit::kSub: return {c.vec_sub_fixed_ns, c.vec_sub_ps_per_byte};
    case Fit::kMul: return {c.vec_mul_fixed_ns, c.vec_mul_ps_per_byte};
    case Fit::kDiv: return {c.vec_div_fixed_ns, c.vec_div_ps_per_byte};
    case Fit::kAdds: return {c.vec_adds_fixed_ns, c.vec_adds_ps_per_byte};
    case Fit::kMuls: return {c.vec_muls_fixed_ns, c.vec_muls_ps_per_byte};
    case Fit::kSqrt: return {c.vec_sqrt_fixed_ns, c.vec_sqrt_ps_per_byte};
    case Fit::kExp: return {c.vec_exp_fixed_ns, c.vec_exp_ps_per_byte};
    case Fit::kReciprocal: return {c.vec_reciprocal_fixed_ns, c.vec_reciprocal_ps_per_byte};
    case Fit::kExpand: return {c.vec_expand_fixed_ns, c.vec_expand_ps_per_byte};
    case Fit::kCast: return {c.vec_cast_fixed_ns, c.vec_cast_ps_per_byte};
    case Fit::kRowSum: return {c.vec_rowsum_fixed_ns, 0};
    case Fit::kRowMax: return {c.vec_rowmax_fixed_ns, 0};
  }
  return {0, 0};
}
constexpr std::size_t kNumOps = sizeof(kOps) / sizeof(kOps[0]);

// kOps sorted by name, built once, for binary search (trace loading prices every tile op).
const std::array<const OpInfo*, kNumOps>& sorted_ops() {
  static const std::array<const OpInfo*, kNumOps> sorted = [] {
    std::array<const OpInfo*, kNumOps> a{};
    for (std::size_t i = 0; i < kNumOps; ++i) a[i] = &kOps[i];
    std::sort(a.begin(), a.end(),
              [](const OpInfo* x, const OpInfo* y) { return x->name < y->name; });
    return a;
  }();
  return sorted;
}

const OpInfo* find_op(std::string_view name) {
  const auto& ops = sorted_ops();
  const auto it = std::lower_bound(ops.begin(), ops.end(), name,
                                   [](const OpInfo* o, std::string_view n) { return o->name < n; });
  return it != ops.end() && (*it)->name == name ? *it : nullptr;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1u : 0u)});
      diag = up;
    }
  }
  return row[b.size()];
}

[[noreturn]] void throw_unknown_op(std::string_view name) {
  std::string msg = "unknown tile op '" + std::string(name) + "'";
  std::string_view best;
  std::size_t best_d = 3;  // suggest only close names
  for (const OpInfo* o : sorted_ops()) {
    const std::size_t d = edit_distance(name, o->name);
    if (d < best_d) {
      best_d = d;
      best = o->name;
    }
  }
  if (!best.empty()) msg += " (did you mean '" + std::string(best) + "'?)";
  msg += "; known:";
  const char* sep = " ";
  for (const OpInfo* o : sorted_ops()) {
    msg += sep;
    msg += o->name;
    sep = ", ";
  }
  throw TraceError(msg);
}

const OpInfo& lookup(std::string_view name) {
  const OpInfo* o = find_op(name);
  if (o == nullptr) throw_unknown_op(name);
  return *o;
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

[[noreturn]] void throw_too_large(const TileOp& op) {
  throw TraceError("tile op '" + op.op + "' with shape " + shape_string(op.shape) +
                   " costs more than " + std::to_string(std::numeric_limits<std::uint32_t>::max()) +
                   " cycles; expected a tile that fits on a core");
}

void require_positive(std::uint32_t value, const char* key) {
  if (value == 0) throw ConfigError(std::string(key) + " = 0 is not valid; expected > 0");
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

std::uint64_t mul_checked(std::uint64_t a, std::uint64_t b, const TileOp& op) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_too_large(op);
  return r;
}

std::uint32_t to_cycles(std::uint64_t cycles, const TileOp& op) {
  if (cycles > std::numeric_limits<std::uint32_t>::max()) throw_too_large(op);
  return static_cast<std::uint32_t>(cycles);
}

std::uint32_t mmad_cycles(const TileOp& op, const ChipConfig& chip) {
  if (op.shape.size() != 3) {
    throw TraceError("tile op 'mmad' needs shape [M, K, N]; got " + shape_string(op.shape));
  }
  if (op.dtype != DType::kFp16 && op.dtype != DType::kBf16 && op.dtype != DType::kInt8 &&
      op.dtype != DType::kFp32) {
    throw TraceError("tile op 'mmad' does not support dtype " + std::string(to_string(op.dtype)) +
                     "; expected fp16, bf16, int8 or fp32");
  }
  require_positive(chip.cores.cube_m, "cores.cube_m");
  require_positive(chip.cores.cube_n, "cores.cube_n");
  require_positive(chip.cores.cube_k, "cores.cube_k");
  // cube_k is the fp16 depth of the fractal; a K step covers the same bytes in any dtype.
  const std::uint64_t k0 =
      std::max<std::uint64_t>(1, chip.cores.cube_k * 2u / dtype_bytes(op.dtype));
  const auto m = static_cast<std::uint64_t>(op.shape[0]);
  const auto k = static_cast<std::uint64_t>(op.shape[1]);
  const auto n = static_cast<std::uint64_t>(op.shape[2]);
  std::uint64_t fractals =
      mul_checked(ceil_div(m, chip.cores.cube_m), ceil_div(n, chip.cores.cube_n), op);
  fractals = mul_checked(fractals, ceil_div(k, k0), op);
  // Bank-conflict stalls scale with the fractal cycles; rounded up so any stall costs a cycle.
  const double stall =
      std::ceil(static_cast<double>(fractals) * chip.cost.cube_bank_conflict_pct / 100.0);
  if (!(stall < 4.0e9)) throw_too_large(op);
  return to_cycles(fractals + static_cast<std::uint64_t>(stall) + chip.cost.cube_fixed_cycles, op);
}

std::uint32_t vector_cycles(const TileOp& op, const OpInfo& info, const ChipConfig& chip) {
  require_positive(chip.cost.vec_bytes_per_cycle, "cost.vec_bytes_per_cycle");
  std::uint64_t bytes = dtype_bytes(op.dtype);
  for (const std::int64_t d : op.shape)
    bytes = mul_checked(bytes, static_cast<std::uint64_t>(d), op);
  // PyPTO's fit charges its fixed part once per 2-D slice of the tile (an instruction each).
  std::uint64_t slices = 1;
  for (std::size_t i = 0; i + 2 < op.shape.size(); ++i)
    slices = mul_checked(slices, static_cast<std::uint64_t>(op.shape[i]), op);
  const double cycles_per_ns = chip.cores.freq_mhz / 1000.0;
  const FitValues fv = fit_values(info.fit, chip.cost);
  const double fixed = std::ceil(fv.fixed_ns * cycles_per_ns);
  double per_byte = 0;
  if (info.factor > 0) {
    per_byte = static_cast<double>(ceil_div(bytes, chip.cost.vec_bytes_per_cycle) * info.factor);
  } else {
    const bool per_elem = (info.rate == Rate::kFp32Elem && op.dtype == DType::kFp32) ||
                          (info.rate == Rate::kInt32Elem && op.dtype == DType::kInt32);
    per_byte = std::ceil(fv.ps_per_byte * (per_elem ? 0.5 : 1.0) * static_cast<double>(bytes) *
                         1e-3 * cycles_per_ns);
  }
  const double cycles = static_cast<double>(slices) * fixed + per_byte;
  if (!(cycles < 4.0e9)) throw_too_large(op);
  return static_cast<std::uint32_t>(cycles);
}

}  // namespace

std::uint32_t dtype_bytes(DType d) {
  switch (d) {
    case DType::kFp32: return 4;
    case DType::kFp16: return 2;
    case DType::kBf16: return 2;
    case DType::kInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kUInt8: return 1;
  }
  return 0;
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::kFp32: return "fp32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kUInt8: return "uint8";
  }
  return "?";
}

bool parse_dtype(std::string_view s, DType* out) {
  static constexpr struct {
    std::string_view name;
    DType type;
  } kNames[] = {
      {"fp32", DType::kFp32},   {"float32", DType::kFp32},  {"float", DType::kFp32},
      {"fp16", DType::kFp16},   {"float16", DType::kFp16},  {"half", DType::kFp16},
      {"bf16", DType::kBf16},   {"bfloat16", DType::kBf16}, {"int8", DType::kInt8},
      {"int16", DType::kInt16}, {"int32", DType::kInt32},   {"int", DType::kInt32},
      {"int64", DType::kInt64}, {"long", DType::kInt64},    {"bool", DType::kBool},
      {"uint8", DType::kUInt8},
  };
  const auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  for (const auto& n : kNames) {
    if (n.name.size() != s.size()) continue;
    if (std::equal(s.begin(), s.end(), n.name.begin(),
                   [&](char a, char b) { return lower(a) == b; })) {
      *out = n.type;
      return true;
    }
  }
  return false;
}

bool is_known_tile_op(std::string_view op) { return find_op(op) != nullptr; }

TilePipe tile_op_pipe(std::string_view op) { return lookup(op).pipe; }

std::vector<std::string> known_tile_ops() {
  std::vector<std::string> names;
  names.reserve(kNumOps);
  for (const OpInfo* o : sorted_ops()) names.emplace_back(o->name);
  return names;
}

std::uint32_t tile_op_cycles(const TileOp& op, const ChipConfig& chip) {
  const OpInfo& info = lookup(op.op);
  for (const std::int64_t d : op.shape) {
    if (d < 0) {
      throw TraceError("tile op '" + op.op + "' has negative dimension " + std::to_string(d) +
                       " in shape " + shape_string(op.shape) + "; expected sizes >= 0");
    }
  }
  switch (info.pipe) {
    case TilePipe::kNone:
    case TilePipe::kMte2:
    case TilePipe::kMte3: return 0;  // priced by the simulator through L2/HBM, or free
    case TilePipe::kCube: return mmad_cycles(op, chip);
    case TilePipe::kVec: return vector_cycles(op, info, chip);
  }
  return 0;
}

}  // namespace pypto::model
