// SPDX-License-Identifier: Apache-2.0
// Instance::patch() and build_graph(): every symbolic workspace region patched to its real
// buffer offset, then exact memory dependencies (deps.cpp), memory ranges and costs into the
// TaskGraphBuilder.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "deps.h"
#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

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
    const std::uint32_t es = model::dtype_bytes(r.dtype);
    NPU_CHECK(base % es == 0, "workspace region not aligned to its element size");
    r.buffer = nT;
    r.offset_elems += static_cast<std::int64_t>(base / es);
  };
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    const std::uint32_t root = tasks_[t].root;
    for (TileInstr& in : progs_[t].instrs) {
      const TileExec ex = find_tile_op(in.op)->exec;
      if (ex == TileExec::kLoad || ex == TileExec::kStore || ex == TileExec::kScatterRows ||
          ex == TileExec::kGatherElems) {
        fix(in.region, root);
      }
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
      // A tile's rows at a time: the first and the last row bound them all.
      for_each_segment_run(
          x.r, [&](std::uint64_t off, std::uint64_t bytes, std::int64_t pitch, std::int64_t count) {
            const std::uint64_t last = off + static_cast<std::uint64_t>(pitch * (count - 1));
            NPU_CHECK(
                off + bytes <= buffer_bytes[x.r.buffer] && last + bytes <= buffer_bytes[x.r.buffer],
                "task " + std::to_string(t) + " touches bytes outside buffer " +
                    std::to_string(x.r.buffer));
            deps.rows(x.write, x.r.buffer, off, bytes, pitch, count);
            segments += static_cast<std::uint64_t>(count);
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
      if (!x.priced) return;
      const std::uint64_t base = static_cast<std::uint64_t>(x.r.buffer + 1) << 40;
      moved_runs(x, [&](std::uint64_t first, std::uint64_t bytes, std::uint32_t burst,
                        std::int64_t pitch, std::int64_t count) {
        const sched::MemAccess m{base + first, static_cast<std::uint32_t>(bytes), x.write ? 1u : 0u,
                                 burst, x.no_l2 ? 1u : 0u};
        b.add_memory_rows(m, static_cast<std::uint64_t>(pitch), static_cast<std::size_t>(count));
      });
    });
  }
  bool merged = false;
  for (const TaskRec& tr : tasks_) merged = merged || tr.members > 1;
  if (merged) {
    l.leaf_hints.resize(n);
    for (std::size_t t = 0; t < n; ++t) {
      const TaskRec& tr = tasks_[t];
      if (tr.members <= 1) continue;
      l.leaf_hints[t] = LeafMerge{static_cast<std::int32_t>(tr.hash_order), tr.vec_class,
                                  tr.l1_class, tr.cube_class};
    }
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

}  // namespace pypto::compiler::detail
