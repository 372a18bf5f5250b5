# SPDX-License-Identifier: Apache-2.0
"""Tensor creation: local tensors (``pypto.Tensor(shape, dtype)`` in a kernel), ``full``,
``zeros``, ``ones`` and ``arange``, with the shape, valid_shape and dtype argument checks the
other families share."""

from __future__ import annotations

import builtins
import math
import numbers
from typing import Any, Optional, Tuple

from .. import ir
from .._dtypes import DataType
from .._enums import TileOpFormat
from .._errors import PyptoTypeError, PyptoValueError, user_location
from ..error import short_repr
from .._symbolic import SymbolicScalar
from .._tensor import Tensor
from .common import (_dim, _emit, _fail, _fmt, _need_vec, _scalar, _tr, _vec_tile_within,
                     _wrap)


def _shape_arg(shape: Any, api: str) -> Tuple[Any, ...]:
    if isinstance(shape, (numbers.Integral, SymbolicScalar)) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        _fail(PyptoTypeError, api, f"shape must be a list of sizes, got {short_repr(shape)}")
    out = tuple(_dim(d, api) for d in shape)
    for d in out:
        if isinstance(d, int) and d < 1:
            _fail(PyptoValueError, api, f"sizes must be >= 1, got shape {_fmt(out)}")
    return out


def _valid_arg(valid_shape: Any, shape: Tuple[Any, ...], api: str) -> Optional[Tuple[Any, ...]]:
    if valid_shape is None:
        return None
    if not isinstance(valid_shape, (list, tuple)) or len(valid_shape) != len(shape):
        _fail(PyptoValueError, api, f"valid_shape must be a list of {len(shape)} sizes, got "
              f"{short_repr(valid_shape)}")
    out = tuple(_dim(d, api, "valid_shape entry") for d in valid_shape)
    for v, d in zip(out, shape):
        if isinstance(v, int) and isinstance(d, int) and not 0 <= v <= d:
            _fail(PyptoValueError, api, f"valid_shape {_fmt(out)} exceeds shape {_fmt(shape)}")
    return out


def _dtype_arg(dtype: Any, api: str) -> DataType:
    if not isinstance(dtype, DataType):
        _fail(PyptoTypeError, api, f"dtype must be a pypto DataType such as pypto.DT_FP32, got "
              f"{short_repr(dtype)}")
    return dtype


class UnboundTensor:
    """What ``pypto.tensor()`` (no shape, no dtype) gives inside a kernel: PyPTO's empty tensor
    declaration, a name the kernel binds to a computed tensor before using it
    (``res = pypto.tensor()`` then ``res = a + b``). Using it unbound is an error."""

    __slots__ = ("loc",)

    def __init__(self, loc: str):
        self.loc = loc

    def __getattr__(self, name: str) -> Any:
        raise PyptoValueError(
            f"pypto.Tensor() declared at {self.loc} has no shape: bind it to a computed tensor "
            f"(t = a + b) before using it, or give it a shape and dtype")

    def __repr__(self) -> str:
        return f"<pypto.Tensor() without a shape, declared at {self.loc}>"


def alloc(shape: Any, dtype: Optional[DataType] = None,
          format: Optional[TileOpFormat] = None) -> Any:
    """A local, uninitialized tensor (``pypto.Tensor(shape, dtype)`` inside a kernel); with no
    shape and no dtype, an :class:`UnboundTensor` declaration."""
    tr = _tr("Tensor")
    if shape is None and dtype is None and format is None:
        return UnboundTensor(user_location())
    if shape is None:
        _fail(PyptoValueError, "Tensor", "a local tensor needs a shape")
    for d in (shape if isinstance(shape, (list, tuple)) else [shape]):
        if d is Ellipsis or not isinstance(d, (numbers.Integral, SymbolicScalar)):
            _fail(PyptoTypeError, "Tensor", f"a local tensor needs concrete sizes (ints or "
                  f"symbolic scalars), got {short_repr(shape)}")
    shp = _shape_arg(shape, "Tensor")
    dt = DataType.DT_FP32 if dtype is None else _dtype_arg(dtype, "Tensor")
    fmt = TileOpFormat.TILEOP_ND if format is None else format
    if fmt not in (TileOpFormat.TILEOP_ND, TileOpFormat.TILEOP_NZ):
        _fail(PyptoTypeError, "Tensor", f"format must be TILEOP_ND or TILEOP_NZ, got {fmt!r}")
    return _wrap(_emit(tr, "alloc", [], {}, shp, dt, fmt))


