// SPDX-License-Identifier: Apache-2.0
// The data-movement families: transpose/permute (the load is the permutation), concat,
// copies (a write not absorbed into its producer, a copying view or reshape), views (aliases,
// also reinterpreting the dtype) and reshapes (aliases when the strides allow, else copies).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "deps.h"
#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

// Whether two regions are the same single run of bytes of one buffer.
bool same_bytes(const GlobalRegion& a, const GlobalRegion& b) {
  if (a.buffer != b.buffer) return false;
  const auto run = [](const GlobalRegion& r, std::uint64_t* off, std::uint64_t* bytes) {
    int n = 0;
    for_each_segment(r, [&](std::uint64_t o, std::uint64_t len) {
      if (n++ == 0) {
        *off = o;
        *bytes = len;
      }
    });
    return n == 1;
  };
  std::uint64_t ao = 0, ab = 0, bo = 0, bb = 0;
  return run(a, &ao, &ab) && run(b, &bo, &bb) && ao == bo && ab == bb;
}

// numpy's no-copy reshape: new strides for `to` over a region of shape `from` with strides
// `st`, or false when some merged run of old axes is not contiguous.
bool reshape_strides(const std::int64_t* from, const std::int64_t* st, int rf,
                     const std::int64_t* to, int rt, std::int64_t* out) {
  std::int64_t od[kMaxRank], os[kMaxRank];
  int on = 0;
  std::int64_t total = 1;
  for (int k = 0; k < rf; ++k) {
    total *= from[k];
    if (from[k] != 1) {
      od[on] = from[k];
      os[on++] = st[k];
    }
  }
  if (total == 0) {
    std::int64_t s = 1;
    for (int k = rt - 1; k >= 0; --k) {
      out[k] = s;
      s *= std::max<std::int64_t>(1, to[k]);
    }
    return true;
  }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < rt && oi < on) {
    std::int64_t np = to[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= rt) return false;
        np *= to[nj++];
      } else {
        if (oj >= on) return false;
        op *= od[oj++];
      }
    }
    for (int ok = oi; ok < oj - 1; ++ok) {
      if (os[ok] != od[ok + 1] * os[ok + 1]) return false;
    }
    out[nj - 1] = os[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) out[nk - 1] = out[nk] * to[nk];
    ni = nj++;
    oi = oj++;
  }
  for (int nk = ni; nk < rt; ++nk) out[nk] = 1;  // trailing size-1 axes
  return true;
}

}  // namespace

void EmitContext::emit_permute(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value;
  const RtVal& x = vals_[xin];
  NPU_CHECK(x.has_region, "transpose input without storage");
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int r = y.rank;
  std::int64_t T[kMaxRank];
  tile_sizes(st.vec_tile, r, T);
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  const DType d = k_.values[st.out].dtype;
  for_each_valid_tile(r, y.shape, y.valid, T, [&](const std::int64_t* off, const std::int64_t* E) {
    TaskBuilder& tb = new_task();
    const int l = tb.local(d, r, E);
    // The load IS the transpose: output axis k walks input axis perm[k].
    GlobalRegion reg = x.region;
    reg.rank = static_cast<std::uint8_t>(r);
    for (int k = 0; k < r; ++k) {
      const int p = st.dims[k];
      reg.shape[k] = clamp0(std::min(E[k], x.valid[p] - off[k]));
      reg.stride[k] = x.region.stride[p];
      reg.offset_elems += off[k] * x.region.stride[p];
    }
    load(tb, l, reg, x.storage, named(xin), u.loc);
    if (need_out) store(tb, l, sub_region(y, off, E, r), y.storage, named(st.out), u.loc);
    store_writes(tb, l, u, woffs, off, E);
    commit(tb, u, common::CoreType::kAiv, covers_tile(E, T, r), 1);
  });
}

