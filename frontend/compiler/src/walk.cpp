// SPDX-License-Identifier: Apache-2.0
// instantiate() and Instance::run(): option checks, bindings and parameter tensors, and the
// control-flow walk (variants, loops, roots). Units are emitted through the EmitContext
// (emit_context.cpp); roots then go to stitch(), patch() and build_graph().
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "instance.h"
#include "partition.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/memory.h"
#include "pypto/sched/stitcher.h"

namespace pypto::compiler {

namespace detail {

// ---------------------------------------------------------------------------------------------
// setup

// The rules of every runtime option live in sched/ (kRuntimeOptionSpecs).
void Instance::check_options() const { sched::validate(opt_.runtime); }

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
      throw ConfigError(where + " has dtype " + std::string(model::to_string(t.dtype)) +
                        ", expected " + std::string(model::to_string(p.dtype)));
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
    const std::uint64_t bytes = elems * model::dtype_bytes(p.dtype);
    if (bytes > 0 && t.data == nullptr) {
      throw ConfigError(where +
                        " has no data (a tensor on the meta device, or without "
                        "storage); expected " +
                        std::to_string(bytes) + " bytes");
    }
    if (t.size_bytes < bytes) {
      throw ConfigError(where + " has " + std::to_string(t.size_bytes) +
                        " bytes of host data, "
                        "expected " +
                        std::to_string(bytes));
    }
    // A tensor passed for two parameters (a cache updated in place: PyPTO's kernels take it
    // as input and output) is one buffer, so its reads and writes order each other and a copy
    // of it onto itself is no copy.
    std::uint32_t buffer = static_cast<std::uint32_t>(i);
    for (std::size_t j = 0; j < i && t.data != nullptr; ++j) {
      const LaunchTensor& o = tensors_[j];
      if (o.data == t.data && o.size_bytes == t.size_bytes && o.dtype == t.dtype &&
          o.shape == t.shape) {
        buffer = vals_[k_.params[j].value].region.buffer;
        break;
      }
    }
    v.has_region = true;
    v.region.buffer = buffer;
    v.region.dtype = p.dtype;
    set_dense_layout(v);
    v.storage = Storage{buffer, 0, bytes, p.value, k_.values[p.value].no_l2, k_.values[p.value].nz};
    vals_[p.value] = v;
  }
  par_ =
      k_.has_parallel_loop ? static_cast<std::uint32_t>(opt_.runtime.device_sched_parallelism) : 1;
  // The k root instances of a device task: its most roots under the stitching rule (legacy
  // count mode included); memory-driven launches keep stitch_function_max_num.
  slot_versions_ = static_cast<std::uint32_t>(
      opt_.runtime.max_workspace_kb > 0
          ? std::max<std::int64_t>(1, opt_.runtime.stitch_function_max_num)
          : std::max<std::uint64_t>(1, sched::stitch_limits(opt_.runtime).max_roots));
  slot_next_version_.assign(static_cast<std::size_t>(k_.num_launch_slots) * par_, 0);
  slot_version_at_.assign(slot_next_version_.size(), {});
  slot_bytes_.assign(slot_next_version_.size(), 0);
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
  check_trip_count(st.loc, n);
  const std::size_t tasks_before = tasks_.size();
  std::int64_t it = 0;
  for (const std::int64_t f : unroll) {
    while (n - it >= f) {
      for (std::int64_t j = 0; j < f; ++j, ++it) {
        env_.slot[L.index_slot] = start + it * step;
        env_.bound[L.index_slot] = 1;
        exec_variants(L.variants, st.loc);
        if (it == 0) check_projected_size(st.loc, n, tasks_.size() - tasks_before);
        if ((++iterations_ & 1023) == 0) common::check_interrupt("building the launch's tasks");
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

// Every iteration of a device loop becomes tasks of the launch (loops are unrolled): a trip
// count no launch can hold is refused before the first iteration, not met by running out of
// memory. A launch holds at most kMaxLaunchTasks tasks (32-bit task ids).
void Instance::check_trip_count(const std::string& loc, std::int64_t n) const {
  if (n <= static_cast<std::int64_t>(kMaxLaunchTasks)) return;
  throw ConfigError(loc + ": the loop runs " + std::to_string(n) +
                    " iterations; a launch unrolls every iteration into tasks and holds at "
                    "most " +
                    std::to_string(kMaxLaunchTasks) +
                    " tasks: lower the trip count or make the iterations larger (bigger tiles)");
}

// After a loop's first iteration made `per_iteration` tasks, its n iterations would make
// about n times as many: refused when that passes the task-id range or the memory available,
// before the other iterations are built.
void Instance::check_projected_size(const std::string& loc, std::int64_t n,
                                    std::size_t per_iteration) const {
  const double tasks = static_cast<double>(tasks_.size()) +
                       static_cast<double>(per_iteration) * static_cast<double>(n - 1);
  const double bytes = tasks * kLaunchBytesPerTask;
  const bool too_many = tasks > static_cast<double>(kMaxLaunchTasks);
  if (!too_many && bytes < kMemoryCheckFloorBytes) return;
  const std::uint64_t avail = common::available_memory_bytes();
  if (!too_many && (avail == 0 || bytes <= static_cast<double>(avail))) return;
  char figures[160];
  std::snprintf(figures, sizeof figures,
                "%lld iterations of %zu tasks each make about %.3g tasks (%.3g GiB at %.0f "
                "bytes per task)",
                static_cast<long long>(n), per_iteration, tasks, bytes / (1 << 30),
                kLaunchBytesPerTask);
  throw ConfigError(loc + ": the loop's " + figures + ", more than " +
                    (too_many ? "a launch holds (" + std::to_string(kMaxLaunchTasks) + " tasks)"
                              : "the " + std::to_string(avail >> 20) + " MiB of memory available") +
                    "; lower the trip count or make the iterations larger (bigger tiles)");
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
  if (tasks_.size() > cur_.first_task) {
    std::vector<std::uint64_t> param_bytes;
    for (const LaunchTensor& t : tensors_) param_bytes.push_back(t.size_bytes);
    const PartitionCounts c = partition_root(
        tasks_, progs_, acc_, cur_.first_task, static_cast<std::uint32_t>(tensors_.size()),
        root_bump_, param_bytes, slot_bytes_, labels_, opt_.partition, chip_);
    partition_.emitted += c.emitted;
    partition_.leaves += c.leaves;
    partition_.grown += c.grown;
    partition_.vec_merged += c.vec_merged;
    partition_.l1_merged += c.l1_merged;
    partition_.cube_nbuf_merged += c.cube_nbuf_merged;
  }
  cur_.num_tasks = static_cast<std::uint32_t>(tasks_.size()) - cur_.first_task;
  if (cur_.num_tasks == 0) return;  // nothing to stitch (only aliases ran)
  cur_.bytes = root_bump_;
  cur_.barrier = pending_barrier_;
  pending_barrier_ = false;
  roots_.push_back(std::move(cur_));
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
  if (partition_.leaves != partition_.emitted) {
    log_.push_back("partition: " + std::to_string(partition_.emitted) + " tile tasks -> " +
                   std::to_string(partition_.leaves) + " leaf tasks (lock-step growth " +
                   std::to_string(partition_.grown) + ", vector merge " +
                   std::to_string(partition_.vec_merged) + ", cube L1 reuse " +
                   std::to_string(partition_.l1_merged) + ", cube N-buffer " +
                   std::to_string(partition_.cube_nbuf_merged) + " tasks absorbed)");
  }
  l.log = std::move(log_);
  return l;
}

}  // namespace detail

Launch instantiate(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                   const std::map<std::string, std::int64_t>& bindings, const LaunchOptions& opt,
                   const model::ChipConfig& chip) {
  return detail::Instance(k.k, tensors, bindings, opt, chip).run();
}

}  // namespace pypto::compiler
