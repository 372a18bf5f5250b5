// SPDX-License-Identifier: Apache-2.0
// Each instruction of a task program as one ATen op (see aten_exec.h). Local tiles are ATen
// tensors of their dtype on the buffers' device; loads and stores are copies between them
// and strided views (as_strided over from_blob) of the launch's buffers, which ATen checks
// against the buffer's extent.
#include "pypto/exec/aten_exec.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
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
  }
  return at::kFloat;
}

bool is_float(DType d) { return d == DType::kFp32 || d == DType::kFp16 || d == DType::kBf16; }

// The instructions this executor runs; the rest (indexed ops, TF32 rounding, cbrt, decimal
// rounding and the rounding modes of casts between floating types) stay with the tile
// executor for now.
bool implemented(const TileInstr& in, const TaskProgram& p) {
  const TileOpInfo* info = find_tile_op(in.op);
  if (info == nullptr) return false;
  switch (info->exec) {
    case TileExec::kLoad:
    case TileExec::kStore:
    case TileExec::kFill:
    case TileExec::kCopy:
    case TileExec::kPermute:
    case TileExec::kBinary:
    case TileExec::kWhere:
    case TileExec::kReduce:
    case TileExec::kMatmul:
    case TileExec::kTriangle:
    case TileExec::kScan: return true;
    case TileExec::kCast: {
      if (in.saturate != 0) return false;
      if (in.cast_mode == CastMode::kNone) return true;
      const bool to_int = in.dst >= 0 && static_cast<std::size_t>(in.dst) < p.locals.size() &&
                          !is_float(p.locals[in.dst].dtype);
      return to_int && (in.cast_mode == CastMode::kRint || in.cast_mode == CastMode::kFloor ||
                        in.cast_mode == CastMode::kCeil || in.cast_mode == CastMode::kTrunc);
    }
    case TileExec::kUnary:
      return in.op != TileOpcode::kRound && in.op != TileOpcode::kTf32 &&
             in.op != TileOpcode::kCbrt;
    default: return false;
  }
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
        static_cast<std::int64_t>(mem.size_bytes[r.buffer] / sim::dtype_bytes(r.dtype));
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
  try {
    const at::Device d(device);
    if (d.is_cpu()) return true;
    if (d.is_cuda()) return at::hasCUDA();
    return false;
  } catch (const std::exception&) {
    return false;
  }
}

bool AtenExecutor::supports(const TaskProgram& p, std::string* why) {
  for (std::size_t i = 0; i < p.instrs.size(); ++i) {
    if (implemented(p.instrs[i], p)) continue;
    if (why != nullptr) {
      const TileOpInfo* info = find_tile_op(p.instrs[i].op);
      *why = "instruction " + std::to_string(i) + " (" +
             std::string(info != nullptr ? info->name : "?") +
             ") is not implemented by the ATen executor (it runs loads, stores, fills, copies, "
             "permutes, casts without saturation, element-wise ops, where, reductions, scans, "
             "triu/tril and matmul)";
    }
    return false;
  }
  return true;
}

