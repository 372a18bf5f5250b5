# SPDX-License-Identifier: Apache-2.0
"""Indexed ops: ``gather``, ``index_select``, ``index_add``, ``one_hot``, ``scatter`` and
PyPTO's row scatter ``scatter_update``, with index tensors of DT_INT32/DT_INT64."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence, Tuple

from .. import ir
from .._dtypes import DataType
from .._enums import ScatterMode
from .._errors import PyptoTypeError, PyptoValueError
from .._limits import MAX_RANK, RANK_LIMIT_TEXT
from ..error import short_repr
from .._tensor import Tensor
from .common import (_check_numeric, _dim_eq, _emit, _fail, _fmt, _is_scalar, _norm_axis,
                     _scalar, _tr, _val, _wrap)
from .creation import _index_vector
from .elementwise import _binary, mul
from .movement import _write, cast, expand_clone, reshape, unsqueeze


_INDEX_DTYPES = (DataType.DT_INT32, DataType.DT_INT64)


def _index_operands(api: str, x: Any, index: Any, dtypes=_INDEX_DTYPES):
    xv = _val(x, api)
    iv = _val(index, api, "index")
    _check_numeric(xv, api)
    if iv.dtype not in dtypes:
        _fail(PyptoTypeError, api, f"index must be a {' or '.join(d.name for d in dtypes)} "
              f"tensor, got {iv.dtype}")
    return xv, iv


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """torch.gather: ``out[i][j][k] = input[i][index[i][j][k]][k]`` for ``dim == 1`` (and
    likewise for the other axes). ``index`` (DT_INT32/DT_INT64) has ``input``'s rank and is no
    larger on the other axes; the result has ``index``'s shape and ``input``'s dtype. Tiles
    follow ``set_vec_tile_shapes`` over the result; the indexed axis is never split."""
    api = "gather"
    tr = _tr(api)
    xv, iv = _index_operands(api, input, index)
    if iv.rank != xv.rank:
        _fail(PyptoValueError, api, f"index must have the input's rank {xv.rank}, got "
              f"{_fmt(iv.shape)}")
    d = _norm_axis(dim, xv.rank, api)
    for axis in range(xv.rank):
        if axis != d and isinstance(iv.shape[axis], int) and isinstance(xv.shape[axis], int) \
                and iv.shape[axis] > xv.shape[axis]:
            _fail(PyptoValueError, api, f"index {_fmt(iv.shape)} is larger than the input "
                  f"{_fmt(xv.shape)} on axis {axis}")
    return _wrap(_emit(tr, "gather", [xv, iv], {"dims": [d]}, iv.shape, xv.dtype,
                       valid_shape=iv.valid_shape))


def _row_index(api: str, xv: ir.Value, d: int, index: Any, shape: Sequence[Any]) -> Tensor:
    """A 1-D index along axis ``d`` as a gather/scatter index of ``shape`` (the index on axis
    ``d``, broadcast over the others)."""
    iv = _val(index, api, "index")
    if iv.dtype not in _INDEX_DTYPES:
        _fail(PyptoTypeError, api, f"index must be a DT_INT32 or DT_INT64 tensor, got "
              f"{iv.dtype}")
    if iv.rank != 1:
        _fail(PyptoValueError, api, f"index must be 1-D, got {_fmt(iv.shape)}")
    lead = [1] * xv.rank
    lead[d] = iv.shape[0]
    idx = reshape(index, lead, inplace=True)
    if all(_dim_eq(a, b) for a, b in zip(lead, shape)):
        return idx
    return expand_clone(idx, list(shape))


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """torch.index_select: the slices ``index[i]`` of ``input`` along ``dim`` (a 1-D
    DT_INT32/DT_INT64 ``index``); the result has ``input``'s shape with ``len(index)`` on
    ``dim``. Computed as a gather (the indexed axis stays whole in each tile). PyPTO also
    takes a 2-D ``index`` [I0, I1]: ``dim`` becomes the two axes I0, I1 (the result has one
    axis more), ``result[.., i, j, ..] = input[.., index[i, j], ..]``."""
    api = "index_select"
    xv = _val(input, api)
    _check_numeric(xv, api)
    d = _norm_axis(dim, xv.rank, api)
    iv = _val(index, api, "index")
    if iv.rank == 2:
        return _index_select_2d(api, input, xv, d, index, iv)
    shape = list(xv.shape)
    shape[d] = iv.shape[0] if iv.rank == 1 else None
    return gather(input, d, _row_index(api, xv, d, index, shape))


def _index_select_2d(api: str, input: Tensor, xv: ir.Value, d: int, index: Tensor,  # noqa: A002
                     iv: ir.Value) -> Tensor:
    """index_select with a 2-D index: the index flattened, the 1-D select, the selected axis
    split back into the index's two (the 1-D select checks the index's dtype)."""
    if not all(isinstance(n, int) for n in iv.shape):
        _fail(PyptoValueError, api, f"a 2-D index must have a static shape, got "
              f"{_fmt(iv.shape)}")
    out_shape = list(xv.shape[:d]) + list(iv.shape) + list(xv.shape[d + 1:])
    if len(out_shape) > MAX_RANK:
        _fail(PyptoValueError, api, f"a 2-D index on a {xv.rank}-D input gives a "
              f"{len(out_shape)}-D result {_fmt(out_shape)}; tensors have {RANK_LIMIT_TEXT}")
    flat = reshape(index, [iv.shape[0] * iv.shape[1]], inplace=True)
    return reshape(index_select(input, d, flat), out_shape)


def _index_add(api: str, input: Any, dim: Any, index: Any, source: Any,  # noqa: A002
               alpha: Any) -> Tuple[Any, int, Tensor, Tensor]:
    xv = _val(input, api)
    sv = _val(source, api, "source")
    _check_numeric(xv, api)
    if sv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"source dtype {sv.dtype} differs from the input's "
              f"{xv.dtype}")
    if sv.rank != xv.rank:
        _fail(PyptoValueError, api, f"source must have the input's rank {xv.rank}, got "
              f"{_fmt(sv.shape)}")
    d = _norm_axis(dim, xv.rank, api)
    iv = _val(index, api, "index")
    if iv.rank == 1 and _dim_eq(iv.shape[0], sv.shape[d]) is False:
        _fail(PyptoValueError, api, f"index has {iv.shape[0]} entries but source has "
              f"{sv.shape[d]} on dim {d}")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        _fail(PyptoTypeError, api, f"alpha must be a number, got {alpha!r}")
    src = source if alpha == 1 else mul(source, alpha)
    return input, d, _row_index(api, xv, d, index, sv.shape), src


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
              alpha: Any = 1) -> Tensor:
    """torch.index_add (out of place): a copy of ``input`` with ``alpha * source[.., i, ..]``
    added to slice ``index[i]`` along ``dim``, each update rounded to the dtype, in index
    order. Computed as a scatter with reduce='add' (``alpha != 1`` first rounds
    ``alpha * source`` to the dtype, where torch rounds once after the add)."""
    x, d, idx, src = _index_add("index_add", input, dim, index, source, alpha)
    return scatter(x, d, idx, src, reduce="add")


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
               alpha: Any = 1) -> Tensor:
    """In-place ``index_add``: ``input`` is updated and returned."""
    x, d, idx, src = _index_add("index_add_", input, dim, index, source, alpha)
    return scatter_(x, d, idx, src, reduce="add")


def index_add_ub(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
                 alpha: Any = 1) -> Tensor:
    """PyPTO's UB variant of ``index_add`` (its operands staged in UB, the indexed axis whole
    in each tile): the same numbers as ``index_add``."""
    x, d, idx, src = _index_add("index_add_ub", input, dim, index, source, alpha)
    return scatter(x, d, idx, src, reduce="add")


def index_add__ub(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
                  alpha: Any = 1) -> Tensor:
    """PyPTO's UB variant of ``index_add_``: ``input`` is updated and returned."""
    x, d, idx, src = _index_add("index_add__ub", input, dim, index, source, alpha)
    return scatter_(x, d, idx, src, reduce="add")


