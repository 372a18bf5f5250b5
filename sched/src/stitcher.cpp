// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/stitcher.h"

#include <algorithm>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::sched {

StitchLimits stitch_limits(const RuntimeOptions& opts) {
  const std::uint64_t kmax = RuntimeOptions::kMaxRootsPerDeviceTask;
  check_runtime_option(spec_of(RuntimeOption::kStitchFunctionMaxNum), opts.stitch_function_max_num);
  const OptionSpec& initial_spec = spec_of(RuntimeOption::kStitchFunctionNumInitial);
  const OptionSpec& step_spec = spec_of(RuntimeOption::kStitchFunctionNumStep);
  const OptionSpec& size_spec = spec_of(RuntimeOption::kStitchFunctionSize);
  if (opts.stitch_function_num_initial) {
    check_runtime_option(initial_spec, *opts.stitch_function_num_initial);
  }
  if (opts.stitch_function_num_step) {
    check_runtime_option(step_spec, *opts.stitch_function_num_step);
  }
  if (opts.stitch_function_size) check_runtime_option(size_spec, *opts.stitch_function_size);

  StitchLimits l;
  const bool pair = opts.stitch_function_num_initial || opts.stitch_function_num_step;
  l.legacy = pair && !opts.stitch_function_max_num_given;
  l.superseded = pair && opts.stitch_function_max_num_given;
  if (l.legacy) {
    // PyPTO's old defaults (the table's default_value) for the missing one of the pair.
    l.initial_roots = static_cast<std::uint64_t>(
        opts.stitch_function_num_initial.value_or(initial_spec.default_value));
    l.step_roots =
        static_cast<std::uint64_t>(opts.stitch_function_num_step.value_or(step_spec.default_value));
    l.initial_roots = std::min(l.initial_roots, kmax);
    l.max_roots = l.step_roots > 0 ? kmax : l.initial_roots;
  } else {
    l.initial_roots = l.max_roots = static_cast<std::uint64_t>(opts.stitch_function_max_num);
  }
  l.leaf_cap = static_cast<std::uint64_t>(
      opts.stitch_function_size.value_or(RuntimeOptions::kMaxLeafTasksPerDeviceTask));
  return l;
}

std::string superseded_note(const RuntimeOptions& opts) {
  if (!stitch_limits(opts).superseded) return "";
  std::string given;
  if (opts.stitch_function_num_initial) {
    given += "stitch_function_num_initial=" + std::to_string(*opts.stitch_function_num_initial);
  }
  if (opts.stitch_function_num_step) {
    given += std::string(given.empty() ? "" : ", ") +
             "stitch_function_num_step=" + std::to_string(*opts.stitch_function_num_step);
  }
  return "runtime_options: " + given +
         " superseded by stitch_function_max_num=" + std::to_string(opts.stitch_function_max_num) +
         " (PyPTO replaced the older options with it); device tasks hold up to " +
         std::to_string(opts.stitch_function_max_num) + " roots";
}

StitchCursor::StitchCursor(const StitchLimits& limits, bool memory_driven,
                           std::uint64_t capacity_bytes)
    : threshold_(limits.initial_roots),
      step_(memory_driven ? 0 : limits.step_roots),
      leaf_cap_(limits.leaf_cap),
      memory_driven_(memory_driven),
      capacity_(capacity_bytes) {}