void AtenExecutor::execute(const TaskProgram& p) const {
  const c10::InferenceMode no_autograd;
  const Impl& m = *impl_;
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
  for (std::size_t i = 0; i < p.instrs.size(); ++i) {
    const TileInstr& in = p.instrs[i];
    const TileOpInfo* info = find_tile_op(in.op);
    NPU_CHECK(info != nullptr && implemented(in, p),
              "ATen executor: instruction " + std::to_string(i) + " is not implemented");
    const auto d = static_cast<std::size_t>(in.dst);
    NPU_CHECK(in.op == TileOpcode::kStore || (in.dst >= 0 && d < loc.size()),
              "ATen executor: instruction " + std::to_string(i) + " has no destination tile");
    // A scalar operand takes the dtype of the tile it combines with (the other operand, or
    // dst when none), as the tile executor and torch's Python scalars do.
    auto operand = [&](int k, const at::Tensor* other) {
      if (((in.scalar_operand >> k) & 1) == 0) return tile(in.src[k], info->name);
      return at::scalar_tensor(in.scalar[k], other != nullptr ? other->options() : opts(d));
    };
    switch (info->exec) {
      case TileExec::kLoad: {
        const at::Tensor v = m.view(in.region);
        if (v.sizes() == at::IntArrayRef(shape(d))) {
          loc[d] = v.to(scalar_type(p.locals[d].dtype), /*non_blocking=*/false, /*copy=*/true);
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
      case TileExec::kFill: loc[d] = at::full(shape(d), in.scalar[0], opts(d)); break;
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
        at::Tensor s = tile(in.src[0], "cast");
        switch (in.cast_mode) {
          case CastMode::kRint: s = at::round(s); break;
          case CastMode::kFloor: s = at::floor(s); break;
          case CastMode::kCeil: s = at::ceil(s); break;
          case CastMode::kTrunc: s = at::trunc(s); break;
          default: break;
        }
        loc[d] = s.to(scalar_type(p.locals[d].dtype), false, /*copy=*/true);
        break;
      }
      case TileExec::kBinary: {
        const bool sa = (in.scalar_operand & 1) != 0, sb = (in.scalar_operand & 2) != 0;
        at::Tensor a, b;
        if (!sa) a = tile(in.src[0], info->name);
        if (!sb) b = tile(in.src[1], info->name);
        if (sa) a = operand(0, sb ? nullptr : &b);
        if (sb) b = operand(1, sa ? nullptr : &a);
        at::Tensor r;
        switch (in.op) {
          case TileOpcode::kAdd: r = at::add(a, b); break;
          case TileOpcode::kSub: r = at::sub(a, b); break;
          case TileOpcode::kMul: r = at::mul(a, b); break;
          case TileOpcode::kDiv:
            r = (!is_float(p.locals[d].dtype) && !a.is_floating_point() && !b.is_floating_point())
                    ? at::div(a, b, "trunc")
                    : at::div(a, b);
            break;
          case TileOpcode::kMaximum: r = at::maximum(a, b); break;
          case TileOpcode::kMinimum: r = at::minimum(a, b); break;
          case TileOpcode::kRemainder: r = at::remainder(a, b); break;
          case TileOpcode::kPow: r = at::pow(a, b); break;
          case TileOpcode::kEq: r = at::eq(a, b); break;
          case TileOpcode::kNe: r = at::ne(a, b); break;
          case TileOpcode::kLt: r = at::lt(a, b); break;
          case TileOpcode::kLe: r = at::le(a, b); break;
          case TileOpcode::kGt: r = at::gt(a, b); break;
          case TileOpcode::kGe: r = at::ge(a, b); break;
          case TileOpcode::kLogicalAnd: r = at::logical_and(a, b); break;
          case TileOpcode::kLogicalOr: r = at::logical_or(a, b); break;
          default: NPU_CHECK(false, std::string("ATen executor: binary op ") + info->name);
        }
        loc[d] = r.expand(shape(d)).to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kUnary: {
        const at::Tensor& x = tile(in.src[0], info->name);
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
          case TileOpcode::kSign: r = at::sign(x); break;
          case TileOpcode::kErf: r = at::erf(x); break;
          case TileOpcode::kErfc: r = at::erfc(x); break;
          case TileOpcode::kSin: r = at::sin(x); break;
          case TileOpcode::kCos: r = at::cos(x); break;
          case TileOpcode::kLog1p: r = at::log1p(x); break;
          case TileOpcode::kExpm1: r = at::expm1(x); break;
          case TileOpcode::kLrelu: r = at::leaky_relu(x, in.scalar[1]); break;
          case TileOpcode::kLogicalNot: r = at::logical_not(x); break;
          case TileOpcode::kExp2: r = at::exp2(x); break;
          case TileOpcode::kLog2: r = at::log2(x); break;
          case TileOpcode::kLog10: r = at::log10(x); break;
          case TileOpcode::kCosh: r = at::cosh(x); break;
          case TileOpcode::kSinh: r = at::sinh(x); break;
          default: NPU_CHECK(false, std::string("ATen executor: unary op ") + info->name);
        }
        loc[d] = r.to(opts(d), false, /*copy=*/true);
        break;
      }
      case TileExec::kWhere: {
        const at::Tensor c = tile(in.src[0], "where").to(at::kBool);
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
          default: NPU_CHECK(false, std::string("ATen executor: reduction ") + info->name);
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
      default: NPU_CHECK(false, std::string("ATen executor: ") + info->name);
    }
  }
}

}  // namespace pypto::exec
