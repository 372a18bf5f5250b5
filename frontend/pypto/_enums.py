# SPDX-License-Identifier: Apache-2.0
"""Enumerations of the pypto API (names and values follow PyPTO)."""

from __future__ import annotations

import enum

__all__ = [
    "RunMode",
    "TileOpFormat",
    "StatusType",
    "CastMode",
    "SaturationMode",
    "DequantScaleRoundingMode",
    "PrecisionType",
    "CompStage",
    "ReLuType",
    "TransMode",
    "TopKAlgo",
    "ScatterMode",
    "CachePolicy",
    "ReduceMode",
    "OpType",
    "OutType",
    "LogBaseType",
    "DivAlgorithm",
    "ExpAlgorithm",
    "LogAlgorithm",
    "PowAlgorithm",
    "RecipAlgorithm",
    "RemAlgorithm",
    "RsqrtAlgorithm",
    "SqrtAlgorithm",
]


class RunMode(enum.IntEnum):
    """Where a jit kernel executes: ``runtime_options={"run_mode": pypto.RunMode.SIM}``."""

    NPU = 0
    SIM = 1


class TileOpFormat(enum.Enum):
    """Storage layout of a tensor. NZ pads the last dim to 32 bytes and the second-to-last to 16.

    The other members name pypto.transdata's target layouts (PyPTO's convolution formats); a
    tensor's own format is ND or NZ.
    """

    TILEOP_ND = 0
    TILEOP_NZ = 1
    TILEOP_NC1HWC0 = 2
    TILEOP_NDC1HWC0 = 3
    TILEOP_FRACTAL_Z = 4
    TILEOP_FRACTAL_Z_3D = 5

    def __str__(self) -> str:
        return self.name


class StatusType(enum.Enum):
    """Markers for annotation shape lists: ``pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)``.

    DYNAMIC (alias DYN): the size may change between calls without a new compile.
    STATIC: the size is taken from the tensor; a new size compiles a new specialization.
    """

    DYNAMIC = 1
    DYN = 1  # alias of DYNAMIC
    STATIC = 2

    def __str__(self) -> str:
        return self.name

    def _not_a_size(self, *_):
        # Arithmetic on a marker happens when code takes a size from a shape list that still
        # holds markers: a STATIC axis of a graph tensor outside a kernel (PyPTO returns its
        # status shape there too), or a marker taken from an annotation's spec.
        from ._errors import PyptoTypeError  # noqa: PLC0415 - _errors imports nothing of ours

        raise PyptoTypeError(
            f"pypto.{self.name} is a shape marker of a pypto.Tensor annotation, not a size: "
            "outside a kernel a STATIC axis has no size until a kernel is called (a DYNAMIC or "
            "-1 axis of pypto.Tensor(shape, dtype, name).shape is a symbolic scalar; inside a "
            "kernel every x.shape[i] is a size); use pypto.symbolic_scalar(name) for a "
            "symbolic size")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _not_a_size
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __neg__ = _not_a_size


class CastMode(enum.Enum):
    """Rounding of ``pypto.cast``."""

    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6

    def __str__(self) -> str:
        return self.name


class SaturationMode(enum.Enum):
    """Saturation of ``pypto.cast``."""

    OFF = 0
    ON = 1

    def __str__(self) -> str:
        return self.name


class DequantScaleRoundingMode(enum.Enum):
    """How ``pypto.quant_mx`` rounds a block's shared exponent (PyPTO supports ROUND_DOWN)."""

    ROUND_UP = 0
    ROUND_DOWN = 1

    def __str__(self) -> str:
        return self.name


class PrecisionType(enum.Enum):
    """Precision of ``pypto.div``."""

    INTRINSIC = 0
    HIGH_PRECISION = 1

    def __str__(self) -> str:
        return self.name


class CompStage(enum.IntEnum):
    """``host_options["compile_stage"]``: where compilation stops. Anything but ALL_COMPLETE
    compiles without running."""

    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


class ReLuType(enum.Enum):
    """``pypto.matmul`` extend_params ``relu_type``: ReLU on the accumulator (before dequant)."""

    NO_RELU = 0
    RELU = 1


class TransMode(enum.Enum):
    """``pypto.matmul`` extend_params ``trans_mode``: fp32 operands rounded to TF32."""

    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2


class TopKAlgo(enum.Enum):
    """``pypto.topk(..., algo=...)``: PyPTO's top-k algorithm, a merge sort (the default) or a
    radix select (PyPTO offers it on the 950 only). Both select the same values and indices;
    SIM sorts stably either way."""

    MERGE_SORT = 0
    RADIX_SELECT = 1


class ScatterMode(enum.Enum):
    """The reduce mode of ``pypto.scatter``/``scatter_``, as an enum: ``reduce=`` also takes it
    (NONE is None, ADD is 'add', MULTIPLY is 'multiply')."""

    NONE = 0
    ADD = 1
    MULTIPLY = 2


class _Named(enum.Enum):
    """str and repr ``Class.NAME``, as PyPTO prints these enums."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __repr__ = __str__


class CachePolicy(_Named):
    """``Tensor.set_cache_policy`` hints. NONE_CACHEABLE: a kernel input's traffic goes to HBM
    past L2 (PyPTO applies it to function inputs only). PREFETCH (older PyPTO) is checked and
    kept, with no effect: the simulator does not model prefetching into L2."""

    PREFETCH = 0
    NONE_CACHEABLE = 1


class ReduceMode(_Named):
    """How partial results are combined across cores (PyPTO: atomic add)."""

    ATOMIC_ADD = 0


class OpType(_Named):
    """Comparison kinds of symbolic scalars."""

    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class OutType(_Named):
    """Result kinds of comparisons: one bool per element, or one bit per element."""

    BOOL = 0
    BIT = 1


class LogBaseType(_Named):
    """``pypto.log(x, base)``: natural, base-2 or base-10 logarithm."""

    LOG_E = 0
    LOG_2 = 1
    LOG_10 = 2


def _algorithm(name: str, op: str) -> type:
    doc = (f"Precision mode of ``pypto.{op}`` (PyPTO's per-op spelling of PrecisionType): the "
           "chip's instruction, or PyPTO's higher-precision sequence. SIM computes the exact "
           "result either way; the mode is checked and kept.")
    cls = _Named(name, [("INTRINSIC", 0), ("HIGH_PRECISION", 1)], module=__name__)
    cls.__doc__ = doc
    return cls


DivAlgorithm = _algorithm("DivAlgorithm", "div")
ExpAlgorithm = _algorithm("ExpAlgorithm", "exp")
LogAlgorithm = _algorithm("LogAlgorithm", "log")
PowAlgorithm = _algorithm("PowAlgorithm", "pow")
RecipAlgorithm = _algorithm("RecipAlgorithm", "reciprocal")
RemAlgorithm = _algorithm("RemAlgorithm", "remainder")
RsqrtAlgorithm = _algorithm("RsqrtAlgorithm", "rsqrt")
SqrtAlgorithm = _algorithm("SqrtAlgorithm", "sqrt")

#: The algorithm enum each op's precision argument takes besides PrecisionType.
OP_ALGORITHMS = {"div": DivAlgorithm, "exp": ExpAlgorithm, "log": LogAlgorithm,
                 "pow": PowAlgorithm, "reciprocal": RecipAlgorithm, "remainder": RemAlgorithm,
                 "fmod": RemAlgorithm, "rsqrt": RsqrtAlgorithm, "sqrt": SqrtAlgorithm}
