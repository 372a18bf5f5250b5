// SPDX-License-Identifier: Apache-2.0
// Functional execution of one leaf task's tile program on host memory (tile_exec.h): what makes
// SIM runs produce torch's numbers. This is the interpreter: it checks each instruction's
// operands, shapes and regions (a failure names the instruction) and dispatches it once to a
// kernel of the numeric library (numeric.h), which runs a tight loop over the tile.
#include "pypto/exec/tile_exec.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "numeric.h"
#include "pypto/common/errors.h"
#include "pypto/exec/tile_op_table.h"

namespace pypto::exec {

using namespace detail;  // the numeric library, private to the executor

std::string_view to_string(TileOpcode op) {
  const TileOpInfo* info = find_tile_op(op);
  return info != nullptr ? info->name : "unknown";
}

namespace {

// Locals are on-chip tiles (UB/L1/L0 hold well under a million elements); anything larger is a
// corrupt program, and refusing it beats allocating gigabytes.
constexpr std::int64_t kMaxLocalElems = std::int64_t(1) << 26;

std::string shape_str(const std::int64_t* shape, int rank) {
  std::string s = "[";
  for (int k = 0; k < rank; ++k) {
    if (k) s += ", ";
    s += std::to_string(shape[k]);
  }
  return s + "]";
}

std::int64_t numel(const std::int64_t* shape, int rank) {
  std::int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= shape[k];
  return n;
}

struct TileRef {
  const LocalTile* t;
  double* data;
  std::int64_t n;
};

class Executor {
 public:
  Executor(const TaskProgram& p, const GlobalMemory& mem, ExecScratch& s)
      : p_(p), mem_(mem), s_(s) {}

  void run() {
    check_memory();
    const std::size_t nl = p_.locals.size();
    if (s_.tiles.size() < nl) s_.tiles.resize(nl);
    if (s_.float_tiles.size() < nl) s_.float_tiles.resize(nl);
    if (s_.rows_of.size() < nl) s_.rows_of.resize(nl);
    s_.written.assign(nl, 0);
    s_.held.assign(nl, kDoubles);
    floats_ = float_kernels_exact();
    for (std::size_t i = 0; i < nl; ++i) {
      const LocalTile& t = p_.locals[i];
      // The name is built only for a message (this runs for every local of every task).
      const auto what = [i] { return "local " + std::to_string(i); };
      if (!shape_ok(t.shape, t.rank)) check_shape(t.shape, t.rank, what().c_str());
      const std::int64_t n = numel(t.shape, t.rank);
      if (n > kMaxLocalElems) {
        fail_program(what() + " has shape " + shape_str(t.shape, t.rank) + " (" +
                     std::to_string(n) + " elements), more than any on-chip buffer holds");
      }
      s_.tiles[i].resize(std::size_t(n));
    }
    for (idx_ = 0; idx_ < p_.instrs.size(); ++idx_) step(p_.instrs[idx_]);
  }

 private:
  // ---- diagnostics and operand access ----------------------------------------------------------

  [[noreturn]] void fail_program(const std::string& msg) const {
    throw_model_error(__FILE__, __LINE__, "tile program: " + msg);
  }

  [[noreturn]] void fail(const std::string& msg) const {
    const TileInstr& in = p_.instrs[idx_];
    throw_model_error(__FILE__, __LINE__,
                      "tile instruction " + std::to_string(idx_) + " (" +
                          std::string(to_string(in.op)) + "): " + msg);
  }

  void check_memory() const {
    if (mem_.size_bytes.size() != mem_.base.size()) {
      fail_program("global memory has " + std::to_string(mem_.base.size()) + " bases but " +
                   std::to_string(mem_.size_bytes.size()) + " sizes");
    }
  }

  // Whether check_shape() would pass.
  static bool shape_ok(const std::int64_t* shape, int rank) {
    if (rank > kMaxRank) return false;
    for (int k = 0; k < rank; ++k) {
      if (shape[k] < 0) return false;
    }
    return true;
  }

  void check_shape(const std::int64_t* shape, int rank, const char* what) const {
    if (rank > kMaxRank) {
      fail_program(std::string(what) + " has rank " + std::to_string(rank) + ", above " +
                   std::to_string(kMaxRank));
    }
    for (int k = 0; k < rank; ++k) {
      if (shape[k] < 0) {
        fail_program(std::string(what) + " has a negative extent: " + shape_str(shape, rank));
      }
    }
  }

  std::string tile_desc(std::int32_t k) const {
    const LocalTile& t = p_.locals[std::size_t(k)];
    return "local " + std::to_string(k) + " " + shape_str(t.shape, t.rank) + " " +
           std::string(model::to_string(t.dtype));
  }

  void check_local(std::int32_t k, const char* role) const {
    if (k < 0 || std::size_t(k) >= p_.locals.size()) {
      fail(std::string(role) + " names local " + std::to_string(k) + " but the task has " +
           std::to_string(p_.locals.size()) + " locals");
    }
  }

  void check_written(std::int32_t k, const char* role) const {
    check_local(k, role);
    if (!s_.written[std::size_t(k)]) {
      fail(std::string(role) + " reads " + tile_desc(k) +
           " before any instruction of the task wrote it");
    }
  }