def one_hot(input: Tensor, num_classes: int) -> Tensor:  # noqa: A002
    """PyPTO's one_hot: DT_INT64 of shape ``input.shape + [num_classes]``, 1 where the last
    index equals the input's value (an integer tensor of values in ``[0, num_classes)``).
    The vec tile covers the result; its last entry should be ``num_classes``."""
    api = "one_hot"
    xv = _val(input, api)
    if xv.dtype.is_float or xv.dtype is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, f"needs an integer tensor, got {xv.dtype}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or \
            num_classes < 1:
        _fail(PyptoValueError, api, f"num_classes must be a positive int, got {num_classes!r}")
    x = input
    if xv.dtype not in (DataType.DT_INT32, DataType.DT_INT64):
        x = cast(input, DataType.DT_INT32)
    classes = _index_vector(api, int(num_classes), dtype=x._value.dtype)
    return cast(_binary("eq", unsqueeze(x, -1), classes), DataType.DT_INT64)


_SCATTER_REDUCE = {None: "none", "add": "add", "multiply": "multiply",
                   ScatterMode.NONE: "none", ScatterMode.ADD: "add",
                   ScatterMode.MULTIPLY: "multiply"}


def scatter(input: Tensor, dim: int, index: Tensor, src: Any, *,  # noqa: A002
            reduce: Optional[str] = None) -> Tensor:
    """torch.scatter (out of place): a copy of ``input`` with ``out[i][index[i][j][k]][k] =
    src[i][j][k]`` for ``dim == 1`` (likewise for the other axes). ``src`` is a tensor of
    ``input``'s dtype (no smaller than ``index``) or a number (rounded to ``input``'s dtype);
    ``reduce`` is None, ``'add'`` or ``'multiply'`` (or a pypto.ScatterMode). Duplicate indices without reduce keep the
    last update in row-major index order."""
    api = "scatter"
    tr = _tr(api)
    xv, iv = _index_operands(api, input, index)
    if reduce not in _SCATTER_REDUCE:
        _fail(PyptoValueError, api, f"reduce must be None, 'add', 'multiply' or a "
              f"pypto.ScatterMode, got {short_repr(reduce)}")
    if iv.rank != xv.rank:
        _fail(PyptoValueError, api, f"index must have the input's rank {xv.rank}, got "
              f"{_fmt(iv.shape)}")
    d = _norm_axis(dim, xv.rank, api)
    if isinstance(src, Tensor):
        sv = src._value
        if sv.dtype is not xv.dtype:
            _fail(PyptoTypeError, api, f"src dtype {sv.dtype} differs from the input's "
                  f"{xv.dtype}")
        if sv.rank != xv.rank:
            _fail(PyptoValueError, api, f"src must have the input's rank {xv.rank}")
        src_in: Any = sv
    elif _is_scalar(src):
        src_in = _scalar(src, xv.dtype, api)
    else:
        _fail(PyptoTypeError, api, f"src must be a pypto.Tensor or a number, got "
              f"{type(src).__name__}")
    for axis in range(xv.rank):
        if axis != d and isinstance(iv.shape[axis], int) and isinstance(xv.shape[axis], int) \
                and iv.shape[axis] > xv.shape[axis]:
            _fail(PyptoValueError, api, f"index {_fmt(iv.shape)} is larger than the input "
                  f"{_fmt(xv.shape)} on axis {axis}")
    return _wrap(_emit(tr, "scatter", [xv, iv, src_in],
                       {"dims": [d], "reduce": _SCATTER_REDUCE[reduce]}, xv.shape, xv.dtype,
                       valid_shape=xv.valid_shape))


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any, *,  # noqa: A002
             reduce: Optional[str] = None) -> Tensor:
    """In-place ``scatter``: ``input`` is updated (a whole-tensor write of the result) and
    returned."""
    out = scatter(input, dim, index, src, reduce=reduce)
    tr = _tr("scatter_")
    _write(tr, out._value, [0] * input._value.rank, input._value, "scatter_")
    return input


