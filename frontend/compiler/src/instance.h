// SPDX-License-Identifier: Apache-2.0
// Private to instantiate(): the launch being built. instantiate() runs the kernel's control
// flow with concrete sizes and builds the launch in four steps, each in its own file:
//
//  1. walk.cpp: walk the control flow. Every executed straight-line run of statements is a
//     root instance; its units emit leaf tasks (programs of tile instructions) tile by tile,
//     through the EmitContext below (emit_context.cpp) and one emitter per op family
//     (emit_elementwise.cpp, emit_reduce.cpp, emit_matmul.cpp, emit_data_movement.cpp,
//     emit_indexed.cpp).
//     Workspace regions are still symbolic here: root-inner values hold offsets relative to
//     their root, launch-lifetime values name their region (slot).
//  2. stitch.cpp: stitch roots into device tasks (stitch_function_max_num or, memory-driven,
//     the workspace budget; submit_before_loop; one device task per parallel iteration).
//  3. graph_build.cpp: lay out the workspace and patch every region to a real buffer offset;
//  4. graph_build.cpp: exact memory dependencies (deps.cpp), memory ranges and costs ->
//     TaskGraphBuilder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir.h"
#include "pypto/common/errors.h"
#include "task_cost.h"

namespace pypto::compiler::detail {

inline constexpr std::uint32_t kRootBuffer = 0xFFFF0000u;      // root-inner pool, root-relative
inline constexpr std::uint32_t kSlotBufferBase = 0x80000000u;  // + launch region id
inline constexpr std::uint64_t kAlignBytes = 512;          // one L2 line: values never share one
inline constexpr std::int64_t kCopyTileBytes = 64 * 1024;  // copies without a vec_tile

inline std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

inline std::int64_t clamp0(std::int64_t v) { return v < 0 ? 0 : v; }

// An allocation: where a value's elements live (for bounds checks and naming).
struct Storage {
  std::uint32_t buffer = 0;
  std::int64_t base_bytes = 0;
  std::uint64_t size_bytes = 0;
  int value = -1;
  bool no_l2 = false;  // the value's cache policy is NONE_CACHEABLE: moved past L2
  bool nz = false;     // a TILEOP_NZ parameter: stored in the cube's fractal layout
};

// A value at run time: its concrete shape and valid shape, and (if it has one) the strided
// region of global memory holding it.
struct RtVal {
  int rank = 0;
  std::int64_t shape[kMaxRank] = {1, 1, 1, 1, 1};
  std::int64_t valid[kMaxRank] = {1, 1, 1, 1, 1};
  bool has_region = false;
  GlobalRegion region;
  Storage storage;
  // A bf16 value kept in fp32 for its readers in other fusion groups that compute in fp32
  // (ValueInfo::wide_uses): the fp32 copy, dense like `region`.
  bool has_wide = false;
  GlobalRegion wide_region;
  Storage wide_storage;
};
static_assert(RtVal{}.shape[kMaxRank - 1] == 1 && RtVal{}.valid[kMaxRank - 1] == 1,
              "the initializers above list kMaxRank (program.h) entries");

struct TaskRec {
  common::CoreType core = common::CoreType::kAiv;
  std::uint32_t root = 0;
  std::uint32_t kernel = 0;
  std::uint32_t cycles = 0;         // as the simulator takes them (task_cost.h)
  std::uint32_t scalar_cycles = 0;  // of them, the dynamic-shape scalar work
  std::uint16_t tiles = 1;
  std::uint32_t acc_begin = 0, acc_end = 0;
  // Set by the partition (partition.cpp): emitted tile tasks merged into this leaf, and the
  // leaf's class (PyPTO's hashOrder within its root) and the class size before each merge.
  std::uint32_t members = 1;
  std::int32_t sg_scope = -1;  // the unit's sg_set_scope id (partition.cpp), -1: none
  std::uint8_t sg_flags = 0;   // and its kSgParallelMerge / kSgCrossScopeMerge bits (ir.h)
  std::uint32_t label = 0;     // the unit's semantic label: 1 + index into labels_, 0: none
  std::uint32_t hash_order = 0;
  std::uint32_t vec_class = 0, l1_class = 0, cube_class = 0;  // 0: not merged by that pass
};

struct Access {
  GlobalRegion r;
  bool write = false;
  // False: tracked for dependencies only, its bytes not priced as traffic (an indexed write
  // declares the whole tensor it may touch; a priced stand-in of its real size goes with it).
  bool priced = true;
  std::uint8_t operand = 0;  // a matmul panel: 1 the left (A) operand, 2 the right (B)
  // Bytes the core moves per burst when less than a segment (sched::MemAccess::burst_bytes):
  // the rows of a cube tile, which the ND <-> fractal copies move one by one; 0: one burst.
  std::uint32_t burst_bytes = 0;
  bool no_l2 = false;  // the storage is not L2-cacheable (sched::MemAccess::no_l2)
  // A cube operand read from a TILEOP_NZ parameter of nz_rows x nz_cols (its last two axes;
  // 0: ND): its bytes move as the fractal layout lays them out (moved_ranges()).
  std::int64_t nz_rows = 0, nz_cols = 0;
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

// What the partition (partition.cpp) did to a root or a launch: tile tasks in, leaf tasks
// out, and the tasks each step absorbed into another.
struct PartitionCounts {
  std::uint64_t emitted = 0;
  std::uint64_t leaves = 0;
  std::uint64_t grown = 0;  // lock-step growth and group merges
  std::uint64_t vec_merged = 0, l1_merged = 0, cube_nbuf_merged = 0;
};

// Builds one task: locals, instructions and the regions it touches.
struct TaskBuilder {
  TaskProgram p;
  std::vector<Access> acc;
  bool clipped = false;  // some load/store covers less than its local tile