  // Local k's doubles, filled from its floats when only those hold its values (exact).
  TileRef doubles(std::int32_t k) const {
    auto& v = s_.tiles[std::size_t(k)];
    if (s_.held[std::size_t(k)] == kRows) {  // the load into doubles, done now
      const GlobalRegion& r = p_.instrs[s_.rows_of[std::size_t(k)]].region;
      const LocalTile& t = p_.locals[std::size_t(k)];
      load_region(v.data(), pad_shape(t.shape, t.rank), mem_.base[r.buffer], r);
      s_.held[std::size_t(k)] = kDoubles;
    } else if (!(s_.held[std::size_t(k)] & kDoubles)) {
      // The conversion a load into doubles makes (a signalling NaN comes out quiet).
      const std::vector<float>& f = s_.float_tiles[std::size_t(k)];
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = f[i];
      s_.held[std::size_t(k)] |= kDoubles;
    }
    return TileRef{&p_.locals[std::size_t(k)], v.data(), std::int64_t(v.size())};
  }

  // A local an instruction writes (and may read first): its doubles, its floats dropped.
  TileRef tile(std::int32_t k, const char* role) const {
    check_local(k, role);
    const TileRef t = doubles(k);
    s_.held[std::size_t(k)] = kDoubles;
    return t;
  }

  TileRef read_tile(std::int32_t k, const char* role) const {
    check_written(k, role);
    return doubles(k);
  }

  // Whether local k, written, is an fp32 tile held as floats or rows of dst's shape (perhaps
  // with a NaN: a float op's NaN result sends the op to the double path anyway).
  bool float_operand(std::int32_t k, const LocalTile& dst) const {
    if (k < 0 || std::size_t(k) >= p_.locals.size() || !s_.written[std::size_t(k)] ||
        !(s_.held[std::size_t(k)] & (kFloats | kRows))) {
      return false;
    }
    const LocalTile& t = p_.locals[std::size_t(k)];
    bool same = t.dtype == DType::kFp32 && t.rank == dst.rank;
    for (int i = 0; same && i < t.rank; ++i) same = t.shape[i] == dst.shape[i];
    return same;
  }

  // Marks local k written, its values in float_tiles[k] alone (`held`: kFloats, perhaps with
  // kUnchecked) or in global memory (kRows).
  void done_floats(std::int32_t k, std::uint8_t held) {
    s_.written[std::size_t(k)] = 1;
    s_.held[std::size_t(k)] = held;
  }

  void same_shape(std::int32_t a, std::int32_t b, const char* role_a, const char* role_b) const {
    const LocalTile& x = p_.locals[std::size_t(a)];
    const LocalTile& y = p_.locals[std::size_t(b)];
    bool same = x.rank == y.rank;
    for (int k = 0; same && k < x.rank; ++k) same = x.shape[k] == y.shape[k];
    if (!same) {
      fail(std::string(role_a) + " " + tile_desc(a) + " and " + role_b + " " + tile_desc(b) +
           " differ in shape (the compiler expands broadcasts before element-wise ops)");
    }
  }

  std::string region_desc(const GlobalRegion& r) const {
    return "region of buffer " + std::to_string(r.buffer) + " at element " +
           std::to_string(r.offset_elems) + ", shape " + shape_str(r.shape, r.rank) + ", strides " +
           shape_str(r.stride, r.rank) + ", " + std::string(model::to_string(r.dtype));
  }

  // The buffer a region lives in, after checking every element it touches is inside it;
  // nullptr when the region is empty.
  std::uint8_t* region_buffer(const GlobalRegion& r) const {
    if (r.rank > kMaxRank) fail(region_desc(r) + " has rank above " + std::to_string(kMaxRank));
    for (int k = 0; k < r.rank; ++k) {
      if (r.shape[k] < 0) fail(region_desc(r) + " has a negative extent");
    }
    if (r.buffer >= mem_.base.size()) {
      fail(region_desc(r) + " names buffer " + std::to_string(r.buffer) + " but the launch has " +
           std::to_string(mem_.base.size()) + " buffers");
    }
    if (numel(r.shape, r.rank) == 0) return nullptr;
    __int128 lo = r.offset_elems;
    __int128 hi = r.offset_elems;
    for (int k = 0; k < r.rank; ++k) {
      const __int128 ext = __int128(r.stride[k]) * (r.shape[k] - 1);
      (ext < 0 ? lo : hi) += ext;
    }
    const std::uint64_t elems = mem_.size_bytes[r.buffer] / dtype_bytes(r.dtype);
    if (lo < 0 || hi >= __int128(elems)) {
      std::string decl;
      if (r.buffer < mem_.dtype.size()) {
        decl = " (declared " + std::string(model::to_string(mem_.dtype[r.buffer])) + ")";
      }
      fail(region_desc(r) + " touches elements " + std::to_string(std::int64_t(lo)) + ".." +
           std::to_string(std::int64_t(hi)) + " but buffer " + std::to_string(r.buffer) + decl +
           " holds " + std::to_string(elems) + " " + std::string(model::to_string(r.dtype)) +
           " elements");
    }
    if (mem_.base[r.buffer] == nullptr) fail(region_desc(r) + ": buffer has no memory");
    return mem_.base[r.buffer];
  }

