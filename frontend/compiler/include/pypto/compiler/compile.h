// SPDX-License-Identifier: Apache-2.0
// The compact graph compiler: kernel IR (frontend/pypto/IR.md, JSON) -> tile ops -> leaf
// tasks on one core type each -> root functions (one per pypto.loop body variant) -> at
// launch, root instances per loop iteration stitched into device tasks.
//
// compile() runs once per specialization (dtypes, formats, static dims, non-tensor
// values); instantiate() runs per call with the concrete sizes of DYNAMIC axes, so a new
// dynamic size never recompiles.
//
// Example:
//   auto k = pypto::compiler::compile(ir_json_text);
//   pypto::compiler::Launch l = pypto::compiler::instantiate(*k, tensors, bindings, opts, chip);
//   // l.graph goes to sim::simulate(); l.programs[t] is executed when task t completes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "pypto/compiler/program.h"
#include "pypto/model/chip_config.h"
#include "pypto/model/cost_model.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sched/task_graph.h"

namespace pypto::compiler {

class CompiledKernel;  // opaque; immutable once built, shareable between launches

// Parses and validates the IR JSON text and plans leaf tasks (fusion of element-wise
// chains, cube tiling). Throws pypto::ConfigError for IR the compiler does not support,
// naming the statement's "loc" (kernel.py:LINE) and what is wrong.
std::shared_ptr<const CompiledKernel> compile(const std::string& ir_json);

// Name and statistics of a compiled kernel.
std::string kernel_name(const CompiledKernel& k);

// One tensor argument of a launch, in parameter order (outputs included).
struct LaunchTensor {
  std::string name;
  DType dtype = DType::kFp32;
  std::vector<std::int64_t> shape;
  std::uint8_t* data = nullptr;  // host memory, row-major contiguous
  std::uint64_t size_bytes = 0;
};

// One of PyPTO's breadth-merge settings (pass_options vec_nbuffer_setting,
// cube_l1_reuse_setting, cube_nbuffer_setting), as parse_merge_setting() derives it from the
// user's dictionary. A factor is the number of isomorphic leaf tasks merged into one.
struct MergeSetting {
  enum class Mode : std::uint8_t {
    kAuto,           // the pass's automatic factor, members grouped by producer/consumer
    kOff,            // no merge
    kManualGrouped,  // int keys: factors per class (hashOrder), grouped like kAuto
    kAutoWhole,      // {-2: 0}: automatic factor, whole class in topological order
    kManualWhole,    // "DEFAULT" / "func<magic>_<order>" / {-2: 1, ...}: whole class
  };
  enum class Side : std::uint8_t { kAny, kLeft, kRight };  // cube L1 reuse: which operand
  Mode mode = Mode::kAuto;
  std::int64_t default_factor = 0;                // 0: the automatic factor
  std::map<std::int64_t, std::int64_t> by_order;  // hashOrder -> factor
  // Semantic label (pypto.set_semantic_label) -> factor, for every class holding an op with
  // that label (the largest when several apply); it overrides by_order and the default.
  std::map<std::string, std::int64_t> by_label;
  Side side = Side::kAny;

  // A setting that merges nothing ({-1: 1}).
  static MergeSetting off() {
    MergeSetting s;
    s.mode = Mode::kOff;
    return s;
  }
};

// One key of a merge setting as the user wrote it: an int key in decimal, "DEFAULT",
// "func<magic>_<order>" or a semantic label; `side` is "left"/"right" for a cube L1 reuse
// pair, else empty.
struct MergeEntry {
  std::string key;
  std::int64_t factor = 0;
  std::string side;
};

// Derives a setting's mode and factors from its entries (PyPTO's rules: an empty dict is
// automatic, {-1: 1} or {"DEFAULT": 1} alone is off, int keys are grouped, string keys and
// -2 select whole-class merging, other strings are semantic labels). `name` names the option
// in errors. Throws ConfigError for a key or value it cannot read.
MergeSetting parse_merge_setting(const std::string& name, const std::vector<MergeEntry>& entries,
                                 MergeSetting::Mode empty_mode);

// PyPTO's partitioning options (pass_options), with PyPTO's current defaults.
struct PartitionOptions {
  bool enabled = true;            // false: every emitted tile task stays a leaf (comparisons)
  std::int64_t cycle_budget = 0;  // pg_upper_bound; 0: automatic from the root's estimate
  MergeSetting vec_nbuffer;       // vec_nbuffer_setting: auto
  MergeSetting cube_l1_reuse;     // cube_l1_reuse_setting: auto (on)
  MergeSetting cube_nbuffer = MergeSetting::off();  // cube_nbuffer_setting: {-1: 1}, off
  // PyPTO's pass config keys (tile_fwk_config.json), which older kernels pass as options.
  std::int64_t parallel_lower_bound = 20;        // pg_parallel_lower_bound
  std::uint64_t lower_bound = 512;               // pg_lower_bound
  std::int64_t vec_parallel_lb = 48;             // mg_vec_parallel_lb
  std::uint64_t copyin_upper_bytes = 104857600;  // mg_copyin_upper_bound (100 MiB)
};

struct LaunchOptions {
  sched::RuntimeOptions runtime;  // stitching, workspace, parallelism, valid_shape_optimize,
                                  // ready_on_host_tensors
  PartitionOptions partition;     // how emitted tile tasks merge into leaf tasks
};

// How the partition made one leaf task: its isomorphism class within its root (PyPTO's
// hashOrder) and the class size before each breadth merge that merged it (0: not merged).
struct LeafMerge {
  std::int32_t hash_order = -1;
  std::uint32_t vec_count = 0, l1_count = 0, cube_count = 0;
};

// Everything one call needs: the task graph for the timing model, each task's program for
// the functional model, and the memory layout.
struct Launch {
  sched::TaskGraph graph;             // device tasks stitched; durations from the cost model
  std::vector<TaskProgram> programs;  // indexed by task id (empty for HUB tasks)
  std::uint64_t workspace_bytes = 0;  // host buffer to allocate (buffer index = #tensors)
  std::uint64_t minimum_workspace_bytes = 0;  // total(k = 1)
  std::uint64_t tile_ops = 0;                 // compute tile ops emitted (for throughput figures)
  std::uint32_t roots = 0;                    // root instances
  std::vector<std::string> log;               // runtime log lines (workspace recommendation, ...)
  // Per task, the partition's merges (PyPTO's swimlane hints); empty when nothing merged.
  std::vector<LeafMerge> leaf_hints;
};

// Evaluates the control flow with the concrete `bindings` ({symbol: value} for every
// dynamic dimension symbol) and builds the launch. Throws pypto::ConfigError for a user
// error that only shows at run time (e.g. max_workspace_kb at or below the minimum
// runnable workspace, with PyPTO's message) and pypto::ModelError for compiler bugs.
Launch instantiate(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                   const std::map<std::string, std::int64_t>& bindings, const LaunchOptions& opt,
                   const model::ChipConfig& chip);

// Appends task t's compute tile ops, as the cost model prices them, to *ops and returns the
// compute cycles they account for: what a native trace of the launch lists as the task's `ops`
// (traces/FORMAT.md; trace::write_native_trace writes them, launch::write_launch_trace joins the
// two). Contract: t indexes l.graph.
std::uint64_t task_tile_ops(const Launch& l, common::TaskId t, const model::ChipConfig& chip,
                            std::vector<model::TileOp>* ops);

}  // namespace pypto::compiler
