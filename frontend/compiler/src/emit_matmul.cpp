// SPDX-License-Identifier: Apache-2.0
// The matmul family: AIC tasks per (batch, M tile, N tile) of the output, each looping over K
// tiles of the cube_tile with an accumulating matmul instruction.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

// 2-D region over axes (row_axis, col_axis) of `base`, rows x cols elements from `offset`.
GlobalRegion region_2d(const GlobalRegion& base, std::int64_t rows, std::int64_t cols, int row_axis,
                       int col_axis, std::int64_t offset) {
  GlobalRegion r = base;
  r.rank = 2;
  r.shape[0] = rows;
  r.shape[1] = cols;
  r.stride[0] = base.stride[row_axis];
  r.stride[1] = base.stride[col_axis];
  r.offset_elems = offset;
  return r;
}

// Rank-2 view of the last two axes of a region whose other axes have extent 1 here.
GlobalRegion last_two_axes(const GlobalRegion& reg, int R) {
  GlobalRegion r2 = reg;
  r2.rank = 2;
  r2.shape[0] = reg.shape[R - 2];
  r2.shape[1] = reg.shape[R - 1];
  r2.stride[0] = reg.stride[R - 2];
  r2.stride[1] = reg.stride[R - 1];
  for (int k = 2; k < kMaxRank; ++k) {
    r2.shape[k] = 1;
    r2.stride[k] = 0;
  }
  return r2;
}

std::string kib(std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes / 1024) + " KiB)";
}

std::uint64_t ceil_align(std::int64_t v, std::int64_t a) {
  return static_cast<std::uint64_t>(ceil_div(v, a) * a);
}

}  // namespace