  // src[i] or scalar[i] of `in`; a scalar is rounded to `partner`'s dtype when given.
  Operand operand(const TileInstr& in, int i, std::int32_t dst, const TileRef* partner) const {
    static const char* const kRoles[] = {"src0", "src1", "src2"};
    Operand o;
    if (in.scalar_operand & (1u << i)) {
      o.scalar = true;
      o.s = in.scalar[i];
      if (partner) {
        o.dtype = partner->t->dtype;
        o.s = round_value(o.s, o.dtype,
                          std::trunc(o.s) == o.s ? IntConv::kWrap : IntConv::kFromFloat);
        o.integral = !is_float(o.dtype);
      } else {
        o.dtype = std::trunc(o.s) == o.s ? DType::kInt64 : DType::kFp32;
        o.integral = std::trunc(o.s) == o.s && std::fabs(o.s) < kTwo63;
      }
      return o;
    }
    const TileRef t = read_tile(in.src[i], kRoles[i]);
    same_shape(dst, in.src[i], "dst", kRoles[i]);
    o.p = t.data;
    o.dtype = t.t->dtype;
    o.integral = !is_float(o.dtype);
    return o;
  }

  void done(std::int32_t dst) {
    s_.written[std::size_t(dst)] = 1;
    s_.held[std::size_t(dst)] = kDoubles;
  }

  // Rounds tile d, holding values of dtype `from`, into its own dtype's value set.
  static void convert_from(const TileRef& d, DType from) {
    round_inplace(d.data, d.n, d.t->dtype, int_conv_from(from));
  }

  // ---- instructions ---------------------------------------------------------------------------

  void step(const TileInstr& in) {
    const TileOpInfo* info = find_tile_op(in.op);
    if (info != nullptr) {
      switch (info->exec) {
        case TileExec::kLoad: return load(in);
        case TileExec::kStore: return store(in);
        case TileExec::kFill: return fill(in);
        case TileExec::kCopy: return copy(in);
        case TileExec::kPermute: return permute(in);
        case TileExec::kCast: return cast(in);
        case TileExec::kBinary: return binary(in);
        case TileExec::kUnary: return unary(in);
        case TileExec::kWhere: return where(in);
        case TileExec::kReduce: return reduce(in);
        case TileExec::kMatmul: return matmul(in);
        case TileExec::kTriangle: return triangle(in);
        case TileExec::kScan: return scan(in);
        case TileExec::kGather: return gather(in);
        case TileExec::kScatter: return scatter(in);
        case TileExec::kScatterRows: return scatter_rows(in);
        case TileExec::kGatherElems: return gather_elems(in);
        case TileExec::kSort: return sort(in);
      }
    }
    fail("unknown opcode " + std::to_string(int(in.op)));
  }

  // Local k, held as rows, copied into its floats.
  void copy_rows(std::int32_t k) {
    const GlobalRegion& r = p_.instrs[s_.rows_of[std::size_t(k)]].region;
    const LocalTile& t = p_.locals[std::size_t(k)];
    std::vector<float>& f = s_.float_tiles[std::size_t(k)];
    f.resize(s_.tiles[std::size_t(k)].size());
    load_region_f32(f.data(), pad_shape(t.shape, t.rank), mem_.base[r.buffer], r);
    s_.held[std::size_t(k)] = kFloats | kUnchecked;
  }

  // Before an instruction writes buffer b: every local held as rows of memory b shares is
  // copied (buffers may alias: a kernel may write the tensor it reads).
  void copy_rows_in(std::uint32_t b) {
    if (b >= mem_.base.size()) return;  // the instruction fails on it
    const std::uint8_t* lo = mem_.base[b];
    const std::uint8_t* hi = lo + mem_.size_bytes[b];
    for (std::size_t k = 0; k < p_.locals.size(); ++k) {
      if (s_.held[k] != kRows) continue;
      const std::uint32_t rb = p_.instrs[s_.rows_of[k]].region.buffer;
      const std::uint8_t* rlo = mem_.base[rb];
      if (rlo < hi && lo < rlo + mem_.size_bytes[rb]) copy_rows(std::int32_t(k));
    }
  }

  // An fp32 region loaded whole into an fp32 local, as floats (unchecked: a NaN is found where
  // the floats are used as they are), or left in place as rows when its box is one plane of
  // contiguous rows; false: the double path loads it.
  bool load_floats(const TileInstr& in) {
    if (!floats_ || in.dst < 0 || std::size_t(in.dst) >= p_.locals.size()) return false;
    const LocalTile& t = p_.locals[std::size_t(in.dst)];
    const GlobalRegion& r = in.region;
    if (t.dtype != DType::kFp32 || r.dtype != DType::kFp32 || r.rank != t.rank) return false;
    for (int k = 0; k < r.rank; ++k) {
      if (r.shape[k] != t.shape[k]) return false;
    }
    const std::uint8_t* buf = region_buffer(r);
    if (!buf) return false;
    const PaddedDims n = pad_shape(r.shape, r.rank);
    bool one_plane = true;  // every axis outside the rows has extent 1
    for (int k = 0; k < kRowAxis; ++k) one_plane = one_plane && n.n[k] == 1;
    if (one_plane && pad_stride(r.stride, r.rank).n[kColAxis] == 1) {
      s_.rows_of[std::size_t(in.dst)] = std::uint32_t(idx_);
      done_floats(in.dst, kRows);
      return true;
    }
    std::vector<float>& f = s_.float_tiles[std::size_t(in.dst)];
    f.resize(s_.tiles[std::size_t(in.dst)].size());
    load_region_f32(f.data(), pad_shape(t.shape, t.rank), buf, r);
    done_floats(in.dst, kFloats | kUnchecked);
    return true;
  }

