// SPDX-License-Identifier: Apache-2.0
// The reduction family (sum, amax, amin, prod, argmax, argmin) and the scans (cumsum, cumprod):
// one AIV task per tile of the kept axes. sum/amax/amin/prod cut the reduced axes too, as
// PyPTO's TileReduceNew does: chunks of the vec tile's size, combined pairwise by element-wise
// ops (a power-of-two tree, the chunks past it folded in level by level), then one in-tile
// reduction. argmax/argmin, the scans and the sorts load the whole valid extent of their axis.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

// PyPTO's limit on a reduction's tile (docs/zh/api/operation/pypto-sum.md and its siblings:
// the TileShape of sum/amax/amin/prod/argmax/argmin is at most 64 KB).
constexpr std::uint64_t kReduceTileBytes = 64 * 1024;

// The element-wise op combining two partial results of reduction `op` (PyPTO's TILE_PAIR*
// ops), or kNoTileOp for the reductions that keep the reduced axis whole.
TileOpcode pair_opcode(TileOpcode op) {
  switch (op) {
    case TileOpcode::kReduceSum: return TileOpcode::kAdd;
    case TileOpcode::kReduceMax: return TileOpcode::kMaximum;
    case TileOpcode::kReduceMin: return TileOpcode::kMinimum;
    case TileOpcode::kReduceProd: return TileOpcode::kMul;
    default: return kNoTileOp;
  }
}

// What pads the tail of a partial chunk: combining it with any value v gives v back, as
// PyPTO's pair ops pass the lanes a shorter operand lacks through.
double pair_identity(TileOpcode pair, DType d) {
  const bool is_float = d == DType::kFp32 || d == DType::kFp16 || d == DType::kBf16;
  const double inf = std::numeric_limits<double>::infinity();
  const auto int_max = [d]() -> double {
    switch (d) {
      case DType::kInt8: return 127;
      case DType::kUInt8: return 255;
      case DType::kInt16: return 32767;
      case DType::kInt32: return 2147483647;
      case DType::kBool: return 1;
      default: return 9223372036854774784.0;  // the largest double below 2^63
    }
  };
  switch (pair) {
    case TileOpcode::kAdd: return -0.0;  // -0 + v == v, also for v == -0
    case TileOpcode::kMul: return 1.0;
    case TileOpcode::kMaximum:
      return is_float ? -inf : (d == DType::kBool || d == DType::kUInt8) ? 0 : -int_max() - 1;
    default: return is_float ? inf : int_max();
  }
}

std::string dims_text(const std::int64_t* s, int r) {
  std::string out;
  for (int k = 0; k < r; ++k) out += (k ? "x" : "") + std::to_string(s[k]);
  return out;
}

}  // namespace

