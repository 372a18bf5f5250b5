# SPDX-License-Identifier: Apache-2.0
"""Data movement and shape: ``cast``, ``clone``, ``view``, ``reshape``, ``permute``,
``transpose``, ``unsqueeze``, ``expand_clone``, ``concat`` and the writes into a tensor
(``assemble``; ``_write`` is shared with the subscript and in-place ops)."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence

from .. import _mx, _tracer, ir
from .._dtypes import DataType
from .._enums import CastMode, SaturationMode
from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._symbolic import SymbolicScalar, as_expr, const_value, floordiv, smax, smin
from .._tensor import Tensor
from .common import (_dim, _dim_eq, _emit, _fail, _fmt, _need_vec, _norm_axis, _simplify, _tr,
                     _val, _wrap)
from .creation import _dtype_arg, _shape_arg, _valid_arg


def cast(x: Tensor, dtype: DataType, mode: Optional[CastMode] = None,
         satmode: Optional[SaturationMode] = None) -> Tensor:
    """Converts to ``dtype`` with rounding ``mode`` (default CAST_NONE) and ``satmode``."""
    tr = _tr("cast")
    xv = _val(x, "cast")
    dt = _dtype_arg(dtype, "cast")
    mode = CastMode.CAST_NONE if mode is None else mode
    satmode = SaturationMode.OFF if satmode is None else satmode
    if not isinstance(mode, CastMode):
        _fail(PyptoTypeError, "cast", f"mode must be a pypto.CastMode, got {short_repr(mode)}")
    if not isinstance(satmode, SaturationMode):
        _fail(PyptoTypeError, "cast", f"satmode must be a pypto.SaturationMode, got {short_repr(satmode)}")
    if _mx.is_mx(dt):  # the rounding to an MX format, recorded as vector ops
        from .mx import cast_to_mx

        return cast_to_mx(x, dt, satmode is SaturationMode.ON)
    return _wrap(_emit(tr, "cast", [xv], {"mode": mode, "satmode": satmode}, xv.shape, dt,
                           valid_shape=xv.valid_shape))


def clone(x: Tensor) -> Tensor:
    """A copy of ``x``."""
    tr = _tr("clone")
    xv = _val(x, "clone")
    return _wrap(_emit(tr, "clone", [xv], {}, xv.shape, xv.dtype, xv.format, xv.valid_shape))


def view(x: Tensor, shape: Optional[Sequence[Any]] = None,
         offsets: Optional[Sequence[Any]] = None, valid_shape: Any = None, *,
         dtype: Optional[DataType] = None) -> Tensor:
    """The window of static ``shape`` (default: ``x``'s shape) at ``offsets`` (ints or
    symbolic; default: zeros) of ``x``.

    ``valid_shape`` (keyword, or fourth positional as PyPTO's view page calls it) gives the
    live extent of a tail window; only that part is read. Without it, the valid extent is
    derived from ``x``'s own valid_shape. ``dtype`` reinterprets bits (the last axis scales by
    the size ratio): ``view(x, dtype=...)`` reads all of ``x``.
    """
    tr = _tr("view")
    xv = _val(x, "view")
    if shape is None:
        shape = list(xv.shape)
    if offsets is None:
        offsets = [0] * xv.rank
    shp = _shape_arg(shape, "view")
    if not isinstance(offsets, (list, tuple)) or len(offsets) != xv.rank or len(shp) != xv.rank:
        _fail(PyptoValueError, "view", f"shape and offsets need {xv.rank} entries for a "
              f"{xv.rank}-D tensor, got shape {short_repr(list(shape))} and offsets {short_repr(offsets)}")
    offs = tuple(_dim(o, "view", "offset") for o in offsets)
    overhang = False  # a static window reaching past its source's static end
    for axis, (o, s, d) in enumerate(zip(offs, shp, xv.shape)):
        if isinstance(o, int) and o < 0:
            _fail(PyptoValueError, "view", f"offset {o} on axis {axis} is negative")
        start, end = const_value(as_expr(o)), const_value(as_expr(o) + s)
        if start is not None and isinstance(d, int) and start >= d and valid_shape is None:
            _fail(PyptoValueError, "view", f"offset {start} on axis {axis} is not inside the "
                  f"shape {_fmt(xv.shape)} (PyPTO's view asks offsets below the input's shape)")
        overhang = overhang or (end is not None and isinstance(d, int) and end > d)
    valid = _valid_arg(valid_shape, shp, "view")
    if valid is None and xv.valid_shape is not None:
        valid = tuple(_simplify(smin(s, smax(as_expr(v) - o, 0)))
                      for s, v, o in zip(shp, xv.valid_shape, offs))
    elif valid is None and (overhang or any(isinstance(d, int) and isinstance(s, int) and d % s
                                            and const_value(o) is None
                                            for s, d, o in zip(shp, xv.shape, offs))):
        # As in PyPTO, a window without valid_shape is clipped to what its source holds: a
        # loop of windows over a static size that is not a multiple of the window ends in a
        # partial block (windows that divide the size are left whole), and a window larger
        # than its source (DeepSeek-V4's [1, 1024] block-table row of a [b, 16] table) holds
        # the source's part.
        valid = tuple(_simplify(smin(s, smax(as_expr(d) - o, 0)))
                      for s, d, o in zip(shp, xv.shape, offs))
    attrs: dict = {"offsets": list(offs)}
    out_dtype = xv.dtype
    if dtype is not None:
        out_dtype = _dtype_arg(dtype, "view")
        if out_dtype.bits != xv.dtype.bits:
            last = shp[-1]
            if not isinstance(last, int) or (last * xv.dtype.bits) % out_dtype.bits:
                _fail(PyptoValueError, "view", f"cannot reinterpret {xv.dtype} as {out_dtype}: "
                      f"the last size {last} does not scale to a whole number of elements")
            shp = shp[:-1] + (last * xv.dtype.bits // out_dtype.bits,)
            valid = None if valid is None else valid[:-1] + (shp[-1],)
        attrs["dtype"] = out_dtype
    return _wrap(_emit(tr, "view", [xv], attrs, shp, out_dtype, xv.format, valid))


def reshape(x: Tensor, shape: Sequence[Any], *, valid_shape: Any = None,
            inplace: bool = False) -> Tensor:
    """Same elements, new shape (one entry may be -1). A non-inplace reshape needs int sizes."""
    tr = _tr("reshape")
    xv = _val(x, "reshape")
    if not isinstance(shape, (list, tuple)):
        _fail(PyptoTypeError, "reshape", f"shape must be a list, got {short_repr(shape)}")
    entries = list(shape)
    infer = [i for i, d in enumerate(entries) if isinstance(d, numbers.Integral) and d == -1]
    if len(infer) > 1:
        _fail(PyptoValueError, "reshape", f"only one -1 is allowed, got {short_repr(list(shape))}")
    if not inplace and (any(isinstance(d, SymbolicScalar) and not d.is_const() for d in entries)
                        or any(isinstance(d, SymbolicScalar) for d in xv.shape)):
        # PyPTO's wording (its tests match it), then our hint.
        _fail(PyptoValueError, "reshape", "reshape() requires integer shape when "
              "'inplace=False'; use inplace=True for dynamic shapes")
    total = as_expr(1)
    for d in xv.shape:
        total = total * d
    if infer:
        known = as_expr(1)
        for i, d in enumerate(entries):
            if i != infer[0]:
                known = known * _dim(d, "reshape")
        q = const_value(floordiv(total, known))
        r = const_value(total % known)
        if q is None or r != 0:
            _fail(PyptoValueError, "reshape", f"cannot infer -1 in {short_repr(list(shape))} from "
                  f"{_fmt(xv.shape)}")
        entries[infer[0]] = q
    shp = _shape_arg(entries, "reshape")
    new_total = as_expr(1)
    for d in shp:
        new_total = new_total * d
    if _dim_eq(total, new_total) is False:
        _fail(PyptoValueError, "reshape", f"cannot reshape {_fmt(xv.shape)} "
              f"({total} elements) to {_fmt(shp)}")
    if not isinstance(inplace, bool):
        _fail(PyptoTypeError, "reshape", "inplace must be a bool")
    return _wrap(_emit(tr, "reshape", [xv], {"inplace": inplace}, shp, xv.dtype, xv.format,
                           _valid_arg(valid_shape, shp, "reshape")))


def permute(x: Tensor, dims: Sequence[int]) -> Tensor:
    """Reorders the axes: output axis i is input axis ``dims[i]``."""
    tr = _tr("permute")
    xv = _val(x, "permute")
    if not isinstance(dims, (list, tuple)) or len(dims) != xv.rank:
        _fail(PyptoValueError, "permute", f"dims must list {xv.rank} axes, got {short_repr(dims)}")
    d = [_norm_axis(a, xv.rank, "permute") for a in dims]
    if sorted(d) != list(range(xv.rank)):
        _fail(PyptoValueError, "permute", f"dims {short_repr(list(dims))} is not a permutation")
    return _permute_op(tr, "permute", xv, d, {"dims": d})


def _permute_op(tr, op, xv, d, attrs):
    shape = [xv.shape[a] for a in d]
    valid = None if xv.valid_shape is None else [xv.valid_shape[a] for a in d]
    return _wrap(_emit(tr, op, [xv], attrs, shape, xv.dtype, valid_shape=valid))


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swaps two axes."""
    tr = _tr("transpose")
    xv = _val(x, "transpose")
    a = _norm_axis(dim0, xv.rank, "transpose")
    b = _norm_axis(dim1, xv.rank, "transpose")
    d = list(range(xv.rank))
    d[a], d[b] = d[b], d[a]
    return _permute_op(tr, "transpose", xv, d, {"dims": [a, b]})


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Inserts an axis of size 1 at ``dim`` (recorded as an in-place reshape)."""
    tr = _tr("unsqueeze")
    xv = _val(x, "unsqueeze")
    a = _norm_axis(dim, xv.rank + 1, "unsqueeze")
    shape = list(xv.shape)
    shape.insert(a, 1)
    valid = None
    if xv.valid_shape is not None:
        valid = list(xv.valid_shape)
        valid.insert(a, 1)
    return _wrap(_emit(tr, "reshape", [xv], {"inplace": True}, shape, xv.dtype, xv.format,
                           valid))


def expand_clone(x: Tensor, shape: Sequence[Any], *, valid_shape: Any = None) -> Tensor:
    """Broadcasts size-1 axes of ``x`` to ``shape`` into a new tensor."""
    tr = _tr("expand_clone")
    xv = _val(x, "expand_clone")
    shp = _shape_arg(shape, "expand_clone")
    if len(shp) != xv.rank:
        _fail(PyptoValueError, "expand_clone", f"shape {_fmt(shp)} must have rank {xv.rank}")
    for axis, (src, dst) in enumerate(zip(xv.shape, shp)):
        if not (_dim_eq(src, 1) or _dim_eq(src, dst)):
            _fail(PyptoValueError, "expand_clone", f"cannot expand {_fmt(xv.shape)} to "
                  f"{_fmt(shp)} (axis {axis})")
    _need_vec(tr, "expand_clone")  # before valid_shape's checks: a missing tile first
    return _wrap(_emit(tr, "expand_clone", [xv], {}, shp, xv.dtype,
                           valid_shape=_valid_arg(valid_shape, shp, "expand_clone")))


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Joins tensors along ``dim``; the other sizes and the dtypes must match."""
    tr = _tr("concat")
    if not isinstance(tensors, (list, tuple)) or not tensors:
        _fail(PyptoValueError, "concat", "expects a non-empty list of tensors")
    vals = [_val(t, "concat") for t in tensors]
    first = vals[0]
    a = _norm_axis(dim, first.rank, "concat")
    total: Any = as_expr(0)
    for v in vals:
        if v.rank != first.rank or v.dtype is not first.dtype:
            _fail(PyptoValueError, "concat", f"all tensors need rank {first.rank} and dtype "
                  f"{first.dtype}, got {v.dtype}{_fmt(v.shape)}")
        for axis in range(first.rank):
            if axis != a and _dim_eq(v.shape[axis], first.shape[axis]) is not True:
                _fail(PyptoValueError, "concat", f"shapes {_fmt(first.shape)} and "
                      f"{_fmt(v.shape)} differ outside dim {a}")
        total = total + v.shape[a]
    shape = list(first.shape)
    shape[a] = _simplify(total)
    return _wrap(_emit(tr, "concat", vals, {"dim": a}, shape, first.dtype))