  void load(const TileInstr& in) {
    if (load_floats(in)) return;
    const TileRef d = tile(in.dst, "dst");
    const GlobalRegion& r = in.region;
    bool fits = r.rank == d.t->rank;
    bool whole = fits;
    for (int k = 0; fits && k < r.rank; ++k) {
      fits = r.shape[k] <= d.t->shape[k];
      whole = whole && r.shape[k] == d.t->shape[k];
    }
    if (!fits) fail(region_desc(r) + " is not a prefix box of dst " + tile_desc(in.dst));
    if (!whole && !s_.written[std::size_t(in.dst)]) {
      fail(region_desc(r) + " fills only part of dst " + tile_desc(in.dst) +
           ", which no instruction wrote before (the rest would be undefined)");
    }
    const std::uint8_t* buf = region_buffer(r);
    if (buf) {
      const PaddedDims dn = pad_shape(d.t->shape, d.t->rank);
      load_region(d.data, dn, buf, r);
    }
    // The part outside a prefix box already holds dst's dtype: rounding it again is a no-op.
    if (r.dtype != d.t->dtype) {
      convert_from(d, r.dtype);
    }
    done(in.dst);
  }

  void store(const TileInstr& in) {
    check_written(in.src[0], "src0");
    const LocalTile& st = p_.locals[std::size_t(in.src[0])];
    const GlobalRegion& r = in.region;
    bool fits = r.rank == st.rank;
    for (int k = 0; fits && k < r.rank; ++k) fits = r.shape[k] <= st.shape[k];
    if (!fits) {
      fail(region_desc(r) + " is not a prefix box of src0 " + tile_desc(in.src[0]));
    }
    for (int k = 0; k < r.rank; ++k) {
      if (r.stride[k] == 0 && r.shape[k] > 1) {
        fail(region_desc(r) + " writes one element several times (stride 0 on axis " +
             std::to_string(k) + ")");
      }
    }
    std::uint8_t* buf = region_buffer(r);
    if (!buf) return;
    copy_rows_in(r.buffer);
    if (s_.held[std::size_t(in.src[0])] == kRows) copy_rows(in.src[0]);
    const PaddedDims sn = pad_shape(st.shape, st.rank);
    std::uint8_t& held = s_.held[std::size_t(in.src[0])];
    const std::vector<float>& f = s_.float_tiles[std::size_t(in.src[0])];
    // Floats with a NaN go through doubles: a signalling NaN is stored quiet.
    if (floats_ && (held & kFloats) && st.dtype == DType::kFp32 && r.dtype == DType::kFp32 &&
        (!(held & kUnchecked) || !any_nan_f32(f.data(), std::int64_t(f.size())))) {
      held &= std::uint8_t(~kUnchecked);
      store_region_f32(buf, r, f.data(), sn);
      return;
    }
    const TileRef src = doubles(in.src[0]);
    store_region(buf, r, src.data, st.dtype, sn, s_.row);
  }

  void fill(const TileInstr& in) {
    if (in.op == TileOpcode::kIota) return iota(in);
    const TileRef d = tile(in.dst, "dst");
    const double s = in.scalar[0];
    const IntConv ic = std::trunc(s) == s ? IntConv::kWrap : IntConv::kFromFloat;
    std::fill(d.data, d.data + d.n, round_value(s, d.t->dtype, ic));
    done(in.dst);
  }

  // kIota: start + (scalar[2] + j) * step along the last axis, in double, rounded once

  // kIota: start + (scalar[2] + j) * step along the last axis, in double, rounded once
  // (torch.arange).
  void iota(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const std::int64_t last = d.t->rank > 0 ? d.t->shape[d.t->rank - 1] : 1;
    iota_values(d.data, d.n, last, in.scalar[0], in.scalar[1], in.scalar[2], d.t->dtype);
    done(in.dst);
  }

  void copy(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    if (d.n != s.n) {
      fail("dst " + tile_desc(in.dst) + " and src0 " + tile_desc(in.src[0]) +
           " differ in element count");
    }
    if (d.data != s.data) std::copy(s.data, s.data + s.n, d.data);
    if (d.t->dtype != s.t->dtype) convert_from(d, s.t->dtype);
    done(in.dst);
  }

  void permute(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    if (in.dst == in.src[0]) fail("dst and src0 are the same local " + tile_desc(in.dst));
    const int rank = s.t->rank;
    bool ok = d.t->rank == rank;
    unsigned seen = 0;
    for (int k = 0; ok && k < rank; ++k) {
      const int a = in.perm[k];
      ok = a < rank && !(seen & (1u << a)) && d.t->shape[k] == s.t->shape[a];
      seen |= 1u << a;
    }
    if (!ok) {
      std::string perm;
      for (int k = 0; k < rank; ++k) perm += (k ? ", " : "") + std::to_string(int(in.perm[k]));
      fail("perm [" + perm + "] does not map src0 " + tile_desc(in.src[0]) + " onto dst " +
           tile_desc(in.dst));
    }
    permute_values(d.data, pad_shape(d.t->shape, rank), d.t->dtype, s.data,
                   pad_shape(s.t->shape, rank), s.t->dtype, rank, in.perm);
    done(in.dst);
  }

