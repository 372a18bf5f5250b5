// SPDX-License-Identifier: Apache-2.0
// The tile executor: runs one leaf task's program (program.h) on host memory. It is what
// makes SIM runs produce torch's numbers; the launch layer (frontend/launch/) calls it for
// each task in the order the timing model completes them.
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/exec/program.h"

namespace pypto::exec {

// Global memory of one launch: buffer i is `size_bytes[i]` bytes at `base[i]` (host
// memory: the caller's tensors, then the workspace).
struct GlobalMemory {
  std::vector<std::uint8_t*> base;
  std::vector<std::uint64_t> size_bytes;
  std::vector<DType> dtype;  // element type each buffer was declared with (diagnostics)
};

// Reusable scratch space for execute() (local tiles), so tasks do not allocate. One per
// thread; execute() owns its contents during the call.
struct ExecScratch {
  std::vector<std::vector<double>> tiles;
  std::vector<std::uint8_t> written;  // per local: written yet by this task's program
  // fp32 locals the exact float kernels wrote are held as floats until another op reads them.
  std::vector<std::vector<float>> float_tiles;
  // Per local: which copies hold its values, kHeldDoubles (tiles) and/or kHeldFloats, and
  // kHeldUnchecked: the floats are as loaded from memory, perhaps with a NaN. kHeldRows alone:
  // an fp32 load not copied yet; its rows are read in place where they are used.
  std::vector<std::uint8_t> held;
  static constexpr std::uint8_t kHeldDoubles = 1, kHeldFloats = 2, kHeldUnchecked = 4,
                                kHeldRows = 8;
  // Per local held as kHeldRows: the kLoad instruction it came from.
  std::vector<std::uint32_t> rows_of;
  std::vector<float> float_spare;     // a float op's result before it replaces its dst's floats
  std::vector<double> row;            // one converted row of a kStore
  std::vector<std::int64_t> int_acc;  // exact accumulators of integer kReduceSum
};

// Runs one task's program. Throws pypto::ModelError (naming the instruction) if a region
// falls outside its buffer or shapes disagree, a local is read before any instruction wrote
// it, or an index is out of range: a compiler bug, never silent corruption. Instructions
// before the failing one have taken effect (stores included).
void execute(const TaskProgram& p, const GlobalMemory& mem, ExecScratch& scratch);

// Round-trip a double through a dtype the way torch stores it (fp16/bf16 round to
// nearest even, integers wrap two's-complement, bool is != 0). Exposed for tests.
double round_to_dtype(double v, DType d);

}  // namespace pypto::exec