void EmitContext::check_cube_tile(const Unit& u, const Stmt& st, DType ad, DType acc_d,
                                  std::int64_t M, std::int64_t K, std::int64_t N) const {
  // PyPTO's rules for set_cube_tile_shapes (docs/zh/api/config/pypto-set_cube_tile_shapes.md),
  // checked where the operand dtype is known, as PyPTO's matmul checks them.
  const CubeTile& c = st.cube;
  const std::string where =
      u.loc + ": matmul: the cube tile m=[" + std::to_string(c.m[0]) + ", " +
      std::to_string(c.m[1]) + "], k=[" + std::to_string(c.k[0]) + ", " + std::to_string(c.k[1]) +
      (c.k[2] != c.k[1] ? ", " + std::to_string(c.k[2]) : std::string()) + "], n=[" +
      std::to_string(c.n[0]) + ", " + std::to_string(c.n[1]) + "] breaks PyPTO's rule ";
  const std::string fix = "; choose other pypto.set_cube_tile_shapes";
  // 1. L1/L0 relation: each L1 tile is a multiple of its L0 tile, at least as large.
  struct Pair {
    const char* l0;
    const char* l1;
    std::int64_t v0, v1;
  };
  const Pair pairs[] = {{"mL0", "mL1", c.m[0], c.m[1]},
                        {"kL0", "kL1", c.k[0], c.k[1]},
                        {"kL0", "kL1 (of b)", c.k[0], c.k[2]},
                        {"nL0", "nL1", c.n[0], c.n[1]}};
  for (const Pair& p : pairs) {
    if (p.v0 <= p.v1 && p.v1 % p.v0 == 0) continue;
    throw ConfigError(where + p.l0 + " <= " + p.l1 + " and " + p.l1 + " % " + p.l0 +
                      " == 0: " + p.l0 + " = " + std::to_string(p.v0) + ", " + p.l1 + " = " +
                      std::to_string(p.v1) + fix);
  }
  // 2. Alignment: kL0 and nL0 (so their L1 multiples too) 32-byte aligned; mL0 too where a is
  // read transposed. fp32 needs 8 elements, not the 16 PyPTO's page asks: its own tiling
  // example runs k=[8, 64] on fp32 operands.
  const std::int64_t eb = model::dtype_bytes(ad);
  const std::int64_t align_elems = std::max<std::int64_t>(1, 32 / eb);
  struct Align {
    const char* name;
    std::int64_t v, elems;
    bool on;
  };
  const Align aligns[] = {{"kL0", c.k[0], align_elems, true},
                          {"nL0", c.n[0], align_elems, true},
                          {"mL0", c.m[0], std::max<std::int64_t>(1, 32 / eb), st.a_trans}};
  for (const Align& al : aligns) {
    if (!al.on || al.v % al.elems == 0) continue;
    throw ConfigError(where + al.name + " x sizeof(" + std::string(model::to_string(ad)) +
                      ") % 32 == 0 and " + al.name + " % " + std::to_string(al.elems) + " == 0 (" +
                      (al.on && al.name[0] == 'm' ? "a read transposed; " : "") +
                      "32-byte aligned): " + al.name + " = " + std::to_string(al.v) + " " +
                      std::string(model::to_string(ad)) +
                      " elements = " + std::to_string(al.v * eb) + " bytes" + fix);
  }
  // 3. Space: each tile, its sizes rounded up to 16 (32 for 8-bit operands), fits its buffer.
  // A tile larger than its operand holds only the operand (PyPTO's flash attention sets
  // m=[128, 512], k=[256, 512] for a 320 x 320 operand).
  const std::int64_t ra = eb == 1 ? 32 : 16;
  const std::int64_t m_l0 = std::min(c.m[0], M), k_l0 = std::min(c.k[0], K);
  const std::int64_t n_l0 = std::min(c.n[0], N), m_l1 = std::min(c.m[1], M);
  const std::int64_t ka_l1 = std::min(c.k[1], K), kb_l1 = std::min(c.k[2], K);
  const std::int64_t n_l1 = std::min(c.n[1], N);
  const std::uint64_t ab = model::dtype_bytes(acc_d);
  const std::string rs = std::to_string(ra);
  const std::string an = "sizeof(" + std::string(model::to_string(ad)) + ")";
  const auto dim = [&](const char* n, std::int64_t v) {
    return "CeilAlign(" + std::string(n) + " = " + std::to_string(v) + ", " + rs + ")";
  };
  const auto mul = [](std::uint64_t a, std::uint64_t b, std::uint64_t e) {
    return std::to_string(a) + " x " + std::to_string(b) + " x " + std::to_string(e);
  };
  const std::uint64_t m0 = ceil_align(m_l0, ra), k0 = ceil_align(k_l0, ra);
  const std::uint64_t n0 = ceil_align(n_l0, ra), m1 = ceil_align(m_l1, ra);
  const std::uint64_t k1a = ceil_align(ka_l1, ra), k1b = ceil_align(kb_l1, ra);
  const std::uint64_t n1 = ceil_align(n_l1, ra);
  const BufferNeed needs[] = {
      {"L0A", "cores.l0a_kib", chip_.cores.l0a_kib, m0 * k0 * eb,
       dim("mL0", m_l0) + " x " + dim("kL0", k_l0) + " x " + an, mul(m0, k0, eb)},
      {"L0B", "cores.l0b_kib", chip_.cores.l0b_kib, n0 * k0 * eb,
       dim("nL0", n_l0) + " x " + dim("kL0", k_l0) + " x " + an, mul(n0, k0, eb)},
      {"L0C", "cores.l0c_kib", chip_.cores.l0c_kib, m0 * n0 * ab,
       dim("mL0", m_l0) + " x " + dim("nL0", n_l0) + " x sizeof(" +
           std::string(model::to_string(acc_d)) + ")",
       mul(m0, n0, ab)},
      {"L1", "cores.l1_kib", chip_.cores.l1_kib, (m1 * k1a + n1 * k1b) * eb,
       dim("mL1", m_l1) + " x " + dim("kL1", ka_l1) + " x " + an + " + " + dim("nL1", n_l1) +
           " x " + dim("kL1", kb_l1) + " x " + an,
       mul(m1, k1a, eb) + " + " + mul(n1, k1b, eb)},
  };
  check_buffer_needs(std::begin(needs), std::end(needs), where, fix);
}

