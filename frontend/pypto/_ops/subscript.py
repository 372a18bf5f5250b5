# SPDX-License-Identifier: Apache-2.0
"""Tensor subscripts: ``x[key]`` (a view, or a run-time scalar read of one element) and
``x[key] = value`` (a write), with ints, slices of step 1, symbolic scalars and ``...``; and
PyPTO's ``x[dim:index]`` (gather) and ``x[dim:index] = src`` (scatter) with a tensor index."""

from __future__ import annotations

import builtins
import numbers
from typing import Any, List

from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._symbolic import SymbolicScalar, as_expr, const_value, load
from .._tensor import Tensor
from .common import _dim, _dim_eq, _emit, _fail, _is_scalar, _simplify, _tr, _wrap
from .creation import full
from .gather_scatter import gather, scatter_
from .movement import _write, view

_bsum = builtins.sum


def _normalize_key(t: Tensor, key: Any, api: str):
    """-> list of (kind, start, size_or_None, exact) per axis; kind 'slice' or 'index'."""
    xv = t._value
    if not isinstance(key, tuple):
        key = (key,)
    if _bsum(1 for k in key if k is Ellipsis) > 1:
        _fail(PyptoValueError, api, "at most one '...' is allowed in an index")
    n_real = _bsum(1 for k in key if k is not Ellipsis)
    if n_real > xv.rank:
        _fail(PyptoValueError, api, f"too many indices ({n_real}) for a {xv.rank}-D tensor")
    expanded: List[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (xv.rank - n_real))
        else:
            expanded.append(k)
    expanded.extend([slice(None)] * (xv.rank - len(expanded)))
    out = []
    for axis, (k, dim) in enumerate(zip(expanded, xv.shape)):
        if isinstance(k, slice):
            if k.step is not None and const_value(k.step) != 1:
                _fail(PyptoValueError, api, f"step must be 1 or None, got {short_repr(k.step)}")
            start = 0 if k.start is None else _dim(k.start, api, "slice start")
            start = _neg_index(start, dim, axis, api)
            if k.stop is None:
                size = _simplify(as_expr(dim) - start)
                out.append(("slice", start, size, False))
                continue
            stop = _neg_index(_dim(k.stop, api, "slice stop"), dim, axis, api)
            size = const_value(as_expr(stop) - start)
            if size is None:
                _fail(PyptoValueError, api, f"slice {start}:{stop} on axis {axis} must have a "
                      "size that simplifies to an int (stop - start)")
            if size <= 0:
                _fail(PyptoValueError, api, f"slice {start}:{stop} on axis {axis} is empty")
            if isinstance(dim, int) and isinstance(stop, int) and stop > dim:
                _fail(PyptoValueError, api, f"slice {start}:{stop} exceeds size {dim} of axis "
                      f"{axis}")
            out.append(("slice", start, int(size), True))
        elif isinstance(k, (numbers.Integral, SymbolicScalar)) and not isinstance(k, bool):
            idx = _neg_index(_dim(k, api, "index"), dim, axis, api)
            if isinstance(idx, int) and isinstance(dim, int) and idx >= dim:
                _fail(PyptoValueError, api, f"index {k} is out of range for size {dim} of axis "
                      f"{axis}")
            out.append(("index", idx, 1, True))
        else:
            _fail(PyptoTypeError, api, f"unsupported index {short_repr(k)} on axis {axis}; use ints, "
                  "slices with step 1, symbolic scalars or '...'")
    return out


def _neg_index(i: Any, dim: Any, axis: int, api: str) -> Any:
    if isinstance(i, int) and i < 0:
        if not isinstance(dim, int):
            _fail(PyptoValueError, api, f"negative index {i} on dynamic axis {axis}")
        if i + dim < 0:
            _fail(PyptoValueError, api, f"index {i} is out of range for size {dim} of axis "
                  f"{axis}")
        return i + dim
    return i


def _tensor_slice_dim(key: Any, api: str, op: str) -> Any:
    """The dim of PyPTO's ``x[dim:index]`` key (a slice whose stop is a tensor), else None."""
    if not (isinstance(key, slice) and isinstance(key.stop, Tensor)):
        return None
    if not isinstance(key.start, numbers.Integral) or isinstance(key.start, bool):
        _fail(PyptoTypeError, api, f"x[dim:index] is pypto.{op}(x, dim, index): dim (the slice "
              f"start) must be an int, got {short_repr(key.start)}")
    if key.step is not None:
        _fail(PyptoValueError, api, f"x[dim:index] is pypto.{op}(x, dim, index) and takes no "
              f"step, got {short_repr(key.step)}")
    return int(key.start)


def _getitem(t: Tensor, key: Any) -> Any:
    api = "Tensor.__getitem__"
    dim = _tensor_slice_dim(key, api, "gather")
    if dim is not None:
        return gather(t, dim, key.stop)
    tr = _tr(api)
    xv = t._value
    norm = _normalize_key(t, key, api)
    if all(kind == "index" for kind, *_ in norm):
        # x[i, j]: an element read, which becomes a run-time scalar (PyPTO: GetTensorData).
        if xv.name is None or not xv.dtype.is_int:
            _fail(PyptoValueError, api, "reading one element is supported only from integer "
                  f"kernel input tensors, not from {xv.ref()} ({xv.dtype}); use slicing to get "
                  "a tile")
        tr.use(xv, api)
        return load(xv.name, [start for _, start, _, _ in norm])
    if all(kind == "slice" and isinstance(start, int) and start == 0 and
           _dim_eq(size, d) is True for (kind, start, size, _), d in zip(norm, xv.shape)):
        return t
    shape = [size for _, _, size, _ in norm]
    offsets = [start for _, start, _, _ in norm]
    out = view(t, shape, offsets)
    dropped = [axis for axis, (kind, *_) in enumerate(norm) if kind == "index"]
    if dropped:
        ov = out._value
        keep = [a for a in range(ov.rank) if a not in dropped]
        valid = None if ov.valid_shape is None else [ov.valid_shape[a] for a in keep]
        out = _wrap(_emit(tr, "reshape", [ov], {"inplace": True},
                              [ov.shape[a] for a in keep], ov.dtype, ov.format, valid))
    return out


def _setitem(t: Tensor, key: Any, value: Any) -> None:
    api = "Tensor.__setitem__"
    dim = _tensor_slice_dim(key, api, "scatter")
    if dim is not None:
        scatter_(t, dim, key.stop, value)
        return
    tr = _tr(api)
    dv = t._value
    norm = _normalize_key(t, key, api)
    offsets = [start for _, start, _, _ in norm]
    region = [size for _, _, size, _ in norm]
    exact = [ex for *_, ex in norm]
    if isinstance(value, Tensor):
        sv = value._value
    elif _is_scalar(value):
        sv = full(region, value, dv.dtype)._value
    else:
        _fail(PyptoTypeError, api, f"can only assign a pypto.Tensor or a number, got "
              f"{type(value).__name__}")
    index_axes = [a for a, (kind, *_) in enumerate(norm) if kind == "index"]
    if index_axes and sv.rank == dv.rank - len(index_axes):
        shape = list(sv.shape)
        valid = None if sv.valid_shape is None else list(sv.valid_shape)
        for a in index_axes:
            shape.insert(a, 1)
            if valid is not None:
                valid.insert(a, 1)
        sv = _emit(tr, "reshape", [sv], {"inplace": True}, shape, sv.dtype, sv.format, valid)
    _write(tr, sv, offsets, dv, "Tensor.__setitem__", region=region, exact=exact)
