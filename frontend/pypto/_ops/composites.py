# SPDX-License-Identifier: Apache-2.0
"""Composite ops, recorded as sequences of the basic ones with attribute
``composite=<name>``: ``softmax``, ``axpy``, ``prelu``, ``rms_norm``, ``pad``, ``fillpad``,
``gathermask``, ``quantize``/``dequantize``, ``indexput_``, ``atomic_add``, ``var``, ``std``."""

from __future__ import annotations

import builtins
import numbers
from typing import Any, List, Optional, Sequence, Tuple

from .. import ir
from .._dtypes import DataType
from .._enums import CastMode, SaturationMode
from .._errors import PyptoNotImplementedError, PyptoTypeError, PyptoValueError
from .._symbolic import SymbolicScalar, smax
from .._tensor import Tensor
from .common import (_broadcast, _check_float, _check_numeric, _dim_eq, _fail, _fmt,
                     _norm_axis, _tr, _val)
from .creation import _index_vector, full
from .elementwise import add, div, exp, gt, lrelu, mul, rsqrt, sqrt, sub, where
from .gather_scatter import _row_index, index_select, scatter
from .movement import _write, cast, clone, concat, reshape, unsqueeze, view
from .mx import _require_950
from .reductions import amax, sum


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax over ``dim``, computed in FP32: cast -> amax -> sub -> exp -> sum -> div ->
    cast back. Every recorded op carries ``composite="softmax"``."""
    tr = _tr("softmax")
    xv = _val(x, "softmax")
    _check_float(xv, "softmax")
    saved, tr.composite = tr.composite, "softmax"
    try:
        orig = xv.dtype
        xf = cast(x, DataType.DT_FP32) if orig is not DataType.DT_FP32 else x
        m = amax(xf, dim, keepdim=True)
        e = exp(sub(xf, m))
        s = sum(e, dim, keepdim=True)
        r = div(e, s)
        return cast(r, orig) if orig is not DataType.DT_FP32 else r
    finally:
        tr.composite = saved


class _Composite:
    """Marks every op recorded inside it with ``composite=<name>`` (as softmax does)."""

    def __init__(self, api: str):
        self.tr = _tr(api)
        self.name = api

    def __enter__(self):
        self.saved, self.tr.composite = self.tr.composite, self.name
        return self

    def __exit__(self, *exc):
        self.tr.composite = self.saved
        return False


def _to_fp32(x: Tensor) -> Tensor:
    return cast(x, DataType.DT_FP32) if x._value.dtype is not DataType.DT_FP32 else x


def _from_fp32(x: Tensor, dtype: DataType) -> Tensor:
    return cast(x, dtype) if dtype is not DataType.DT_FP32 else x


def LReLU(input: Tensor, negative_slope: Any = 0.01) -> Tensor:  # noqa: A002,N802
    """PyPTO's other name of :func:`lrelu`."""
    return lrelu(input, negative_slope)


def axpy_(y: Tensor, x: Tensor, alpha: Any = 1.0) -> Tensor:
    """In place ``y = alpha * x + y`` (x broadcasts to y; y keeps its shape), computed in fp32
    and rounded once to y's dtype (torch.add(y, x, alpha=alpha)); y and x have one float dtype,
    or y is DT_FP32 and x DT_FP16. Returns y."""
    return _axpy(y, x, alpha, "axpy_")


def _axpy(y: Tensor, x: Tensor, alpha: Any, api: str) -> Tensor:
    """axpy_ and axpy, their messages under the name the kernel called."""
    yv, xv = _val(y, api, "y"), _val(x, api, "x")
    _check_float(yv, api)
    _check_float(xv, api)
    if xv.dtype is not yv.dtype and not (yv.dtype is DataType.DT_FP32 and
                                         xv.dtype is DataType.DT_FP16):
        _fail(PyptoTypeError, api, f"y {yv.dtype} and x {xv.dtype}: the dtypes must be equal, "
              "or y DT_FP32 and x DT_FP16")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        _fail(PyptoTypeError, api, f"alpha must be a number, got {alpha!r}")
    if xv.rank != yv.rank:
        _fail(PyptoValueError, api, f"y {_fmt(yv.shape)} and x {_fmt(xv.shape)} need equal ranks")
    # one composite name for both spellings, so the recorded ops do not depend on it
    with _Composite("axpy") as c:
        xf = _to_fp32(x)
        r = add(_to_fp32(y), xf if alpha == 1 else mul(xf, float(alpha)))
        r = _from_fp32(r, yv.dtype)
        if _broadcast([r._value, yv], api)[0] != tuple(yv.shape):
            _fail(PyptoValueError, api, f"x {_fmt(xv.shape)} broadcasts beyond y "
                  f"{_fmt(yv.shape)}")
        _write(c.tr, r._value, [0] * yv.rank, yv, api)
    return y