  void cast(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const DType to = d.t->dtype;
    if (to != DType::kBool && !is_float(to) && in.cast_mode == CastMode::kOdd) {
      fail("cast_mode odd rounds to a floating dtype, not to " + std::string(model::to_string(to)));
    }
    cast_values(s.data, d.data, d.n, s.t->dtype, to, in.cast_mode, in.saturate != 0);
    done(in.dst);
  }

  // An fp32 + - * / of fp32 locals held as floats (a scalar rounded to fp32, as operand()
  // rounds it), computed in floats; false: the double path computes it.
  bool binary_floats(const TileInstr& in) {
    if (!floats_ || in.dst < 0 || std::size_t(in.dst) >= p_.locals.size()) return false;
    const LocalTile& d = p_.locals[std::size_t(in.dst)];
    const bool sa = in.scalar_operand & 1u;
    const bool sb = in.scalar_operand & 2u;
    if (d.dtype != DType::kFp32 || (sa && sb) || (!sa && !float_operand(in.src[0], d)) ||
        (!sb && !float_operand(in.src[1], d))) {
      return false;
    }
    std::vector<float>& y = s_.float_spare;
    y.resize(s_.tiles[std::size_t(in.dst)].size());
    const float as = float(in.scalar[0]), bs = float(in.scalar[1]);
    const bool ra = !sa && s_.held[std::size_t(in.src[0])] == kRows;
    const bool rb = !sb && s_.held[std::size_t(in.src[1])] == kRows;
    const float* a = sa || ra ? nullptr : s_.float_tiles[std::size_t(in.src[0])].data();
    const float* b = sb || rb ? nullptr : s_.float_tiles[std::size_t(in.src[1])].data();
    // Row by row: an operand held as rows reads them in place (one plane, contiguous rows).
    const PaddedDims dn = pad_shape(d.shape, d.rank);
    std::int64_t rows = 1, cols = std::int64_t(y.size()), pa = 0, pb = 0;
    if (ra || rb) {
      rows = dn.n[kRowAxis];
      cols = dn.n[kColAxis];
      pa = pb = cols;
    }
    const auto row_source = [&](std::int32_t k, std::int64_t* pitch) {
      const GlobalRegion& r = p_.instrs[s_.rows_of[std::size_t(k)]].region;
      *pitch = pad_stride(r.stride, r.rank).n[kRowAxis];
      return reinterpret_cast<const float*>(mem_.base[r.buffer]) + r.offset_elems;
    };
    if (ra) a = row_source(in.src[0], &pa);
    if (rb) b = row_source(in.src[1], &pb);
    if (!binary_f32(in.op, y.data(), a, pa, as, b, pb, bs, rows, cols)) return false;
    s_.float_spare.swap(s_.float_tiles[std::size_t(in.dst)]);
    done_floats(in.dst, kFloats);
    return true;
  }

  void binary(const TileInstr& in) {
    if (binary_floats(in)) return;
    const TileRef d = tile(in.dst, "dst");
    // A scalar combines with the other operand's dtype (torch rounds a Python scalar so).
    const bool sa = in.scalar_operand & 1u;
    const bool sb = in.scalar_operand & 2u;
    TileRef ta{};
    TileRef tb{};
    if (!sa) ta = read_tile(in.src[0], "src0");
    if (!sb) tb = read_tile(in.src[1], "src1");
    const Operand a = operand(in, 0, in.dst, sa && !sb ? &tb : nullptr);
    const Operand b = operand(in, 1, in.dst, sb && !sa ? &ta : nullptr);
    const DType dt = d.t->dtype;
    if (integer_only(in.op) && !(a.integral && b.integral && !is_float(dt))) {
      fail(std::string(to_string(in.op)) + " needs integer operands and dst");
    }
    switch (binary_values(in.op, d.data, a, b, d.n, dt)) {
      case BinaryStatus::kOk: break;
      case BinaryStatus::kNotBinary: fail("not a binary opcode");
      case BinaryStatus::kZeroDivisor:
        fail("integer division by zero (torch raises ZeroDivisionError)");
    }
    done(in.dst);
  }

  void unary(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const Operand a = operand(in, 0, in.dst, nullptr);
    const DType dt = d.t->dtype;
    if (in.op == TileOpcode::kTf32 && dt != DType::kFp32) {
      fail("dst " + tile_desc(in.dst) + " must be fp32");
    }
    if (in.op == TileOpcode::kBitNot && (!a.integral || is_float(dt))) {
      fail("bitwise_not needs an integer operand");
    }
    if (!unary_values(in.op, d.data, a, d.n, dt, in.scalar[1])) fail("not a unary opcode");
    done(in.dst);
  }

  void triangle(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const int rank = d.t->rank;
    if (rank < 2) fail("needs a tile of rank 2 or more, got " + tile_desc(in.dst));
    const std::int64_t rows = d.t->shape[rank - 2];
    const std::int64_t cols = d.t->shape[rank - 1];
    const std::int64_t diag = static_cast<std::int64_t>(in.scalar[1]);
    const bool upper = in.op == TileOpcode::kTriu;
    triangle_values(d.data, d.t->dtype, s.data, s.t->dtype, d.n, rows, cols, diag, upper);
    done(in.dst);
  }