void EmitContext::emit_reduce(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value;
  const RtVal& x = vals_[xin];
  // A bf16 input with an fp32 copy that this reduction reads as fp32 loads that copy; a bf16
  // result some later op reads as fp32 keeps an fp32 copy too (ValueInfo::wide_uses).
  const bool x_wide = x.has_wide && reads_fp32(st, xin);
  NPU_CHECK(x_wide || x.has_region, "reduction input without storage");
  const GlobalRegion& xr = x_wide ? x.wide_region : x.region;
  vals_[st.out] = make_val(st.out);
  bool out_wide = false, need_out = false;
  if (k_.values[st.out].materialised) stored_forms(u, st.out, &out_wide, &need_out);
  if (need_out) give_dense_storage(st.out, vals_[st.out]);
  if (out_wide) give_wide_storage(st.out, vals_[st.out]);
  if (!need_out && !out_wide && u.writes.empty()) return;
  const RtVal& y = vals_[st.out];
  const int r = x.rank;
  const bool scan = op_info(st.op).family == OpFamily::kScan;
  // sort/argsort: the scan's tiling; the output keeps k entries along the axis.
  const bool sort = st.op == OpKind::kSort || st.op == OpKind::kArgsort;
  if (sort) {
    const int a = st.dims[0];
    if (st.sort_k > x.shape[a] || y.shape[a] != st.sort_k) {
      throw ConfigError(u.loc + ": " + op_name(st.op) + ": k = " + std::to_string(st.sort_k) +
                        " must be at most the axis' extent " + std::to_string(x.shape[a]) +
                        " and equal the output's " + std::to_string(y.shape[a]));
    }
    if (st.sort_k > x.valid[a]) {
      throw ConfigError(u.loc + ": " + op_name(st.op) + ": k = " + std::to_string(st.sort_k) +
                        " exceeds the valid extent " + std::to_string(x.valid[a]) +
                        " along the axis");
    }
  }
  bool reduced[kMaxRank] = {};
  std::uint8_t mask = 0;
  for (const int d : st.dims) {
    reduced[d] = true;
    mask |= static_cast<std::uint8_t>(1u << d);
  }
  std::vector<int> kept, red;
  for (int k = 0; k < r; ++k) (reduced[k] ? red : kept).push_back(k);
  // vec_tile: the input's rank, or (without keepdim) the output's rank over the kept axes.
  std::int64_t T[kMaxRank];
  const bool out_rank_tile = !st.keepdim && !kept.empty() && st.vec_tile.size() == kept.size() &&
                             st.vec_tile.size() != static_cast<std::size_t>(r);
  if (out_rank_tile) {
    for (std::size_t i = 0; i < kept.size(); ++i) T[kept[i]] = st.vec_tile[i];
  } else {
    tile_sizes(st.vec_tile, r, T);
  }
  const DType xd = k_.values[xin].dtype;
  const DType yd = k_.values[st.out].dtype;
  const DType ld = x_wide ? DType::kFp32 : xd;  // the loaded tiles
  const bool is_reduction = op_info(st.op).family == OpFamily::kReduce;
  if (is_reduction && !out_rank_tile && reduced[r - 1]) {
    // PyPTO's reductions over the last axis need a 32-byte aligned tile along it.
    const std::uint64_t bytes = static_cast<std::uint64_t>(T[r - 1]) * model::dtype_bytes(xd);
    if (bytes % 32 != 0) {
      throw ConfigError(u.loc + ": " + op_name(st.op) + ": the vec tile's last size " +
                        std::to_string(T[r - 1]) + " x " + std::to_string(model::dtype_bytes(xd)) +
                        " bytes (" + std::string(model::to_string(xd)) +
                        ") = " + std::to_string(bytes) +
                        " bytes is not a multiple of 32; PyPTO's rule for a reduction over the "
                        "last axis: its tile size there is 32-byte aligned");
    }
  }
  // Chunks along each reduced axis (PyPTO's TileReduceNew): the vec tile's size there when
  // the tile covers the input's rank and the op combines partial results; else the whole axis.
  const TileOpcode pair = scan || sort ? kNoTileOp : pair_opcode(opcode_of(st.op));
  const bool cut = pair != kNoTileOp && st.vec_tile.size() >= static_cast<std::size_t>(r);
  std::int64_t chunk[kMaxRank], nchunks[kMaxRank];
  std::fill_n(chunk, kMaxRank, 1);
  std::fill_n(nchunks, kMaxRank, 1);
  bool chunked = false;
  for (const int a : red) {
    const std::int64_t n = std::max<std::int64_t>(0, x.valid[a]);
    nchunks[a] = cut && n > T[a] ? ceil_div(n, T[a]) : 1;
    chunk[a] = nchunks[a] > 1 ? T[a] : std::max<std::int64_t>(1, n);
    chunked = chunked || nchunks[a] > 1;
  }
  if (is_reduction) {
    // PyPTO's operation pages give 64 KB for a reduction's tile, but PyPTO's own kernels
    // exceed it (flash attention's amax over 64 x 320 fp32): a warning; UB still bounds it.
    std::int64_t real[kMaxRank];
    std::uint64_t bytes = model::dtype_bytes(ld);
    for (int k = 0; k < r; ++k) {
      real[k] = reduced[k] ? chunk[k] : std::max<std::int64_t>(1, std::min(T[k], x.shape[k]));
      bytes *= static_cast<std::uint64_t>(real[k]);
    }
    if (bytes > kReduceTileBytes && reduce_tile_warned_.insert(u.loc).second) {
      log_.push_back(
          "warning: " + u.loc + ": " + op_name(st.op) + ": the reduction tile " +
          dims_text(real, r) + " " + std::string(model::to_string(ld)) + " is " +
          std::to_string(bytes) + " bytes (" + std::to_string(bytes / 1024) +
          " KiB), above the 65536 bytes (64 KiB) PyPTO's operation pages give for a reduction "
          "tile; simulated as given (PyPTO's own kernels exceed it); smaller "
          "pypto.set_vec_tile_shapes keep it within" +
          (pair != kNoTileOp ? std::string(" (a size for the reduced axis too: the partial "
                                           "results are combined)")
                             : std::string(" (" + std::string(op_name(st.op)) +
                                           " keeps the reduced axis whole)")));
    }
  }
  std::int64_t grid[kMaxRank];
  for (int k = 0; k < r; ++k) {
    if (reduced[k])
      T[k] = grid[k] = 1;
    else
      grid[k] = x.shape[k];
  }
  // Output axis of input axis k (-1 when the output dropped it).
  int yaxis[kMaxRank];
  for (int k = 0, j = 0; k < r; ++k) {
    if (st.keepdim || scan)
      yaxis[k] = k;
    else
      yaxis[k] = reduced[k] ? -1 : j++;
  }
  const bool scalar_out = kept.empty() && !st.keepdim && !scan;  // output shape [1]
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  // The partial results of a cut reduction combine in fp32 where the op computes in fp32.
  const DType pd = chunked && computes_in_fp32(st.op, yd) ? DType::kFp32 : ld;
  // The keepdim-form region (rank r) of `v` (the output or a write destination whose axes
  // are the output's, shifted by base_off) for a tile of extent E at `off`.
  const auto out_region = [&](const RtVal& v, const GlobalRegion& vr, const std::int64_t* base_off,
                              const std::int64_t* off, const std::int64_t* E, GlobalRegion* reg) {
    *reg = vr;
    reg->rank = static_cast<std::uint8_t>(r);
    for (int k = 0; k < r; ++k) {
      const int a = yaxis[k];
      if (a < 0) {
        reg->shape[k] = 1;
        reg->stride[k] = 0;
        continue;
      }
      const std::int64_t o = reduced[k] ? 0 : off[k];
      reg->shape[k] = reduced[k] ? std::min<std::int64_t>(scan ? E[k] : 1, y.valid[a])
                                 : clamp0(std::min(E[k], y.valid[a] - o));
      reg->stride[k] = vr.stride[a];
      reg->offset_elems += (base_off[a] + o) * vr.stride[a];
    }
    if (scalar_out) {
      reg->offset_elems += base_off[0] * vr.stride[0];
      if (y.valid[0] <= 0) reg->shape[0] = 0;
    }
  };
  const std::int64_t zero[kMaxRank] = {};
  for_each_tile(r, grid, T, [&](const std::int64_t* off, const std::int64_t* len) {
    std::int64_t E[kMaxRank], in_shape[kMaxRank], out_shape[kMaxRank];
    for (int k = 0; k < r; ++k) {
      if (reduced[k]) {
        in_shape[k] = std::max<std::int64_t>(1, x.valid[k]);
        E[k] = sort ? st.sort_k : scan ? in_shape[k] : 1;
      } else {
        E[k] = std::min(len[k], y.valid[yaxis[k]] - off[k]);
        if (E[k] <= 0) return;
        in_shape[k] = E[k];
      }
      out_shape[k] = E[k];
    }
    if (scalar_out && y.valid[0] <= 0) return;
    TaskBuilder& tb = new_task();
    GlobalRegion sreg, wreg;
    if (need_out) out_region(y, y.region, zero, off, E, &sreg);
    if (out_wide) out_region(y, y.wide_region, zero, off, E, &wreg);
    std::vector<GlobalRegion> wregs(u.writes.size());
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      const RtVal& d = vals_[w.dst];
      out_region(d, d.region, woffs[wi].data(), off, E, &wregs[wi]);
      // Bounds of the destination, in its own axes.
      for (int a = 0; a < d.rank; ++a) {
        std::int64_t o = woffs[wi][a], n = 1;
        for (int k = 0; k < r; ++k) {
          if (yaxis[k] == a) {
            o += reduced[k] ? 0 : off[k];
            n = wregs[wi].shape[k];
          }
        }
        check_write_span(w, a, o, n, d.shape[a]);
      }
    }
    // The region of x that chunk `ci` (chunk indices on the reduced axes) covers.
    const auto x_region = [&](const std::int64_t* ci) {
      GlobalRegion lreg = xr;
      lreg.rank = static_cast<std::uint8_t>(r);
      for (int k = 0; k < r; ++k) {
        const std::int64_t o = reduced[k] ? ci[k] * chunk[k] : off[k];
        lreg.shape[k] = reduced[k] ? std::min(chunk[k], x.valid[k] - o)
                                   : clamp0(std::min(E[k], x.valid[k] - off[k]));
        lreg.offset_elems += o * xr.stride[k];
      }
      return lreg;
    };
    int lin;
    if (!chunked) {
      lin = tb.local(ld, r, in_shape);
      const std::int64_t first[kMaxRank] = {};
      GlobalRegion lreg = x_region(first);
      for (const int a : red) lreg.shape[a] = x.valid[a];
      load(tb, lin, lreg, x_wide ? x.wide_storage : x.storage, named(xin), u.loc);
    } else {
      lin = combine_chunks(tb, u, red, nchunks, pair, ld, pd, r, in_shape, chunk, x_region,
                           x_wide ? x.wide_storage : x.storage, value_name(xin));
    }
    // With an fp32 copy the result is computed in fp32 and rounded once more for bf16 readers.
    const int lwide = out_wide ? tb.local(DType::kFp32, r, out_shape) : -1;
    TileInstr in;
    in.op = opcode_of(st.op);
    in.dst = out_wide ? lwide : tb.local(yd, r, out_shape);
    in.src[0] = lin;
    in.reduce_mask = mask;
    if (sort) in.scalar[1] = st.descending ? 1.0 : 0.0;
    tb.p.instrs.push_back(in);
    int lout = in.dst;
    if (out_wide) {
      store(tb, lwide, wreg, y.wide_storage, named(st.out), u.loc);
      if (need_out || !u.writes.empty()) {
        lout = tb.local(yd, r, out_shape);
        TileInstr c;
        c.op = TileOpcode::kCast;
        c.dst = lout;
        c.src[0] = lwide;
        tb.p.instrs.push_back(c);
      }
    }
    if (need_out) store(tb, lout, sreg, y.storage, named(st.out), u.loc);
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      store(tb, lout, wregs[wi], vals_[w.dst].storage, named(w.dst), w.loc);
    }
    if (scan && !sort) check_scan_ub(tb, u, st);
    bool full = true;
    for (int k = 0; k < r; ++k) {
      full = full && (reduced[k] ? x.valid[k] == x.shape[k] : E[k] == T[k]);
    }
    commit(tb, u, common::CoreType::kAiv, full, 1);
  });
}