def axpy(y: Tensor, x: Tensor, alpha: Any = 1.0) -> Tensor:
    """PyPTO's axpy: the same in-place update as :func:`axpy_`; returns y."""
    return _axpy(y, x, alpha, "axpy")


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """torch.prelu: ``x`` where ``x > 0``, else ``weight * x``; ``weight`` has one element or
    one per channel (axis 1), of the input's float dtype."""
    api = "prelu"
    xv, wv = _val(input, api), _val(weight, api, "weight")
    _check_float(xv, api)
    if wv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"weight dtype {wv.dtype} differs from the input's {xv.dtype}")
    n = 1
    for d in wv.shape:
        n = n * d
    channels = xv.shape[1] if xv.rank >= 2 else 1
    if _dim_eq(n, 1) is not True and (_dim_eq(n, channels) is not True):
        _fail(PyptoValueError, api, f"weight has {n} elements; expected 1 or the {channels} "
              "channels of axis 1")
    with _Composite(api):
        shape = [1] * xv.rank
        if _dim_eq(n, 1) is not True:
            shape[1] = channels
        w = reshape(weight, shape, inplace=True) if list(wv.shape) != shape else weight
        return where(gt(input, 0.0), input, mul(input, w))


def rms_norm(input: Tensor, gamma: Optional[Tensor] = None,  # noqa: A002
             epsilon: float = 1e-6) -> Tensor:
    """PyPTO's rms_norm over the last axis: ``x / sqrt(mean(x * x) + epsilon)``, times
    ``gamma`` (``[C]``) when given, computed in fp32 and cast back to the input's dtype."""
    api = "rms_norm"
    xv = _val(input, api)
    _check_float(xv, api)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        _fail(PyptoTypeError, api, f"epsilon must be a number, got {epsilon!r}")
    c = xv.shape[-1]
    if gamma is not None:
        gv = _val(gamma, api, "gamma")
        if gv.rank != 1 or _dim_eq(gv.shape[0], c) is False:
            _fail(PyptoValueError, api, f"gamma must be [{c}], got {_fmt(gv.shape)}")
    with _Composite(api):
        xf = _to_fp32(input)
        ms = div(sum(mul(xf, xf), -1, keepdim=True), float(c) if isinstance(c, int) else c)
        y = mul(xf, rsqrt(add(ms, float(epsilon))))
        if gamma is not None:
            # PyPTO casts gamma as [1, ..., C]: an op of the input's rank, tiled as the input
            g = gamma if xv.rank == 1 else reshape(gamma, [1] * (xv.rank - 1) + [c], inplace=True)
            y = mul(y, _to_fp32(g))
        return _from_fp32(y, xv.dtype)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002
        value: Any = 0) -> Tensor:
    """Constant padding (torch.nn.functional.pad): ``pad`` lists (before, after) pairs from
    the last axis backwards, each >= 0. PyPTO pads only after (right/bottom); before-padding
    works here too. Other modes raise PyptoNotImplementedError; an integer input takes only an
    int ``value`` (PyPTO's ValueError)."""
    api = "pad"
    tr = _tr(api)
    xv = _val(input, api)
    if mode != "constant":
        _fail(PyptoNotImplementedError, api, f"mode {mode!r} is not supported (only "
              "'constant', as in PyPTO)")
    if not isinstance(pad, (list, tuple)) or len(pad) % 2 or not pad or len(pad) > 2 * xv.rank:
        _fail(PyptoValueError, api, f"pad must list (before, after) pairs for up to {xv.rank} "
              f"axes, got {pad!r}")
    for p in pad:
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 0:
            _fail(PyptoValueError, api, f"pad sizes must be non-negative ints, got {pad!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(PyptoTypeError, api, f"value must be a number, got {value!r}")
    if not xv.dtype.is_float and not isinstance(value, numbers.Integral):
        _fail(PyptoValueError, api, f"value {value!r} is not an int; a {xv.dtype} input pads "
              "with an int (for its lowest or highest value pass that int, e.g. -2147483648 "
              "for DT_INT32)")
    shape, offsets = list(xv.shape), [0] * xv.rank
    for i in range(len(pad) // 2):
        axis = xv.rank - 1 - i
        shape[axis] = shape[axis] + pad[2 * i] + pad[2 * i + 1]
        offsets[axis] = pad[2 * i]
    with _Composite(api):
        out = full(shape, float(value) if xv.dtype.is_float else int(value), xv.dtype)
        _write(tr, xv, offsets, out._value, api)
    return out


def expand_exp_dif(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """PyPTO's ``exp(input - other)`` with ``other`` broadcast (size 1 on its last or
    second-to-last axis); each step rounded to the dtype."""
    api = "expand_exp_dif"
    xv, ov = _val(input, api), _val(other, api, "other")
    _check_float(xv, api)
    if ov.rank != xv.rank or not (_dim_eq(ov.shape[-1], 1) or
                                  (ov.rank >= 2 and _dim_eq(ov.shape[-2], 1))):
        _fail(PyptoValueError, api, f"other {_fmt(ov.shape)} must have the input's rank and "
              "size 1 on its last or second-to-last axis")
    with _Composite(api):
        return exp(sub(input, other))


def fillpad(input: Tensor, mode: str = "constant", value: Any = 0.0) -> Tensor:  # noqa: A002
    """PyPTO's fillpad: the input's shape, its valid region copied and the rest (beyond its
    valid_shape) set to ``value`` (a number, or "inf"/"-inf")."""
    api = "fillpad"
    tr = _tr(api)
    xv = _val(input, api)
    if mode != "constant":
        _fail(PyptoNotImplementedError, api, f"mode {mode!r} is not supported (only "
              "'constant', as in PyPTO)")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            _fail(PyptoValueError, api, f"value must be a number, got {value!r}")
    with _Composite(api):
        out = full(list(xv.shape), value if xv.dtype.is_float else int(value), xv.dtype)
        _write(tr, xv, [0] * xv.rank, out._value, api)
    return out


_GATHERMASK = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3)}


def gathermask(self: Tensor, pattern_mode: int) -> Tensor:
    """PyPTO's gathermask along the last axis: modes 1/2 keep element 0/1 of every pair, 3..6
    element 0..3 of every four, 7 all of them. Computed as a gather."""
    api = "gathermask"
    xv = _val(self, api)
    _check_numeric(xv, api)
    if pattern_mode == 7:
        return clone(self)
    if pattern_mode not in _GATHERMASK:
        _fail(PyptoValueError, api, f"pattern_mode must be 1..7, got {pattern_mode!r}")
    step, first = _GATHERMASK[pattern_mode]
    n = xv.shape[-1]
    if not isinstance(n, int) or n % step:
        _fail(PyptoValueError, api, f"the last axis ({n}) must be a multiple of {step} for "
              f"pattern_mode {pattern_mode}")
    with _Composite(api):
        return index_select(self, -1, _index_vector(api, n // step, first, step))


def quantize(input: Tensor, scale: Tensor, otype: DataType, axis: int = -1,  # noqa: A002
             zero_points: Optional[Tensor] = None) -> Tensor:
    """PyPTO's quantize: ``round(input * scale + zero_points)`` (half to even; ``zero_points``
    optional) saturated to DT_INT8's [-128, 127] (symmetric) or DT_UINT8's [0, 255]
    (asymmetric). ``scale`` and ``zero_points`` are DT_FP32, one per row (``axis=-1``, shape
    ``input.shape[:-1]``) or per column (``axis=-2``, ``input.shape[:-2] + [col]``).

    The sum is ``+ zero_points`` as PyPTO's formula and its on-board test's golden have it
    (the page's result example subtracts them). Out-of-range and infinite values saturate, as
    the hardware's conversion does.

    Example: ``q = pypto.quantize(x, scale, pypto.DT_UINT8, -1, zp)`` (x ``[r, c]``, scale and
    zp ``[r]``); torch: ``torch.round(x * scale[:, None] + zp[:, None]).clamp(0, 255)``.
    """
    api = "quantize"
    xv, sv = _val(input, api), _val(scale, api, "scale")
    if otype not in (DataType.DT_INT8, DataType.DT_UINT8):
        _fail(PyptoTypeError, api, f"otype must be DT_INT8 (symmetric) or DT_UINT8 "
              f"(asymmetric), got {otype}")
    if xv.dtype is not DataType.DT_FP32 or sv.dtype is not DataType.DT_FP32:
        _fail(PyptoTypeError, api, f"input and scale must be DT_FP32, got {xv.dtype} and "
              f"{sv.dtype}")
    zv = None if zero_points is None else _val(zero_points, api, "zero_points")
    if zv is not None and (zv.dtype is not DataType.DT_FP32 or
                           len(zv.shape) != len(sv.shape) or
                           any(_dim_eq(a, b) is not True for a, b in zip(zv.shape, sv.shape))):
        _fail(PyptoValueError, api, f"zero_points must be DT_FP32 of scale's shape "
              f"{_fmt(sv.shape)}, got {zv.dtype} {_fmt(zv.shape)}")
    with _Composite(api):
        y = mul(input, _per_axis(api, xv, scale, axis))
        if zero_points is not None:
            y = add(y, _per_axis(api, xv, zero_points, axis))
        return cast(y, otype, CastMode.CAST_RINT, SaturationMode.ON)


def _per_axis(api: str, xv: ir.Value, scale: Tensor, axis: int) -> Tensor:
    """``scale`` (rank one less than the input) broadcast along ``axis`` (-1 or -2)."""
    sv = scale._value
    a = axis - xv.rank if isinstance(axis, int) and axis >= 0 else axis
    if a not in (-1, -2) or sv.rank != xv.rank - 1:
        _fail(PyptoValueError, api, f"axis must be -1 or -2 and scale of rank {xv.rank - 1}, "
              f"got axis {axis!r} and {_fmt(sv.shape)}")
    return unsqueeze(scale, a)


def dequantize(input: Tensor, scale: Tensor, otype: DataType = DataType.DT_FP32,  # noqa: A002
               axis: int = -1, zero_points: Optional[Tensor] = None) -> Tensor:
    """PyPTO's dequantize: ``(float(input) + zero_points) * scale`` in DT_FP32 for DT_INT8 /
    DT_INT16 input; ``scale`` and ``zero_points`` per row (``axis=-1``) or column (-2)."""
    api = "dequantize"
    xv, sv = _val(input, api), _val(scale, api, "scale")
    if xv.dtype not in (DataType.DT_INT8, DataType.DT_INT16):
        _fail(PyptoTypeError, api, f"input must be DT_INT8 or DT_INT16, got {xv.dtype}")
    if otype is not DataType.DT_FP32 or sv.dtype is not DataType.DT_FP32:
        _fail(PyptoTypeError, api, f"otype and scale must be DT_FP32, got {otype} and "
              f"{sv.dtype}")
    with _Composite(api):
        y = cast(input, DataType.DT_FP32)
        if zero_points is not None:
            y = add(y, _per_axis(api, xv, zero_points, axis))
        return mul(y, _per_axis(api, xv, scale, axis))


def index_put_(input: Tensor, indices: Sequence[Tensor], values: Tensor,  # noqa: A002
               accumulate: bool = False) -> None:
    """PyPTO's ``index_put_``, the name its current reference gives ``indexput_`` (same
    arguments and rules)."""
    _index_put("index_put_", input, indices, values, accumulate)


def indexput_(input: Tensor, indices: Sequence[Tensor], values: Tensor,  # noqa: A002
              accumulate: bool = False) -> None:
    """PyPTO's index_put_ (in place, returns None): ``input[indices[0][i], indices[1][i], ...]
    = values[i]`` (``+=`` with ``accumulate``) for 1-D index tensors of equal length ``t`` over
    the first ``len(indices)`` axes; ``values`` is ``[t] + input.shape[len(indices):]``. As
    in PyPTO, duplicate positions without accumulate keep one of the updates (here the last);
    with accumulate they add up in index order. Computed as a scatter along a flattened
    leading axis."""
    _index_put("indexput_", input, indices, values, accumulate)


def _index_put(api: str, input: Tensor, indices: Sequence[Tensor],  # noqa: A002
               values: Tensor, accumulate: bool) -> None:
    xv, vv = _val(input, api), _val(values, api, "values")
    if not isinstance(indices, (list, tuple)) or not indices or len(indices) > xv.rank:
        _fail(PyptoValueError, api, f"indices must be a tuple of 1 to {xv.rank} 1-D tensors, "
              f"got {indices!r}")
    if vv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"values dtype {vv.dtype} differs from the input's "
              f"{xv.dtype}")
    if not isinstance(accumulate, bool):
        _fail(PyptoTypeError, api, f"accumulate must be a bool, got {accumulate!r}")
    m = len(indices)
    ivs = [_val(i, api, "index") for i in indices]
    t = ivs[0].shape[0] if ivs[0].rank == 1 else None
    for iv in ivs:
        if iv.rank != 1 or iv.dtype.is_float or iv.dtype is DataType.DT_BOOL or                 _dim_eq(iv.shape[0], t) is not True:
            _fail(PyptoValueError, api, "every index must be a 1-D integer tensor of one length")
    rest = list(xv.shape[m:])
    if vv.rank != 1 + len(rest) or _dim_eq(vv.shape[0], t) is not True or             any(_dim_eq(a, b) is not True for a, b in zip(vv.shape[1:], rest)):
        _fail(PyptoValueError, api, f"values must be {_fmt([t] + rest)}, got {_fmt(vv.shape)}")
    lead: Any = 1
    for d in xv.shape[:m]:
        lead = lead * d
    with _Composite(api):
        flat = None
        common = DataType.DT_INT64 if any(iv.dtype is DataType.DT_INT64 for iv in ivs) else \
            DataType.DT_INT32
        for k, ix in enumerate(indices):
            ix = ix if ix._value.dtype is common else cast(ix, common)
            flat = ix if flat is None else add(mul(flat, xv.shape[k]), ix)
        x2 = reshape(input, [lead] + rest, inplace=True)
        v2 = values
        idx = _row_index(api, x2._value, 0, flat, vv.shape)
        out = scatter(x2, 0, idx, v2, reduce="add" if accumulate else None)
        _write(_tr(api), reshape(out, list(xv.shape), inplace=True)._value, [0] * xv.rank, xv,
               api)
    return None


def atomic_add(src: Tensor, offsets: Sequence[Any], dst: Tensor) -> None:
    """PyPTO's atomic_add: ``dst[offsets : offsets + src.shape] += src`` (each sum rounded to
    the dtype). SIM orders the read-modify-writes by their memory dependencies, so concurrent
    adds to one region give the sequential result."""
    api = "atomic_add"
    tr = _tr(api)
    sv, dv = _val(src, api, "src"), _val(dst, api, "dst")
    if not isinstance(offsets, (list, tuple)) or len(offsets) != dv.rank:
        _fail(PyptoValueError, api, f"needs {dv.rank} offsets, got {offsets!r}")
    if sv.dtype is not dv.dtype:
        _fail(PyptoTypeError, api, f"src dtype {sv.dtype} differs from dst's {dv.dtype}")
    with _Composite(api):
        region = view(dst, list(sv.shape), list(offsets))
        _write(tr, add(region, src)._value, list(offsets), dv, api)


def _reduce_dims(api: str, xv: ir.Value, dim: Any) -> Tuple[List[int], Any]:
    dims = list(range(xv.rank)) if dim is None else (
        list(dim) if isinstance(dim, (list, tuple)) else [dim])
    axes = sorted({_norm_axis(d, xv.rank, api) for d in dims})
    n: Any = 1
    for a in axes:
        n = n * xv.shape[a]
    return axes, n


def var(input: Tensor, dim: Any = None, unbiased: Optional[bool] = None,  # noqa: A002
        keepdim: bool = False, *, correction: Optional[int] = None) -> Tensor:
    """torch.var over ``dim`` (an int, a list, or None for all axes): the mean square
    deviation divided by ``n - correction`` (default 1; ``unbiased=False`` is 0), in fp32,
    cast back to the input's float dtype."""
    api = "var"
    xv = _val(input, api)
    _check_float(xv, api)
    if correction is None:
        correction = 0 if unbiased is False else 1
    axes, n = _reduce_dims(api, xv, dim)
    with _Composite(api):
        xf = _to_fp32(input)
        mean = div(sum(xf, axes, keepdim=True), n)
        d = sub(xf, mean)
        v = div(sum(mul(d, d), axes, keepdim=keepdim), smax(n - correction, 0)
                if isinstance(n, SymbolicScalar) else float(builtins.max(n - correction, 0)))
        return _from_fp32(v, xv.dtype)


def std(input: Tensor, dim: Any = None, unbiased: Optional[bool] = None,  # noqa: A002
        keepdim: bool = False, *, correction: Optional[int] = None) -> Tensor:
    """torch.std: ``sqrt(var(...))``, in fp32, cast back to the input's dtype."""
    xv = _val(input, "std")
    _check_float(xv, "std")
    with _Composite("std"):
        v = var(_to_fp32(input), dim, unbiased, keepdim, correction=correction)
        return _from_fp32(sqrt(v), xv.dtype)


_INTERLEAVE_DTYPES = (DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT16, DataType.DT_UINT16,
                      DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_FP16, DataType.DT_FP32,
                      DataType.DT_BF16)


def _rows_of(api: str, name: str, t: Tensor) -> Tuple[List[int], int]:
    """The static shape of an interleave operand (its last size even) and its row count (the
    other axes' product)."""
    _require_950(api, "interleaving")
    v = _val(t, api, name)
    if v.dtype not in _INTERLEAVE_DTYPES:
        _fail(PyptoTypeError, api, f"{name} dtype {v.dtype} is not one PyPTO interleaves")
    shape = list(v.shape)
    if not 1 <= v.rank <= 4 or not all(isinstance(d, int) for d in shape):
        _fail(PyptoValueError, api, f"{name} must be a static 1-D to 4-D tensor, got "
              f"{_fmt(v.shape)}")
    if shape[-1] % 2:
        _fail(PyptoValueError, api, f"{name}'s last size must be even, got {_fmt(v.shape)}")
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return shape, rows


def _pair(api: str, input: Tensor, other: Tensor) -> Tuple[List[int], int]:  # noqa: A002
    """_rows_of of two operands that must agree in shape and dtype."""
    shape, rows = _rows_of(api, "input", input)
    oshape, _ = _rows_of(api, "other", other)
    if oshape != shape or _val(other, api).dtype is not _val(input, api).dtype:
        _fail(PyptoValueError, api, f"other {_fmt(oshape)} {_val(other, api).dtype} must have "
              f"input's shape and dtype {_fmt(shape)} {_val(input, api).dtype}")
    return shape, rows


def _split_even_odd(stream: Tensor, rows: int, n: int,
                    shape: List[int]) -> Tuple[Tensor, Tensor]:
    """The even and odd entries of each row of ``stream`` [rows, 2n], each shaped ``shape``."""
    pairs = reshape(stream, [rows, n, 2])
    return tuple(reshape(view(pairs, [rows, n, 1], [0, 0, k]), shape) for k in (0, 1))


def interleave(input: Tensor, other: Tensor) -> Tuple[Tensor, Tensor]:  # noqa: A002
    """PyPTO's interleave (the Ascend 950 only): the stream ``input[0], other[0], input[1],
    other[1], ...`` along the last axis, its first half as ``out0`` and its second as ``out1``
    (both of the inputs' shape). Inverse of ``deinterleave(out0, out1)``."""
    api = "interleave"
    shape, rows = _pair(api, input, other)
    n = shape[-1]
    with _Composite(api):
        pairs = concat([unsqueeze(reshape(t, [rows, n]), -1) for t in (input, other)], -1)
        stream = reshape(pairs, [rows, 2 * n])
        return tuple(reshape(view(stream, [rows, n], [0, k * n]), shape) for k in (0, 1))


def deinterleave(input: Tensor, other: Optional[Tensor] = None  # noqa: A002
                 ) -> Tuple[Tensor, Tensor]:
    """PyPTO's deinterleave (the Ascend 950 only): the even and the odd entries of a stream
    along the last axis. One operand holds the whole stream (the outputs have half its last
    size); two hold its first and second halves (the outputs have their shape)."""
    api = "deinterleave"
    if other is None:
        shape, rows = _rows_of(api, "input", input)
        n = shape[-1] // 2
        with _Composite(api):
            return _split_even_odd(reshape(input, [rows, 2 * n]), rows, n, shape[:-1] + [n])
    shape, rows = _pair(api, input, other)
    n = shape[-1]
    with _Composite(api):
        stream = concat([reshape(input, [rows, n]), reshape(other, [rows, n])], -1)
        return _split_even_odd(stream, rows, n, shape)
