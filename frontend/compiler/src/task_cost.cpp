// SPDX-License-Identifier: Apache-2.0
// The cost-model op of each tile instruction (task_cost.h) and a launched task's priced ops
// (compile.h's task_tile_ops).
#include "task_cost.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "deps.h"
#include "instance.h"
#include "pypto/common/errors.h"
#include "pypto/compiler/compile.h"
#include "pypto/compiler/op_table.h"
#include "pypto/model/leaf_schedule.h"

namespace pypto::compiler::detail {

namespace {

void shape_of(const LocalTile& t, model::TileOp* out) {
  out->shape.assign(t.shape, t.shape + t.rank);
}

std::uint64_t tile_bytes(const LocalTile& t) {
  std::uint64_t n = model::dtype_bytes(t.dtype);
  for (int k = 0; k < t.rank; ++k) n *= static_cast<std::uint64_t>(t.shape[k]);
  return n;
}

std::uint64_t region_elems(const GlobalRegion& r) {
  std::uint64_t n = 1;
  for (int k = 0; k < r.rank; ++k)
    n *= static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.shape[k]));
  return n;
}

std::uint32_t cycles_of(double c) {
  return static_cast<std::uint32_t>(std::min(std::ceil(c), 4294967295.0));
}

}  // namespace

bool priced_op(const TaskProgram& p, const TileInstr& in, model::TileOp* out) {
  const TileOpInfo* info = find_tile_op(in.op);
  NPU_CHECK(info != nullptr, "priced_op: not a tile opcode: " + std::to_string(int(in.op)));
  if (info->cost_op == nullptr) return false;  // data movement
  out->op = info->cost_op;
  if (info->exec == TileExec::kMatmul) {
    const LocalTile& a = p.locals[in.src[0]];
    const LocalTile& b = p.locals[in.src[1]];
    out->dtype = a.dtype;
    out->shape = {a.shape[a.rank - 2], a.shape[a.rank - 1], b.shape[b.rank - 1]};
    return true;
  }
  // Reductions and sorts are priced over their source (a top-k's dst is smaller).
  const bool reduce = info->exec == TileExec::kReduce || info->exec == TileExec::kSort;
  const LocalTile& dst = p.locals[reduce ? in.src[0] : in.dst];
  out->dtype = dst.dtype;
  shape_of(dst, out);
  if (in.scalar_operand != 0 && info->scalar_cost_op != nullptr) out->op = info->scalar_cost_op;
  if (info->exec == TileExec::kCast && in.src[0] >= 0) {
    // A conversion streams the wider of its two element types.
    const DType s = p.locals[in.src[0]].dtype;
    if (model::dtype_bytes(s) > model::dtype_bytes(out->dtype)) out->dtype = s;
  }
  return true;
}

LeafTraffic leaf_traffic(const Access* begin, const Access* end, const model::ChipConfig& chip) {
  LeafTraffic t;
  for (const Access* x = begin; x != end; ++x) {
    if (!x->priced) continue;
    // Buffers start on 2^40 boundaries in the task graph: offsets keep their alignment.
    std::uint64_t& sum = x->write ? t.write_bytes : t.read_bytes;
    const auto granule = static_cast<std::int64_t>(chip.cost.mte_granule_bytes);
    moved_runs(*x, [&](std::uint64_t first, std::uint64_t bytes, std::uint32_t burst,
                       std::int64_t pitch, std::int64_t count) {
      // Rows a whole number of granules apart (or cut in bursts) all move the same bytes.
      if (count == 1 || (burst != 0 && burst < bytes) || (granule != 0 && pitch % granule == 0)) {
        sum += static_cast<std::uint64_t>(count) * model::mte_bytes(first, bytes, chip, burst);
        return;
      }
      for (std::int64_t i = 0; i < count; ++i) {
        sum += model::mte_bytes(
            first + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(pitch), bytes, chip,
            burst);
      }
    });
  }
  return t;
}

