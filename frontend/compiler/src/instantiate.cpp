// SPDX-License-Identifier: Apache-2.0
// instantiate(): runs the kernel's control flow with concrete sizes and builds the launch.
//
//  1. Walk the control flow. Every executed straight-line run of statements is a root
//     instance; its units emit leaf tasks (programs of tile instructions) tile by tile.
//     Workspace regions are still symbolic here: root-inner values hold offsets relative to
//     their root, launch-lifetime values name their region (slot).
//  2. Stitch roots into device tasks (stitch_function_max_num or, memory-driven, the
//     workspace budget; submit_before_loop; one device task per parallel iteration).
//  3. Lay out the workspace and patch every region to a real buffer offset.
//  4. Exact memory dependencies (deps.cpp), memory ranges and costs -> TaskGraphBuilder.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>

#include "deps.h"
#include "ir.h"
#include "pypto/sched/errors.h"
#include "pypto/sched/stitcher.h"
#include "pypto/sim/cost_model.h"
#include "task_cost.h"

namespace pypto::compiler {

namespace detail {
namespace {

constexpr std::uint32_t kRootBuffer = 0xFFFF0000u;      // root-inner pool, root-relative
constexpr std::uint32_t kSlotBufferBase = 0x80000000u;  // + launch region id
constexpr std::uint64_t kAlignBytes = 512;              // one L2 line: values never share one
constexpr std::int64_t kCopyTileBytes = 64 * 1024;      // copies without a vec_tile

std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t clamp0(std::int64_t v) { return v < 0 ? 0 : v; }

// An allocation: where a value's elements live (for bounds checks and naming).
struct Storage {
  std::uint32_t buffer = 0;
  std::int64_t base_bytes = 0;
  std::uint64_t size_bytes = 0;
  int value = -1;
};

// A value at run time: its concrete shape and valid shape, and (if it has one) the strided
// region of global memory holding it.
struct RtVal {
  int rank = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1};
  std::int64_t valid[kMaxRank] = {1, 1, 1, 1};
  bool has_region = false;
  GlobalRegion region;
  Storage storage;
};

struct TaskRec {
  sched::CoreType core = sched::CoreType::kAiv;
  std::uint32_t root = 0;
  std::uint32_t kernel = 0;
  std::uint32_t cycles = 0;
  std::uint16_t tiles = 1;
  std::uint32_t acc_begin = 0, acc_end = 0;
};

struct Access {
  GlobalRegion r;
  bool write = false;
};

struct RootRec {
  std::uint32_t first_task = 0, num_tasks = 0;
  std::uint64_t bytes = 0;
  bool barrier = false;
  std::uint32_t pgroup = 0, piter = 0;
  std::string ploc;  // parallel loop (messages)
  std::uint32_t dt = 0;
  std::uint64_t base = 0;
};

// Builds one task: locals, instructions and the regions it touches.
struct TaskBuilder {
  TaskProgram p;
  std::vector<Access> acc;
  bool clipped = false;  // some load/store covers less than its local tile

  int local(DType d, int rank, const std::int64_t* shape) {
    LocalTile t;
    t.dtype = d;
    t.rank = static_cast<std::uint8_t>(rank);
    for (int k = 0; k < rank; ++k) t.shape[k] = std::max<std::int64_t>(1, shape[k]);
    p.locals.push_back(t);
    return static_cast<int>(p.locals.size() - 1);
  }
};

// Row-major dense strides for v's shape, starting at v.region's offset.
void set_dense_layout(RtVal& v) {
  v.region.rank = static_cast<std::uint8_t>(v.rank);
  std::int64_t stride = 1;
  for (int a = v.rank - 1; a >= 0; --a) {
    v.region.shape[a] = v.shape[a];
    v.region.stride[a] = stride;
    stride *= v.shape[a];
  }
}

// Whether a tile of extents `ext` is a whole tile of sizes T (no tail on any axis).
bool covers_tile(const std::int64_t* ext, const std::int64_t* T, int rank) {
  bool full = true;
  for (int k = 0; k < rank; ++k) full = full && ext[k] == T[k];
  return full;
}

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

bool region_empty(const GlobalRegion& r) {
  for (int k = 0; k < r.rank; ++k) {
    if (r.shape[k] <= 0) return true;
  }
  return false;
}

class Instance {
 public:
  Instance(const Kernel& k, const std::vector<LaunchTensor>& tensors,
           const std::map<std::string, std::int64_t>& bindings, const LaunchOptions& opt,
           const sim::ChipConfig& chip)
      : k_(k), tensors_(tensors), bindings_(bindings), opt_(opt), chip_(chip) {}

  Launch run();

 private:
  // ---- setup ----
  void check_options() const;
  void bind();

  // ---- control flow ----
  void exec_variants(const std::vector<Variant>& vs, const std::string& loc);
  void exec_loop(const Stmt& st);
  void open_root();
  void close_root();

  // ---- values and storage ----
  RtVal make_val(int value);
  Storage allocate(int value, std::uint64_t bytes);
  void give_dense_storage(int value, RtVal& v);
  // Evaluates the shape of a unit's output `out`, with dense storage when it is materialised.
  // False when the unit has nothing to emit (the output is neither materialised nor written).
  bool make_output(const Unit& u, int out);
  std::string value_name(int value) const;

  // ---- units ----
  void exec_unit(const Unit& u);
  void emit_group(const Unit& u);
  void emit_reduce(const Unit& u);
  void emit_matmul(const Unit& u);
  void emit_permute(const Unit& u);
  void emit_concat(const Unit& u);
  void emit_copy_write(const Unit& u);
  void emit_view(const Unit& u);
  void emit_reshape(const Unit& u);
  // Tiled copy of `src` (valid part) into the region `dst` (same shape).
  void emit_copy(const Unit& u, const RtVal& src, const GlobalRegion& dst, const Storage& dst_st,
                 const std::vector<std::int64_t>& vec_tile, const std::string& dst_name);

  // Tile sizes: vec_tile aligned right to `rank` (missing leading sizes are 1).
  static void tile_sizes(const std::vector<std::int64_t>& vt, int rank, std::int64_t* out);
  static void copy_tile_sizes(const RtVal& v, std::int64_t* out);
  // A region of `v` starting at element offsets `off` with extents `ext`.
  static GlobalRegion sub_region(const RtVal& v, const std::int64_t* off, const std::int64_t* ext,
                                 int rank);
  void load(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
            const std::string& name, const std::string& loc);
  void store(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
             const std::string& name, const std::string& loc);
  void check_bounds(const GlobalRegion& r, const Storage& st, const std::string& name,
                    const std::string& loc, bool write) const;
  // Destination region of absorbed write w for a tile at `off` of extent `ext` of its source.
  bool write_region(const Stmt& w, const std::int64_t* woff, const std::int64_t* off,
                    const std::int64_t* ext, GlobalRegion* out);
  void commit(TaskBuilder& tb, const Unit& u, sched::CoreType core, bool full_tile,
              std::uint16_t tiles);
  std::vector<std::int64_t> eval_offsets(const std::vector<ExprId>& offs);
  // Destination offsets of each write the unit absorbed (u.writes order).
  std::vector<std::vector<std::int64_t>> write_offsets(const Unit& u);
  // Stores `local` (a tile at `off` of extent `ext`) to every write of the unit.
  void store_writes(TaskBuilder& tb, int local, const Unit& u,
                    const std::vector<std::vector<std::int64_t>>& woffs, const std::int64_t* off,
                    const std::int64_t* ext);
  // Rejects a write that covers [o, o + n) on `axis` of a destination of size `size`.
  void check_write_span(const Stmt& w, int axis, std::int64_t o, std::int64_t n,
                        std::int64_t size) const;

