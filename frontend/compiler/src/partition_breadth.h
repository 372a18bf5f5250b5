// SPDX-License-Identifier: Apache-2.0
// Private to the partition (partition.cpp): step 2, the breadth merges of isomorphic leaves
// (PyPTO's NBufferMerge and L1CopyInReuseMerge), and the region helpers both steps share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "partition_sets.h"

namespace pypto::compiler::detail {

inline bool same_region(const GlobalRegion& a, const GlobalRegion& b) {
  if (a.buffer != b.buffer || a.offset_elems != b.offset_elems || a.dtype != b.dtype ||
      a.rank != b.rank) {
    return false;
  }
  for (int k = 0; k < a.rank; ++k) {
    if (a.shape[k] != b.shape[k] || a.stride[k] != b.stride[k]) return false;
  }
  return true;
}

inline std::uint64_t region_bytes(const GlobalRegion& r) {
  std::uint64_t b = model::dtype_bytes(r.dtype);
  for (int k = 0; k < r.rank; ++k)
    b *= static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.shape[k]));
  return b;
}

inline std::uint64_t region_hash(const GlobalRegion& r) {
  std::uint64_t h = mix(r.buffer, static_cast<std::uint64_t>(r.offset_elems));
  for (int k = 0; k < r.rank; ++k) {
    h = mix(h, static_cast<std::uint64_t>(r.shape[k]));
    h = mix(h, static_cast<std::uint64_t>(r.stride[k]));
  }
  return h;
}

// Per task (indexed by the set it headed when its merge ran): the hashOrder of its leaf's
// class and the class size before each breadth merge that merged it (0: none).
struct LeafHints {
  std::vector<std::uint32_t> hash_order, vec_class, l1_class, cube_class;
};

// What the partition of one root reads besides its graph: the root's tasks (tasks[first..])
// with their accesses, the kernel's semantic labels, the options and the chip.
struct RootInputs {
  const std::vector<TaskRec>& tasks;
  const std::vector<Access>& acc;
  std::uint32_t first;
  const std::vector<std::string>& labels;
  const PartitionOptions& opt;
  const model::ChipConfig& chip;
};

// Runs the vector N-buffer merge, the cube L1 reuse and the cube N-buffer merge, in PyPTO's
// order, on the leaves `uf` holds over `g`. Contract: `uf`'s sets form an acyclic leaf graph
// and stay so; every merge is counted in `counts` and noted in `hints`.
void merge_breadth(const RootGraph& g, UnionFind& uf, const RootInputs& in, PartitionCounts& counts,
                   LeafHints& hints);

}  // namespace pypto::compiler::detail
