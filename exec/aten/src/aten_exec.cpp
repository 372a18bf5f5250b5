// SPDX-License-Identifier: Apache-2.0
// Each instruction of a task program as ATen ops (see aten_exec.h). Local tiles are ATen
// tensors of their dtype on the buffers' device; loads and stores are copies between them
// and strided views (as_strided over from_blob) of the launch's buffers, which ATen checks
// against the buffer's extent. Where the tile executor's definition (program.h) is not one
// ATen op (single roundings from double, rounding modes, saturation, TF32, indexed ops with
// duplicate indices), it is composed of ATen ops on the same device, never copied to the host.
#include "pypto/exec/aten_exec.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/exec/tile_op_table.h"

namespace pypto::exec {
namespace {

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::kFp32: return at::kFloat;
    case DType::kFp16: return at::kHalf;
    case DType::kBf16: return at::kBFloat16;
    case DType::kInt8: return at::kChar;
    case DType::kInt16: return at::kShort;
    case DType::kInt32: return at::kInt;
    case DType::kInt64: return at::kLong;
    case DType::kBool: return at::kBool;
    case DType::kUInt8: return at::kByte;
  }
  return at::kFloat;
}

bool is_float(DType d) { return d == DType::kFp32 || d == DType::kFp16 || d == DType::kBf16; }

int int_bits(DType d) {
  switch (d) {
    case DType::kInt8: return 8;
    case DType::kUInt8: return 8;
    case DType::kInt16: return 16;
    case DType::kInt32: return 32;
    default: return 64;
  }
}

[[noreturn]] void fail(std::size_t i, const char* name, const std::string& msg) {
  throw_model_error(__FILE__, __LINE__,
                    "ATen executor: instruction " + std::to_string(i) + " (" + name + "): " + msg);
}

// ---- rounding into a floating dtype, as the tile executor does it ---------------------------
// The tile executor rounds exact (double) values once into a dtype, in a given direction.
// ATen converts double -> fp16/bf16 through float (two roundings) and only to nearest, so
// these helpers build the single rounding from ATen ops: round to odd at fp32 (after which
// nearest at fp16/bf16 is exact: 24 >= 2 * 11 + 2 bits), and each directed mode as a step of
// one unit in the last place from the nearest value, chosen by comparing in double.

at::ScalarType bits_type(at::ScalarType f) { return f == at::kFloat ? at::kInt : at::kShort; }

// y with its bit pattern moved by `step` (+1: one ulp away from zero, -1: toward zero; sign
// and magnitude share the integer view, so one integer add serves both signs).
at::Tensor step_ulp(const at::Tensor& y, const at::Tensor& step) {
  const at::Tensor b = y.contiguous().view(bits_type(y.scalar_type()));
  return b.add(step.to(b.scalar_type())).view(y.scalar_type());
}

// A host value v as the nearest value of dtype t (one rounding), as a double.
double host_round(double v, at::ScalarType t) {
  if (t == at::kFloat) return static_cast<double>(static_cast<float>(v));
  if (t != at::kHalf && t != at::kBFloat16) return v;
  float f = static_cast<float>(v);
  if (std::isfinite(v) && static_cast<double>(f) != v) {  // round to odd at fp32 first
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 1u) == 0) u += std::fabs(static_cast<double>(f)) < std::fabs(v) ? 1u : ~0u;
    std::memcpy(&f, &u, sizeof f);
  }
  return t == at::kHalf ? static_cast<double>(static_cast<float>(c10::Half(f)))
                        : static_cast<double>(static_cast<float>(c10::BFloat16(f)));
}

// xd (double) rounded once to nearest even in floating dtype `to`.
at::Tensor nearest(const at::Tensor& xd, at::ScalarType to) {
  at::Tensor y = xd.to(at::kFloat).contiguous();
  if (to == at::kFloat) return y;
  const at::Tensor yd = y.to(at::kDouble);
  const at::Tensor even = y.view(at::kInt).bitwise_and(1).eq(0);
  const at::Tensor fix = yd.ne(xd).logical_and(even).logical_and(xd.isnan().logical_not());
  const at::Tensor step = at::where(fix, at::where(yd.abs().lt(xd.abs()), 1, -1), 0);
  return step_ulp(y, step).to(to);
}