def _write(tr: _tracer.Tracer, src: ir.Value, offsets: Sequence[Any], dst: ir.Value, api: str,
           attrs: Optional[dict] = None, region: Optional[Sequence[Optional[Any]]] = None,
           exact: Optional[Sequence[bool]] = None) -> None:
    if src.rank != dst.rank:
        _fail(PyptoValueError, api, f"source rank {src.rank} {_fmt(src.shape)} does not match "
              f"destination rank {dst.rank} {_fmt(dst.shape)}")
    if src.dtype is not dst.dtype:
        _fail(PyptoTypeError, api, f"source dtype {src.dtype} does not match destination dtype "
              f"{dst.dtype}; use pypto.cast")
    if len(offsets) != dst.rank:
        _fail(PyptoValueError, api, f"needs {dst.rank} offsets, got {len(offsets)}")
    offs = tuple(_dim(o, api, "offset") for o in offsets)
    for axis in range(dst.rank):
        o, s, d = offs[axis], src.shape[axis], dst.shape[axis]
        if isinstance(o, int) and o < 0:
            _fail(PyptoValueError, api, f"offset {o} on axis {axis} is negative")
        if region is not None and region[axis] is not None:
            same = _dim_eq(region[axis], s)
            if exact[axis] and same is False:
                _fail(PyptoValueError, api, f"the slice has size {region[axis]} on axis {axis} "
                      f"but the value has shape {_fmt(src.shape)}")
        end = const_value(as_expr(o) + s)
        if end is not None and isinstance(d, int) and end > d and src.valid_shape is None:
            _fail(PyptoValueError, api, f"writing {_fmt(src.shape)} at offsets {_fmt(offs)} "
                  f"exceeds the destination shape {_fmt(dst.shape)} on axis {axis}")
    tr.emit_write(dst, src, offs, attrs, api=f"pypto.{api}")