bool StitchCursor::next(const StitchRoot& r) {
  const std::uint64_t kmax = RuntimeOptions::kMaxRootsPerDeviceTask;
  const std::uint64_t leaf_cap = leaf_cap_;
  const bool memory_driven = memory_driven_;
  bool opens = false;
  if (r.parallel_group != 0) {
    if (!open_ || pg_ != r.parallel_group || pi_ != r.parallel_iteration) {
      opens = true;
    } else if (nroots_ + 1 > kmax || ntasks_ + r.num_tasks > leaf_cap ||
               (memory_driven && used_ + r.workspace_bytes > capacity_)) {
      throw ConfigError(
          std::string(r.loc) +
          ": one iteration of this parallel loop needs more than one "
          "device task (" +
          std::to_string(nroots_ + 1) + " roots, " + std::to_string(ntasks_ + r.num_tasks) +
          " leaf tasks, " + std::to_string(used_ + r.workspace_bytes) +
          " workspace bytes; limits " + std::to_string(kmax) + " roots, " +
          std::to_string(leaf_cap) + " leaf tasks" +
          (memory_driven ? ", " + std::to_string(capacity_) + " bytes" : std::string()) +
          "); each iteration of a parallel loop is one device task");
    }
  } else {
    // A fresh device task starts anyway; the count and size checks still run against an
    // empty one (only the size check can then fire), as PyPTO's control flow does.
    const bool fresh = !open_ || pg_ != 0 || r.barrier;
    const std::uint64_t roots = fresh ? 0 : nroots_;
    const std::uint64_t tasks = fresh ? 0 : ntasks_;
    const bool by_count = !memory_driven && roots >= threshold_;
    const bool by_size = tasks + r.num_tasks > leaf_cap;
    opens = fresh || by_count || by_size || roots >= kmax ||
            (memory_driven && used_ + r.workspace_bytes > capacity_);
    if (by_count || by_size) threshold_ = std::min(kmax, threshold_ + step_);
  }
  if (opens) {
    if (open_) ++dt_;
    open_ = true;
    pg_ = r.parallel_group;
    pi_ = r.parallel_group != 0 ? r.parallel_iteration : 0;
    nroots_ = ntasks_ = used_ = 0;
  }
  ++nroots_;
  ntasks_ += r.num_tasks;
  used_ += r.workspace_bytes;
  last_bytes_ = r.workspace_bytes;
  return opens;
}

Stitcher::Stitcher(const RuntimeOptions& opts, const WorkspaceModel& model, bool sizes_known)
    : opts_(opts), model_(model), sizes_known_(sizes_known) {
  stitch_limits(opts);  // validates the stitching options
  NPU_CHECK(model.serial_copies >= 1 && model.parallel_copies >= 1 && model.align_bytes >= 1,
            "workspace model: copies and alignment must be at least 1");
}

StitchResult Stitcher::stitch(const std::vector<StitchRoot>& roots) const {
  StitchResult res;
  std::uint64_t largest_root = 0;
  for (const StitchRoot& r : roots) largest_root = std::max(largest_root, r.workspace_bytes);
  const std::uint64_t minimum = workspace_total(model_, largest_root, 1);
  const std::uint64_t kmax = RuntimeOptions::kMaxRootsPerDeviceTask;
  const StitchLimits limits = stitch_limits(opts_);
  const std::uint64_t leaf_cap = limits.leaf_cap;
  const std::uint64_t budget =
      sizes_known_ ? static_cast<std::uint64_t>(opts_.max_workspace_kb) * 1024 : 0;
  if (budget > 0 && budget <= minimum) {
    throw ConfigError("max_workspace_kb=" + std::to_string(opts_.max_workspace_kb) +
                      "KB must be greater than the minimum runnable workspace=" +
                      std::to_string(minimum / 1024) + "KB");
  }
  const bool memory_driven = budget > 0;
  // Count-driven: the most roots a device task can hold (legacy mode: as its threshold grows).
  std::uint64_t depth = limits.max_roots;
  std::uint64_t capacity = 0;  // root-inner bytes per device task (memory-driven)
  if (memory_driven) {
    capacity = (budget - model_.fixed_bytes) / model_.serial_copies;
    depth = largest_root == 0 ? kmax : std::min<std::uint64_t>(kmax, capacity / largest_root);
    while (depth > 1 && workspace_total(model_, largest_root, depth) > budget) --depth;
    depth = std::max<std::uint64_t>(depth, 1);
  } else if (sizes_known_) {
    res.log.push_back("Recommended: set max_workspace_kb near " +
                      std::to_string(workspace_total(model_, largest_root, depth) / 1024) +
                      "KB and above " + std::to_string(minimum / 1024) +
                      "KB to activate memory-driven mode.");
  }
  if (sizes_known_) {
    res.log.push_back("[workspaceSize] stitch depth: k_eff=" + std::to_string(depth) +
                      " stitchNumMax=" + std::to_string(limits.max_roots) +
                      " stitch_1=" + std::to_string(minimum) +
                      " max_workspace_kb=" + std::to_string(opts_.max_workspace_kb) +
                      " memory_driven=" + (memory_driven ? "1" : "0"));
  }

  res.device_task.resize(roots.size());
  res.base_bytes.resize(roots.size());
  if (sizes_known_ && limits.superseded) res.log.push_back("warning: " + superseded_note(opts_));
  StitchCursor cursor(limits, memory_driven, capacity);
  std::vector<DeviceTaskWorkspace> dt_use;
  std::vector<std::uint32_t> dt_slot;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const StitchRoot& r = roots[i];
    if (cursor.next(r)) {
      dt_use.push_back(DeviceTaskWorkspace{0, r.parallel_group != 0});
      dt_slot.push_back(r.parallel_group != 0 ? r.parallel_iteration % model_.parallel_copies : 0);
    }
    if (sizes_known_ && r.num_tasks > leaf_cap) {
      res.log.push_back("root " + std::to_string(i) + " has " + std::to_string(r.num_tasks) +
                        " leaf tasks, more than the " + std::to_string(leaf_cap) +
                        " of one device task; it gets a device task of its own");
    }
    res.device_task[i] = cursor.device_task();
    // Within its device task's pool slot, fixed up below.
    res.base_bytes[i] = cursor.bytes_before();
    dt_use.back().bytes = cursor.bytes_before() + r.workspace_bytes;
  }
  res.num_device_tasks = roots.empty() ? 0 : cursor.device_task() + 1;
  for (const DeviceTaskWorkspace& d : dt_use) {
    res.pool_slice_bytes = std::max(res.pool_slice_bytes, d.bytes);
  }
  for (std::size_t i = 0; i < roots.size(); ++i) {
    res.base_bytes[i] += model_.fixed_bytes + dt_slot[res.device_task[i]] * res.pool_slice_bytes;
  }
  res.workspace = workspace_figures(model_, dt_use, largest_root);
  return res;
}