  // The one axis of reduce_mask of src (rank `rank`), with the padded extent and stride
  // decomposition used to walk it: outer * n * inner elements.
  AxisWalk one_axis(const TileInstr& in, const LocalTile& t) const {
    int axis = -1;
    for (int k = 0; k < t.rank; ++k) {
      if ((in.reduce_mask >> k) & 1u) {
        if (axis >= 0)
          fail("reduce_mask " + std::to_string(int(in.reduce_mask)) + " names more than one axis");
        axis = k;
      }
    }
    if (axis < 0 || in.reduce_mask >> t.rank) {
      fail("reduce_mask " + std::to_string(int(in.reduce_mask)) + " names no single axis of " +
           tile_desc(in.src[0]));
    }
    AxisWalk w;
    for (int k = 0; k < axis; ++k) w.outer *= t.shape[k];
    w.n = t.shape[axis];
    for (int k = axis + 1; k < t.rank; ++k) w.inner *= t.shape[k];
    return w;
  }

  void scan(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const AxisWalk w = one_axis(in, *s.t);
    scan_values(d.data, d.t->dtype, s.data, s.t->dtype, w, d.n, in.op == TileOpcode::kCumSum);
    done(in.dst);
  }

  // kSortValues/kSortIndices: a stable sort of each line along the axis (NaN the largest);
  // dst keeps the first k = dst.shape[axis] entries (src0's shape on the other axes).
  void sort(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    const AxisWalk w = one_axis(in, *s.t);
    const AxisWalk wd = one_axis(in, *d.t);
    bool ok = d.t->rank == s.t->rank && wd.outer == w.outer && wd.inner == w.inner && wd.n >= 1 &&
              wd.n <= w.n;
    if (!ok) {
      fail("dst " + tile_desc(in.dst) + " must have src0 " + tile_desc(in.src[0]) +
           "'s shape, with 1..n entries along the sorted axis");
    }
    const bool indices = in.op == TileOpcode::kSortIndices;
    if (indices && is_float(d.t->dtype)) {
      fail("dst " + tile_desc(in.dst) + " must have an integer dtype");
    }
    const bool descending = in.scalar[1] != 0;
    sort_values(d.data, d.t->dtype, d.n, s.data, w, wd, indices, descending);
    done(in.dst);
  }

  // kArgMax/kArgMin: dst (keepdim shape, an integer dtype) gets the index of the first
  // extreme along the axis; a NaN counts as the extreme (torch).
  void arg_reduce(const TileInstr& in, const TileRef& d, const TileRef& s) {
    if (is_float(d.t->dtype)) fail("dst " + tile_desc(in.dst) + " must have an integer dtype");
    const AxisWalk w = one_axis(in, *s.t);
    if (w.n == 0 && d.n != 0) {
      fail("argmax/argmin over an empty axis of src0 " + tile_desc(in.src[0]) + " (torch raises)");
    }
    const bool is_max = in.op == TileOpcode::kArgMax;
    arg_reduce_values(d.data, d.t->dtype, d.n, s.data, w, is_max);
    done(in.dst);
  }

  void where(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const Operand c = operand(in, 0, in.dst, nullptr);
    const Operand a = operand(in, 1, in.dst, &d);
    const Operand b = operand(in, 2, in.dst, &d);
    where_values(d.data, c, a, b, d.n, d.t->dtype);
    done(in.dst);
  }

  void reduce(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef s = read_tile(in.src[0], "src0");
    if (in.dst == in.src[0]) fail("dst and src0 are the same local " + tile_desc(in.dst));
    const int rank = s.t->rank;
    if (in.reduce_mask >> rank) {
      fail("reduce_mask " + std::to_string(int(in.reduce_mask)) + " names an axis beyond src0 " +
           tile_desc(in.src[0]));
    }
    bool ok = d.t->rank == rank;
    for (int k = 0; ok && k < rank; ++k) {
      ok = d.t->shape[k] == ((in.reduce_mask >> k) & 1 ? 1 : s.t->shape[k]);
    }
    if (!ok) {
      fail("dst " + tile_desc(in.dst) + " is not the keepdim shape of src0 " +
           tile_desc(in.src[0]) + " reduced over mask " + std::to_string(int(in.reduce_mask)));
    }
    if (in.op == TileOpcode::kArgMax || in.op == TileOpcode::kArgMin) return arg_reduce(in, d, s);
    const bool is_prod = in.op == TileOpcode::kReduceProd;
    const bool is_sum = in.op == TileOpcode::kReduceSum || is_prod;
    if (!is_sum && s.n == 0 && d.n != 0) {
      fail("max/min over an empty axis of src0 " + tile_desc(in.src[0]) + " (torch raises)");
    }
    if (!reduce_values(in.op, d.data, d.n, d.t->dtype, pad_shape(d.t->shape, rank), s.data,
                       s.t->dtype, pad_shape(s.t->shape, rank), s_.int_acc)) {
      fail("not a reduction opcode");
    }
    done(in.dst);
  }