def assemble(src: Any, offsets: Any, dst: Any = None, parallel: bool = False) -> None:
    """Writes ``src`` into ``dst`` at ``offsets``: ``pypto.assemble(tile, [i * 64, 0], out)``,
    or several at once: ``pypto.assemble([(t0, offs0), (t1, offs1)], out, parallel=True)``.
    Only the valid region of ``src`` is written."""
    tr = _tr("assemble")
    if isinstance(src, (list, tuple)):
        if dst is not None:
            _fail(PyptoTypeError, "assemble", "the list form is assemble([(src, offsets), ...], "
                  "dst, parallel=False)")
        dst, items = offsets, src
    else:
        items = [(src, offsets)]
    if not isinstance(parallel, bool):
        _fail(PyptoTypeError, "assemble", f"parallel must be a bool, got {short_repr(parallel)}")
    dv = _val(dst, "assemble", "dst")
    for item in items:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            _fail(PyptoTypeError, "assemble", f"list items must be (src, offsets) pairs, got "
                  f"{short_repr(item)}")
        sv = _val(item[0], "assemble", "src")
        offs = item[1]
        if not isinstance(offs, (list, tuple)):
            _fail(PyptoTypeError, "assemble", f"offsets must be a list, got {short_repr(offs)}")
        _write(tr, sv, offs, dv, "assemble", {"parallel": True} if parallel else None)