// xd (double) rounded once to floating dtype `to` in mode m (kNone/kRint nearest even,
// kRound nearest away, kFloor, kCeil, kTrunc, kOdd); `saturate` turns an infinite result into
// the largest finite value of its sign (NaN stays NaN), as program.h's kCast says.
at::Tensor round_float(const at::Tensor& xd, at::ScalarType to, CastMode m, bool saturate) {
  at::Tensor y = nearest(xd, to);
  if (m != CastMode::kNone && m != CastMode::kRint) {
    const at::Tensor yd = y.to(at::kDouble);
    const at::Tensor ax = xd.abs();
    const at::Tensor ay = yd.abs();
    const at::Tensor neg = y.signbit();
    at::Tensor step;  // per element: +1 one ulp away from zero, -1 toward, 0 keep
    switch (m) {
      case CastMode::kFloor: step = at::where(yd.gt(xd), at::where(neg, 1, -1), 0); break;
      case CastMode::kCeil: step = at::where(yd.lt(xd), at::where(neg, -1, 1), 0); break;
      case CastMode::kTrunc: step = at::where(ay.gt(ax), -1, 0); break;
      case CastMode::kRound: {  // a tie that nearest-even rounded toward zero goes away
        const at::Tensor up = step_ulp(y, at::ones_like(y, at::kInt)).to(at::kDouble);
        step = at::where(ay.lt(ax).logical_and(up.add(yd).eq(xd.mul(2))), 1, 0);
        break;
      }
      default: {  // kOdd: an inexact result takes the neighbour whose last bit is odd
        const at::Tensor even = y.contiguous().view(bits_type(to)).bitwise_and(1).eq(0);
        const at::Tensor fix = yd.ne(xd).logical_and(even).logical_and(xd.isnan().logical_not());
        step = at::where(fix, at::where(ay.lt(ax), 1, -1), 0);
        break;
      }
    }
    y = step_ulp(y, step);
  }
  if (saturate) {
    const double big = to == at::kFloat  ? 3.4028234663852886e38
                       : to == at::kHalf ? 65504.0
                                         : 3.3895313892515355e38;
    y = y.to(at::kFloat).clamp(-big, big).to(to);  // only an infinite value changes; NaN stays
  }
  return y;
}

// xd (double) rounded to an integral value per cast mode (kNone truncates, like .to(int)).
at::Tensor integerize(const at::Tensor& xd, CastMode m) {
  switch (m) {
    case CastMode::kRint: return at::round(xd);  // half to even
    case CastMode::kRound: {                     // half away from zero (std::round)
      const at::Tensor t = at::trunc(xd);
      return at::where(xd.sub(t).abs().ge(0.5), t.add(at::sign(xd)), t);
    }
    case CastMode::kFloor: return at::floor(xd);
    case CastMode::kCeil: return at::ceil(xd);
    default: return at::trunc(xd);
  }
}

// Exact values (double) into dtype d, as the tile executor's rounding step: floating dtypes
// one rounding to nearest even, bool != 0, integers wrapping (`wrap`: results of integer
// arithmetic) or converted like torch's .to() (values of floating arithmetic).
at::Tensor from_double(const at::Tensor& xd, DType d, bool wrap) {
  if (is_float(d)) return nearest(xd, scalar_type(d));
  if (d == DType::kBool) return xd.ne(0);
  if (wrap) return at::trunc(xd).to(at::kLong).to(scalar_type(d));
  return xd.to(scalar_type(d));
}

std::vector<std::int64_t> dims_of(const std::int64_t* shape, std::uint8_t rank) {
  return std::vector<std::int64_t>(shape, shape + rank);
}

std::vector<std::int64_t> mask_dims(std::uint8_t mask, std::int64_t rank) {
  std::vector<std::int64_t> d;
  for (std::int64_t k = 0; k < rank; ++k) {
    if ((mask >> k) & 1) d.push_back(k);
  }
  return d;
}

// The one axis of reduce_mask (indexed ops and sorts), below `rank`.
std::int64_t one_axis(std::size_t i, const char* name, std::uint8_t mask, std::int64_t rank) {
  std::int64_t axis = -1;
  for (std::int64_t k = 0; k < kMaxRank; ++k) {
    if (((mask >> k) & 1) == 0) continue;
    if (axis >= 0 || k >= rank) {
      fail(i, name,
           "reduce_mask " + std::to_string(int(mask)) + " must name exactly one axis below " +
               std::to_string(rank));
    }
    axis = k;
  }
  if (axis < 0) fail(i, name, "reduce_mask names no axis");
  return axis;
}

// Throws, as the tile executor does, when an index is outside [0, n): one flag read back
// from the device (the offending value only on the error path).
void check_index(std::size_t i, const char* name, const at::Tensor& idx, std::int64_t n,
                 const char* what) {
  if (idx.numel() == 0) return;
  const at::Tensor bad = idx.lt(0).logical_or(idx.ge(n));
  if (!bad.any().item<bool>()) return;
  const std::int64_t v = idx.masked_select(bad).select(0, 0).item<std::int64_t>();
  fail(i, name,
       std::string(what) + " index " + std::to_string(v) + " is outside [0, " + std::to_string(n) +
           ")");
}

// Integer division of 64-bit operands as the tile executor defines it: truncating (C), with
// the remainder of the dividend's sign; a divisor of -1 negates with wraparound (x86's idiv
// would trap on INT64_MIN / -1).
at::Tensor trunc_div(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor m1 = b.eq(-1);
  return at::where(m1, a.neg(), at::div(a, at::where(m1, 1, b), "trunc"));
}
at::Tensor c_remainder(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor m1 = b.eq(-1);
  return at::where(m1, 0, at::fmod(a, at::where(m1, 1, b)));
}

}  // namespace

struct AtenExecutor::Impl {
  GlobalMemory mem;
  at::Device device;
  at::Tensor workspace;  // owned, on `device`
  Impl(const GlobalMemory& m, const at::Device& d) : mem(m), device(d) {}