  // ---- post passes ----
  void stitch(Launch& l);
  void patch();
  void build_graph(Launch& l);

  const Kernel& k_;
  const std::vector<LaunchTensor>& tensors_;
  const std::map<std::string, std::int64_t>& bindings_;
  const LaunchOptions& opt_;
  const sim::ChipConfig& chip_;

  Env env_;
  std::string kernel_loc_;
  bool waits_ = false;
  std::vector<RtVal> vals_;
  std::vector<TaskRec> tasks_;
  std::vector<TaskProgram> progs_;
  std::vector<Access> acc_;
  std::vector<RootRec> roots_;
  std::vector<std::string> kernel_names_;
  std::unordered_map<std::string, std::uint32_t> kernel_ids_;
  std::vector<std::string> log_;
  std::uint64_t tile_ops_ = 0;

  bool root_open_ = false;
  RootRec cur_;
  std::uint64_t root_bump_ = 0;
  bool pending_barrier_ = false;
  bool in_parallel_ = false;
  std::uint32_t pgroup_ = 0, piter_ = 0, next_group_ = 1;
  std::string ploc_;
  std::uint32_t par_ = 1;  // workspace copies for parallel loops
  std::vector<std::uint64_t> slot_bytes_;
  std::vector<std::uint64_t> slot_base_;
  std::uint64_t launch_bytes_ = 0;
  std::uint64_t pool_slice_ = 0;
};

// ---------------------------------------------------------------------------------------------
// setup

void check_range(const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) {
    throw ConfigError(std::string("runtime.") + key + ": " + std::to_string(v) +
                      " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
}

void Instance::check_options() const {
  const sched::RuntimeOptions& o = opt_.runtime;
  check_range("stitch_function_max_num", o.stitch_function_max_num, 1,
              sched::RuntimeOptions::kMaxStitch);
  check_range("max_workspace_kb", o.max_workspace_kb, 0, sched::RuntimeOptions::kMaxWorkspaceKb);
  check_range("valid_shape_optimize", o.valid_shape_optimize, 0, 1);
  check_range("device_sched_parallelism", o.device_sched_parallelism, 1,
              sched::RuntimeOptions::kMaxParallelism);
}

void Instance::bind() {
  kernel_loc_ = "kernel " + k_.name;
  const std::string& kName = kernel_loc_;
  env_.slot.assign(k_.slot_names.size(), 0);
  env_.bound.assign(k_.slot_names.size(), 0);
  env_.tensors = &tensors_;
  env_.ready_on_host = &opt_.runtime.ready_on_host_tensors;
  env_.waits_for_aicore = &waits_;
  env_.loc = &kName;
  for (std::size_t s = 0; s < k_.symbols.size(); ++s) {
    const auto it = bindings_.find(k_.symbols[s]);
    if (it == bindings_.end()) {
      throw ConfigError(kName + ": no binding for dynamic dimension \"" + k_.symbols[s] + "\"");
    }
    env_.slot[s] = it->second;
    env_.bound[s] = 1;
  }
  if (tensors_.size() != k_.params.size()) {
    throw ConfigError(kName + ": got " + std::to_string(tensors_.size()) + " tensors, expected " +
                      std::to_string(k_.params.size()) + " (one per tensor parameter)");
  }
  vals_.assign(k_.values.size(), RtVal{});
  for (std::size_t i = 0; i < k_.params.size(); ++i) {
    const Param& p = k_.params[i];
    const LaunchTensor& t = tensors_[i];
    const std::string where = kName + ": tensor \"" + p.name + "\"";
    if (t.dtype != p.dtype) {
      throw ConfigError(where + " has dtype " + std::string(sim::to_string(t.dtype)) +
                        ", expected " + std::string(sim::to_string(p.dtype)));
    }
    if (t.shape.size() != p.shape.size()) {
      throw ConfigError(where + " has rank " + std::to_string(t.shape.size()) + ", expected " +
                        std::to_string(p.shape.size()));
    }
    RtVal v;
    v.rank = static_cast<int>(p.shape.size());
    std::uint64_t elems = 1;
    for (int a = 0; a < v.rank; ++a) {
      const std::int64_t want = eval(k_, p.shape[a], env_);
      if (t.shape[a] != want) {
        throw ConfigError(where + " has size " + std::to_string(t.shape[a]) + " on axis " +
                          std::to_string(a) + ", expected " + std::to_string(want) +
                          " (from the bindings)");
      }
      v.shape[a] = v.valid[a] = want;
      elems *= static_cast<std::uint64_t>(want);
    }
    const std::uint64_t bytes = elems * sim::dtype_bytes(p.dtype);
    if (t.size_bytes < bytes || (bytes > 0 && t.data == nullptr)) {
      throw ConfigError(where + " has " + std::to_string(t.size_bytes) +
                        " bytes of host data, "
                        "expected " +
                        std::to_string(bytes));
    }
    v.has_region = true;
    v.region.buffer = static_cast<std::uint32_t>(i);
    v.region.dtype = p.dtype;
    set_dense_layout(v);
    v.storage = Storage{static_cast<std::uint32_t>(i), 0, bytes, p.value};
    vals_[p.value] = v;
  }
  par_ =
      k_.has_parallel_loop ? static_cast<std::uint32_t>(opt_.runtime.device_sched_parallelism) : 1;
  slot_bytes_.assign(static_cast<std::size_t>(k_.num_launch_slots) * par_, 0);
}

// ---------------------------------------------------------------------------------------------
// control flow

void Instance::exec_variants(const std::vector<Variant>& vs, const std::string& loc) {
  env_.loc = &loc;
  for (const Variant& v : vs) {
    env_.loc = &loc;
    if (!eval(k_, v.guard, env_)) continue;
    for (const int ui : v.plan) {
      const Unit& u = k_.units[ui];
      if (u.kind == UnitKind::kLoop) {
        exec_loop(k_.stmts[u.stmt]);
      } else {
        open_root();
        exec_unit(u);
      }
    }
    return;
  }
  throw ConfigError(loc +
                    ": no variant guard holds for the current values (the IR promises "
                    "exactly one)");
}

void Instance::exec_loop(const Stmt& st) {
  const LoopInfo& L = k_.loops[st.loop];
  env_.loc = &st.loc;
  const std::int64_t start = eval(k_, L.start, env_);
  const std::int64_t stop = eval(k_, L.stop, env_);
  const std::int64_t step = eval(k_, L.step, env_);
  if (step <= 0) {
    throw ConfigError(st.loc + ": loop step evaluates to " + std::to_string(step) +
                      "; expected a positive step");
  }
  close_root();
  if (L.submit_before_loop) pending_barrier_ = true;
  const std::int64_t n = stop > start ? (stop - start - 1) / step + 1 : 0;
  const bool par = L.parallel && !in_parallel_;
  if (par) {
    in_parallel_ = true;
    pgroup_ = next_group_++;
    piter_ = 0;
    ploc_ = st.loc;
  }
  std::vector<std::int64_t> unroll = L.unroll;
  if (L.has_nested_loop || par) unroll = {1};
  std::int64_t it = 0;
  for (const std::int64_t f : unroll) {
    while (n - it >= f) {
      for (std::int64_t j = 0; j < f; ++j, ++it) {
        env_.slot[L.index_slot] = start + it * step;
        env_.bound[L.index_slot] = 1;
        exec_variants(L.variants, st.loc);
      }
      close_root();
      if (par) ++piter_;
    }
  }
  env_.bound[L.index_slot] = 0;
  if (par) {
    in_parallel_ = false;
    pgroup_ = 0;
  }
}

void Instance::open_root() {
  if (root_open_) return;
  root_open_ = true;
  cur_ = RootRec{};
  cur_.first_task = static_cast<std::uint32_t>(tasks_.size());
  cur_.pgroup = in_parallel_ ? pgroup_ : 0;
  cur_.piter = in_parallel_ ? piter_ : 0;
  cur_.ploc = in_parallel_ ? ploc_ : std::string();
  root_bump_ = 0;
}

void Instance::close_root() {
  if (!root_open_) return;
  root_open_ = false;
  cur_.num_tasks = static_cast<std::uint32_t>(tasks_.size()) - cur_.first_task;
  if (cur_.num_tasks == 0) return;  // nothing to stitch (only aliases ran)
  cur_.bytes = root_bump_;
  cur_.barrier = pending_barrier_;
  pending_barrier_ = false;
  roots_.push_back(std::move(cur_));
}

// ---------------------------------------------------------------------------------------------
// values

std::string Instance::value_name(int value) const {
  const ValueInfo& v = k_.values[value];
  if (v.param >= 0) return "tensor \"" + k_.params[v.param].name + "\"";
  return "value %" + std::to_string(v.ir_id);
}

RtVal Instance::make_val(int value) {
  const ValueInfo& info = k_.values[value];
  RtVal v;
  v.rank = static_cast<int>(info.shape.size());
  for (int a = 0; a < v.rank; ++a) {
    v.shape[a] = eval(k_, info.shape[a], env_);
    if (v.shape[a] < 0) {
      throw ConfigError(*env_.loc + ": " + value_name(value) + " has size " +
                        std::to_string(v.shape[a]) + " on axis " + std::to_string(a) +
                        "; expected a size >= 0");
    }
    v.valid[a] = info.valid.empty() ? v.shape[a]
                                    : std::min(v.shape[a], clamp0(eval(k_, info.valid[a], env_)));
  }
  return v;
}

Storage Instance::allocate(int value, std::uint64_t bytes) {
  const ValueInfo& info = k_.values[value];
  Storage s;
  s.size_bytes = bytes;
  s.value = value;
  if (info.storage == StorageClass::kLaunch) {
    NPU_CHECK(info.launch_slot >= 0, "launch value without a workspace region");
    const std::uint32_t copy = info.parallel_copies && in_parallel_ ? piter_ % par_ : 0;
    const std::size_t id = static_cast<std::size_t>(info.launch_slot) * par_ + copy;
    slot_bytes_[id] = std::max(slot_bytes_[id], align_up(bytes, kAlignBytes));
    s.buffer = kSlotBufferBase + static_cast<std::uint32_t>(id);
    s.base_bytes = 0;
  } else {
    NPU_CHECK(root_open_, "root-inner allocation outside a root");
    s.buffer = kRootBuffer;
    s.base_bytes = static_cast<std::int64_t>(root_bump_);
    root_bump_ += align_up(bytes, kAlignBytes);
  }
  return s;
}

void Instance::give_dense_storage(int value, RtVal& v) {
  const ValueInfo& info = k_.values[value];
  std::uint64_t elems = 1;
  for (int a = 0; a < v.rank; ++a) elems *= static_cast<std::uint64_t>(v.shape[a]);
  const std::uint32_t es = sim::dtype_bytes(info.dtype);
  v.storage = allocate(value, elems * es);
  v.has_region = true;
  v.region = GlobalRegion{};
  v.region.buffer = v.storage.buffer;
  v.region.offset_elems = v.storage.base_bytes / es;
  v.region.dtype = info.dtype;
  set_dense_layout(v);
}

bool Instance::make_output(const Unit& u, int out) {
  vals_[out] = make_val(out);
  const bool need_out = k_.values[out].materialised;
  if (need_out) give_dense_storage(out, vals_[out]);
  return need_out || !u.writes.empty();
}

std::vector<std::int64_t> Instance::eval_offsets(const std::vector<ExprId>& offs) {
  std::vector<std::int64_t> out(offs.size());
  for (std::size_t i = 0; i < offs.size(); ++i) out[i] = eval(k_, offs[i], env_);
  return out;
}

std::vector<std::vector<std::int64_t>> Instance::write_offsets(const Unit& u) {
  std::vector<std::vector<std::int64_t>> woffs;
  for (const int w : u.writes) woffs.push_back(eval_offsets(k_.stmts[w].offsets));
  return woffs;
}

// ---------------------------------------------------------------------------------------------
// task emission helpers

void Instance::tile_sizes(const std::vector<std::int64_t>& vt, int rank, std::int64_t* out) {
  const int n = static_cast<int>(vt.size());
  for (int k = 0; k < rank; ++k) {
    const int src = n - rank + k;
    out[k] = src >= 0 ? vt[src] : 1;
  }
}

void Instance::copy_tile_sizes(const RtVal& v, std::int64_t* out) {
  const std::int64_t es = sim::dtype_bytes(v.region.dtype);
  std::int64_t budget = std::max<std::int64_t>(1, kCopyTileBytes / es);  // elements
  for (int k = v.rank - 1; k >= 0; --k) {
    out[k] = std::max<std::int64_t>(1, std::min(v.shape[k], budget));
    budget = std::max<std::int64_t>(1, budget / out[k]);
  }
}

GlobalRegion Instance::sub_region(const RtVal& v, const std::int64_t* off, const std::int64_t* ext,
                                  int rank) {
  GlobalRegion r = v.region;
  r.rank = static_cast<std::uint8_t>(rank);
  for (int k = 0; k < rank; ++k) {
    r.offset_elems += off[k] * v.region.stride[k];
    r.shape[k] = clamp0(ext[k]);
  }
  return r;
}

void Instance::check_bounds(const GlobalRegion& r, const Storage& st, const std::string& name,
                            const std::string& loc, bool write) const {
  const std::int64_t es = sim::dtype_bytes(r.dtype);
  std::int64_t last = r.offset_elems;
  for (int k = 0; k < r.rank; ++k) last += (r.shape[k] - 1) * r.stride[k];
  const std::int64_t lo = r.offset_elems * es;
  const std::int64_t hi = (last + 1) * es;
  const std::int64_t st_hi = st.base_bytes + static_cast<std::int64_t>(st.size_bytes);
  if (lo < st.base_bytes || hi > st_hi) {
    throw ConfigError(loc + ": " + (write ? "writes" : "reads") + " bytes [" +
                      std::to_string(lo - st.base_bytes) + ", " +
                      std::to_string(hi - st.base_bytes) + ") of " + name + ", which has " +
                      std::to_string(st.size_bytes) +
                      " bytes; check the offsets and valid_shape that lead here");
  }
}

void Instance::load(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
                    const std::string& name, const std::string& loc) {
  const LocalTile& lt = tb.p.locals[local];
  bool whole = r.rank == lt.rank;
  for (int k = 0; k < r.rank && whole; ++k) whole = r.shape[k] == lt.shape[k];
  if (!whole) {
    // Nothing (or only a prefix box) of this tile is valid: the rest of the local is zero.
    tb.clipped = true;
    TileInstr f;
    f.op = TileOpcode::kFill;
    f.dst = local;
    f.scalar_operand = 1;
    tb.p.instrs.push_back(f);
    if (region_empty(r)) return;
  }
  check_bounds(r, st, name, loc, false);
  TileInstr in;
  in.op = TileOpcode::kLoad;
  in.dst = local;
  in.region = r;
  tb.p.instrs.push_back(in);
  tb.acc.push_back(Access{r, false});
}

void Instance::store(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
                     const std::string& name, const std::string& loc) {
  if (region_empty(r)) return;
  const LocalTile& lt = tb.p.locals[local];
  for (int k = 0; k < r.rank; ++k) tb.clipped = tb.clipped || r.shape[k] != lt.shape[k];
  check_bounds(r, st, name, loc, true);
  TileInstr in;
  in.op = TileOpcode::kStore;
  in.src[0] = local;
  in.region = r;
  tb.p.instrs.push_back(in);
  tb.acc.push_back(Access{r, true});
}

void Instance::check_write_span(const Stmt& w, int axis, std::int64_t o, std::int64_t n,
                                std::int64_t size) const {
  if (n > 0 && (o < 0 || o + n > size)) {
    throw ConfigError(w.loc + ": the write covers [" + std::to_string(o) + ", " +
                      std::to_string(o + n) + ") on axis " + std::to_string(axis) + " of " +
                      value_name(w.dst) + ", which has size " + std::to_string(size));
  }
}

bool Instance::write_region(const Stmt& w, const std::int64_t* woff, const std::int64_t* off,
                            const std::int64_t* ext, GlobalRegion* out) {
  const RtVal& d = vals_[w.dst];
  NPU_CHECK(d.has_region, "write destination without storage");
  std::int64_t o[kMaxRank];
  for (int k = 0; k < d.rank; ++k) {
    o[k] = woff[k] + off[k];
    check_write_span(w, k, o[k], ext[k], d.shape[k]);
  }
  *out = sub_region(d, o, ext, d.rank);
  return !region_empty(*out);
}

void Instance::store_writes(TaskBuilder& tb, int local, const Unit& u,
                            const std::vector<std::vector<std::int64_t>>& woffs,
                            const std::int64_t* off, const std::int64_t* ext) {
  for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
    const Stmt& w = k_.stmts[u.writes[wi]];
    GlobalRegion wr;
    if (write_region(w, woffs[wi].data(), off, ext, &wr)) {
      store(tb, local, wr, vals_[w.dst].storage, value_name(w.dst), w.loc);
    }
  }
}

void Instance::commit(TaskBuilder& tb, const Unit& u, sched::CoreType core, bool full_tile,
                      std::uint16_t tiles) {
  TaskRec t;
  t.core = core;
  t.root = static_cast<std::uint32_t>(roots_.size());
  auto [it, inserted] =
      kernel_ids_.emplace(u.kernel, static_cast<std::uint32_t>(kernel_names_.size()));
  if (inserted) kernel_names_.push_back(u.kernel);
  t.kernel = it->second;
  std::uint64_t cycles = 0;
  for (const TileInstr& in : tb.p.instrs) {
    sim::TileOp op;
    if (!priced_op(tb.p, in, &op)) continue;
    cycles += sim::tile_op_cycles(op, chip_);
    ++tile_ops_;
  }
  // A leaf whose extents depend on symbols computes them at run time; with
  // valid_shape_optimize its full blocks run the static leaf instead.
  if (u.dynamic && !(opt_.runtime.valid_shape_optimize == 1 && full_tile && !tb.clipped)) {
    cycles += chip_.cost.dynamic_shape_overhead_cycles;
  }
  t.cycles = static_cast<std::uint32_t>(std::min<std::uint64_t>(cycles, 0xFFFFFFFFull));
  t.tiles = tiles;
  t.acc_begin = static_cast<std::uint32_t>(acc_.size());
  acc_.insert(acc_.end(), tb.acc.begin(), tb.acc.end());
  t.acc_end = static_cast<std::uint32_t>(acc_.size());
  tasks_.push_back(t);
  progs_.push_back(std::move(tb.p));
}

// ---------------------------------------------------------------------------------------------
// units

void Instance::exec_unit(const Unit& u) {
  env_.loc = &u.loc;
  switch (u.kind) {
    case UnitKind::kAlloc: {
      const int out = k_.stmts[u.ops[0]].out;
      vals_[out] = make_val(out);
      give_dense_storage(out, vals_[out]);
      return;
    }
    case UnitKind::kView: return emit_view(u);
    case UnitKind::kReshape: return emit_reshape(u);
    case UnitKind::kEltwise: return emit_group(u);
    case UnitKind::kReduce: return emit_reduce(u);
    case UnitKind::kMatmul: return emit_matmul(u);
    case UnitKind::kPermute: return emit_permute(u);
    case UnitKind::kConcat: return emit_concat(u);
    case UnitKind::kCopyWrite: return emit_copy_write(u);
    case UnitKind::kLoop: break;
  }
  NPU_CHECK(false, "exec_unit: unexpected unit kind");
}

TileOpcode opcode_of(OpKind k) {
  switch (k) {
    case OpKind::kFull: return TileOpcode::kFill;
    case OpKind::kAdd: return TileOpcode::kAdd;
    case OpKind::kSub: return TileOpcode::kSub;
    case OpKind::kMul: return TileOpcode::kMul;
    case OpKind::kDiv: return TileOpcode::kDiv;
    case OpKind::kMaximum: return TileOpcode::kMaximum;
    case OpKind::kMinimum: return TileOpcode::kMinimum;
    case OpKind::kRemainder: return TileOpcode::kRemainder;
    case OpKind::kPow: return TileOpcode::kPow;
    case OpKind::kEq: return TileOpcode::kEq;
    case OpKind::kNe: return TileOpcode::kNe;
    case OpKind::kLt: return TileOpcode::kLt;
    case OpKind::kLe: return TileOpcode::kLe;
    case OpKind::kGt: return TileOpcode::kGt;
    case OpKind::kGe: return TileOpcode::kGe;
    case OpKind::kLogicalAnd: return TileOpcode::kLogicalAnd;
    case OpKind::kLogicalOr: return TileOpcode::kLogicalOr;
    case OpKind::kNeg: return TileOpcode::kNeg;
    case OpKind::kAbs: return TileOpcode::kAbs;
    case OpKind::kRelu: return TileOpcode::kRelu;
    case OpKind::kExp: return TileOpcode::kExp;
    case OpKind::kLog: return TileOpcode::kLog;
    case OpKind::kSqrt: return TileOpcode::kSqrt;
    case OpKind::kRsqrt: return TileOpcode::kRsqrt;
    case OpKind::kReciprocal: return TileOpcode::kReciprocal;
    case OpKind::kSigmoid: return TileOpcode::kSigmoid;
    case OpKind::kTanh: return TileOpcode::kTanh;
    case OpKind::kFloor: return TileOpcode::kFloor;
    case OpKind::kLogicalNot: return TileOpcode::kLogicalNot;
    case OpKind::kWhere: return TileOpcode::kWhere;
    case OpKind::kCast: return TileOpcode::kCast;
    case OpKind::kClone:
    case OpKind::kExpandClone: return TileOpcode::kCopy;
    case OpKind::kSum: return TileOpcode::kReduceSum;
    case OpKind::kAmax: return TileOpcode::kReduceMax;
    case OpKind::kAmin: return TileOpcode::kReduceMin;
    default: break;
  }
  NPU_CHECK(false, std::string("no tile opcode for op ") + op_name(k));
  return TileOpcode::kLoad;
}

// Iterates the tiles of a grid in row-major order.
template <class F>
void for_each_tile(int rank, const std::int64_t* extent, const std::int64_t* tile, F&& f) {
  std::int64_t count[kMaxRank], idx[kMaxRank] = {0, 0, 0, 0};
  for (int k = 0; k < rank; ++k) {
    if (extent[k] <= 0) return;
    count[k] = ceil_div(extent[k], tile[k]);
  }
  std::int64_t off[kMaxRank] = {0, 0, 0, 0}, len[kMaxRank] = {1, 1, 1, 1};
  while (true) {
    for (int k = 0; k < rank; ++k) {
      off[k] = idx[k] * tile[k];
      len[k] = std::min(tile[k], extent[k] - off[k]);
    }
    f(off, len);
    int k = rank - 1;
    while (k >= 0 && ++idx[k] == count[k]) idx[k--] = 0;
    if (k < 0) return;
  }
}

void Instance::emit_group(const Unit& u) {
  for (const int s : u.ops) {
    const int out = k_.stmts[s].out;
    vals_[out] = make_val(out);
  }
  for (const int v : u.stores) give_dense_storage(v, vals_[v]);
  const Stmt& first = k_.stmts[u.ops.front()];
  const RtVal S = vals_[first.out];
  const int r = S.rank;
  std::int64_t T[kMaxRank];
  tile_sizes(first.vec_tile, r, T);
  for (const int x : u.ext_inputs) {
    const RtVal& xv = vals_[x];
    NPU_CHECK(xv.has_region, "fusion group input without storage: " + value_name(x));
    for (int k = r - xv.rank; k < r; ++k) {
      const std::int64_t d = xv.shape[k - (r - xv.rank)];
      if (d != 1 && d != S.shape[k]) {
        throw ConfigError(u.loc + ": " + value_name(x) + " has size " + std::to_string(d) +
                          " on axis " + std::to_string(k - (r - xv.rank)) +
                          ", which does not broadcast to " + std::to_string(S.shape[k]));
      }
    }
  }
  // Scalars once per execution (expression scalars depend on loop indices).
  std::vector<std::array<double, 3>> scalars(u.ops.size());
  for (std::size_t i = 0; i < u.ops.size(); ++i) {
    const Stmt& st = k_.stmts[u.ops[i]];
    env_.loc = &st.loc;
    for (std::size_t j = 0; j < st.inputs.size() && j < 3; ++j) {
      const Operand& o = st.inputs[j];
      if (o.value < 0) {
        scalars[i][j] =
            o.expr != kNoExpr ? static_cast<double>(eval(k_, o.expr, env_)) : o.constant;
      }
    }
  }
  std::vector<std::vector<std::int64_t>> woffs;
  for (const int w : u.writes) {
    env_.loc = &k_.stmts[w].loc;
    woffs.push_back(eval_offsets(k_.stmts[w].offsets));
  }
  env_.loc = &u.loc;
  // Values whose valid part this group delivers (to their own storage or a write).
  std::vector<int> delivered = u.stores;
  for (const int w : u.writes) delivered.push_back(k_.stmts[w].src);
  std::unordered_map<int, int> local_of;
  for_each_tile(r, S.shape, T, [&](const std::int64_t* off, const std::int64_t* len) {
    // The tile computes on the part some delivered value has valid; nothing valid: no task.
    std::int64_t E[kMaxRank], ext[kMaxRank];
    for (int k = 0; k < r; ++k) {
      std::int64_t e = 0;
      for (const int v : delivered) e = std::max(e, std::min(len[k], vals_[v].valid[k] - off[k]));
      E[k] = e;
      if (e <= 0) return;
    }
    bool any = false;
    for (const int v : delivered) {
      bool nonempty = true;
      for (int k = 0; k < r; ++k) nonempty = nonempty && vals_[v].valid[k] - off[k] > 0;
      any = any || nonempty;
    }
    if (!any) return;
    TaskBuilder tb;
    local_of.clear();
    const bool full = covers_tile(E, T, r);
    for (const int x : u.ext_inputs) {
      const RtVal& xv = vals_[x];
      const int loc_idx = tb.local(k_.values[x].dtype, r, E);
      local_of[x] = loc_idx;
      // Broadcast (numpy, aligned right): missing or size-1 axes are read with stride 0.
      GlobalRegion reg = xv.region;
      reg.rank = static_cast<std::uint8_t>(r);
      for (int k = 0; k < r; ++k) {
        const int kx = k - (r - xv.rank);
        if (kx < 0 || (xv.shape[kx] == 1 && S.shape[k] != 1)) {
          reg.shape[k] = kx >= 0 && xv.valid[kx] <= 0 ? 0 : E[k];
          reg.stride[k] = 0;
        } else {
          reg.shape[k] = clamp0(std::min(E[k], xv.valid[kx] - off[k]));
          reg.stride[k] = xv.region.stride[kx];
          reg.offset_elems += off[k] * xv.region.stride[kx];
        }
      }
      load(tb, loc_idx, reg, xv.storage, value_name(x), u.loc);
    }
    for (std::size_t i = 0; i < u.ops.size(); ++i) {
      const Stmt& st = k_.stmts[u.ops[i]];
      const int dst = tb.local(k_.values[st.out].dtype, r, E);
      local_of[st.out] = dst;
      TileInstr in;
      in.op = opcode_of(st.op);
      in.dst = dst;
      for (std::size_t j = 0; j < st.inputs.size() && j < 3; ++j) {
        const Operand& o = st.inputs[j];
        if (o.value >= 0) {
          in.src[j] = local_of.at(o.value);
        } else {
          in.scalar_operand |= static_cast<std::uint8_t>(1u << j);
          in.scalar[j] = scalars[i][j];
        }
      }
      in.cast_mode = st.cast_mode;
      tb.p.instrs.push_back(in);
    }
    for (const int v : u.stores) {
      for (int k = 0; k < r; ++k) ext[k] = std::min(E[k], vals_[v].valid[k] - off[k]);
      store(tb, local_of.at(v), sub_region(vals_[v], off, ext, r), vals_[v].storage, value_name(v),
            u.loc);
    }
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      const RtVal& src = vals_[w.src];
      for (int k = 0; k < r; ++k) ext[k] = clamp0(std::min(E[k], src.valid[k] - off[k]));
      GlobalRegion reg;
      if (write_region(w, woffs[wi].data(), off, ext, &reg)) {
        store(tb, local_of.at(w.src), reg, vals_[w.dst].storage, value_name(w.dst), w.loc);
      }
    }
    commit(tb, u, sched::CoreType::kAiv, full, 1);
  });
}

void Instance::emit_reduce(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const int xin = st.inputs[0].value;
  const RtVal& x = vals_[xin];
  NPU_CHECK(x.has_region, "reduction input without storage");
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int r = x.rank;
  bool reduced[kMaxRank] = {false, false, false, false};
  std::uint8_t mask = 0;
  for (const int d : st.dims) {
    reduced[d] = true;
    mask |= static_cast<std::uint8_t>(1u << d);
  }
  std::vector<int> kept;
  for (int k = 0; k < r; ++k) {
    if (!reduced[k]) kept.push_back(k);
  }
  // vec_tile: the input's rank, or (without keepdim) the output's rank over the kept axes.
  std::int64_t T[kMaxRank];
  if (!st.keepdim && !kept.empty() && st.vec_tile.size() == kept.size() &&
      st.vec_tile.size() != static_cast<std::size_t>(r)) {
    for (std::size_t i = 0; i < kept.size(); ++i) T[kept[i]] = st.vec_tile[i];
  } else {
    tile_sizes(st.vec_tile, r, T);
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
    if (st.keepdim)
      yaxis[k] = k;
    else
      yaxis[k] = reduced[k] ? -1 : j++;
  }
  const bool scalar_out = kept.empty() && !st.keepdim;  // output shape [1]
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  const DType xd = k_.values[xin].dtype;
  const DType yd = k_.values[st.out].dtype;
  // The keepdim-form region (rank r) of `v` (the output or a write destination whose axes
  // are the output's, shifted by base_off) for a tile of extent E at `off`.
  const auto out_region = [&](const RtVal& v, const std::int64_t* base_off, const std::int64_t* off,
                              const std::int64_t* E, GlobalRegion* reg) {
    *reg = v.region;
    reg->rank = static_cast<std::uint8_t>(r);
    for (int k = 0; k < r; ++k) {
      const int a = yaxis[k];
      if (a < 0) {
        reg->shape[k] = 1;
        reg->stride[k] = 0;
        continue;
      }
      const std::int64_t o = reduced[k] ? 0 : off[k];
      reg->shape[k] = reduced[k] ? std::min<std::int64_t>(1, y.valid[a])
                                 : clamp0(std::min(E[k], y.valid[a] - o));
      reg->stride[k] = v.region.stride[a];
      reg->offset_elems += (base_off[a] + o) * v.region.stride[a];
    }
    if (scalar_out) {
      reg->offset_elems += base_off[0] * v.region.stride[0];
      if (y.valid[0] <= 0) reg->shape[0] = 0;
    }
  };
  const std::int64_t zero[kMaxRank] = {0, 0, 0, 0};
  for_each_tile(r, grid, T, [&](const std::int64_t* off, const std::int64_t* len) {
    std::int64_t E[kMaxRank], in_shape[kMaxRank], out_shape[kMaxRank];
    for (int k = 0; k < r; ++k) {
      if (reduced[k]) {
        E[k] = 1;
        in_shape[k] = std::max<std::int64_t>(1, x.valid[k]);
      } else {
        E[k] = std::min(len[k], y.valid[yaxis[k]] - off[k]);
        if (E[k] <= 0) return;
        in_shape[k] = E[k];
      }
      out_shape[k] = E[k];
    }
    if (scalar_out && y.valid[0] <= 0) return;
    TaskBuilder tb;
    GlobalRegion sreg;
    if (need_out) out_region(y, zero, off, E, &sreg);
    std::vector<GlobalRegion> wregs(u.writes.size());
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      const RtVal& d = vals_[w.dst];
      out_region(d, woffs[wi].data(), off, E, &wregs[wi]);
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
    const int lin = tb.local(xd, r, in_shape);
    const int lout = tb.local(yd, r, out_shape);
    GlobalRegion lreg = x.region;
    lreg.rank = static_cast<std::uint8_t>(r);
    for (int k = 0; k < r; ++k) {
      const std::int64_t o = reduced[k] ? 0 : off[k];
      lreg.shape[k] = reduced[k] ? x.valid[k] : clamp0(std::min(E[k], x.valid[k] - off[k]));
      lreg.offset_elems += o * x.region.stride[k];
    }
    load(tb, lin, lreg, x.storage, value_name(xin), u.loc);
    TileInstr in;
    in.op = opcode_of(st.op);
    in.dst = lout;
    in.src[0] = lin;
    in.reduce_mask = mask;
    tb.p.instrs.push_back(in);
    if (need_out) store(tb, lout, sreg, y.storage, value_name(st.out), u.loc);
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      store(tb, lout, wregs[wi], vals_[w.dst].storage, value_name(w.dst), w.loc);
    }
    bool full = true;
    for (int k = 0; k < r; ++k) {
      full = full && (reduced[k] ? x.valid[k] == x.shape[k] : E[k] == T[k]);
    }
    commit(tb, u, sched::CoreType::kAiv, full, 1);
  });
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

void Instance::emit_matmul(const Unit& u) {
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
  const DType acc_d = ad == DType::kInt8 ? DType::kInt32 : DType::kFp32;
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
  grid[R - 2] = M;
  grid[R - 1] = N;
  T[R - 2] = tm;
  T[R - 1] = tn;
  for_each_tile(R, grid, T, [&](const std::int64_t* off, const std::int64_t* len) {
    const std::int64_t m0 = off[R - 2], n0 = off[R - 1];
    std::int64_t ext[kMaxRank];
    for (int k = 0; k < nb; ++k) ext[k] = std::min<std::int64_t>(1, y.valid[k] - off[k]);
    ext[R - 2] = std::min(len[R - 2], y.valid[R - 2] - m0);
    ext[R - 1] = std::min(len[R - 1], y.valid[R - 1] - n0);
    for (int k = 0; k < R; ++k) {
      if (ext[k] <= 0) return;
    }
    const std::int64_t mE = ext[R - 2], nE = ext[R - 1];
    TaskBuilder tb;
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
      load(tb, la, ra, a.storage, value_name(ai), u.loc);
      const GlobalRegion rb =
          region_2d(b.region, kL, b_cols, bk, bn,
                    b_off + k0 * b.region.stride[bk] + n0 * b.region.stride[bn]);
      load(tb, lb, rb, b.storage, value_name(bi), u.loc);
      TileInstr mm;
      mm.op = TileOpcode::kMatmul;
      mm.dst = lacc;
      mm.src[0] = la;
      mm.src[1] = lb;
      mm.accumulate = s > 0 ? 1 : 0;
      tb.p.instrs.push_back(mm);
    }
    int lout = lacc;
    if (yd != acc_d) {
      lout = tb.local(yd, 2, acc_shape);
      TileInstr c;
      c.op = TileOpcode::kCast;
      c.dst = lout;
      c.src[0] = lacc;
      tb.p.instrs.push_back(c);
    }
    // Dependencies and traffic: whole K panels instead of one range per K step (the loads
    // are all the task has recorded so far).
    tb.acc.clear();
    if (ksteps > 0) {
      const GlobalRegion pa =
          region_2d(a.region, a_rows, Kv, am, ak, a_off + m0 * a.region.stride[am]);
      const GlobalRegion pb =
          region_2d(b.region, Kv, b_cols, bk, bn, b_off + n0 * b.region.stride[bn]);
      if (!region_empty(pa)) tb.acc.push_back(Access{pa, false});
      if (!region_empty(pb)) tb.acc.push_back(Access{pb, false});
    }
    if (need_out) {
      store(tb, lout, last_two_axes(sub_region(y, off, ext, R), R), y.storage, value_name(st.out),
            u.loc);
    }
    for (std::size_t wi = 0; wi < u.writes.size(); ++wi) {
      const Stmt& w = k_.stmts[u.writes[wi]];
      GlobalRegion reg;
      if (!write_region(w, woffs[wi].data(), off, ext, &reg)) continue;
      store(tb, lout, last_two_axes(reg, R), vals_[w.dst].storage, value_name(w.dst), w.loc);
    }
    const bool full = mE == tm && nE == tn && Kv == K && K % tk == 0;
    const auto tiles = static_cast<std::uint16_t>(
        std::min<std::int64_t>(std::max<std::int64_t>(ksteps, 1), 0xFFFF));
    commit(tb, u, sched::CoreType::kAic, full, tiles);
  });
}