void EmitContext::check_buffer_needs(const BufferNeed* begin, const BufferNeed* end,
                                     const std::string& where, const std::string& fix) const {
  for (const BufferNeed* n = begin; n != end; ++n) {
    const std::uint64_t cap = std::uint64_t{n->kib} * 1024;
    if (n->bytes <= cap) continue;
    throw ConfigError(where + n->rule + " <= " + n->buffer + " size: " + n->values + " = " +
                      kib(n->bytes) + ", " + n->buffer + " holds " + kib(cap) + " (" + n->key +
                      " of chip " + chip_.chip.name + ")" + fix);
  }
}

namespace {

// scale as the fixpipe uses it: sign, 8 exponent and the top 10 mantissa bits of its fp32.
double dequant_scale(double s) {
  float f = static_cast<float>(s);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits &= ~((1u << 13) - 1);
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

int EmitContext::matmul_epilogue(TaskBuilder& tb, const Unit& u, const Stmt& st, int lacc,
                                 std::int64_t mE, std::int64_t nE, std::int64_t n0) {
  const std::int64_t shape[2] = {mE, nE};
  // A [1, N] operand of the epilogue, broadcast over the tile's rows. `as_fp32_bits`: the
  // low 32 bits of each int64 element, read as an fp32 (the scale tensor's encoding).
  const auto row_operand = [&](int input, bool as_fp32_bits) {
    const int vi = st.inputs[static_cast<std::size_t>(input)].value;
    const RtVal& v = vals_[vi];
    NPU_CHECK(v.has_region, "matmul epilogue operand without storage");
    if (v.shape[0] != 1 || v.shape[1] < n0 + nE) {
      throw ConfigError(u.loc + ": matmul: " + value_name(vi) + " must have shape [1, N]");
    }
    GlobalRegion r = v.region;
    r.rank = 2;
    r.shape[0] = mE;
    r.stride[0] = 0;
    r.shape[1] = clamp0(std::min(nE, v.valid[1] - n0));
    r.offset_elems += n0 * v.region.stride[1];
    DType d = k_.values[vi].dtype;
    if (as_fp32_bits) {
      if (d != DType::kInt64) {
        throw ConfigError(u.loc +
                          ": matmul: scale_tensor must hold 64-bit elements (DT_INT64 "
                          "here; DT_UINT64 on the NPU), got " +
                          std::string(model::to_string(d)));
      }
      r.dtype = d = DType::kFp32;
      r.offset_elems *= 2;
      r.stride[1] *= 2;
    }
    const int l = tb.local(d, 2, shape);
    load(tb, l, r, v.storage, named(vi), u.loc);
    // A broadcast row is read once, not once per tile row.
    if (!region_empty(r)) tb.acc.back().r.shape[0] = 1;
    return l;
  };
  const auto op2 = [&](TileOpcode op, int dst, int a, int b) {
    TileInstr in;
    in.op = op;
    in.dst = dst;
    in.src[0] = a;
    in.src[1] = b;
    tb.p.instrs.push_back(in);
  };
  int l = lacc;
  if (st.bias_input >= 0) op2(TileOpcode::kAdd, l, l, row_operand(st.bias_input, false));
  if (st.relu) {
    TileInstr in;
    in.op = TileOpcode::kRelu;
    in.dst = in.src[0] = l;
    tb.p.instrs.push_back(in);
  }
  if (st.scale != 0 || st.scale_tensor_input >= 0) {
    // Dequantization (or quantization, before the cast to int8) in fp32.
    if (tb.p.locals[l].dtype != DType::kFp32) {
      const int lf = tb.local(DType::kFp32, 2, shape);
      TileInstr c;
      c.op = TileOpcode::kCast;
      c.dst = lf;
      c.src[0] = l;
      tb.p.instrs.push_back(c);
      l = lf;
    }
    if (st.scale_tensor_input >= 0) {
      const int ls = row_operand(st.scale_tensor_input, true);
      TileInstr t;
      t.op = TileOpcode::kTf32;
      t.dst = t.src[0] = ls;
      tb.p.instrs.push_back(t);
      op2(TileOpcode::kMul, l, l, ls);
    } else {
      TileInstr in;
      in.op = TileOpcode::kMul;
      in.dst = in.src[0] = l;
      in.scalar_operand = 2;
      in.scalar[1] = dequant_scale(st.scale);
      tb.p.instrs.push_back(in);
    }
  }
  return l;
}

void EmitContext::emit_matmul(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int ai = st.inputs[0].value, bi = st.inputs[1].value;
  const RtVal& a = vals_[ai];
  const RtVal& b = vals_[bi];
  NPU_CHECK(a.has_region && b.has_region, "matmul operand without storage");
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int R = y.rank, nb = R - 2;
  // Axes of M and K in a, K and N in b.
  const int am = st.a_trans ? R - 1 : R - 2, ak = st.a_trans ? R - 2 : R - 1;
  const int bk = st.b_trans ? R - 1 : R - 2, bn = st.b_trans ? R - 2 : R - 1;
  const std::int64_t M = a.shape[am], K = a.shape[ak], N = b.shape[bn];
  if (b.shape[bk] != K || y.shape[R - 2] != M || y.shape[R - 1] != N) {
    throw ConfigError(u.loc + ": matmul sizes disagree: a gives M=" + std::to_string(M) +
                      " K=" + std::to_string(K) + ", b gives K=" + std::to_string(b.shape[bk]) +
                      " N=" + std::to_string(N) + ", the output is " +
                      std::to_string(y.shape[R - 2]) + "x" + std::to_string(y.shape[R - 1]));
  }
  for (int k = 0; k < nb; ++k) {
    const bool ok = (a.shape[k] == 1 || a.shape[k] == y.shape[k]) &&
                    (b.shape[k] == 1 || b.shape[k] == y.shape[k]);
    if (!ok) {
      throw ConfigError(u.loc + ": matmul batch axis " + std::to_string(k) + " has sizes " +
                        std::to_string(a.shape[k]) + " and " + std::to_string(b.shape[k]) +
                        " for an output of " + std::to_string(y.shape[k]));
    }
  }
  const std::int64_t tm = st.cube.m[1], tn = st.cube.n[1], tk = st.cube.k[1];
  const DType ad = k_.values[ai].dtype;
  const DType acc_d = cube_acc_dtype(ad);
  if (st.conv.c0 > 0) {
    check_conv_tile(u, st, ad);
  } else {
    check_cube_tile(u, st, ad, acc_d, M, K, N);
  }
  const DType yd = k_.values[st.out].dtype;
  // Elements past a valid extent are padding: they would contribute zeros, so the K loop
  // stops at the valid depth of both operands.
  const std::int64_t Kv = std::min({K, a.valid[ak], b.valid[bk]});
  const std::int64_t ksteps = Kv > 0 ? ceil_div(Kv, tk) : 0;
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  // Grid: batch axes (tile 1), then M and N tiles.
  std::int64_t grid[kMaxRank], T[kMaxRank];
  for (int k = 0; k < nb; ++k) {
    grid[k] = y.shape[k];
    T[k] = 1;
  }
  // PyPTO's tile order (ConstructTileGraph): N tiles outer, M tiles inner, so the partition
  // sees the output tiles that share a B panel one after another.
  grid[R - 2] = N;
  grid[R - 1] = M;
  T[R - 2] = tn;
  T[R - 1] = tm;
  for_each_tile(R, grid, T, [&](const std::int64_t* off_nm, const std::int64_t* len_nm) {
    std::int64_t off[kMaxRank], len[kMaxRank];
    std::copy(off_nm, off_nm + R, off);
    std::copy(len_nm, len_nm + R, len);
    std::swap(off[R - 2], off[R - 1]);
    std::swap(len[R - 2], len[R - 1]);
    const std::int64_t m0 = off[R - 2], n0 = off[R - 1];
    std::int64_t ext[kMaxRank];
    for (int k = 0; k < nb; ++k) ext[k] = std::min<std::int64_t>(1, y.valid[k] - off[k]);
    ext[R - 2] = std::min(len[R - 2], y.valid[R - 2] - m0);
    ext[R - 1] = std::min(len[R - 1], y.valid[R - 1] - n0);
    for (int k = 0; k < R; ++k) {
      if (ext[k] <= 0) return;
    }
    const std::int64_t mE = ext[R - 2], nE = ext[R - 1];
    TaskBuilder& tb = new_task();
    // Batch offsets of the operands (broadcast where their batch size is 1).
    std::int64_t a_off = a.region.offset_elems, b_off = b.region.offset_elems;
    for (int k = 0; k < nb; ++k) {
      if (a.shape[k] != 1) a_off += off[k] * a.region.stride[k];
      if (b.shape[k] != 1) b_off += off[k] * b.region.stride[k];
    }
    const std::int64_t a_rows = clamp0(std::min(mE, a.valid[am] - m0));
    const std::int64_t b_cols = clamp0(std::min(nE, b.valid[bn] - n0));
    const std::int64_t acc_shape[2] = {mE, nE};
    const int lacc = tb.local(acc_d, 2, acc_shape);
    int la_full = -1, lb_full = -1, la_tail = -1, lb_tail = -1;
    if (ksteps == 0) {
      TileInstr f;
      f.op = TileOpcode::kFill;
      f.dst = lacc;
      f.scalar_operand = 1;
      tb.p.instrs.push_back(f);
    }
    for (std::int64_t s = 0; s < ksteps; ++s) {
      const std::int64_t k0 = s * tk, kL = std::min(tk, Kv - k0);
      const std::int64_t ash[2] = {mE, kL}, bsh[2] = {kL, nE};
      int& la = kL == tk ? la_full : la_tail;
      int& lb = kL == tk ? lb_full : lb_tail;
      if (la < 0) la = tb.local(ad, 2, ash);
      if (lb < 0) lb = tb.local(ad, 2, bsh);
      const GlobalRegion ra =
          region_2d(a.region, a_rows, kL, am, ak,
                    a_off + m0 * a.region.stride[am] + k0 * a.region.stride[ak]);
      load(tb, la, ra, a.storage, named(ai), u.loc);
      const GlobalRegion rb =
          region_2d(b.region, kL, b_cols, bk, bn,
                    b_off + k0 * b.region.stride[bk] + n0 * b.region.stride[bn]);
      load(tb, lb, rb, b.storage, named(bi), u.loc);
      if (st.trans_mode != 0) {
        // trans_mode: fp32 operands enter the cube as TF32.
        for (const int l : {la, lb}) {
          TileInstr t;
          t.op = TileOpcode::kTf32;
          t.dst = l;
          t.src[0] = l;
          t.scalar[1] = st.trans_mode;
          tb.p.instrs.push_back(t);
        }
      }
      TileInstr mm;
      mm.op = TileOpcode::kMatmul;
      mm.dst = lacc;
      mm.src[0] = la;
      mm.src[1] = lb;
      mm.accumulate = s > 0 ? 1 : 0;
      tb.p.instrs.push_back(mm);
    }
    // extend_params (bias, relu, (de)quant scale) on the accumulator, then the final cast. The
    // epilogue's loads are kept apart: the K loads are replaced by whole panels below.
    const std::size_t acc_before = tb.acc.size();
    int lout = matmul_epilogue(tb, u, st, lacc, mE, nE, n0);
    std::vector<Access> epilogue_acc(tb.acc.begin() + static_cast<std::ptrdiff_t>(acc_before),
                                     tb.acc.end());
    if (yd != tb.p.locals[lout].dtype) {
      const int lc = tb.local(yd, 2, acc_shape);
      TileInstr c;
      c.op = TileOpcode::kCast;
      c.dst = lc;
      c.src[0] = lout;
      if (yd == DType::kInt8 && (st.scale != 0 || st.scale_tensor_input >= 0)) {
        c.cast_mode = kCubeQuantCast.mode;
        c.saturate = kCubeQuantCast.saturate ? 1 : 0;
      }
      tb.p.instrs.push_back(c);
      lout = lc;
    }
    // Dependencies and traffic: whole K panels instead of one range per K step (the loads
    // are all the task has recorded so far).
    tb.acc.clear();
    if (ksteps > 0) {
      const GlobalRegion pa =
          region_2d(a.region, a_rows, Kv, am, ak, a_off + m0 * a.region.stride[am]);
      const GlobalRegion pb =
          region_2d(b.region, Kv, b_cols, bk, bn, b_off + n0 * b.region.stride[bn]);
      // The cube loads a K step's rows of A (tk elements) and B (the tile's columns) each as a
      // burst of its own, but rows within the chip's merge range that lie back to back (the
      // step spans whole rows) go as one burst (0).
      const auto burst = [&](const GlobalRegion& reg, std::int64_t elems, DType d) {
        const auto bytes = static_cast<std::uint64_t>(elems) * model::dtype_bytes(d);
        const auto& cost = chip_.cost;
        if (bytes >= cost.cube_row_merge_min_bytes && bytes <= cost.cube_row_merge_max_bytes &&
            reg.stride[1] == 1 && reg.stride[0] == elems) {
          return std::uint32_t{0};
        }
        return static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, sched::kMaxBurstBytes));
      };
      // An operand read from an NZ parameter moves in the fractal layout's runs.
      const auto panel = [&](const GlobalRegion& reg, std::uint8_t operand, std::uint32_t bb,
                             const RtVal& x) {
        Access acc{reg, false, true, operand, bb, x.storage.no_l2};
        if (x.storage.nz && x.storage.value >= 0 && vals_[x.storage.value].rank >= 2) {
          const RtVal& p = vals_[x.storage.value];
          acc.nz_rows = p.shape[p.rank - 2];
          acc.nz_cols = p.shape[p.rank - 1];
        }
        tb.acc.push_back(acc);
      };
      if (!region_empty(pa)) panel(pa, 1, burst(pa, tk, ad), a);
      if (!region_empty(pb)) panel(pb, 2, burst(pb, b_cols, ad), b);
    }
    tb.acc.insert(tb.acc.end(), epilogue_acc.begin(), epilogue_acc.end());
    if (need_out) {
      store(tb, lout, last_two_axes(sub_region(y, off, ext, R), R), y.storage, named(st.out),
            u.loc);
    }
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      GlobalRegion reg;
      if (!write_region(w, woffs[wi].data(), off, ext, &reg)) continue;
      store(tb, lout, last_two_axes(reg, R), vals_[w.dst].storage, named(w.dst), w.loc);
    }
    // The FixPipe writes the result's rows one by one.
    for (Access& x : tb.acc) {
      if (!x.write || x.r.rank == 0 || x.r.stride[x.r.rank - 1] != 1) continue;
      x.burst_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(
          static_cast<std::uint64_t>(x.r.shape[x.r.rank - 1]) * model::dtype_bytes(x.r.dtype),
          sched::kMaxBurstBytes));
    }
    const bool full = mE == tm && nE == tn && Kv == K && K % tk == 0;
    const auto tiles = static_cast<std::uint16_t>(
        std::min<std::int64_t>(std::max<std::int64_t>(ksteps, 1), 0xFFFF));
    commit(tb, u, common::CoreType::kAic, full, tiles);
  });
}

}  // namespace pypto::compiler::detail
