# SPDX-License-Identifier: Apache-2.0
"""Reductions (``sum``, ``amax``, ..., ``argmax``), scans (``cumsum``, ``cumprod``) and
sorting (``topk``, ``argsort``, ``sort``) along an axis."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Tuple

from .._dtypes import DataType
from .._enums import TopKAlgo
from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._tensor import Tensor
from .common import _check_dtype, _check_numeric, _emit, _fail, _norm_axis, _op, _tr, _val, _wrap


def _reduce(op: str, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """A reduction (or, for the scan family, a scan keeping every axis) over ``dim``; the
    result dtype follows the op table's rule ("index": DT_INT32)."""
    tr = _tr(op)
    xv = _val(x, op)
    _check_dtype(op, xv)
    if not isinstance(keepdim, bool):
        _fail(PyptoTypeError, op, f"keepdim must be a bool, got {short_repr(keepdim)}")
    dims_in = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if not dims_in:
        _fail(PyptoValueError, op, "dim must not be empty")
    dims = sorted({_norm_axis(d, xv.rank, op) for d in dims_in})
    row = _op(op)
    if (row["family"] == "scan" or row["dtype_rule"] == "index") and len(dims) != 1:
        _fail(PyptoValueError, op, f"dim must be one axis, got {short_repr(dim)}")
    if row["family"] == "scan":
        # PyPTO's cumsum of DT_INT16/DT_INT32 gives DT_INT64 (pypto-cumsum.md), as torch's does.
        widen = op == "cumsum" and xv.dtype in (DataType.DT_INT16, DataType.DT_INT32)
        return _wrap(_emit(tr, op, [xv], {"dims": dims, "keepdim": True}, xv.shape,
                           DataType.DT_INT64 if widen else xv.dtype, valid_shape=xv.valid_shape))
    out_dtype = DataType.DT_INT32 if row["dtype_rule"] == "index" else xv.dtype
    shape, valid = [], []
    for axis, d in enumerate(xv.shape):
        vs = xv.valid_shape[axis] if xv.valid_shape is not None else d
        if axis in dims:
            if keepdim:
                shape.append(1)
                valid.append(1)
        else:
            shape.append(d)
            valid.append(vs)
    if not shape:
        shape, valid = [1], [1]
    return _wrap(_emit(tr, op, [xv], {"dims": dims, "keepdim": keepdim}, shape, out_dtype,
                           valid_shape=valid if xv.valid_shape is not None else None))


def sum(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (an int or a list of ints)."""
    return _reduce("sum", x, dim, keepdim)


def amax(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:
    return _reduce("amax", x, dim, keepdim)


def amin(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:
    return _reduce("amin", x, dim, keepdim)


def prod(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:
    """Product over ``dim`` (an int or a list of ints)."""
    return _reduce("prod", x, dim, keepdim)


def argmax(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index (DT_INT32) of the first maximum along ``dim``; a NaN counts as the maximum."""
    return _reduce("argmax", x, dim, keepdim)


def argmin(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index (DT_INT32) of the first minimum along ``dim``; a NaN counts as the minimum."""
    return _reduce("argmin", x, dim, keepdim)


def cumsum(x: Tensor, dim: int) -> Tensor:
    """Inclusive running sum along ``dim``; the result keeps ``x``'s dtype, except that
    DT_INT16/DT_INT32 give DT_INT64 (PyPTO's rule, and torch's)."""
    return _reduce("cumsum", x, dim, False)


def cumprod(x: Tensor, dim: int) -> Tensor:
    """Inclusive running product along ``dim``; the result keeps ``x``'s dtype."""
    return _reduce("cumprod", x, dim, False)


# --- sorting ---------------------------------------------------------------------------------


def _sorted(op: str, api: str, x: Any, k: Any, dim: Any, descending: bool) -> Tensor:
    """Records IR op ``op`` (sort: values, argsort: DT_INT32 indices) keeping the first ``k``
    entries of the sort along ``dim`` (None: the last axis)."""
    tr = _tr(api)
    xv = _val(x, api)
    _check_numeric(xv, api)
    if not isinstance(descending, bool):
        _fail(PyptoTypeError, api, f"descending/largest must be a bool, got {descending!r}")
    d = _norm_axis(-1 if dim is None else dim, xv.rank, api)
    n = xv.shape[d]
    if k is None:
        k = n
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        _fail(PyptoTypeError, api, f"k must be an int, got {k!r}")
    if k < 1 or (isinstance(n, int) and k > n):
        _fail(PyptoValueError, api, f"k must satisfy 1 <= k <= {n} (the size of dim {d}), "
              f"got {k}")
    shape = list(xv.shape)
    shape[d] = int(k)
    valid = None
    if xv.valid_shape is not None:
        valid = list(xv.valid_shape)
        valid[d] = int(k)
    dtype = DataType.DT_INT32 if op == "argsort" else xv.dtype
    return _wrap(_emit(tr, op, [xv], {"dims": [d], "keepdim": True, "k": int(k),
                                      "descending": descending}, shape, dtype,
                       valid_shape=valid))


def topk(input: Tensor, k: int, dim: Optional[int] = None,  # noqa: A002
         largest: bool = True, algo: TopKAlgo = TopKAlgo.MERGE_SORT) -> Tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` (default the last
    axis) and their DT_INT32 indices, in sorted order, as ``(values, indices)``. Ties keep
    their original order (torch leaves that order unspecified). The sorted axis stays whole in
    each tile. ``algo`` (a pypto.TopKAlgo) picks PyPTO's algorithm; the selection is the same."""
    if not isinstance(algo, TopKAlgo):
        _fail(PyptoTypeError, "topk", f"algo must be a pypto.TopKAlgo, got {short_repr(algo)}")
    return (_sorted("sort", "topk", input, k, dim, largest),
            _sorted("argsort", "topk", input, k, dim, largest))


def argsort(input: Tensor, dim: Optional[int] = None,  # noqa: A002
            descending: bool = True) -> Tensor:
    """DT_INT32 indices that sort ``input`` along ``dim`` (default the last axis); PyPTO's
    default is descending. Stable: equal values keep their order (torch.sort(stable=True));
    NaN sorts as the largest value."""
    return _sorted("argsort", "argsort", input, None, dim, descending)


def sort(input: Tensor, dim: int = -1, descending: bool = False) -> Tuple[Tensor, Tensor]:  # noqa: A002
    """torch.sort (stable): ``(values, indices)`` along ``dim``, indices DT_INT32."""
    return (_sorted("sort", "sort", input, None, dim, descending),
            _sorted("argsort", "sort", input, None, dim, descending))
