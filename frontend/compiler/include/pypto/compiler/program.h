// SPDX-License-Identifier: Apache-2.0
// What the compiler emits: leaf-task programs in the executor's format. The format belongs
// to the executor library (exec/include/pypto/exec/program.h); these declarations make its
// names the compiler's vocabulary. The compiler never runs a program.
#pragma once

#include "pypto/exec/program.h"

namespace pypto::compiler {

using exec::CastMode;
using exec::GlobalRegion;
using exec::kMaxRank;
using exec::LocalTile;
using exec::TaskProgram;
using exec::TileInstr;
using exec::TileOpcode;
using model::DType;

}  // namespace pypto::compiler