void Instance::emit_permute(const Unit& u) {
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
  for_each_tile(r, y.shape, T, [&](const std::int64_t* off, const std::int64_t* len) {
    std::int64_t E[kMaxRank];
    for (int k = 0; k < r; ++k) {
      E[k] = std::min(len[k], y.valid[k] - off[k]);
      if (E[k] <= 0) return;
    }
    TaskBuilder tb;
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
    load(tb, l, reg, x.storage, value_name(xin), u.loc);
    if (need_out) store(tb, l, sub_region(y, off, E, r), y.storage, value_name(st.out), u.loc);
    store_writes(tb, l, u, woffs, off, E);
    commit(tb, u, sched::CoreType::kAiv, covers_tile(E, T, r), 1);
  });
}

void Instance::emit_concat(const Unit& u) {
  const Stmt& st = k_.stmts[u.ops[0]];
  const bool need_out = k_.values[st.out].materialised;
  if (!make_output(u, st.out)) return;
  const RtVal& y = vals_[st.out];
  const int r = y.rank, dim = st.concat_dim;
  std::int64_t T[kMaxRank];
  tile_sizes(st.vec_tile, r, T);
  const std::vector<std::vector<std::int64_t>> woffs = write_offsets(u);
  const DType d = k_.values[st.out].dtype;
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
    for_each_tile(r, x.shape, T, [&](const std::int64_t* off, const std::int64_t* len) {
      std::int64_t ext[kMaxRank], yoff[kMaxRank];
      for (int k = 0; k < r; ++k) {
        yoff[k] = off[k] + (k == dim ? shift : 0);
        ext[k] = std::min({len[k], x.valid[k] - off[k], y.valid[k] - yoff[k]});
        if (ext[k] <= 0) return;
      }
      TaskBuilder tb;
      const int l = tb.local(d, r, ext);
      load(tb, l, sub_region(x, off, ext, r), x.storage, value_name(in.value), u.loc);
      if (need_out) store(tb, l, sub_region(y, yoff, ext, r), y.storage, value_name(st.out), u.loc);
      store_writes(tb, l, u, woffs, yoff, ext);
      commit(tb, u, sched::CoreType::kAiv, covers_tile(ext, T, r), 1);
    });
    shift += x.shape[dim];
  }
}