std::uint32_t leaf_compute_cycles(const TaskProgram& p, const LeafTraffic& traffic,
                                  common::CoreType core, std::uint16_t tiles,
                                  std::uint64_t scalar_cycles, const model::ChipConfig& chip) {
  using model::LeafBuffer;
  using model::LeafPipe;
  const bool cube = core == common::CoreType::kAic;
  model::LeafProgram lp;
  lp.local_bytes.reserve(p.locals.size());
  for (const LocalTile& t : p.locals) lp.local_bytes.push_back(tile_bytes(t));
  lp.local_buffer.assign(p.locals.size(), cube ? LeafBuffer::kNone : LeafBuffer::kUb);
  lp.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kUb)] = std::uint64_t{chip.cores.ub_kib}
                                                                 << 10;
  lp.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kL1)] = std::uint64_t{chip.cores.l1_kib}
                                                                 << 10;
  lp.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kL0a)] = std::uint64_t{chip.cores.l0a_kib}
                                                                  << 10;
  lp.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kL0b)] = std::uint64_t{chip.cores.l0b_kib}
                                                                  << 10;
  lp.capacity_bytes[static_cast<std::size_t>(LeafBuffer::kL0c)] = std::uint64_t{chip.cores.l0c_kib}
                                                                  << 10;
  // The leaf's traffic (what its priced accesses move, after on-chip reuse) spread over its
  // loads and stores in proportion to their sizes.
  std::uint64_t load_bytes = 0, store_bytes = 0;
  for (const TileInstr& in : p.instrs) {
    if (in.op == TileOpcode::kLoad)
      load_bytes += region_elems(in.region) * model::dtype_bytes(p.locals[in.dst].dtype);
    if (in.op == TileOpcode::kStore)
      store_bytes += region_elems(in.region) * model::dtype_bytes(p.locals[in.src[0]].dtype);
  }
  const double read_cycles_per_byte = load_bytes == 0 ? 0.0
                                                      : static_cast<double>(traffic.read_bytes) /
                                                            static_cast<double>(load_bytes) /
                                                            chip.l2.read_bytes_per_cycle;
  const double write_cycles_per_byte = store_bytes == 0 ? 0.0
                                                        : static_cast<double>(traffic.write_bytes) /
                                                              static_cast<double>(store_bytes) /
                                                              chip.l2.write_bytes_per_cycle;
  const auto add_local = [&](std::uint64_t bytes, LeafBuffer b) {
    lp.local_bytes.push_back(bytes);
    lp.local_buffer.push_back(b);
    return static_cast<std::int32_t>(lp.local_bytes.size() - 1);
  };
  lp.ops.reserve(p.instrs.size() + 8);
  std::uint64_t memory_cycles = 0;  // what the loads and stores take in the schedule
  for (const TileInstr& in : p.instrs) {
    model::LeafOp op;
    if (in.op == TileOpcode::kLoad) {
      op.pipe = LeafPipe::kMte2;
      op.dst = in.dst;
      op.cycles = cycles_of(static_cast<double>(region_elems(in.region) *
                                                model::dtype_bytes(p.locals[in.dst].dtype)) *
                            read_cycles_per_byte);
      if (cube) lp.local_buffer[in.dst] = LeafBuffer::kL1;
      memory_cycles += op.cycles;
      if (in.expand != 0 && !cube) {
        // The move lands the operand's own rows; a vector pass (PyPTO's expand_clone) widens
        // them to the tile before the op reads it.
        std::uint64_t own = model::dtype_bytes(p.locals[in.dst].dtype);
        for (int k = 0; k < in.region.rank; ++k) {
          if (in.region.stride[k] != 0) own *= static_cast<std::uint64_t>(in.region.shape[k]);
        }
        op.dst = add_local(own, LeafBuffer::kUb);
        lp.ops.push_back(op);
        model::TileOp t{"expand_clone", p.locals[in.dst].dtype, {}};
        shape_of(p.locals[in.dst], &t);
        lp.ops.push_back(model::LeafOp{
            LeafPipe::kVec, model::tile_op_cycles(t, chip), in.dst, {op.dst, -1, -1}});
        continue;
      }
      lp.ops.push_back(op);
      continue;
    }
    if (in.op == TileOpcode::kStore) {
      op.pipe = LeafPipe::kMte3;
      op.src[0] = in.src[0];
      op.cycles = cycles_of(static_cast<double>(region_elems(in.region) *
                                                model::dtype_bytes(p.locals[in.src[0]].dtype)) *
                            write_cycles_per_byte);
      memory_cycles += op.cycles;
      lp.ops.push_back(op);
      continue;
    }
    model::TileOp t;
    const bool priced = priced_op(p, in, &t);
    if (priced && in.op == TileOpcode::kMatmul) {
      // MTE1 brings both operands from L1 into L0A / L0B in K slices, each at most half of
      // its buffer (so the next slice loads while the cube works on this one), and the cube
      // accumulates every slice in L0C.
      const LocalTile& a = p.locals[in.src[0]];
      const LocalTile& b = p.locals[in.src[1]];
      const std::uint64_t ab = tile_bytes(a), bb = tile_bytes(b);
      const std::uint64_t half_l0a =
          std::max<std::uint64_t>(1, (std::uint64_t{chip.cores.l0a_kib} << 10) / 2);
      const std::uint64_t half_l0b =
          std::max<std::uint64_t>(1, (std::uint64_t{chip.cores.l0b_kib} << 10) / 2);
      const std::uint64_t k_elems = static_cast<std::uint64_t>(a.shape[a.rank - 1]);
      const std::uint64_t slices = std::max<std::uint64_t>(
          1, std::min(k_elems,
                      std::max((ab + half_l0a - 1) / half_l0a, (bb + half_l0b - 1) / half_l0b)));
      const std::uint64_t as = (ab + slices - 1) / slices, bs = (bb + slices - 1) / slices;
      const std::int32_t l0a = add_local(as, LeafBuffer::kL0a),
                         l0b = add_local(bs, LeafBuffer::kL0b);
      const std::uint32_t mm_cycles = model::tile_op_cycles(t, chip);
      lp.local_buffer[in.dst] = LeafBuffer::kL0c;
      for (std::uint64_t k = 0; k < slices; ++k) {
        lp.ops.push_back(
            model::LeafOp{LeafPipe::kMte1,
                          cycles_of(static_cast<double>(as) / chip.cost.l1_to_l0a_bytes_per_cycle),
                          l0a,
                          {in.src[0], -1, -1}});
        lp.ops.push_back(
            model::LeafOp{LeafPipe::kMte1,
                          cycles_of(static_cast<double>(bs) / chip.cost.l1_to_l0b_bytes_per_cycle),
                          l0b,
                          {in.src[1], -1, -1}});
        model::LeafOp mm;
        mm.pipe = LeafPipe::kCube;
        mm.cycles =
            static_cast<std::uint32_t>(mm_cycles / slices + (k < mm_cycles % slices ? 1 : 0));
        mm.dst = in.dst;
        mm.src[0] = l0a;
        mm.src[1] = l0b;
        mm.src[2] = k > 0 || in.accumulate != 0 ? in.dst : -1;
        lp.ops.push_back(mm);
      }
      continue;
    }
    // Other ops: vector work on the vector core; on the cube core the FixPipe's conversions
    // on the way out (cast, relu, dequantisation) share the store pipe.
    op.pipe = cube ? LeafPipe::kMte3 : LeafPipe::kVec;
    op.cycles = priced ? model::tile_op_cycles(t, chip) : 0;
    op.dst = in.dst;
    for (int k = 0; k < 3; ++k) op.src[k] = in.src[k];
    lp.ops.push_back(op);
  }
  const model::LeafTiming timing = model::schedule_leaf(lp);
  std::uint64_t cycles = timing.makespan_cycles;
  if (tiles <= 1) cycles = cycles > memory_cycles ? cycles - memory_cycles : 0;
  return cycles_of(static_cast<double>(cycles) + static_cast<double>(scalar_cycles));
}

}  // namespace pypto::compiler::detail