def full(size: Any, value: Any, dtype: DataType, *, valid_shape: Any = None) -> Tensor:
    """A tensor of ``size`` filled with ``value`` (a number or a symbolic scalar)."""
    tr = _tr("full")
    shp = _shape_arg(size, "full")
    dt = _dtype_arg(dtype, "full")
    _need_vec(tr, "full")  # before the fill value's checks: a missing tile is reported first
    sc = _scalar(value, dt, "full")
    return _wrap(_emit(tr, "full", [sc], {}, shp, dt,
                           valid_shape=_valid_arg(valid_shape, shp, "full")))


_INT32_RANGE = (-(2 ** 31), 2 ** 31 - 1)


def arange(*args: Any, dtype: Optional[DataType] = None) -> Tensor:
    """``arange(end)``, ``arange(start, end)`` or ``arange(start, end, step)``: the 1-D
    tensor ``start, start + step, ...`` below ``end`` (``ceil((end - start) / step)``
    values), as PyPTO: DT_INT32 when every argument is an int (DT_INT64 past the int32
    range), else DT_FP32. ``dtype`` (keyword, an extension) asks for another dtype. Each value
    is ``start + i * step`` computed in double and rounded once (torch.arange)."""
    api = "arange"
    tr = _tr(api)
    if not 1 <= len(args) <= 3:
        _fail(PyptoValueError, api, f"takes 1 to 3 arguments (end | start, end | start, end, "
              f"step), got {len(args)}")
    start, end, step = (0, args[0], 1) if len(args) == 1 else (
        (args[0], args[1], 1) if len(args) == 2 else args)
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            _fail(PyptoTypeError, api, f"{name} must be an int or a float, got {v!r}")
        if not math.isfinite(v):
            _fail(PyptoValueError, api, f"{name} must be a finite number, got {v!r}")
    if step == 0 or (isinstance(step, float) and builtins.abs(step) <= 1e-8):
        _fail(PyptoValueError, api, f"step must not be 0 (|step| > 1e-8), got {step!r}")
    ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    # torch: ceil((end - start) / step), exact for ints, in double for floats.
    n = -((int(start) - int(end)) // int(step)) if ints else \
        math.ceil((float(end) - float(start)) / float(step))
    if n <= 0:
        _fail(PyptoValueError, api, f"(end - start) / step must be > 0, got start={start!r}, "
              f"end={end!r}, step={step!r}")
    if dtype is None:
        if ints:
            inside = all(_INT32_RANGE[0] <= v <= _INT32_RANGE[1] for v in (start, end, step))
            dtype = DataType.DT_INT32 if inside else DataType.DT_INT64
        else:
            dtype = DataType.DT_FP32
    dt = _dtype_arg(dtype, api)
    if dt is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, "dtype DT_BOOL is not a numeric dtype")
    if not dt.is_float and not ints:
        _fail(PyptoTypeError, api, f"float arguments with the integer dtype {dt}")
    _need_vec(tr, api)
    inputs = [ir.Scalar(int(start) if ints else float(start), dt),
              ir.Scalar(int(step) if ints else float(step), dt)]
    return _wrap(_emit(tr, api, inputs, {}, (n,), dt))


def _index_vector(api: str, n: int, start: int = 0, step: int = 1,
                  dtype: Optional[DataType] = None) -> Tensor:
    """``arange(start, start + n * step, step)`` as one tile: the index vector of an op that
    PyPTO computes as one (gathermask, one_hot) is ours, so the kernel's vec tile, whose
    first size PyPTO's rule gives this 1-D vector, does not cut it."""
    tr = _tr(api)
    _need_vec(tr, "arange")  # a kernel without a vec tile is refused, not given this one
    with _vec_tile_within(tr, (n,)):
        return arange(start, start + n * step, step, dtype=dtype)


def _size_args(api: str, size: Tuple[Any, ...]) -> Any:
    """zeros/ones' ``*size``: ints, or one list or tuple of them."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        return size[0]
    if any(isinstance(s, DataType) for s in size):
        _fail(PyptoTypeError, api, f"dtype goes by keyword (dtype=...), as in PyPTO; a "
              f"positional one reads as a size: got size {short_repr(size)}")
    if any(isinstance(s, (list, tuple)) for s in size):
        _fail(PyptoTypeError, api, f"size is ints or one list of ints, got {short_repr(size)}")
    return list(size)


def zeros(*size: Any, dtype: DataType = DataType.DT_FP32, valid_shape: Any = None) -> Tensor:
    """``pypto.zeros(64, 128, dtype=pypto.DT_FP16)`` or ``pypto.zeros([64, 128], ...)``."""
    return full(_size_args("zeros", size), 0.0 if dtype.is_float else 0, dtype,
                valid_shape=valid_shape)


def ones(*size: Any, dtype: DataType = DataType.DT_FP32, valid_shape: Any = None) -> Tensor:
    return full(_size_args("ones", size), 1.0 if dtype.is_float else 1, dtype,
                valid_shape=valid_shape)