void EmitContext::emit_concat(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int r = y.rank, dim = st.concat_dim;
  std::int64_t T[kMaxRank];
  tile_sizes(st.vec_tile, r, T);
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  const DType d = k_.values[st.out].dtype;
  std::vector<std::int64_t> shifts;  // where each input starts on the concat axis
  std::int64_t shift = 0;
  for (const Operand& in : st.inputs) {
    const RtVal& x = vals_[in.value];
    NPU_CHECK(x.has_region, "concat input without storage");
    for (int k = 0; k < r; ++k) {
      if (k != dim && x.shape[k] != y.shape[k]) {
        throw ConfigError(u.loc + ": concat input " + value_name(in.value) + " has size " +
                          std::to_string(x.shape[k]) + " on axis " + std::to_string(k) +
                          ", the output " + std::to_string(y.shape[k]));
      }
    }
    if (shift + x.shape[dim] > y.shape[dim]) {
      throw ConfigError(u.loc + ": concat inputs are longer than the output on axis " +
                        std::to_string(dim));
    }
    shifts.push_back(shift);
    shift += x.shape[dim];
  }
  // PyPTO tiles a concat by its output (the tile shape is the output's): one task per output
  // tile, copying in the piece of each input that falls in it.
  for_each_tile(r, y.shape, T, [&](const std::int64_t* yoff0, const std::int64_t* ylen) {
    TaskBuilder& tb = new_task();
    bool any = false;
    for (std::size_t i = 0; i < st.inputs.size(); ++i) {
      const RtVal& x = vals_[st.inputs[i].value];
      std::int64_t xoff[kMaxRank], yoff[kMaxRank], ext[kMaxRank];
      bool empty = false;
      for (int k = 0; k < r; ++k) {
        const std::int64_t base = k == dim ? shifts[i] : 0;  // x's start in y on axis k
        const std::int64_t lo = std::max(yoff0[k], base);
        const std::int64_t hi = std::min({yoff0[k] + ylen[k], base + x.valid[k], y.valid[k]});
        yoff[k] = lo;
        xoff[k] = lo - base;
        ext[k] = hi - lo;
        empty = empty || ext[k] <= 0;
      }
      if (empty) continue;
      any = true;
      const int l = tb.local(d, r, ext);
      load(tb, l, sub_region(x, xoff, ext, r), x.storage, named(st.inputs[i].value), u.loc);
      if (need_out) store(tb, l, sub_region(y, yoff, ext, r), y.storage, named(st.out), u.loc);
      store_writes(tb, l, u, woffs, yoff, ext);
    }
    if (any) commit(tb, u, common::CoreType::kAiv, covers_tile(ylen, T, r), 1);
  });
}

void EmitContext::emit_copy(const Unit& u, const RtVal& src, const GlobalRegion& dst,
                            const Storage& dst_st, const std::vector<std::int64_t>& vec_tile,
                            const std::string& dst_name) {
  NPU_CHECK(src.has_region, "copy source without storage");
  const int r = src.rank;
  std::int64_t T[kMaxRank];
  if (vec_tile.empty())
    copy_tile_sizes(src, T);
  else
    tile_sizes(vec_tile, r, T);
  const DType d = src.region.dtype;
  for_each_valid_tile(
      r, src.shape, src.valid, T, [&](const std::int64_t* off, const std::int64_t* ext) {
        TaskBuilder& tb = new_task();
        const int l = tb.local(d, r, ext);
        load(tb, l, sub_region(src, off, ext, r), src.storage,
             src.storage.value >= 0 ? named(src.storage.value) : "the source", u.loc);
        GlobalRegion dr = dst;
        for (int k = 0; k < r; ++k) {
          dr.offset_elems += off[k] * dst.stride[k];
          dr.shape[k] = ext[k];
        }
        store(tb, l, dr, dst_st, dst_name, u.loc);
        commit(tb, u, common::CoreType::kAiv, covers_tile(ext, T, r), 1);
      });
}

void EmitContext::emit_copy_write(const Unit& u) {
  const Stmt& w = k_.stmts[u.stmt];
  const RtVal& src = vals_[w.src];
  const RtVal& d = vals_[w.dst];
  NPU_CHECK(src.has_region && d.has_region, "write operand without storage");
  const std::vector<std::int64_t> woff = eval_offsets(w.offsets);
  for (int k = 0; k < d.rank; ++k) {
    check_write_span(w, k, woff[k], std::min(src.shape[k], src.valid[k]), d.shape[k]);
  }
  std::int64_t full_ext[kMaxRank];
  for (int k = 0; k < d.rank; ++k) full_ext[k] = src.shape[k];
  const GlobalRegion dst = sub_region(d, woff.data(), full_ext, d.rank);
  // The source was computed in place in the destination (ValueInfo::home): nothing to copy.
  if (same_bytes(src.region, dst)) return;
  emit_copy(u, src, dst, d.storage, w.vec_tile, value_name(w.dst));
}

void EmitContext::emit_view(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value;
  const RtVal& x = vals_[xin];
  RtVal v = make_val(st.out);
  const std::vector<std::int64_t> off = eval_offsets(st.offsets);
  if (x.has_region) {
    v.has_region = true;
    v.storage = x.storage;
    v.region = x.region;
    v.region.rank = static_cast<std::uint8_t>(v.rank);
    for (int k = 0; k < v.rank; ++k) {
      v.region.offset_elems += off[k] * x.region.stride[k];
      v.region.shape[k] = v.shape[k];
    }
    const DType to = k_.values[st.out].dtype;
    const DType from = x.region.dtype;
    if (to != from) {
      // Reinterpreted bits: offsets and strides change unit; the last axis must be dense.
      const std::int64_t fb = model::dtype_bytes(from), tb = model::dtype_bytes(to);
      bool ok = v.region.stride[v.rank - 1] == 1;
      for (int k = 0; k < v.rank - 1; ++k) ok = ok && (v.region.stride[k] * fb) % tb == 0;
      ok = ok && (v.region.offset_elems * fb) % tb == 0;
      if (!ok) {
        throw ConfigError(u.loc + ": view with dtype " + std::string(model::to_string(to)) +
                          " of a " + std::string(model::to_string(from)) +
                          " region that is not "
                          "dense on its last axis or not aligned to the new element size is not "
                          "supported");
      }
      for (int k = 0; k < v.rank - 1; ++k) v.region.stride[k] = v.region.stride[k] * fb / tb;
      v.region.offset_elems = v.region.offset_elems * fb / tb;
      v.region.dtype = to;
    }
  }
  if (!k_.values[st.out].copy_view) {
    vals_[st.out] = v;
    return;
  }
  NPU_CHECK(v.has_region, "view of a value without storage");
  RtVal dst = v;
  give_dense_storage(st.out, dst);
  emit_copy(u, v, dst.region, dst.storage, st.vec_tile, value_name(st.out));
  vals_[st.out] = dst;
}