int EmitContext::combine_chunks(TaskBuilder& tb, const Unit& u, const std::vector<int>& red,
                                const std::int64_t* nchunks, TileOpcode pair, DType ld, DType pd,
                                int r, const std::int64_t* kept_shape, const std::int64_t* chunk,
                                const std::function<GlobalRegion(const std::int64_t*)>& region,
                                const Storage& storage, const std::string& name) {
  std::int64_t cshape[kMaxRank];
  for (int k = 0; k < r; ++k) cshape[k] = kept_shape[k];
  for (const int a : red) cshape[a] = chunk[a];
  // Locals of the chunk shape, reused once their value is folded in (loaded / combined dtype).
  std::vector<int> free_ld, free_pd;
  const auto take = [&](DType d, std::vector<int>& pool) {
    if (pool.empty()) return tb.local(d, r, cshape);
    const int l = pool.back();
    pool.pop_back();
    return l;
  };
  const double pad = pair_identity(pair, ld);
  std::int64_t ci[kMaxRank] = {};
  const auto load_chunk = [&]() {
    const int l = take(ld, free_ld);
    load(tb, l, region(ci), storage, name, u.loc, pad);
    if (pd == ld) return l;
    const int c = take(pd, free_pd);
    TileInstr cv;
    cv.op = TileOpcode::kCast;
    cv.dst = c;
    cv.src[0] = l;
    tb.p.instrs.push_back(cv);
    free_ld.push_back(l);
    return c;
  };
  const auto fold = [&](int a, int b) {  // a <- a (pair) b; b is free afterwards
    TileInstr in;
    in.op = pair;
    in.dst = a;
    in.src[0] = a;
    in.src[1] = b;
    tb.p.instrs.push_back(in);
    (pd == ld ? free_ld : free_pd).push_back(b);
  };
  // The chunks of reduced axis red[lv] (and, below it, of the axes after it) combined into one.
  std::function<int(std::size_t)> along = [&](std::size_t lv) -> int {
    const int a = red[lv];
    const auto leaf = [&](std::int64_t i) {
      ci[a] = i;
      return lv + 1 < red.size() ? along(lv + 1) : load_chunk();
    };
    const std::int64_t w = nchunks[a];
    std::int64_t p2 = 1;
    while (p2 * 2 <= w) p2 *= 2;
    // PyPTO's schedule: level j pairs value i with value i + h (h = p2 >> j) of the level
    // above, then folds in the next h chunks past the power of two when that many remain.
    std::vector<std::int64_t> widths, extra;  // per level: h, and the first folded chunk or -1
    std::int64_t next = p2, rest = w - p2;
    for (std::int64_t h = p2 / 2; h >= 1; h /= 2) {
      widths.push_back(h);
      if (rest >= h) {
        extra.push_back(next);
        next += h;
        rest -= h;
      } else {
        extra.push_back(-1);
      }
    }
    std::function<int(std::size_t, std::int64_t)> value = [&](std::size_t j,
                                                              std::int64_t i) -> int {
      if (j == 0) return leaf(i);
      const std::int64_t h = widths[j - 1];
      const int v = value(j - 1, i);
      fold(v, value(j - 1, i + h));
      if (extra[j - 1] >= 0) fold(v, leaf(extra[j - 1] + i));
      return v;
    };
    return value(widths.size(), 0);
  };
  return along(0);
}