  at::Tensor view(const GlobalRegion& r) const {
    NPU_CHECK(r.buffer < mem.base.size(), "region of buffer " + std::to_string(r.buffer) +
                                              " beyond the launch's " +
                                              std::to_string(mem.base.size()) + " buffers");
    const std::int64_t numel =
        static_cast<std::int64_t>(mem.size_bytes[r.buffer] / model::dtype_bytes(r.dtype));
    const at::Tensor flat =
        at::from_blob(mem.base[r.buffer], {numel},
                      at::TensorOptions().dtype(scalar_type(r.dtype)).device(device));
    return flat.as_strided(dims_of(r.shape, r.rank), dims_of(r.stride, r.rank), r.offset_elems);
  }
};

AtenExecutor::AtenExecutor(const GlobalMemory& buffers, std::uint64_t workspace_bytes,
                           const std::string& device) {
  if (!device_available(device)) {
    throw ConfigError("the ATen executor cannot place tensors on device '" + device +
                      "' in this process (ATen has no such device; a torch built for it, or "
                      "its extension such as torch_npu, must be loaded)");
  }
  impl_ = std::make_unique<Impl>(buffers, at::Device(device));
  impl_->workspace =
      at::zeros({static_cast<std::int64_t>(std::max<std::uint64_t>(workspace_bytes, 1))},
                at::TensorOptions().dtype(at::kByte).device(impl_->device));
  impl_->mem.base.push_back(static_cast<std::uint8_t*>(impl_->workspace.data_ptr()));
  impl_->mem.size_bytes.push_back(workspace_bytes);
  impl_->mem.dtype.push_back(DType::kInt8);
}

AtenExecutor::~AtenExecutor() = default;

bool AtenExecutor::device_available(const std::string& device) {
  // The question is whether ATen in this process can allocate there: a device string ATen
  // parses (cpu, cuda, or the type an extension registered, e.g. torch_npu's npu) with a
  // backend that allocates memory. The answer does not change within a process (an
  // extension registers its device when it is imported, before a kernel runs), so each
  // string is asked once.
  static std::mutex mu;
  static std::map<std::string, bool> known;
  const std::lock_guard<std::mutex> lock(mu);
  const auto it = known.find(device);
  if (it != known.end()) return it->second;
  bool ok = false;
  try {
    const at::Device d(device);
    const c10::InferenceMode no_autograd;
    // A tensor with memory: "meta" allocates tensors without any, which no task can use.
    ok = at::empty({1}, at::TensorOptions().dtype(at::kFloat).device(d)).data_ptr() != nullptr;
  } catch (const std::exception&) {
    ok = false;
  }
  known.emplace(device, ok);
  return ok;
}

bool AtenExecutor::supports(const TaskProgram& p, std::string* why) {
  // Every instruction of the table has an ATen formulation; only a value that is no opcode
  // (a corrupt program) is refused here.
  for (std::size_t i = 0; i < p.instrs.size(); ++i) {
    if (find_tile_op(p.instrs[i].op) != nullptr) continue;
    if (why != nullptr) {
      *why = "instruction " + std::to_string(i) + " has opcode " +
             std::to_string(static_cast<int>(p.instrs[i].op)) + ", which is no tile instruction";
    }
    return false;
  }
  return true;
}