  void matmul(const TileInstr& in) {
    const TileRef c = in.accumulate ? read_tile(in.dst, "dst") : tile(in.dst, "dst");
    const TileRef a = read_tile(in.src[0], "src0");
    const TileRef b = read_tile(in.src[1], "src1");
    if (in.dst == in.src[0] || in.dst == in.src[1]) {
      fail("dst " + tile_desc(in.dst) + " is also an operand");
    }
    const LocalTile& ta = *a.t;
    const LocalTile& tb = *b.t;
    const LocalTile& tc = *c.t;
    const int rank = ta.rank;
    bool ok = rank >= 2 && tb.rank == rank && tc.rank == rank;
    for (int k = 0; ok && k < rank - 2; ++k) {
      ok = ta.shape[k] == tb.shape[k] && ta.shape[k] == tc.shape[k];
    }
    if (ok) {
      ok = ta.shape[rank - 1] == tb.shape[rank - 2] && tc.shape[rank - 2] == ta.shape[rank - 2] &&
           tc.shape[rank - 1] == tb.shape[rank - 1];
    }
    if (!ok) {
      fail("shapes do not multiply: src0 " + tile_desc(in.src[0]) + " @ src1 " +
           tile_desc(in.src[1]) + " -> dst " + tile_desc(in.dst) +
           " (want [.., M, K] @ [.., K, N] -> [.., M, N], equal batch axes)");
    }
    const std::int64_t m = ta.shape[rank - 2];
    const std::int64_t kk = ta.shape[rank - 1];
    const std::int64_t nn = tb.shape[rank - 1];
    const std::int64_t batch = numel(ta.shape, rank - 2);
    const bool ints = !is_float(ta.dtype) && !is_float(tb.dtype);
    matmul_values(c.data, c.n, tc.dtype, in.accumulate != 0, a.data, b.data, batch, m, kk, nn,
                  ints);
    done(in.dst);
  }

  // The one axis of reduce_mask (gather/scatter), checked against `rank`.
  int index_axis(const TileInstr& in, int rank) const {
    int axis = -1;
    for (int k = 0; k < kMaxRank; ++k) {
      if ((in.reduce_mask >> k) & 1u) {
        if (axis >= 0 || k >= rank) {
          fail("reduce_mask " + std::to_string(int(in.reduce_mask)) +
               " must name exactly one axis below " + std::to_string(rank));
        }
        axis = k;
      }
    }
    if (axis < 0) fail("reduce_mask names no axis");
    return axis;
  }

  // Element offsets of a dense row-major tile of shape t (strides per axis).
  static void dense_strides(const LocalTile& t, std::int64_t* st) {
    std::int64_t acc = 1;
    for (int k = t.rank - 1; k >= 0; --k) {
      st[k] = acc;
      acc *= t.shape[k];
    }
  }

  std::int64_t checked_index(double v, std::int64_t n, const char* what) const {
    if (!(v >= 0 && v < double(n))) {
      fail(std::string(what) + " index " + std::to_string(std::int64_t(v)) + " is outside [0, " +
           std::to_string(n) + ")");
    }
    return std::int64_t(v);
  }