void EmitContext::check_scan_ub(const TaskBuilder& tb, const Unit& u, const Stmt& st) const {
  // PyPTO's scans keep their input and output tiles in UB together.
  const std::uint64_t cap = std::uint64_t{chip_.cores.ub_kib} * 1024;
  std::uint64_t bytes = 0;
  for (const LocalTile& t : tb.p.locals) {
    std::uint64_t b = model::dtype_bytes(t.dtype);
    for (int k = 0; k < t.rank; ++k) b *= static_cast<std::uint64_t>(t.shape[k]);
    bytes += b;
  }
  if (bytes <= cap) return;
  const LocalTile& in = tb.p.locals[0];
  throw ConfigError(u.loc + ": " + op_name(st.op) + ": the input and output tiles of a " +
                    dims_text(in.shape, in.rank) + " " + std::string(model::to_string(in.dtype)) +
                    " scan take " + std::to_string(bytes) + " bytes together, UB holds " +
                    std::to_string(cap) + " bytes (" + std::to_string(cap / 1024) +
                    " KiB, cores.ub_kib of chip " + chip_.chip.name +
                    "); PyPTO's rule: a scan's input and output tiles fit UB together (the "
                    "scanned axis stays whole); choose smaller pypto.set_vec_tile_shapes");
}

}  // namespace pypto::compiler::detail