std::vector<std::uint32_t> stitch_device_tasks(
    const std::vector<std::uint32_t>& task_root,
    const std::vector<std::uint32_t>& task_parallel_group, const RuntimeOptions& opts) {
  NPU_CHECK(task_root.size() == task_parallel_group.size(),
            "stitch_device_tasks: one root and one parallel group per task");
  const Stitcher stitcher(opts, WorkspaceModel{}, /*sizes_known=*/false);
  const std::size_t n = task_root.size();
  std::vector<StitchRoot> roots;
  for (std::size_t i = 0; i < n;) {
    // One root instance: the run of tasks sharing task_root[i].
    const std::uint32_t root = task_root[i];
    const std::uint32_t pg = task_parallel_group[i];
    std::size_t j = i + 1;
    while (j < n && task_root[j] == root) {
      if (task_parallel_group[j] != pg) {
        throw TraceError("task " + std::to_string(j) + " of root " + std::to_string(root) +
                         " is in parallel group " + std::to_string(task_parallel_group[j]) +
                         " but task " + std::to_string(i) + " of the same root is in group " +
                         std::to_string(pg));
      }
      ++j;
    }
    if (j < n && task_root[j] < root) {
      throw TraceError("task " + std::to_string(j) + ": root " + std::to_string(task_root[j]) +
                       " follows root " + std::to_string(root) +
                       "; roots must be non-decreasing in task order");
    }
    StitchRoot r;
    r.num_tasks = static_cast<std::uint32_t>(j - i);
    r.parallel_group = pg;
    // Traces record no iterations: each root of a parallel group is one.
    r.parallel_iteration = static_cast<std::uint32_t>(roots.size());
    roots.push_back(r);
    i = j;
  }
  const StitchResult s = stitcher.stitch(roots);
  std::vector<std::uint32_t> out(n);
  for (std::size_t r = 0, t = 0; r < roots.size(); ++r) {
    std::fill(out.begin() + t, out.begin() + t + roots[r].num_tasks, s.device_task[r]);
    t += roots[r].num_tasks;
  }
  return out;
}

}  // namespace pypto::sched