def scatter_update(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """PyPTO's row scatter (paged KV caches): with ``index`` ``[b, s]``, row
    ``index[i][j]`` of ``input`` (its axes before the last flattened: ``[rows, d]`` 2-D or
    ``[blocks, block_size, 1, d]`` 4-D) becomes source row ``i * s + j`` (``src`` ``[b * s,
    d]`` or ``[b, s, 1, d]``). Returns the updated tensor (a new value; assign it, e.g.
    ``cache_out[:] = pypto.scatter_update(cache, -2, index, src)``). ``dim`` must be -2."""
    api = "scatter_update"
    tr = _tr(api)
    xv, iv = _index_operands(api, input, index,
                             (DataType.DT_INT64, DataType.DT_INT32, DataType.DT_INT16))
    sv = _val(src, api, "src")
    if dim != -2:
        _fail(PyptoValueError, api, f"dim must be -2 (PyPTO supports only that), got {short_repr(dim)}")
    if xv.rank not in (2, 4) or sv.rank != xv.rank:
        _fail(PyptoValueError, api, f"input and src must both be 2-D or 4-D, got "
              f"{_fmt(xv.shape)} and {_fmt(sv.shape)}")
    if iv.rank != 2:
        _fail(PyptoValueError, api, f"index must be 2-D [b, s], got {_fmt(iv.shape)}")
    if sv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"src dtype {sv.dtype} differs from the input's {xv.dtype}")
    if _dim_eq(sv.shape[-1], xv.shape[-1]) is False:
        _fail(PyptoValueError, api, f"src rows {_fmt(sv.shape)} and input rows "
              f"{_fmt(xv.shape)} differ in their last axis")
    return _wrap(_emit(tr, "scatter_update", [xv, iv, sv], {}, xv.shape, xv.dtype,
                       valid_shape=xv.valid_shape))
