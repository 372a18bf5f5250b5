// SPDX-License-Identifier: Apache-2.0
// Private to instantiate(): PyPTO's partitioning of one root instance's tile tasks into leaf
// tasks (../shared spec: pypto-partition.md; PyPTO framework/src/passes/tile_graph_pass/
// graph_partition). The emitters already glue every load and store to the compute it serves,
// so each emitted task is one of PyPTO's supernodes; this pass then
//  1. grows isomorphic groups in lock-step along their edges under the cycle budget
//     (GraphPartition, "Iso"), and merges neighbouring groups (singletons, 1:r matchings);
//  2. merges isomorphic leaves breadth-wise: vector N-buffer (NBufferMerge), cube L1 reuse
//     and cube N-buffer (L1CopyInReuseMerge);
//  3. rebuilds the root's tasks in topological order: a merged task runs its members'
//     programs in order, its loads of data it made itself or already holds on chip are not
//     traffic, nor are stores nobody else in the root reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"

namespace pypto::compiler::detail {

// Partitions the root whose tasks are tasks[first..] (their accesses are acc[tasks[first].
// acc_begin..] and their programs progs[first..]) in place. Contract: these tasks are the whole
// open root, in program order; `root_buffer_bytes` bounds the root-inner pool and
// `slot_bytes[i]` the launch region i (the regions are still symbolic).
PartitionCounts partition_root(std::vector<TaskRec>& tasks, std::vector<TaskProgram>& progs,
                               std::vector<Access>& acc, std::uint32_t first,
                               std::uint32_t num_params, std::uint64_t root_buffer_bytes,
                               const std::vector<std::uint64_t>& param_bytes,
                               const std::vector<std::uint64_t>& slot_bytes,
                               const std::vector<std::string>& labels, const PartitionOptions& opt,
                               const model::ChipConfig& chip);

// PyPTO's compile-time latency estimate of one task (cycles.cpp: 10 + (ceil(B/256) - 1) * c
// per tile op, B the bytes of its largest input, c = 2 for 1-byte types): what the budgets and
// merge bounds compare. Exposed for tests.
std::uint64_t estimate_latency(const TaskProgram& p);

// The automatic cycle budget of a root whose tasks estimate `total` (EstimateCycleUB).
std::uint64_t automatic_cycle_budget(std::uint64_t total);

// The automatic vector merge factor of a class of n leaves (NBufferMerge): the largest k that
// leaves at least p (mg_vec_parallel_lb, 48) leaves.
std::int64_t auto_vec_factor(std::int64_t n, std::int64_t p);

}  // namespace pypto::compiler::detail
