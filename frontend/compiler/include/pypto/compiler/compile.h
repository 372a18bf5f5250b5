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

struct LaunchOptions {
  sched::RuntimeOptions runtime;  // stitching, workspace, parallelism, valid_shape_optimize,
                                  // ready_on_host_tensors
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
};

// Evaluates the control flow with the concrete `bindings` ({symbol: value} for every
// dynamic dimension symbol) and builds the launch. Throws pypto::ConfigError for a user
// error that only shows at run time (e.g. max_workspace_kb at or below the minimum
// runnable workspace, with PyPTO's message) and pypto::ModelError for compiler bugs.
Launch instantiate(const CompiledKernel& k, const std::vector<LaunchTensor>& tensors,
                   const std::map<std::string, std::int64_t>& bindings, const LaunchOptions& opt,
                   const sim::ChipConfig& chip);

// Appends task t's tile ops to its native-trace record (traces/FORMAT.md `ops`) and returns the
// compute cycles they account for: the extension sim::write_native_trace takes for a compiled
// launch (launch::dump_trace). Contract: t indexes l.graph.
std::uint64_t append_task_ops(const Launch& l, sched::TaskId t, const sim::ChipConfig& chip,
                              std::string& line);

}  // namespace pypto::compiler
