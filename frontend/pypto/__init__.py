# SPDX-License-Identifier: Apache-2.0
"""pypto: write NPU kernels in Python, trace them to a tensor IR, run them on the NPU or on
the pypto-sim simulator.

Example::

    import pypto, torch

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def add_kernel(a: pypto.Tensor([3], pypto.DT_FP32),
                   b: pypto.Tensor([3], pypto.DT_FP32),
                   out: pypto.Tensor([3], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.add(a, b)

    out = add_kernel(torch.randn(3), torch.randn(3))   # output allocated and returned

Module map: ``_tensor`` (Tensor annotation and handle), ``_ops`` (the kernel language),
``_symbolic`` (SymbolicScalar), ``_tracer`` (tracing), ``ir`` (the IR, documented in IR.md),
``_jit`` (the decorator), ``_options`` (option validation), ``_backend`` (compile/run seam).
"""

from . import ir
from ._dtypes import DataType
from ._enums import (CastMode, CompStage, PrecisionType, RunMode, SaturationMode, StatusType,
                     TileOpFormat)
from ._errors import (PyptoError, PyptoNotImplementedError, PyptoRuntimeError, PyptoTypeError,
                      PyptoValueError)
from ._symbolic import SymbolicScalar
from ._tensor import Tensor, TensorAnnotation, tensor
from ._ops import *  # noqa: F401,F403 - the kernel language is the package's surface
from ._ops import __all__ as _ops_all
from . import frontend
from ._jit import jit

# Data types at module level, as in PyPTO: pypto.DT_FP32, ...
globals().update({dt.name: dt for dt in DataType})

DYNAMIC = StatusType.DYNAMIC
DYN = StatusType.DYN
STATIC = StatusType.STATIC

__version__ = "0.1.0"

__all__ = [
    "ir", "frontend", "jit", "DataType", "RunMode", "TileOpFormat", "StatusType", "CastMode",
    "SaturationMode", "PrecisionType", "CompStage", "DYNAMIC", "DYN", "STATIC", "Tensor",
    "TensorAnnotation", "tensor", "SymbolicScalar", "PyptoError", "PyptoTypeError",
    "PyptoValueError", "PyptoRuntimeError", "PyptoNotImplementedError",
] + list(_ops_all) + [dt.name for dt in DataType]

# PyPTO names this package lacks raise an error saying why (the table lives in _compat).
from ._compat import module_getattr as __getattr__  # noqa: E402
