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

Module map: ``_tensor`` (Tensor annotation and handle), ``_ops`` (the kernel language: a
package with a module per section, listed in its docstring), ``_symbolic`` (SymbolicScalar),
``_tracer`` (tracing), ``ir`` (the IR, documented in IR.md), ``_jit`` (the decorator),
``_options`` (option validation and ``pypto.options`` scopes), ``error`` (PyPTO's exception
classes), ``_backend`` (compile/run seam), ``backends`` (explicit backend selection:
``pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu"))``).
"""

from . import error, ir
from ._dtypes import DataType, bytes_of
from ._enums import (CachePolicy, CastMode, CompStage, DequantScaleRoundingMode, DivAlgorithm, ExpAlgorithm, LogAlgorithm,
                     LogBaseType, OpType, OutType, PowAlgorithm, PrecisionType, RecipAlgorithm,
                     ReduceMode, RemAlgorithm, RsqrtAlgorithm, RunMode, SaturationMode,
                     SqrtAlgorithm, StatusType, TileOpFormat)
from ._errors import (PyptoError, PyptoIndexError, PyptoKeyError, PyptoNotImplementedError,
                      PyptoRuntimeError, PyptoTypeError, PyptoValueError)
from .error import FeError, PyptoGeneralError, PyptoRtError
from ._options import (CubeTile, get_codegen_options, get_cube_tile_shapes, get_debug_options,
                       get_host_options, get_matrix_size, get_operation_options, get_options,
                       get_pass_options, get_runtime_options, get_verify_golden_data,
                       get_verify_options, options, reset_options, set_codegen_options,
                       set_debug_options, set_host_options, set_matrix_size, set_options,
                       set_pass_options, set_runtime_options, set_verify_golden_data,
                       set_verify_options)
from ._symbolic import SymbolicScalar
from ._element import Element, element

# PyPTO spells the class both ways (isinstance(x, pypto.symbolic_scalar) holds for expressions).
symbolic_scalar = SymbolicScalar
from ._tensor import Tensor, TensorAnnotation, from_torch, tensor
from ._ops import *  # noqa: F401,F403 - the kernel language is the package's surface
from ._ops import __all__ as _ops_all
from . import frontend
from . import backends
from . import experimental
from . import pypto_impl
from . import runtime
from ._platform import platform
from ._pass_config import (PassConfigKey, PassConfigs, get_pass_config, get_pass_configs,
                           get_pass_default_config, set_pass_config, set_pass_default_config)
from ._verify import pass_verify_print, pass_verify_save, verify
from ._functions import Function, function, get_current_function, get_last_function
from ._backend import use_backend
from ._jit import legacy_jit as jit

# Data types at module level, as in PyPTO: pypto.DT_FP32, ...
globals().update({dt.name: dt for dt in DataType})

DYNAMIC = StatusType.DYNAMIC
DYN = StatusType.DYN
STATIC = StatusType.STATIC
ROUND_DOWN = DequantScaleRoundingMode.ROUND_DOWN
ROUND_UP = DequantScaleRoundingMode.ROUND_UP

__version__ = "0.1.0"

__all__ = [
    "ir", "frontend", "jit", "DataType", "bytes_of", "RunMode", "TileOpFormat", "StatusType", "CastMode",
    "SaturationMode", "PrecisionType", "CompStage", "DYNAMIC", "DYN", "STATIC", "Tensor",
    "TensorAnnotation", "tensor", "from_torch", "SymbolicScalar", "symbolic_scalar", "PyptoError", "PyptoTypeError",
    "PyptoValueError", "PyptoRuntimeError", "PyptoNotImplementedError", "PyptoKeyError",
    "PyptoIndexError", "error", "FeError", "PyptoGeneralError", "PyptoRtError", "options",
    "set_options", "get_options", "reset_options", "set_host_options", "set_runtime_options",
    "set_codegen_options", "set_pass_options", "set_verify_options", "set_debug_options",
    "get_host_options", "get_runtime_options", "get_codegen_options", "get_pass_options",
    "get_verify_options", "get_debug_options", "get_operation_options", "set_matrix_size",
    "get_matrix_size", "get_cube_tile_shapes", "CubeTile", "set_verify_golden_data",
    "get_verify_golden_data", "backends", "use_backend", "experimental", "pypto_impl", "runtime",
    "CachePolicy", "ReduceMode", "OpType", "OutType", "LogBaseType", "DivAlgorithm", "ExpAlgorithm",
    "LogAlgorithm", "PowAlgorithm", "RecipAlgorithm", "RemAlgorithm", "RsqrtAlgorithm",
    "SqrtAlgorithm", "Element", "element", "PassConfigKey", "PassConfigs", "get_pass_config",
    "get_pass_configs", "get_pass_default_config", "set_pass_config", "set_pass_default_config",
    "pass_verify_print", "pass_verify_save", "verify", "platform", "DequantScaleRoundingMode",
    "ROUND_DOWN", "ROUND_UP", "Function", "function", "get_current_function", "get_last_function",
] + list(_ops_all) + [dt.name for dt in DataType]

# PyPTO names this package lacks raise an error saying why (the table lives in _compat).
from ._compat import module_getattr as __getattr__  # noqa: E402