  void gather(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef x = read_tile(in.src[0], "src0");
    const TileRef ix = read_tile(in.src[1], "src1");
    same_shape(in.dst, in.src[1], "dst", "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    const int r = d.t->rank;
    if (x.t->rank != r) fail("src0 " + tile_desc(in.src[0]) + " must have dst's rank");
    const int a = index_axis(in, r);
    for (int k = 0; k < r; ++k) {
      if (k != a && x.t->shape[k] < d.t->shape[k]) {
        fail("src0 " + tile_desc(in.src[0]) + " is smaller than dst " + tile_desc(in.dst) +
             " on axis " + std::to_string(k));
      }
    }
    std::int64_t ds[kMaxRank], xs[kMaxRank];
    dense_strides(*d.t, ds);
    dense_strides(*x.t, xs);
    for (std::int64_t i = 0; i < d.n; ++i) {
      std::int64_t rem = i, off = 0;
      for (int k = 0; k < r; ++k) {
        const std::int64_t c = rem / ds[k];
        rem -= c * ds[k];
        off += (k == a ? checked_index(ix.data[i], x.t->shape[a], "gather") : c) * xs[k];
      }
      d.data[i] = x.data[off];
    }
    if (d.t->dtype != x.t->dtype) convert_from(d, x.t->dtype);
    done(in.dst);
  }

  void scatter(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef x = read_tile(in.src[0], "src0");
    same_shape(in.dst, in.src[0], "dst", "src0");
    const TileRef ix = read_tile(in.src[1], "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    const int r = d.t->rank;
    if (ix.t->rank != r) fail("src1 " + tile_desc(in.src[1]) + " must have dst's rank");
    const int a = index_axis(in, r);
    for (int k = 0; k < r; ++k) {
      if (k != a && ix.t->shape[k] > d.t->shape[k]) {
        fail("src1 " + tile_desc(in.src[1]) + " is larger than dst " + tile_desc(in.dst));
      }
    }
    const bool scalar_src = (in.scalar_operand & 4u) != 0;
    const double* sv = nullptr;
    if (!scalar_src) {
      const TileRef s = read_tile(in.src[2], "src2");
      same_shape(in.src[1], in.src[2], "src1", "src2");
      sv = s.data;
    }
    if (in.accumulate > 2) fail("accumulate " + std::to_string(int(in.accumulate)) + " is no mode");
    const DType dt = d.t->dtype;
    const IntConv ic = is_float(dt) ? IntConv::kFromFloat : IntConv::kWrap;
    const double scal =
        scalar_src ? round_value(in.scalar[2], dt,
                                 std::trunc(in.scalar[2]) == in.scalar[2] ? IntConv::kWrap
                                                                          : IntConv::kFromFloat)
                   : 0.0;
    if (d.data != x.data) std::copy(x.data, x.data + x.n, d.data);
    if (d.t->dtype != x.t->dtype) convert_from(d, x.t->dtype);
    std::int64_t is[kMaxRank], ds[kMaxRank];
    dense_strides(*ix.t, is);
    dense_strides(*d.t, ds);
    for (std::int64_t i = 0; i < ix.n; ++i) {
      std::int64_t rem = i, off = 0;
      for (int k = 0; k < r; ++k) {
        const std::int64_t c = rem / is[k];
        rem -= c * is[k];
        off += (k == a ? checked_index(ix.data[i], d.t->shape[a], "scatter") : c) * ds[k];
      }
      const double v = scalar_src ? scal : round_value(sv[i], dt, ic);
      double& o = d.data[off];
      if (in.accumulate == 0) {
        o = v;
      } else if (!is_float(dt)) {
        const std::int64_t p =
            in.accumulate == 1 ? wrap_add(as_i64(o), as_i64(v)) : wrap_mul(as_i64(o), as_i64(v));
        o = round_value(double(p), dt, IntConv::kWrap);
      } else {
        o = round_value(in.accumulate == 1 ? o + v : o * v, dt, IntConv::kFromFloat);
      }
    }
    done(in.dst);
  }

  void scatter_rows(const TileInstr& in) {
    copy_rows_in(in.region.buffer);
    const TileRef s = read_tile(in.src[0], "src0");
    const TileRef ix = read_tile(in.src[1], "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    const GlobalRegion& r = in.region;
    if (r.rank < 1 || s.t->rank < 1) fail("needs a region and rows of rank 1 or more");
    const std::int64_t cols = r.shape[r.rank - 1];
    if (s.t->shape[s.t->rank - 1] != cols) {
      fail("src0 " + tile_desc(in.src[0]) + " rows do not have the " + std::to_string(cols) +
           " elements of the " + region_desc(r));
    }
    const std::int64_t nrows = cols == 0 ? 0 : s.n / cols;
    if (ix.n != nrows) {
      fail("src1 " + tile_desc(in.src[1]) + " has " + std::to_string(ix.n) + " row numbers for " +
           std::to_string(nrows) + " rows of src0");
    }
    std::uint8_t* buf = region_buffer(r);
    if (!buf) return;
    const std::int64_t total_rows = cols == 0 ? 0 : numel(r.shape, r.rank) / cols;
    for (std::int64_t i = 0; i < nrows; ++i) {
      std::int64_t row = checked_index(ix.data[i], total_rows, "scatter_update row");
      std::int64_t off = r.offset_elems;
      for (int k = r.rank - 2; k >= 0; --k) {
        const std::int64_t c = row % r.shape[k];
        row /= r.shape[k];
        off += c * r.stride[k];
      }
      store_row(buf, r.dtype, off, r.stride[r.rank - 1], s.data + i * cols, cols, s.t->dtype);
    }
  }

  void gather_elems(const TileInstr& in) {
    const TileRef d = tile(in.dst, "dst");
    const TileRef ix = read_tile(in.src[1], "src1");
    if (is_float(ix.t->dtype)) fail("src1 " + tile_desc(in.src[1]) + " must be an index tile");
    if (ix.n != d.n) {
      fail("src1 " + tile_desc(in.src[1]) + " has " + std::to_string(ix.n) +
           " element numbers for the " + std::to_string(d.n) + " elements of dst " +
           tile_desc(in.dst));
    }
    const GlobalRegion& r = in.region;
    const std::uint8_t* buf = region_buffer(r);
    const std::int64_t total = numel(r.shape, r.rank);
    for (std::int64_t i = 0; i < d.n; ++i) {
      std::int64_t e = checked_index(ix.data[i], buf ? total : 0, "load element");
      std::int64_t off = r.offset_elems;
      for (int k = r.rank - 1; k >= 0; --k) {
        off += (e % r.shape[k]) * r.stride[k];
        e /= r.shape[k];
      }
      d.data[i] = round_value(load_elem(buf, r.dtype, off), d.t->dtype, int_conv_from(r.dtype));
    }
    done(in.dst);
  }

  // ExecScratch::held's bits.
  static constexpr std::uint8_t kDoubles = ExecScratch::kHeldDoubles;
  static constexpr std::uint8_t kFloats = ExecScratch::kHeldFloats;
  static constexpr std::uint8_t kUnchecked = ExecScratch::kHeldUnchecked;
  static constexpr std::uint8_t kRows = ExecScratch::kHeldRows;

  const TaskProgram& p_;
  const GlobalMemory& mem_;
  ExecScratch& s_;
  std::size_t idx_ = 0;
  bool floats_ = false;  // float_kernels_exact() for this task
};

}  // namespace

void execute(const TaskProgram& p, const GlobalMemory& mem, ExecScratch& scratch) {
  Executor(p, mem, scratch).run();
}

}  // namespace pypto::exec
