// SPDX-License-Identifier: Apache-2.0
// Instance::stitch(): roots into device tasks (stitch_function_max_num or, memory-driven,
// the workspace budget; submit_before_loop; one device task per parallel iteration), and the
// workspace layout of launch-lifetime regions and per-device-task root pools.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/sched/errors.h"

namespace pypto::compiler::detail {

void Instance::stitch(Launch& l) {
  const sched::RuntimeOptions& o = opt_.runtime;
  // Launch-lifetime regions first.
  slot_base_.assign(slot_bytes_.size(), 0);
  launch_bytes_ = 0;
  for (std::size_t i = 0; i < slot_bytes_.size(); ++i) {
    slot_base_[i] = launch_bytes_;
    launch_bytes_ += slot_bytes_[i];
  }
  std::uint64_t max_root = 0;
  for (const RootRec& r : roots_) max_root = std::max(max_root, r.bytes);
  const std::uint64_t F = launch_bytes_, P = par_, R = max_root;
  const auto total = [&](std::uint64_t k) { return align_up(F + P * k * R, 1024); };
  const std::uint64_t minimum = total(1);
  l.minimum_workspace_bytes = minimum;
  const std::uint64_t budget = static_cast<std::uint64_t>(o.max_workspace_kb) * 1024;
  if (budget > 0 && budget <= minimum) {
    throw ConfigError("max_workspace_kb=" + std::to_string(o.max_workspace_kb) +
                      "KB must be greater than the minimum runnable workspace=" +
                      std::to_string(minimum / 1024) + "KB");
  }
  const bool memory_driven = budget > 0;
  const std::uint64_t kmax = sched::RuntimeOptions::kMaxRootsPerDeviceTask;
  std::uint64_t depth = static_cast<std::uint64_t>(o.stitch_function_max_num);
  std::uint64_t capacity = 0;  // root-inner bytes per device task (memory-driven)
  if (!memory_driven) {
    log_.push_back("Recommended: set max_workspace_kb near " + std::to_string(total(depth) / 1024) +
                   "KB and above " + std::to_string(minimum / 1024) +
                   "KB to activate memory-driven mode.");
  } else {
    capacity = (budget - F) / P;
    depth = R == 0 ? kmax : std::min<std::uint64_t>(kmax, capacity / R);
    while (depth > 1 && total(depth) > budget) --depth;
    depth = std::max<std::uint64_t>(depth, 1);
  }
  log_.push_back("[workspaceSize] stitch depth: k_eff=" + std::to_string(depth) +
                 " stitchNumMax=" + std::to_string(o.stitch_function_max_num) +
                 " stitch_1=" + std::to_string(minimum) +
                 " max_workspace_kb=" + std::to_string(o.max_workspace_kb) +
                 " memory_driven=" + (memory_driven ? "1" : "0"));
  const std::uint64_t leaf_cap = sched::RuntimeOptions::kMaxLeafTasksPerDeviceTask;
  bool open = false;
  std::uint32_t dt = 0, cur_pg = 0, cur_pi = 0;
  std::uint64_t nroots = 0, ntasks = 0, used = 0;
  std::vector<std::uint64_t> dt_used;
  std::vector<std::uint32_t> dt_slot;
  const auto start_dt = [&](std::uint32_t pg, std::uint32_t pi) {
    if (open) ++dt;
    open = true;
    cur_pg = pg;
    cur_pi = pi;
    nroots = ntasks = used = 0;
    dt_used.push_back(0);
    dt_slot.push_back(pg != 0 ? pi % par_ : 0);
  };
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    RootRec& r = roots_[i];
    if (r.pgroup != 0) {
      if (!open || cur_pg != r.pgroup || cur_pi != r.piter) {
        start_dt(r.pgroup, r.piter);
      } else if (nroots + 1 > kmax || ntasks + r.num_tasks > leaf_cap ||
                 (memory_driven && used + r.bytes > capacity)) {
        throw ConfigError(
            r.ploc +
            ": one iteration of this parallel loop needs more than one "
            "device task (" +
            std::to_string(nroots + 1) + " roots, " + std::to_string(ntasks + r.num_tasks) +
            " leaf tasks, " + std::to_string(used + r.bytes) + " workspace bytes; limits " +
            std::to_string(kmax) + " roots, " + std::to_string(leaf_cap) + " leaf tasks" +
            (memory_driven ? ", " + std::to_string(capacity) + " bytes" : std::string()) +
            "); each iteration of a parallel loop is one device task");
      }
    } else {
      const bool close =
          open && (cur_pg != 0 || r.barrier || nroots >= kmax || ntasks + r.num_tasks > leaf_cap ||
                   (memory_driven ? used + r.bytes > capacity : nroots >= depth));
      if (!open || close) start_dt(0, 0);
    }
    if (r.num_tasks > leaf_cap) {
      log_.push_back("root " + std::to_string(i) + " has " + std::to_string(r.num_tasks) +
                     " leaf tasks, more than the " + std::to_string(leaf_cap) +
                     " of one device task; it gets a device task of its own");
    }
    r.dt = dt;
    r.base = used;  // within its device task's pool slot, fixed up below
    used += r.bytes;
    ++nroots;
    ntasks += r.num_tasks;
    dt_used.back() = used;
  }
  pool_slice_ = 0;
  for (const std::uint64_t u : dt_used) pool_slice_ = std::max(pool_slice_, u);
  for (RootRec& r : roots_) r.base += F + dt_slot[r.dt] * pool_slice_;
  l.workspace_bytes = F + P * pool_slice_;
}

}  // namespace pypto::compiler::detail