  // Empties the builder for the next task; its buffers keep their capacity.
  void clear() {
    p.locals.clear();
    p.instrs.clear();
    acc.clear();
    clipped = false;
  }

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
inline void set_dense_layout(RtVal& v) {
  v.region.rank = static_cast<std::uint8_t>(v.rank);
  std::int64_t stride = 1;
  for (int a = v.rank - 1; a >= 0; --a) {
    v.region.shape[a] = v.shape[a];
    v.region.stride[a] = stride;
    stride *= v.shape[a];
  }
}

// Whether a tile of extents `ext` is a whole tile of sizes T (no tail on any axis).
inline bool covers_tile(const std::int64_t* ext, const std::int64_t* T, int rank) {
  bool full = true;
  for (int k = 0; k < rank; ++k) full = full && ext[k] == T[k];
  return full;
}

inline bool region_empty(const GlobalRegion& r) {
  for (int k = 0; k < r.rank; ++k) {
    if (r.shape[k] <= 0) return true;
  }
  return false;
}

// The tile instruction computing an element-wise or reduction op (the op table's).
inline TileOpcode opcode_of(OpKind k) {
  const TileOpcode t = op_info(k).tile;
  NPU_CHECK(t != kNoTileOp, std::string("no tile opcode for op ") + op_name(k));
  return t;
}

// Iterates the tiles of a grid in row-major order.
template <class F>
inline void for_each_tile(int rank, const std::int64_t* extent, const std::int64_t* tile, F&& f) {
  std::int64_t count[kMaxRank], idx[kMaxRank] = {};
  for (int k = 0; k < rank; ++k) {
    if (extent[k] <= 0) return;
    count[k] = ceil_div(extent[k], tile[k]);
  }
  std::int64_t off[kMaxRank] = {}, len[kMaxRank];
  std::fill_n(len, kMaxRank, 1);
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

// Iterates the tiles of a grid whose values hold valid data only in [0, valid) per axis:
// f(off, ext) gets each tile's offset and its extent clipped to the valid box; tiles wholly
// outside it (padding of a tail) are skipped.
template <class F>
inline void for_each_valid_tile(int rank, const std::int64_t* shape, const std::int64_t* valid,
                                const std::int64_t* tile, F&& f) {
  for_each_tile(rank, shape, tile, [&](const std::int64_t* off, const std::int64_t* len) {
    std::int64_t ext[kMaxRank];
    std::fill_n(ext, kMaxRank, 1);
    for (int k = 0; k < rank; ++k) {
      ext[k] = std::min(len[k], valid[k] - off[k]);
      if (ext[k] <= 0) return;
    }
    f(off, static_cast<const std::int64_t*>(ext));
  });
}

// What the unit emitters share: the kernel and launch inputs, the values at run time, the
// tasks emitted so far and the root they go to, and the helpers that build tasks (values and
// storage, loads and stores with bounds checks, absorbed writes, commit). emit_context.cpp
// holds the helpers and the dispatch of a unit to its family's emitter.
// What a region belongs to, named in a message only when one is raised (a name string per
// tile load and store of every task cost more than the check it serves): a string, or an IR
// value (EmitContext::value_name).
struct NameOf {
  NameOf(const std::string& s) : text(&s) {}  // NOLINT(google-explicit-constructor)
  NameOf(const char* s) : literal(s) {}       // NOLINT(google-explicit-constructor)
  static NameOf value(int v) {
    NameOf n("");
    n.value_id = v;
    return n;
  }
  const std::string* text = nullptr;
  const char* literal = nullptr;
  int value_id = -1;
};

class EmitContext {
 public:
  EmitContext(const Kernel& k, const std::vector<LaunchTensor>& tensors,
              const std::map<std::string, std::int64_t>& bindings, const LaunchOptions& opt,
              const model::ChipConfig& chip)
      : k_(k), tensors_(tensors), bindings_(bindings), opt_(opt), chip_(chip) {}

 protected:
  // ---- values and storage ----
  RtVal make_val(int value);
  // `wide`: the value's fp32 copy (its own workspace region, ValueInfo::wide_slot).
  Storage allocate(int value, std::uint64_t bytes, bool wide = false);
  void give_dense_storage(int value, RtVal& v);
  // Gives v (a bf16 value) a dense fp32 copy: has_wide, wide_region, wide_storage.
  void give_wide_storage(int value, RtVal& v);
  // Evaluates the shape of a unit's output `out`, with dense storage when it is materialised.
  // False when the unit has nothing to emit (the output is neither materialised nor written).
  bool make_output(const Unit& u, int out);
  std::string value_name(int value) const;
  std::string value_name(const NameOf& n) const;
  static NameOf named(int value) { return NameOf::value(value); }

  // ---- units ----
  // Emits the tasks of unit u (any kind but kLoop) into the open root.
  void exec_unit(const Unit& u);
  void emit_group(const Unit& u);   // emit_elementwise.cpp
  void emit_reduce(const Unit& u);  // emit_reduce.cpp
  // A cut reduction's chunks (PyPTO's TileReduceNew): loads every chunk of the reduced axes
  // `red` (nchunks per axis, of extent `chunk`, the kept axes `kept_shape`; `region` maps chunk
  // indices to the part of the input they cover) and folds them with `pair` in PyPTO's order,
  // in dtype pd (loads in ld). Returns the local holding the combined chunk.
  int combine_chunks(TaskBuilder& tb, const Unit& u, const std::vector<int>& red,
                     const std::int64_t* nchunks, TileOpcode pair, DType ld, DType pd, int r,
                     const std::int64_t* kept_shape, const std::int64_t* chunk,
                     const std::function<GlobalRegion(const std::int64_t*)>& region,
                     const Storage& storage, const std::string& name);
  // Throws ConfigError (kernel line, the op, the tiles' bytes, UB) when a scan task's input and
  // output tiles together exceed UB.
  void check_scan_ub(const TaskBuilder& tb, const Unit& u, const Stmt& st) const;
  void emit_matmul(const Unit& u);  // emit_matmul.cpp
  // Throws ConfigError (the kernel line, the rule, the values and, for a buffer, its size and
  // chip key) when matmul st's cube tile breaks one of PyPTO's set_cube_tile_shapes rules for
  // operands of dtype ad and an accumulator of acc_d: L1/L0 relation, alignment, buffer space.
  // M, K, N: the operands' extents, which bound the tiles the space rule measures.
  void check_cube_tile(const Unit& u, const Stmt& st, DType ad, DType acc_d, std::int64_t M,
                       std::int64_t K, std::int64_t N) const;
  // Throws ConfigError (the kernel line, the rule, the values, the buffer's size and chip key)
  // when conv st's tiles break one of PyPTO's set_conv_tile_shapes buffer rules (L0A, L0B,
  // L0C, L1) for operands of dtype ad. emit_conv.cpp.
  void check_conv_tile(const Unit& u, const Stmt& st, DType ad) const;
  // conv_backward_input's: PyPTO's set_convbp_input_tile_shapes buffer rules.
  void check_convbp_tile(const Unit& u, const Stmt& st, DType ad) const;
  // One on-chip buffer a cube tile rule fills: its name, the chip key of its size, the bytes
  // the rule asks for, the rule and its values (as the error shows them).
  struct BufferNeed {
    const char* buffer;
    const char* key;
    std::uint32_t kib;
    std::uint64_t bytes;
    std::string rule, values;
  };
  // Throws ConfigError (where + the rule, its values, the bytes, the buffer's size and chip
  // key + fix) for the first need over its buffer.
  void check_buffer_needs(const BufferNeed* begin, const BufferNeed* end, const std::string& where,
                          const std::string& fix) const;
  // extend_params on a matmul accumulator tile lacc ([mE, nE] at column n0): bias, relu,
  // dequant scale. Returns the local holding the result (lacc or a new fp32 local).
  int matmul_epilogue(TaskBuilder& tb, const Unit& u, const Stmt& st, int lacc, std::int64_t mE,
                      std::int64_t nE, std::int64_t n0);
  void emit_indexed(const Unit& u);  // emit_indexed.cpp: gather, scatter, scatter_update, load
  // pypto.experimental.load: per output tile, the offsets tile, then discrete reads of the
  // source's elements (kGatherElems).
  void emit_load_elems(const Unit& u, bool need_out,
                       const std::vector<std::vector<std::int64_t>>& woffs);
  void emit_permute(const Unit& u);  // emit_data_movement.cpp, as are the five below
  void emit_concat(const Unit& u);
  void emit_copy_write(const Unit& u);
  void emit_view(const Unit& u);
  void emit_reshape(const Unit& u);
  // A reshape of an input with a partial valid extent: copies x's valid box into a dense run
  // owned by the output (v, shape evaluated) and gives the output strides that read that
  // run as its valid box. Throws ConfigError when the output is also written and its valid
  // box is not a leading run of its dense layout.
  void emit_compact_reshape(const Unit& u, const RtVal& x, RtVal v);
  // Tiled copy of `src` (valid part) into the region `dst` (same shape).
  void emit_copy(const Unit& u, const RtVal& src, const GlobalRegion& dst, const Storage& dst_st,
                 const std::vector<std::int64_t>& vec_tile, const std::string& dst_name);

  // ---- task emission helpers ----
  // Tile sizes: vec_tile[k] for axis k, as PyPTO's tilers read it (sizes past `rank` unused);
  // a tile shorter than `rank` (PyPTO refuses it) is aligned right, missing leading sizes 1.
  static void tile_sizes(const std::vector<std::int64_t>& vt, int rank, std::int64_t* out);
  static void copy_tile_sizes(const RtVal& v, std::int64_t* out);
  // A region of `v` starting at element offsets `off` with extents `ext`.
  static GlobalRegion sub_region(const RtVal& v, const std::int64_t* off, const std::int64_t* ext,
                                 int rank);
  // Loads region r into `local`; a region smaller than the local (a prefix box) leaves the
  // rest of it at `pad` (zero, or a reduction's identity).
  void load(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
            const NameOf& name, const std::string& loc, double pad = 0.0);
  void store(TaskBuilder& tb, int local, const GlobalRegion& r, const Storage& st,
             const NameOf& name, const std::string& loc);
  void check_bounds(const GlobalRegion& r, const Storage& st, const NameOf& name,
                    const std::string& loc, bool write) const;
  // Destination region of absorbed write w for a tile at `off` of extent `ext` of its source.
  bool write_region(const Stmt& w, const std::int64_t* woff, const std::int64_t* off,
                    const std::int64_t* ext, GlobalRegion* out);
  // The builder of the next task: one scratch builder, cleared, whose buffers grow once per
  // launch instead of once per task. Contract: the task is committed before the next call.
  TaskBuilder& new_task() {
    builder_.clear();
    return builder_;
  }
  // Adds the task tb built; its program is copied at its exact size (tb may be new_task()'s).
  void commit(TaskBuilder& tb, const Unit& u, common::CoreType core, bool full_tile,
              std::uint16_t tiles);
  // Throws ConfigError (kernel line, UB size, the tile's shape and bytes) when one tile of a
  // vector task exceeds the chip's UB.
  void check_ub(const TaskBuilder& tb, const Unit& u) const;
  // Whether this chip computes element-wise op or reduction `op` with a result of dtype `d` in fp32
  // (the op table's Bf16Compute rows for bf16; the 950 family, chip names "950...", runs the
  // kFp32A2A3 rows on bf16).
  bool computes_in_fp32(OpKind op, DType d) const {
    const Bf16Compute c = d == DType::kBf16 ? op_info(op).bf16 : Bf16Compute::kNative;
    return c == Bf16Compute::kFp32 ||
           (c == Bf16Compute::kFp32A2A3 && chip_.chip.name.rfind("950", 0) != 0);
  }
  // Whether statement `st` (element-wise or a reduction) reads its operand `value` as fp32: it
  // computes in fp32 (computes_in_fp32) on operands of its result's dtype. Such a read of a value
  // an fp32-computing op made takes that op's fp32 result unrounded (PyPTO's AutoCast drops the
  // fp32 -> bf16 -> fp32 cast pair between them), within a group and across groups alike.
  bool reads_fp32(const Stmt& st, int value) const {
    const DType out_dtype = k_.values[st.out].dtype;
    return computes_in_fp32(st.op, out_dtype) && k_.values[value].dtype == out_dtype;
  }
  // Whether value v that unit u makes keeps an fp32 copy (`wide`: some statement of
  // ValueInfo::wide_uses reads it as fp32) and a bf16 one (`narrow`: some other statement
  // reads it, or none does). Contract: v is in u.stores of a fusion group, or the
  // materialised result of a reduction unit u.
  void stored_forms(const Unit& u, int v, bool* wide, bool* narrow) const;
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

  const Kernel& k_;
  const std::vector<LaunchTensor>& tensors_;
  const std::map<std::string, std::int64_t>& bindings_;
  const LaunchOptions& opt_;
  const model::ChipConfig& chip_;

  Env env_;
  std::string kernel_loc_;
  bool waits_ = false;
  std::vector<RtVal> vals_;
  std::vector<TaskRec> tasks_;
  std::vector<TaskProgram> progs_;
  std::vector<Access> acc_;
  std::vector<RootRec> roots_;
  std::vector<std::string> kernel_names_;
  std::vector<std::string> labels_;  // semantic labels of the emitted tasks (TaskRec::label)
  std::unordered_map<std::string, std::uint32_t> kernel_ids_;
  std::uint32_t last_kernel_id_ = 0;  // commit()'s last kernel (an index into kernel_names_)
  std::vector<std::string> log_;
  std::set<std::string> reduce_tile_warned_;  // op locations told of the 64 KB reduction page
  std::uint64_t tile_ops_ = 0;
  TaskBuilder builder_;                // new_task()'s
  std::vector<int> value_index_;       // emit_group's numbering of its values; -1 elsewhere
  LeafCyclesMemo leaf_cycles_{chip_};  // each distinct leaf of the launch priced once
  std::uint64_t iterations_ = 0;       // loop iterations built: Ctrl-C is polled every 1024

  // A launch's task ids are 32-bit; and what one task of a launch being built costs in
  // memory (its record, program, accesses, then graph and run), for the projection.
  static constexpr std::uint64_t kMaxLaunchTasks = 4294967294ULL;
  static constexpr double kLaunchBytesPerTask = 1100;  // a one-op loop body measures so
  // A projection under this is not compared with the memory available: reading it (three
  // files) costs more than a small launch's whole build, and no host of the frontend has less.
  static constexpr double kMemoryCheckFloorBytes = 64.0 * (1 << 20);

  bool root_open_ = false;
  RootRec cur_;
  std::uint64_t root_bump_ = 0;
  bool pending_barrier_ = false;
  bool in_parallel_ = false;
  std::uint32_t pgroup_ = 0, piter_ = 0, next_group_ = 1;
  std::string ploc_;
  std::uint32_t par_ = 1;  // workspace copies for parallel loops
  // Launch regions, up to slot_versions_ per (slot, parallel copy): a value crossing roots gets
  // the next version at each definition, as PyPTO's outcast pools give each of the k root
  // instances of a device task its own place (no false dependency between iterations).
  // slot_bytes_ holds version 0 of region id at index id, later versions where they were first
  // used (slot_version_at_[id][v - 1]), so a region defined once costs one entry.
  std::vector<std::uint64_t> slot_bytes_;
  std::vector<std::uint32_t> slot_next_version_;
  std::vector<std::vector<std::uint32_t>> slot_version_at_;
  std::uint32_t slot_versions_ = 1;
  std::vector<std::uint64_t> slot_base_;
  std::uint64_t launch_bytes_ = 0;
};

// One launch being built: the control-flow walk over the EmitContext, then the post passes.
class Instance : public EmitContext {
 public:
  using EmitContext::EmitContext;

  // Builds the launch. Contract: called once; throws ConfigError for options, bindings or
  // tensors the kernel cannot run with (naming the statement where sizes are evaluated).
  Launch run();

 private:
  // ---- setup (walk.cpp) ----
  void check_options() const;
  void bind();

  // ---- control flow (walk.cpp) ----
  void exec_variants(const std::vector<Variant>& vs, const std::string& loc);
  void exec_loop(const Stmt& st);
  // Throws ConfigError for a loop whose trip count no launch can hold / whose projected
  // size after its first iteration passes the task-id range or the memory available.
  void check_trip_count(const std::string& loc, std::int64_t n) const;
  void check_projected_size(const std::string& loc, std::int64_t n,
                            std::size_t per_iteration) const;
  void open_root();
  void close_root();

  // ---- post passes ----
  void stitch(Launch& l);       // stitch.cpp
  void patch();                 // graph_build.cpp
  void build_graph(Launch& l);  // graph_build.cpp

  PartitionCounts partition_;  // summed over the roots
};

}  // namespace pypto::compiler::detail