void Instance::emit_copy(const Unit& u, const RtVal& src, const GlobalRegion& dst,
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
  for_each_tile(r, src.shape, T, [&](const std::int64_t* off, const std::int64_t* len) {
    std::int64_t ext[kMaxRank];
    for (int k = 0; k < r; ++k) {
      ext[k] = std::min(len[k], src.valid[k] - off[k]);
      if (ext[k] <= 0) return;
    }
    TaskBuilder tb;
    const int l = tb.local(d, r, ext);
    load(tb, l, sub_region(src, off, ext, r), src.storage,
         src.storage.value >= 0 ? value_name(src.storage.value) : "the source", u.loc);
    GlobalRegion dr = dst;
    for (int k = 0; k < r; ++k) {
      dr.offset_elems += off[k] * dst.stride[k];
      dr.shape[k] = ext[k];
    }
    store(tb, l, dr, dst_st, dst_name, u.loc);
    commit(tb, u, sched::CoreType::kAiv, covers_tile(ext, T, r), 1);
  });
}

void Instance::emit_copy_write(const Unit& u) {
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
  emit_copy(u, src, dst, d.storage, w.vec_tile, value_name(w.dst));
}

void Instance::emit_view(const Unit& u) {
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
      const std::int64_t fb = sim::dtype_bytes(from), tb = sim::dtype_bytes(to);
      bool ok = v.region.stride[v.rank - 1] == 1;
      for (int k = 0; k < v.rank - 1; ++k) ok = ok && (v.region.stride[k] * fb) % tb == 0;
      ok = ok && (v.region.offset_elems * fb) % tb == 0;
      if (!ok) {
        throw ConfigError(u.loc + ": view with dtype " + std::string(sim::to_string(to)) +
                          " of a " + std::string(sim::to_string(from)) +
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

void Instance::emit_reshape(const Unit& u) {
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

// ---------------------------------------------------------------------------------------------
// stitching, workspace, graph

void Instance::stitch(Launch& l) {
  // Launch-lifetime regions first; the Stitcher lays the root-inner pool out after them.
  slot_base_.assign(slot_bytes_.size(), 0);
  launch_bytes_ = 0;
  for (std::size_t i = 0; i < slot_bytes_.size(); ++i) {
    slot_base_[i] = launch_bytes_;
    launch_bytes_ += slot_bytes_[i];
  }
  std::vector<sched::StitchRoot> roots(roots_.size());
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    const RootRec& r = roots_[i];
    roots[i] = sched::StitchRoot{r.num_tasks, r.bytes, r.barrier, r.pgroup, r.piter, r.ploc};
  }
  // The pool holds par_ equal slices (one per parallel iteration in flight); PyPTO rounds
  // workspace totals to 1 KiB.
  const sched::WorkspaceModel model{launch_bytes_, par_, par_, 1024};
  sched::StitchResult s = sched::Stitcher(opt_.runtime, model, /*sizes_known=*/true).stitch(roots);
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    roots_[i].dt = s.device_task[i];
    roots_[i].base = s.base_bytes[i];
  }
  pool_slice_ = s.pool_slice_bytes;
  l.workspace_bytes = s.workspace.peak_bytes;
  l.minimum_workspace_bytes = s.workspace.minimum_bytes;
  for (std::string& line : s.log) log_.push_back(std::move(line));
}

void Instance::patch() {
  const auto nT = static_cast<std::uint32_t>(tensors_.size());
  const auto fix = [&](GlobalRegion& r, std::uint32_t root) {
    std::uint64_t base = 0;
    if (r.buffer == kRootBuffer) {
      base = roots_[root].base;
    } else if (r.buffer >= kSlotBufferBase) {
      base = slot_base_[r.buffer - kSlotBufferBase];
    } else {
      return;
    }
    const std::uint32_t es = sim::dtype_bytes(r.dtype);
    NPU_CHECK(base % es == 0, "workspace region not aligned to its element size");
    r.buffer = nT;
    r.offset_elems += static_cast<std::int64_t>(base / es);
  };
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    const std::uint32_t root = tasks_[t].root;
    for (TileInstr& in : progs_[t].instrs) {
      if (in.op == TileOpcode::kLoad || in.op == TileOpcode::kStore) fix(in.region, root);
    }
    for (std::uint32_t a = tasks_[t].acc_begin; a < tasks_[t].acc_end; ++a) fix(acc_[a].r, root);
  }
}

void Instance::build_graph(Launch& l) {
  const std::size_t n = tasks_.size();
  const auto nT = static_cast<std::uint32_t>(tensors_.size());
  std::vector<std::uint64_t> buffer_bytes;
  for (const LaunchTensor& t : tensors_) buffer_bytes.push_back(t.size_bytes);
  buffer_bytes.push_back(l.workspace_bytes);
  // A task's accesses, its reads before its writes (a task that reads and writes the same bytes
  // depends on their previous writer, not on itself).
  const auto each_access = [&](const TaskRec& tr, auto&& f) {
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint32_t a = tr.acc_begin; a < tr.acc_end; ++a) {
        if (acc_[a].write == (pass == 1)) f(acc_[a]);
      }
    }
  };
  // Pass 1: dependencies, in program order.
  DepTracker deps(buffer_bytes);
  std::vector<std::uint32_t> pred_begin{0}, preds;
  pred_begin.reserve(n + 1);
  std::uint64_t segments = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const TaskRec& tr = tasks_[t];
    deps.begin_task(static_cast<std::uint32_t>(t), roots_[tr.root].dt);
    each_access(tr, [&](const Access& x) {
      NPU_CHECK(x.r.buffer <= nT, "unpatched region in task " + std::to_string(t));
      for_each_segment(x.r, [&](std::uint64_t off, std::uint64_t bytes) {
        NPU_CHECK(off + bytes <= buffer_bytes[x.r.buffer], "task " + std::to_string(t) +
                                                               " touches bytes outside buffer " +
                                                               std::to_string(x.r.buffer));
        if (x.write)
          deps.write(x.r.buffer, off, bytes);
        else
          deps.read(x.r.buffer, off, bytes);
        ++segments;
      });
    });
    preds.insert(preds.end(), deps.preds().begin(), deps.preds().end());
    pred_begin.push_back(static_cast<std::uint32_t>(preds.size()));
  }
  // Successor lists from predecessor lists.
  std::vector<std::uint32_t> succ_begin(n + 1, 0), succ(preds.size());
  for (const std::uint32_t p : preds) ++succ_begin[p + 1];
  for (std::size_t i = 0; i < n; ++i) succ_begin[i + 1] += succ_begin[i];
  {
    std::vector<std::uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (std::size_t t = 0; t < n; ++t) {
      for (std::uint32_t e = pred_begin[t]; e < pred_begin[t + 1]; ++e) {
        succ[fill[preds[e]]++] = static_cast<std::uint32_t>(t);
      }
    }
  }
  std::vector<std::uint32_t>().swap(preds);
  // Pass 2: the graph, memory ranges streamed straight into it.
  sched::TaskGraphBuilder b("compiled kernel " + k_.name);
  b.graph().mem.reserve(segments);
  b.graph().succ.reserve(succ.size());
  std::vector<std::uint32_t> first_of_dt;
  std::vector<std::uint32_t> dt_of_task(n);
  for (std::size_t t = 0; t < n; ++t) {
    const TaskRec& tr = tasks_[t];
    const RootRec& root = roots_[tr.root];
    if (root.dt >= first_of_dt.size()) first_of_dt.push_back(static_cast<std::uint32_t>(t));
    dt_of_task[t] = root.dt;
    sched::TaskGraphBuilder::Task task;
    task.core_type = tr.core;
    task.device_task_seq = root.dt;
    task.root = tr.root;
    task.orig_id = static_cast<std::uint32_t>(t) - first_of_dt[root.dt];
    task.kernel = b.kernel_index(kernel_names_[tr.kernel]);
    task.compute_cycles = tr.cycles;
    task.tiles = tr.tiles;
    task.parallel_group = root.pgroup;
    b.add_task(task);
    for (std::uint32_t e = succ_begin[t]; e < succ_begin[t + 1]; ++e) b.add_successor(succ[e]);
    each_access(tr, [&](const Access& x) {
      const std::uint64_t base = static_cast<std::uint64_t>(x.r.buffer + 1) << 40;
      for_each_segment(x.r, [&](std::uint64_t off, std::uint64_t bytes) {
        b.add_memory(
            sched::MemAccess{base + off, static_cast<std::uint32_t>(bytes), x.write ? 1u : 0u});
      });
    });
  }
  l.graph = b.finish();
  l.graph.control_waits_for_aicore = waits_;
  // Tasks were added grouped by device task, so finish() must not have reordered them:
  // programs[t] belongs to graph task t.
  NPU_CHECK(l.graph.num_tasks() == n, "task graph lost tasks");
  for (std::size_t t = 0; t < n; ++t) {
    NPU_CHECK(l.graph.device_task[t] == dt_of_task[t], "task graph reordered the compiled tasks");
  }
}

Launch Instance::run() {
  check_options();
  bind();
  const std::string body_loc = "kernel " + k_.name + " body";
  exec_variants(k_.variants, body_loc);
  close_root();
  Launch l;
  stitch(l);
  patch();
  build_graph(l);
  l.graph.workspace = sched::WorkspaceFigures{l.workspace_bytes, l.minimum_workspace_bytes};
  l.programs = std::move(progs_);
  l.tile_ops = tile_ops_;
  l.roots = static_cast<std::uint32_t>(roots_.size());
  l.log = std::move(log_);
  return l;
}

}  // namespace
}  // namespace detail

Launch instantiate(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                   const std::map<std::string, std::int64_t>& bindings, const LaunchOptions& opt,
                   const sim::ChipConfig& chip) {
  return detail::Instance(k.k, tensors, bindings, opt, chip).run();
}

}  // namespace pypto::compiler