void EmitContext::emit_reshape(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value;
  RtVal x = vals_[xin];
  NPU_CHECK(x.has_region, "reshape of a value without storage");
  RtVal v = make_val(st.out);
  std::int64_t nx = 1, nv = 1;
  for (int k = 0; k < x.rank; ++k) nx *= x.shape[k];
  for (int k = 0; k < v.rank; ++k) nv *= v.shape[k];
  if (nx != nv) {
    throw ConfigError(u.loc + ": reshape of " + std::to_string(nx) + " elements into " +
                      std::to_string(nv));
  }
  // IR.md: a reshape moves the valid elements. When the input's valid extent is partial (a
  // tail window), its padding is not data: the output's valid box, in row-major order, holds
  // the input's valid box in row-major order (PyPTO's valid_shape reshape of a padded tile).
  std::int64_t nxv = 1, nvv = 1;
  bool partial = false;
  for (int k = 0; k < x.rank; ++k) {
    nxv *= x.valid[k];
    partial = partial || x.valid[k] < x.shape[k];
  }
  for (int k = 0; k < v.rank; ++k) nvv *= v.valid[k];
  if (partial && nvv <= nxv) {
    emit_compact_reshape(u, x, v);
    return;
  }
  std::int64_t strides[kMaxRank];
  const bool alias = !k_.values[st.out].copy_view &&
                     reshape_strides(x.shape, x.region.stride, x.rank, v.shape, v.rank, strides);
  if (!alias) {
    // Copy the source into dense storage that belongs to the output, then re-stride that.
    RtVal dense = x;
    give_dense_storage(st.out, dense);
    emit_copy(u, x, dense.region, dense.storage, {}, value_name(st.out));
    x = dense;
    const bool ok = reshape_strides(x.shape, x.region.stride, x.rank, v.shape, v.rank, strides);
    NPU_CHECK(ok, "dense reshape must be expressible");
  }
  v.has_region = true;
  v.storage = x.storage;
  v.region = x.region;
  v.region.rank = static_cast<std::uint8_t>(v.rank);
  for (int k = 0; k < kMaxRank; ++k) {
    v.region.shape[k] = k < v.rank ? v.shape[k] : 1;
    v.region.stride[k] = k < v.rank ? strides[k] : 0;
  }
  vals_[st.out] = v;
}

void EmitContext::emit_compact_reshape(const Unit& u, const RtVal& x, RtVal v) {
  const Stmt& st = k_.stmts[u.ops[0]];
  RtVal d = v;
  // prod(v.shape) elements: room for the compacted run and for every address of the region
  // below (its strides are at most the dense ones of v.shape).
  give_dense_storage(st.out, d);
  // Compact: x's valid box, copied dense over x.valid (element j of the run at offset j).
  GlobalRegion run = d.region;
  run.rank = static_cast<std::uint8_t>(x.rank);
  std::int64_t s = 1;
  for (int k = kMaxRank - 1; k >= 0; --k) {
    run.shape[k] = k < x.rank ? x.valid[k] : 1;
    run.stride[k] = k < x.rank ? s : 0;
    if (k < x.rank) s *= std::max<std::int64_t>(1, x.valid[k]);
  }
  emit_copy(u, x, run, d.storage, {}, value_name(st.out));
  // The output reads the run as its valid box: dense strides over v.valid. Its padding
  // aliases other elements, which only matters when the output is itself written.
  v.has_region = true;
  v.storage = d.storage;
  v.region = d.region;
  v.region.rank = static_cast<std::uint8_t>(v.rank);
  bool dense = true;
  s = 1;
  for (int k = kMaxRank - 1; k >= 0; --k) {
    v.region.shape[k] = k < v.rank ? v.shape[k] : 1;
    v.region.stride[k] = k < v.rank ? s : 0;
    if (k >= v.rank) continue;
    dense = dense && (v.valid[k] <= 1 || s == d.region.stride[k]);
    s *= std::max<std::int64_t>(1, v.valid[k]);
  }
  if (k_.values[st.out].copy_view && !dense) {
    throw ConfigError(u.loc +
                      ": writing into the output of a reshape with a partial "
                      "valid_shape is not supported when its valid box is not a leading run of "
                      "its layout; write into a fresh tensor instead");
  }
  vals_[st.out] = v;
}

}  // namespace pypto::compiler::detail
