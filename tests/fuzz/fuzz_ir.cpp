// SPDX-License-Identifier: Apache-2.0
// The compiler's kernel IR reader (frontend/pypto/IR.md) and the lowering behind it:
// compiler::compile() on the input text.
#include <string>

#include "fuzz_common.h"
#include "pypto/compiler/compile.h"

PYPTO_FUZZ_TARGET(ir) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  pypto::fuzz::run_one([&] { (void)pypto::compiler::compile(text); });
  return 0;
}
