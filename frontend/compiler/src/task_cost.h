// SPDX-License-Identifier: Apache-2.0
// Private to the compiler: which cost-model tile op a tile instruction is. instantiate()
// prices tasks with it and task_tile_ops() lists the same ops, so a dumped trace
// replays with the compute cycles the in-process graph has.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/types.h"
#include "pypto/compiler/op_table.h"
#include "pypto/compiler/program.h"
#include "pypto/model/chip_config.h"
#include "pypto/model/cost_model.h"

namespace pypto::compiler::detail {

// Fills *out with the cost-model op of a compute instruction (shape: its output tile; the
// input tile for reductions; {M, K, N} for matmul) and returns true; returns false for data
// movement (kLoad, kStore), which the simulator prices through L2 and HBM.
bool priced_op(const TaskProgram& p, const TileInstr& in, model::TileOp* out);

// Whether priced_op() prices instructions of opcode op (a compute op, not data movement).
inline bool is_priced(TileOpcode op) {
  const TileOpInfo* info = find_tile_op(op);
  NPU_CHECK(info != nullptr, "is_priced: not a tile opcode: " + std::to_string(int(op)));
  return info->cost_op != nullptr;
}

// The bytes a leaf moves between GM and the core, as the simulator prices them (whole
// cost.mte_granule_bytes blocks of every segment).
struct LeafTraffic {
  std::uint64_t read_bytes = 0, write_bytes = 0;
};

struct Access;
// The traffic of the priced accesses in [begin, end) (the segments the task graph gets).
LeafTraffic leaf_traffic(const Access* begin, const Access* end, const model::ChipConfig& chip);

// A leaf's compute cycles as the simulator takes them (TaskGraph::compute_cycles): p
// list-scheduled over the core's pipes (pypto/model/leaf_schedule.h, docs/leaf-timing.md)
// with its loads and stores moving `traffic` at the chip's per-core L2 rates, less the memory
// time the simulator adds itself, so that the simulated leaf lasts the schedule's makespan
// when every read hits L2: for tiles > 1 the simulator overlaps memory and compute (the
// makespan is returned), for one tile it adds them (the makespan less that memory time).
// scalar_cycles (dynamic-shape work) is added serially. Saturates at 2^32-1.
std::uint32_t leaf_compute_cycles(const TaskProgram& p, const LeafTraffic& traffic,
                                  common::CoreType core, std::uint16_t tiles,
                                  std::uint64_t scalar_cycles, const model::ChipConfig& chip);

// leaf_compute_cycles() of the leaves of one launch, each distinct leaf computed once: the
// tiles of one unit differ only in their offsets, which the cycles do not depend on. The key
// is every input the cycles read (the program without offsets, strides but whether they are
// zero, and scalars), so a hit returns exactly what the call would.
class LeafCyclesMemo {
 public:
  explicit LeafCyclesMemo(const model::ChipConfig& chip) : chip_(chip) {}
  std::uint32_t cycles(const TaskProgram& p, const LeafTraffic& traffic, common::CoreType core,
                       std::uint16_t tiles, std::uint64_t scalar_cycles);

 private:
  struct KeyHash {
    std::size_t operator()(const std::vector<std::uint64_t>& k) const;
  };
  const model::ChipConfig& chip_;
  std::vector<std::uint64_t> key_;       // reused between calls
  std::vector<std::uint64_t> last_key_;  // the last call's key (empty: none yet) and its cycles
  std::uint32_t last_cycles_ = 0;
  std::unordered_map<std::vector<std::uint64_t>, std::uint32_t, KeyHash> seen_;
};

}  // namespace pypto::compiler::detail