void AtenExecutor::execute(const TaskProgram& p) const {
  const c10::InferenceMode no_autograd;
  const Impl& m = *impl_;
  const bool on_cpu = m.device.is_cpu();
  std::vector<at::Tensor> loc(p.locals.size());
  auto opts = [&](std::size_t i) {
    return at::TensorOptions().dtype(scalar_type(p.locals[i].dtype)).device(m.device);
  };
  auto shape = [&](std::size_t i) { return dims_of(p.locals[i].shape, p.locals[i].rank); };
  auto tile = [&](std::int32_t i, const char* what) -> const at::Tensor& {
    NPU_CHECK(i >= 0 && static_cast<std::size_t>(i) < loc.size() && loc[i].defined(),
              std::string("ATen executor: ") + what + " reads local " + std::to_string(i) +
                  " before any instruction wrote it");
    return loc[i];
  };
  // The prefix box of t with the extents of `box` (the valid part of a tile).
  auto prefix = [](at::Tensor t, at::IntArrayRef box) {
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(box.size()); ++k) {
      if (t.size(k) != box[k]) t = t.narrow(k, 0, box[k]);
    }
    return t;
  };
  // fp16/bf16 operands of element-wise math as fp32 (torch's opmath: what its fp16 kernels
  // compute in, and devices without fp16 kernels for an op still run it); the result is
  // rounded once to dst.
  auto opmath = [](const at::Tensor& t) {
    const at::ScalarType st = t.scalar_type();
    return st == at::kHalf || st == at::kBFloat16 ? t.to(at::kFloat) : t;
  };
  for (std::size_t i = 0; i < p.instrs.size(); ++i) {
    const TileInstr& in = p.instrs[i];
    const TileOpInfo* info = find_tile_op(in.op);
    NPU_CHECK(info != nullptr, "ATen executor: instruction " + std::to_string(i) + " has opcode " +
                                   std::to_string(static_cast<int>(in.op)) +
                                   ", which is no tile instruction");
    const auto d = static_cast<std::size_t>(in.dst);
    NPU_CHECK(info->exec == TileExec::kStore || info->exec == TileExec::kScatterRows ||
                  (in.dst >= 0 && d < loc.size()),
              "ATen executor: instruction " + std::to_string(i) + " has no destination tile");
    // A scalar operand takes the dtype of the tile it combines with (the other operand, or
    // dst when none), rounded once from double as the tile executor and torch's Python
    // scalars do.
    auto scalar_like = [&](double v, const at::TensorOptions& o) {
      return at::scalar_tensor(host_round(v, c10::typeMetaToScalarType(o.dtype())), o);
    };
    auto operand = [&](int k, const at::Tensor* other) {
      if (((in.scalar_operand >> k) & 1) == 0) return tile(in.src[k], info->name);
      return scalar_like(in.scalar[k], other != nullptr ? other->options() : opts(d));
    };
    const DType dt = in.dst >= 0 && d < loc.size() ? p.locals[d].dtype : DType::kFp32;
    switch (info->exec) {
      case TileExec::kLoad: {
        const at::Tensor v = m.view(in.region);
        if (v.sizes() == at::IntArrayRef(shape(d))) {
          loc[d] = v.to(scalar_type(dt), /*non_blocking=*/false, /*copy=*/true);
        } else {
          tile(in.dst, "a partial load");
          prefix(loc[d], v.sizes()).copy_(v);
        }
        break;
      }
      case TileExec::kStore: {
        at::Tensor v = m.view(in.region);
        v.copy_(prefix(tile(in.src[0], "store"), v.sizes()));
        break;
      }
      case TileExec::kFill: {
        if (in.op == TileOpcode::kIota) {
          // start + (offset + j) * step along the last axis, in double, rounded once.
          const std::int64_t last = p.locals[d].rank > 0 ? shape(d).back() : 1;
          const at::Tensor j =
              at::arange(last, at::TensorOptions().dtype(at::kDouble).device(m.device));
          const at::Tensor v = j.add(in.scalar[2]).mul(in.scalar[1]).add(in.scalar[0]);
          const bool integral =
              std::trunc(in.scalar[0]) == in.scalar[0] && std::trunc(in.scalar[1]) == in.scalar[1];
          loc[d] = from_double(v.expand(shape(d)), dt, integral).contiguous();
        } else {
          loc[d] = at::full(shape(d), host_round(in.scalar[0], scalar_type(dt)), opts(d));
        }
        break;
      }
      case TileExec::kCopy:
        loc[d] = tile(in.src[0], "copy").reshape(shape(d)).to(opts(d), false, /*copy=*/true);
        break;
      case TileExec::kPermute: {
        const at::Tensor& s = tile(in.src[0], "permute");
        const std::vector<std::int64_t> perm(in.perm, in.perm + s.dim());
        loc[d] = s.permute(perm).to(opts(d), false, /*copy=*/true).contiguous();
        break;
      }
      case TileExec::kCast: {
        const at::Tensor& s = tile(in.src[0], "cast");
        const DType from = p.locals[static_cast<std::size_t>(in.src[0])].dtype;
        const CastMode cm = in.cast_mode;
        const bool sat = in.saturate != 0;
        const at::ScalarType to = scalar_type(dt);
        if (dt == DType::kBool) {
          loc[d] = s.ne(0);
        } else if (is_float(dt)) {
          const bool wide_int = from == DType::kInt32 || from == DType::kInt64;
          if (from == dt && cm != CastMode::kNone && cm != CastMode::kOdd) {
            // AscendC's float->float cast with a rounding mode: an integral value.
            loc[d] = integerize(s.to(at::kDouble), cm).to(to);
          } else if (!sat && (cm == CastMode::kNone || cm == CastMode::kRint) &&
                     !(wide_int && dt != DType::kFp32)) {
            loc[d] = s.to(to, false, /*copy=*/true);  // one rounding: the source fits a float
          } else {
            loc[d] = round_float(s.to(at::kDouble), to, cm, sat);
          }
        } else {
          if (cm == CastMode::kOdd) {
            fail(i, info->name,
                 "cast_mode odd rounds to a floating dtype, not to " +
                     std::string(model::to_string(dt)));
          }
          if (sat) {
            // Clamp to the dtype's range (INT64_MAX as the largest double below 2^63), NaN 0.
            const bool u8 = dt == DType::kUInt8;
            const double lo = u8 ? 0.0 : -std::ldexp(1.0, int_bits(dt) - 1);
            const double hi = u8                    ? 255.0
                              : dt == DType::kInt64 ? 9223372036854774784.0
                                                    : std::ldexp(1.0, int_bits(dt) - 1) - 1;
            at::Tensor v = s.to(at::kDouble);
            if (is_float(from)) v = integerize(v, cm);
            loc[d] = at::nan_to_num(v, 0.0, hi, lo).clamp(lo, hi).to(to);
          } else if (is_float(from)) {
            // Integral per mode, then torch's .to() (out of range: x86's integer indefinite).
            loc[d] = cm == CastMode::kNone ? s.to(to, false, /*copy=*/true)
                                           : integerize(s.to(at::kDouble), cm).to(to);
          } else {
            loc[d] = s.to(to, false, /*copy=*/true);  // wraps
          }
        }
        break;
      }
      case TileExec::kBinary: {
        const bool sa = (in.scalar_operand & 1) != 0, sb = (in.scalar_operand & 2) != 0;
        at::Tensor a, b;
        if (!sa) a = tile(in.src[0], info->name);
        if (!sb) b = tile(in.src[1], info->name);
        if (sa) a = operand(0, sb ? nullptr : &b);
        if (sb) b = operand(1, sa ? nullptr : &a);
        const bool int_domain = !is_float(dt) && !a.is_floating_point() && !b.is_floating_point();
        a = opmath(a);
        b = opmath(b);
        auto nonzero_divisor = [&](const at::Tensor& v) {
          if (v.eq(0).any().item<bool>()) {
            fail(i, info->name, "integer division by zero (torch raises ZeroDivisionError)");
          }
        };
        // The integer-only ops and integer division run on 64 bits, narrowed to dst (wraps).
        const at::Tensor a64 = int_domain ? a.to(at::kLong) : at::Tensor();
        const at::Tensor b64 = int_domain ? b.to(at::kLong) : at::Tensor();
        at::Tensor r;
        switch (in.op) {
          case TileOpcode::kAdd: r = at::add(a, b); break;
          case TileOpcode::kSub: r = at::sub(a, b); break;
          case TileOpcode::kMul: r = at::mul(a, b); break;
          case TileOpcode::kDiv:
            if (int_domain) {
              nonzero_divisor(b64);
              r = trunc_div(a64, b64);
            } else {
              r = at::div(a, b);
            }
            break;
          case TileOpcode::kMaximum: r = at::maximum(a, b); break;
          case TileOpcode::kMinimum: r = at::minimum(a, b); break;
          case TileOpcode::kRemainder:
            if (int_domain) {
              nonzero_divisor(b64);
              const at::Tensor rr = c_remainder(a64, b64);
              r = at::where(rr.ne(0).logical_and(rr.lt(0).ne(b64.lt(0))), rr.add(b64), rr);
            } else {
              r = at::remainder(a, b);
            }
            break;
          case TileOpcode::kPow: r = at::pow(a, b); break;
          case TileOpcode::kEq: r = at::eq(a, b); break;
          case TileOpcode::kNe: r = at::ne(a, b); break;
          case TileOpcode::kLt: r = at::lt(a, b); break;
          case TileOpcode::kLe: r = at::le(a, b); break;
          case TileOpcode::kGt: r = at::gt(a, b); break;
          case TileOpcode::kGe: r = at::ge(a, b); break;
          case TileOpcode::kLogicalAnd: r = at::logical_and(a, b); break;
          case TileOpcode::kLogicalOr: r = at::logical_or(a, b); break;
          case TileOpcode::kAtan2: r = at::atan2(a, b); break;
          case TileOpcode::kCopysign: r = at::copysign(a, b); break;
          case TileOpcode::kHypot: r = at::hypot(a, b); break;
          case TileOpcode::kFmod:
            if (int_domain) {
              nonzero_divisor(b64);
              r = c_remainder(a64, b64);
            } else {
              r = at::fmod(a, b);
            }
            break;
          case TileOpcode::kGcd:
          case TileOpcode::kFloorDiv:
          case TileOpcode::kCeilDiv:
          case TileOpcode::kBitAnd:
          case TileOpcode::kBitOr:
          case TileOpcode::kBitXor:
          case TileOpcode::kShiftLeft:
          case TileOpcode::kShiftRight: {
            if (!int_domain) fail(i, info->name, "needs integer operands and dst");
            const std::int64_t bits = int_bits(dt);
            switch (in.op) {
              case TileOpcode::kGcd: r = at::gcd(a64, b64); break;
              case TileOpcode::kFloorDiv:
              case TileOpcode::kCeilDiv: {
                nonzero_divisor(b64);
                const at::Tensor q = trunc_div(a64, b64);
                const at::Tensor rr = c_remainder(a64, b64);
                const at::Tensor same_sign = rr.lt(0).eq(b64.lt(0));
                const at::Tensor adjust = in.op == TileOpcode::kFloorDiv
                                              ? rr.ne(0).logical_and(same_sign.logical_not())
                                              : rr.ne(0).logical_and(same_sign);
                r = in.op == TileOpcode::kFloorDiv ? q.sub(adjust.to(at::kLong))
                                                   : q.add(adjust.to(at::kLong));
                r = at::where(b64.eq(-1), a64.neg(), r);
                break;
              }
              case TileOpcode::kBitAnd: r = at::bitwise_and(a64, b64); break;
              case TileOpcode::kBitOr: r = at::bitwise_or(a64, b64); break;
              case TileOpcode::kBitXor: r = at::bitwise_xor(a64, b64); break;
              default: {
                // torch: a count outside [0, bits) gives 0 (left) or the sign fill (right).
                const at::Tensor out_of_range = b64.lt(0).logical_or(b64.ge(bits));
                const at::Tensor count = b64.clamp(0, 63);
                if (in.op == TileOpcode::kShiftLeft) {
                  r = at::where(out_of_range, 0, at::bitwise_left_shift(a64, count));
                } else {
                  r = at::where(out_of_range, at::where(a64.lt(0), -1, 0).to(at::kLong),
                                at::bitwise_right_shift(a64, count));
                }
                break;
              }
            }
            break;
          }
          default: fail(i, info->name, "not a binary opcode");
        }
        loc[d] = r.expand(shape(d)).to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kUnary: {
        const at::Tensor x = opmath(operand(0, nullptr));
        at::Tensor r;
        switch (in.op) {
          case TileOpcode::kNeg: r = at::neg(x); break;
          case TileOpcode::kAbs: r = at::abs(x); break;
          case TileOpcode::kRelu: r = at::relu(x); break;
          case TileOpcode::kExp: r = at::exp(x); break;
          case TileOpcode::kLog: r = at::log(x); break;
          case TileOpcode::kSqrt: r = at::sqrt(x); break;
          case TileOpcode::kRsqrt: r = at::rsqrt(x); break;
          case TileOpcode::kReciprocal: r = at::reciprocal(x); break;
          case TileOpcode::kSigmoid: r = at::sigmoid(x); break;
          case TileOpcode::kTanh: r = at::tanh(x); break;
          case TileOpcode::kFloor: r = at::floor(x); break;
          case TileOpcode::kCeil: r = at::ceil(x); break;
          case TileOpcode::kTrunc: r = at::trunc(x); break;
          case TileOpcode::kRound: {
            // torch.round(x, decimals) in fp32 arithmetic: the scaled value rounded half to
            // even, scaled back (decimals 0: rint).
            const int dec = static_cast<int>(in.scalar[1]);
            if (!x.is_floating_point()) {
              r = x;
            } else if (dec == 0 || !is_float(dt)) {
              r = at::round(x.to(at::kFloat));
            } else {
              const at::Tensor tp =
                  at::scalar_tensor(static_cast<float>(std::pow(10.0, std::abs(dec))),
                                    at::TensorOptions().dtype(at::kFloat).device(m.device));
              const at::Tensor xf = x.to(at::kFloat);
              r = dec > 0 ? at::round(xf.mul(tp)).div(tp) : at::round(xf.div(tp)).mul(tp);
            }
            break;
          }
          case TileOpcode::kSign: r = at::sign(x); break;
          case TileOpcode::kErf: r = at::erf(x); break;
          case TileOpcode::kErfc: r = at::erfc(x); break;
          case TileOpcode::kSin: r = at::sin(x); break;
          case TileOpcode::kCos: r = at::cos(x); break;
          case TileOpcode::kLog1p: r = at::log1p(x); break;
          case TileOpcode::kExpm1: r = at::expm1(x); break;
          case TileOpcode::kLrelu:
            r = at::leaky_relu(x, static_cast<double>(static_cast<float>(in.scalar[1])));
            break;
          case TileOpcode::kLogicalNot: r = at::logical_not(x); break;
          case TileOpcode::kExp2: r = at::exp2(x); break;
          case TileOpcode::kLog2: r = at::log2(x); break;
          case TileOpcode::kLog10: r = at::log10(x); break;
          case TileOpcode::kCbrt: {
            // ATen has no cbrt: pow(|x|, 1/3) in double, one Newton step (double-accurate),
            // the sign of x back (cbrt(-0) = -0); rounded once to dst below.
            const at::Tensor xd = x.to(at::kDouble);
            const at::Tensor ad = xd.abs();
            at::Tensor y = at::pow(ad, 1.0 / 3.0);
            const at::Tensor newton = y.sub(y.mul(y).mul(y).sub(ad).div(y.mul(y).mul(3)));
            y = at::where(y.gt(0).logical_and(y.isfinite()), newton, y);
            r = from_double(at::copysign(y, xd), dt, false);
            break;
          }
          case TileOpcode::kCosh: r = at::cosh(x); break;
          case TileOpcode::kSinh: r = at::sinh(x); break;
          case TileOpcode::kTf32: {
            // fp32's mantissa cut to TF32's 10 bits on the bit pattern: scalar[1] 0 truncates,
            // 1 rounds to nearest even, 2 to nearest away; NaN and inf pass through, a carry
            // may reach inf.
            if (dt != DType::kFp32) fail(i, info->name, "dst must be fp32");
            const int mode = static_cast<int>(in.scalar[1]);
            const at::Tensor xf = x.to(at::kFloat).contiguous();
            const at::Tensor u = xf.view(at::kInt);
            const at::Tensor rem = u.bitwise_and(0x1FFF);
            const at::Tensor base = u.bitwise_and(~0x1FFF);
            at::Tensor up = at::zeros_like(u, at::kBool);
            if (mode == 1) {
              up = rem.gt(0x1000).logical_or(rem.eq(0x1000).logical_and(
                  at::bitwise_right_shift(base, 13).bitwise_and(1).eq(1)));
            } else if (mode == 2) {
              up = rem.ge(0x1000);
            }
            const at::Tensor cut = base.add(up.to(at::kInt).mul(0x2000)).view(at::kFloat);
            r = at::where(xf.isfinite(), cut, xf);
            break;
          }
          case TileOpcode::kTan: r = at::tan(x); break;
          case TileOpcode::kAsin: r = at::asin(x); break;
          case TileOpcode::kAcos: r = at::acos(x); break;
          case TileOpcode::kAtan: r = at::atan(x); break;
          case TileOpcode::kAcosh: r = at::acosh(x); break;
          case TileOpcode::kAsinh: r = at::asinh(x); break;
          case TileOpcode::kAtanh: r = at::atanh(x); break;
          case TileOpcode::kIsFinite: r = at::isfinite(x); break;
          case TileOpcode::kIsNan: r = at::isnan(x); break;
          case TileOpcode::kIsInf: r = at::isinf(x); break;
          case TileOpcode::kSignBit: r = at::signbit(x); break;
          case TileOpcode::kBitNot:
            if (x.is_floating_point() || is_float(dt)) {
              fail(i, info->name, "bitwise_not needs an integer operand");
            }
            r = at::bitwise_not(x.to(at::kLong));  // on 64 bits, narrowed to dst (bool: != 0)
            break;
          default: fail(i, info->name, "not a unary opcode");
        }
        loc[d] = r.expand(shape(d)).to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kWhere: {
        const at::Tensor c = operand(0, nullptr).to(at::kBool);
        const at::Tensor a = operand(1, nullptr), b = operand(2, nullptr);
        loc[d] = at::where(c, a.to(opts(d)), b.to(opts(d))).expand(shape(d)).contiguous();
        break;
      }
      case TileExec::kReduce: {
        const at::Tensor& x = tile(in.src[0], info->name);
        const std::vector<std::int64_t> dims = mask_dims(in.reduce_mask, x.dim());
        at::Tensor r;
        switch (in.op) {
          case TileOpcode::kReduceSum: r = at::sum(x, dims, /*keepdim=*/true); break;
          case TileOpcode::kReduceMax: r = at::amax(x, dims, true); break;
          case TileOpcode::kReduceMin: r = at::amin(x, dims, true); break;
          case TileOpcode::kReduceProd:
            r = x;
            for (const std::int64_t k : dims) r = at::prod(r, k, true);
            break;
          case TileOpcode::kArgMax:
          case TileOpcode::kArgMin:
            NPU_CHECK(dims.size() == 1, "ATen executor: argmax/argmin over one axis");
            r = in.op == TileOpcode::kArgMax ? at::argmax(x, dims[0], true)
                                             : at::argmin(x, dims[0], true);
            break;
          default: fail(i, info->name, "not a reduction opcode");
        }
        loc[d] = r.to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kScan: {
        const at::Tensor& x = tile(in.src[0], info->name);
        const std::vector<std::int64_t> dims = mask_dims(in.reduce_mask, x.dim());
        NPU_CHECK(dims.size() == 1, "ATen executor: a scan runs along one axis");
        const at::Tensor r =
            in.op == TileOpcode::kCumSum ? at::cumsum(x, dims[0]) : at::cumprod(x, dims[0]);
        loc[d] = r.to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kTriangle: {
        const at::Tensor& x = tile(in.src[0], info->name);
        const auto diag = static_cast<std::int64_t>(in.scalar[1]);
        loc[d] = (in.op == TileOpcode::kTriu ? at::triu(x, diag) : at::tril(x, diag))
                     .to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kMatmul: {
        const at::Tensor& a = tile(in.src[0], "matmul");
        const at::Tensor& b = tile(in.src[1], "matmul");
        const at::ScalarType acc = a.is_floating_point() ? at::kFloat : at::kLong;
        at::Tensor r = at::matmul(a.to(acc), b.to(acc));
        if (in.accumulate != 0) r = r + tile(in.dst, "an accumulating matmul").to(acc);
        loc[d] = r.to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kGather: {
        // dst[c] <- src0[c with axis a replaced by src1[c]]; src0 is a window at least dst's
        // extent off the axis.
        const at::Tensor& x = tile(in.src[0], info->name);
        const at::Tensor idx = tile(in.src[1], info->name).to(at::kLong);
        const std::int64_t a = one_axis(i, info->name, in.reduce_mask, x.dim());
        at::Tensor xw = x;
        for (std::int64_t k = 0; k < x.dim(); ++k) {
          if (k != a && xw.size(k) != idx.size(k)) xw = xw.narrow(k, 0, idx.size(k));
        }
        check_index(i, info->name, idx, x.size(a), "gather");
        loc[d] = at::gather(xw, a, idx).to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kScatter: {
        // dst <- src0, then dst[c with axis a replaced by src1[c]] (op)= src2[c] in row-major
        // order of src1 (with duplicates the order decides: the last set wins, sums round
        // in order). Two elements collide only within one line along the axis, and ATen's
        // CPU kernel walks each line in order; elsewhere one ATen op per position along the
        // axis keeps that order (positions within one op never collide).
        if (in.accumulate > 2) {
          fail(i, info->name, "accumulate " + std::to_string(int(in.accumulate)) + " is no mode");
        }
        at::Tensor out = tile(in.src[0], info->name).to(opts(d), false, /*copy=*/true);
        const at::Tensor idx = tile(in.src[1], info->name).to(at::kLong);
        const std::int64_t a = one_axis(i, info->name, in.reduce_mask, out.dim());
        check_index(i, info->name, idx, out.size(a), "scatter");
        const bool scalar_src = (in.scalar_operand & 4) != 0;
        const at::Tensor src =
            scalar_src
                ? at::full(idx.sizes(), host_round(in.scalar[2], out.scalar_type()), out.options())
                : tile(in.src[2], info->name).to(out.scalar_type());
        auto apply = [&](const at::Tensor& ix, const at::Tensor& v) {
          if (in.accumulate == 0) {
            out.scatter_(a, ix, v);
          } else if (in.accumulate == 1) {
            out.scatter_add_(a, ix, v);
          } else {
            out.scatter_reduce_(a, ix, v, "prod", /*include_self=*/true);
          }
        };
        if (on_cpu || (scalar_src && in.accumulate == 0)) {
          apply(idx, src.narrow(a, 0, idx.size(a)));
        } else {
          for (std::int64_t k = 0; k < idx.size(a); ++k) {
            apply(idx.narrow(a, k, 1), src.narrow(a, k, 1));
          }
        }
        loc[d] = out;
        break;
      }
      case TileExec::kGatherElems: {
        // dst element j <- element src1[j] of the region (row-major numbering).
        const at::Tensor v = m.view(in.region).reshape({-1});
        const at::Tensor idx = tile(in.src[1], info->name).reshape({-1}).to(at::kLong);
        std::int64_t n = 1;
        for (const std::int64_t e : shape(d)) n *= e;
        NPU_CHECK(idx.numel() == n, "ATen executor: gather_elems has " +
                                        std::to_string(idx.numel()) +
                                        " element numbers for its dst");
        check_index(i, info->name, idx, v.numel(), "load element");
        loc[d] = v.index_select(0, idx).reshape(shape(d)).to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kScatterRows: {
        // Row src1[j] of the region (rows: its leading axes in row-major order) <- row j of
        // src0; with repeated row numbers the last row written wins.
        const GlobalRegion& reg = in.region;
        NPU_CHECK(reg.rank >= 1, "ATen executor: scatter_rows needs a region of rank 1 or more");
        at::Tensor v = m.view(reg);
        const at::Tensor& s = tile(in.src[0], info->name);
        const std::int64_t cols = reg.shape[reg.rank - 1];
        if (cols == 0 || s.numel() == 0) break;
        NPU_CHECK(s.size(s.dim() - 1) == cols,
                  "ATen executor: scatter_rows source rows differ from the region's");
        const std::int64_t nrows = s.numel() / cols;
        const std::int64_t total = v.numel() / cols;
        at::Tensor rows = tile(in.src[1], info->name).reshape({-1}).to(at::kLong);
        NPU_CHECK(rows.numel() == nrows, "ATen executor: scatter_rows has " +
                                             std::to_string(rows.numel()) + " row numbers for " +
                                             std::to_string(nrows) + " rows");
        check_index(i, info->name, rows, total, "scatter_update row");
        at::Tensor vals = s.reshape({nrows, cols}).to(v.scalar_type());
        if (nrows > 1) {
          const auto sorted = at::sort(rows, /*stable=*/true, 0, false);
          const at::Tensor& sr = std::get<0>(sorted);
          const at::Tensor repeat = sr.narrow(0, 1, nrows - 1).eq(sr.narrow(0, 0, nrows - 1));
          if (repeat.any().item<bool>()) {
            // Keep the last of each run of equal row numbers (stable: the latest source row).
            const at::Tensor last =
                at::cat({repeat.logical_not(), at::ones({1}, repeat.options())});
            const at::Tensor keep = std::get<1>(sorted).masked_select(last);
            rows = rows.index_select(0, keep);
            vals = vals.index_select(0, keep);
          }
        }
        c10::List<c10::optional<at::Tensor>> coords;
        std::vector<at::Tensor> per_axis(reg.rank - 1);
        at::Tensor rest = rows;
        for (int k = reg.rank - 2; k >= 0; --k) {
          per_axis[k] = rest.remainder(reg.shape[k]);
          rest = rest.div(reg.shape[k], "floor");
        }
        for (const at::Tensor& c : per_axis) coords.push_back(c);
        if (reg.rank == 1) {
          v.copy_(vals.select(0, vals.size(0) - 1));
        } else {
          v.index_put_(coords, vals);
        }
        break;
      }
      case TileExec::kSort: {
        // Stable sort along the axis, NaN the largest (torch.sort(stable=True)); dst keeps
        // the first dst.shape[axis] entries. fp16/bf16 sort as fp32 (exact, same order).
        const at::Tensor& x = tile(in.src[0], info->name);
        const std::int64_t a = one_axis(i, info->name, in.reduce_mask, x.dim());
        const bool descending = in.scalar[1] != 0;
        const at::Tensor xs =
            x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16 ? x.to(at::kFloat) : x;
        const auto sorted = at::sort(xs, /*stable=*/true, a, descending);
        const std::int64_t k = shape(d)[static_cast<std::size_t>(a)];
        const at::Tensor& r =
            in.op == TileOpcode::kSortIndices ? std::get<1>(sorted) : std::get<0>(sorted);
        if (in.op == TileOpcode::kSortIndices && is_float(dt)) {
          fail(i, info->name, "dst must have an integer dtype");
        }
        loc[d] = r.narrow(a, 0, k).to(opts(d), false, /*copy=*/true).contiguous();
        break;
      }
    }
  }
}

}  // namespace pypto::exec