namespace pypto::compiler {

std::uint64_t task_tile_ops(const Launch& l, common::TaskId t, const model::ChipConfig& chip,
                            std::vector<model::TileOp>* ops) {
  if (t >= l.programs.size()) return 0;
  std::uint64_t cycles = 0;
  model::TileOp op;
  const TaskProgram& p = l.programs[t];
  for (const TileInstr& in : p.instrs) {
    if (!detail::priced_op(p, in, &op)) continue;
    cycles += model::tile_op_cycles(op, chip);
    ops->push_back(op);
  }
  return cycles;
}

}  // namespace pypto::compiler

namespace pypto::compiler::detail {

std::size_t LeafCyclesMemo::KeyHash::operator()(const std::vector<std::uint64_t>& k) const {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ k.size();
  for (const std::uint64_t w : k) {
    h ^= w + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  }
  return static_cast<std::size_t>(h);
}

std::uint32_t LeafCyclesMemo::cycles(const TaskProgram& p, const LeafTraffic& traffic,
                                     common::CoreType core, std::uint16_t tiles,
                                     std::uint64_t scalar_cycles) {
  // What leaf_compute_cycles() reads: the locals' dtypes and shapes; each instruction's
  // opcode, operands, expand and accumulate flags, and its region's shape with which strides
  // are zero (never its offset or the strides' values); the traffic and the three scalars.
  std::vector<std::uint64_t>& k = key_;
  k.clear();
  k.push_back(static_cast<std::uint64_t>(core) | std::uint64_t{tiles} << 8);
  k.push_back(scalar_cycles);
  k.push_back(traffic.read_bytes);
  k.push_back(traffic.write_bytes);
  k.push_back(p.locals.size());
  for (const LocalTile& t : p.locals) {
    k.push_back(static_cast<std::uint64_t>(t.dtype) | std::uint64_t{t.rank} << 8);
    for (int a = 0; a < t.rank; ++a) k.push_back(static_cast<std::uint64_t>(t.shape[a]));
  }
  k.push_back(p.instrs.size());
  const auto u32 = [](std::int32_t v) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v));
  };
  for (const TileInstr& in : p.instrs) {
    const GlobalRegion& r = in.region;
    std::uint64_t zero_strides = 0;
    for (int a = 0; a < r.rank; ++a) zero_strides |= std::uint64_t{r.stride[a] == 0} << a;
    k.push_back(static_cast<std::uint64_t>(in.op) | std::uint64_t{in.expand} << 8 |
                std::uint64_t{in.accumulate} << 16 | static_cast<std::uint64_t>(r.rank) << 24 |
                zero_strides << 32);
    k.push_back(u32(in.dst) | u32(in.src[0]) << 32);
    k.push_back(u32(in.src[1]) | u32(in.src[2]) << 32);
    for (int a = 0; a < r.rank; ++a) k.push_back(static_cast<std::uint64_t>(r.shape[a]));
  }
  // The tiles of a unit come one after another: the last leaf's key, compared whole, answers
  // most calls without hashing the key.
  if (k == last_key_) return last_cycles_;
  const auto it = seen_.find(k);
  if (it != seen_.end()) {
    last_cycles_ = it->second;
  } else {
    last_cycles_ = leaf_compute_cycles(p, traffic, core, tiles, scalar_cycles, chip_);
    seen_.emplace(k, last_cycles_);
  }
  last_key_ = k;
  return last_cycles_;
}

}  // namespace pypto::compiler::detail
