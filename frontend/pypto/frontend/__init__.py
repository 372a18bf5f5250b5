# SPDX-License-Identifier: Apache-2.0
"""``pypto.frontend``: the jit decorator and its helpers.

``pypto.frontend.jit`` compiles a kernel (``pypto.jit`` too, and also takes PyPTO's older
un-annotated tensor parameters, see ``pypto._jit.legacy_jit``); ``dynamic(name)`` names a
dynamic axis in annotations; ``hooks`` is the list of compile hooks (each called with a
``CompileEvent`` when any kernel compiles a new specialization); ``function`` is PyPTO's
legacy helper marker (a no-op here).
"""

from .._jit import CompileEvent, CompiledKernel, JitKernel, KernelCache, dynamic, function, hooks, jit

__all__ = ["jit", "dynamic", "function", "hooks", "JitKernel", "KernelCache", "CompiledKernel",
           "CompileEvent"]
