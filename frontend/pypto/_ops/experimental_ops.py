# SPDX-License-Identifier: Apache-2.0
"""PyPTO's experimental ops (``pypto.experimental``): ``load`` (discrete reads of a tensor's
elements from global memory, one IR op), ``gather_in_ub`` / ``gather_in_l1`` (the rows of a
paged KV cache a top-k selected: the row numbers through the page table, then ``load``),
``transposed_batchmatmul`` (transposes around a batched matmul) and the 950's block-wise
``online_softmax`` / ``online_softmax_update`` (vector ops over column blocks)."""

from __future__ import annotations

import numbers
from typing import Any, Tuple

from .._dtypes import DataType
from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._symbolic import as_expr, const_value
from .._tensor import Tensor
from .common import _dim_eq, _emit, _fail, _fmt, _tr, _val, _vec_tile_within, _wrap
from .creation import _dtype_arg, arange
from .cube import matmul
from .elementwise import add, exp, floor_div, maximum, mul, sub
from .gather_scatter import gather
from .movement import cast, reshape, transpose
from .mx import _require_950
from .reductions import amax, sum as _sum
from .tiling import get_vec_tile_shapes

_INDEX = (DataType.DT_INT32, DataType.DT_INT64)


def load(src: Tensor, offsets: Tensor) -> Tensor:
    """``src`` read at ``offsets`` (DT_INT32/DT_INT64): element ``i`` of the result is element
    ``offsets[i]`` of ``src`` in its one-dimensional (row-major) view. The result has the
    offsets' shape and ``src``'s dtype; ``src`` stays in global memory (any shape, dynamic
    axes included), each result tile reads its elements there. An offset outside ``src``
    raises at run time."""
    api = "experimental.load"
    tr = _tr(api)
    xv = _val(src, api, "src")
    iv = _val(offsets, api, "offsets")
    if xv.dtype is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, "src must not be DT_BOOL")
    if iv.dtype not in _INDEX:
        _fail(PyptoTypeError, api, f"offsets must be DT_INT32 or DT_INT64, got {iv.dtype}")
    return _wrap(_emit(tr, "load", [xv, iv], {}, iv.shape, xv.dtype,
                       valid_shape=iv.valid_shape))


def _int_arg(api: str, name: str, v: Any, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        _fail(PyptoValueError, api, f"{name} must be an int >= {lo}, got {short_repr(v)}")
    return int(v)


def _paged_offsets(api: str, src: Tensor, indices: Tensor, block_table: Tensor,
                   block_size: Any, size: int, stride: Any = None) -> Tensor:
    """The element offsets in ``src`` [rows, cols] of the first ``size`` columns of the rows
    the token ids ``indices`` [1, n] name through the page table ``block_table`` [1, blocks]
    (PagedAttention: token t is row block_table[t // block_size] * block_size +
    t % block_size): an [n, size] tensor."""
    xv = _val(src, api, "src")
    iv = _val(indices, api, "indices")
    bv = _val(block_table, api, "block_table")
    bs = _int_arg(api, "block_size", block_size)
    if xv.rank != 2:
        _fail(PyptoValueError, api, f"src must be 2-D, got {_fmt(xv.shape)}")
    for name, v in (("indices", iv), ("block_table", bv)):
        if v.rank != 2 or _dim_eq(v.shape[0], 1) is not True:
            _fail(PyptoValueError, api, f"{name} must have shape [1, n], got {_fmt(v.shape)}")
        if v.dtype not in _INDEX:
            _fail(PyptoTypeError, api, f"{name} must be DT_INT32 or DT_INT64, got {v.dtype}")
    cols = xv.shape[1]
    if isinstance(cols, int) and size > cols:
        _fail(PyptoValueError, api, f"size {size} exceeds src's {cols} columns")
    blk = floor_div(indices, bs)
    tail = sub(indices, mul(blk, bs))
    phys = gather(block_table, 1, blk)
    if bv.dtype is not iv.dtype:
        phys = cast(phys, iv.dtype)
    rows = add(mul(phys, bs), tail)  # [1, n]
    n = iv.shape[1]
    valid = None if iv.valid_shape is None else [iv.valid_shape[1], 1]
    col = reshape(rows, [n, 1], valid_shape=valid)
    base = mul(col, cols if stride is None else stride)
    lanes = reshape(arange(size, dtype=iv.dtype), [1, size])
    return add(base, lanes)


def _view_root(tr: Any, v: Any) -> Tuple[Any, Any, Any]:
    """The tensor a 2-D view chain starts from and the window's (row, column) there: a
    gather's row numbers count from the view's first row, and the rows it reads may lie past
    the view's own extent (DeepSeek-V4's sparse attention views the first top-k rows of its
    compressed cache and gathers pages from all of it)."""
    rows: Any = 0
    cols: Any = 0
    while v.id in tr.view_of:
        src, offs = tr.view_of[v.id]
        if src.rank != 2 or src.dtype is not v.dtype or not isinstance(src.shape[1], int):
            break
        rows, cols = as_expr(rows) + offs[0], as_expr(cols) + offs[1]
        v = src
    return v, rows, cols


def _paged_load(api: str, src: Tensor, indices: Tensor, block_table: Tensor, block_size: Any,
                size: int) -> Tensor:
    """``load`` of the paged rows, its element offsets tiled so that an offsets tile takes
    no more bytes than the data tile the kernel sized: PyPTO's gather moves the rows
    themselves, the offsets are only how this IR says which (an int32 [128, 512] offsets
    tile beside a bf16 data tile of the same shape would be twice the kernel's UB share)."""
    tr = _tr(api)
    root, rows, cols = _view_root(tr, _val(src, api, "src"))
    tile = tr.top.vec_tile
    ratio = _val(indices, api, "indices").dtype.bits // max(8, _val(src, api, "src").dtype.bits)
    if tile and ratio > 1:
        scaled = list(tile)
        for axis in range(len(scaled)):  # leading axes first: rows shrink before columns
            while ratio > 1 and scaled[axis] % 2 == 0:
                scaled[axis] //= 2
                ratio //= 2
        tile = tuple(scaled)
    with _vec_tile_within(tr, tile):
        offsets = _paged_offsets(api, src, indices, block_table, block_size, size, root.shape[1])
        start = const_value(as_expr(rows) * root.shape[1] + cols)
        if start != 0:
            offsets = add(offsets, as_expr(rows) * root.shape[1] + cols)
        return load(_wrap(root), offsets)


def gather_in_ub(param: Tensor, indices: Tensor, block_table: Tensor, block_size: int,
                 axis: int) -> Tensor:
    """The rows of ``param`` (a KV cache [tokens, hidden], DT_FP32/DT_FP16) that the token
    ids ``indices`` ([1, k], e.g. a top-k's indices) name through the PagedAttention page table
    ``block_table`` ([1, blocks]; token t is row block_table[t // block_size] * block_size +
    t % block_size): a [k, hidden] tensor. ``axis`` must be -2. The vec tile tiles the
    result."""
    api = "experimental.gather_in_ub"
    _tr(api)
    if isinstance(axis, bool) or axis != -2:
        _fail(PyptoValueError, api, f"axis must be -2, got {short_repr(axis)}")
    pv = _val(param, api, "param")
    if pv.rank != 2:
        _fail(PyptoValueError, api, f"param must be 2-D, got {_fmt(pv.shape)}")
    hidden = pv.shape[1]
    if not isinstance(hidden, int):
        _fail(PyptoValueError, api, f"param's hidden size must be static, got {hidden}")
    return _paged_load(api, param, indices, block_table, block_size, hidden)


def gather_in_l1(src: Tensor, indices: Tensor, block_table: Tensor, block_size: int, size: int,
                 is_b_matrix: bool, is_trans: bool) -> Tensor:
    """The first ``size`` elements of the rows of ``src`` [rows, cols] that ``indices`` [1, n]
    name through the page table ``block_table`` (as gather_in_ub): an [n, size] tensor.
    ``is_b_matrix``/``is_trans`` say how PyPTO lays the tile out in L1 for the matmul that
    reads it (that matmul's a_trans/b_trans still say how it reads it); the values are
    the same."""
    api = "experimental.gather_in_l1"
    _tr(api)
    for name, flag in (("is_b_matrix", is_b_matrix), ("is_trans", is_trans)):
        if not isinstance(flag, bool):
            _fail(PyptoTypeError, api, f"{name} must be a bool, got {short_repr(flag)}")
    n = _int_arg(api, "size", size)
    return _paged_load(api, src, indices, block_table, block_size, n)


_TBMM_DTYPES = (DataType.DT_FP16, DataType.DT_BF16)


def transposed_batchmatmul(tensor_a: Tensor, tensor_b: Tensor, out_dtype: DataType) -> Tensor:
    """``tensor_a`` (M, B, K) transposed to (B, M, K), times ``tensor_b`` (B, K, N) batch by
    batch on the cube unit, the (B, M, N) product transposed back: an (M, B, N) tensor of
    ``out_dtype``. Operands and result DT_FP16/DT_BF16; needs pypto.set_cube_tile_shapes."""
    api = "experimental.transposed_batchmatmul"
    _tr(api)
    av = _val(tensor_a, api, "tensor_a")
    bv = _val(tensor_b, api, "tensor_b")
    odt = _dtype_arg(out_dtype, api)
    for name, v in (("tensor_a", av), ("tensor_b", bv)):
        if v.rank != 3:
            _fail(PyptoValueError, api, f"{name} must be 3-D, got {_fmt(v.shape)}")
        if v.dtype not in _TBMM_DTYPES:
            _fail(PyptoTypeError, api, f"{name} must be DT_FP16 or DT_BF16, got {v.dtype}")
    if odt not in _TBMM_DTYPES:
        _fail(PyptoTypeError, api, f"out_dtype must be DT_FP16 or DT_BF16, got {odt}")
    if _dim_eq(av.shape[1], bv.shape[0]) is False or _dim_eq(av.shape[2], bv.shape[1]) is False:
        _fail(PyptoValueError, api, f"tensor_a (M, B, K) = {_fmt(av.shape)} and tensor_b "
              f"(B, K, N) = {_fmt(bv.shape)} disagree on B or K")
    return transpose(matmul(transpose(tensor_a, 0, 1), tensor_b, odt), 0, 1)


_ONLINE = "block-wise online softmax"


def _online_operand(api: str, name: str, t: Any, rows: Any = None) -> Any:
    """A DT_FP32 2-D operand of the online softmax ops (``rows``: its first size when given)."""
    v = _val(t, api, name)
    if v.dtype is not DataType.DT_FP32 or v.rank != 2:
        _fail(PyptoTypeError, api, f"{name} must be a 2-D DT_FP32 tensor, got {v.dtype} "
              f"{_fmt(v.shape)}")
    if rows is not None and _dim_eq(v.shape[0], rows) is not True:
        _fail(PyptoValueError, api, f"{name} must have {rows} row(s), got {_fmt(v.shape)}")
    return v


def _whole_first_axis(api: str, name: str, rows: Any) -> None:
    """PyPTO's rule: these ops do not cut axis 0, so the vec tile's first size covers it."""
    tile = get_vec_tile_shapes()
    if len(tile) != 2:
        _fail(PyptoValueError, api, f"needs a 2-D vector tile (pypto.set_vec_tile_shapes), "
              f"got {tile or 'none'}")
    if isinstance(rows, int) and rows > tile[0]:
        _fail(PyptoValueError, api, f"PyPTO's rule {name}.shape[0] <= vec_tile[0] (axis 0 is "
              f"not cut): {name}.shape[0] = {rows}, vec_tile[0] = {tile[0]}")


def online_softmax(scores: Tensor, scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    """The local statistics of one block of a column-wise softmax (the Ascend 950 only):
    with ``s = scores * scale`` over ``scores`` [k_len, q_len] (DT_FP32), returns
    ``exp(s - column_max)`` as DT_BF16, ``column_max`` [1, q_len] and ``column_sum``
    [1, q_len] (of the fp32 exponentials). Axis 0 stays whole: ``scores.shape[0] <=
    vec_tile[0]``.

    Example: ``e, m, l = pypto.experimental.online_softmax(scores, 1.0 / 128 ** 0.5)``."""
    api = "experimental.online_softmax"
    _tr(api)
    _require_950(api, _ONLINE)
    sv = _online_operand(api, "scores", scores)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        _fail(PyptoTypeError, api, f"scale must be a float, got {short_repr(scale)}")
    _whole_first_axis(api, "scores", sv.shape[0])
    s = mul(scores, float(scale))
    column_max = amax(s, 0, keepdim=True)
    e = exp(sub(s, column_max))
    return cast(e, DataType.DT_BF16), column_max, _sum(e, 0, keepdim=True)


def online_softmax_update(previous_max: Tensor, previous_sum: Tensor, previous_output: Tensor,
                          current_max: Tensor, current_sum: Tensor,
                          current_output: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Merges a block's online softmax state into the running one (the Ascend 950 only):
    ``m = max(previous_max, current_max)``, ``a = exp(previous_max - m)``,
    ``b = exp(current_max - m)``; returns ``(m, previous_sum * a + current_sum * b,
    previous_output * a + current_output * b)``. Maxima and sums are [1, q_len], the outputs
    [head_dim, q_len], all DT_FP32; ``previous_output.shape[0] <= vec_tile[0]``."""
    api = "experimental.online_softmax_update"
    _tr(api)
    _require_950(api, _ONLINE)
    po = _online_operand(api, "previous_output", previous_output)
    co = _online_operand(api, "current_output", current_output)
    if any(_dim_eq(x, y) is not True for x, y in zip(po.shape, co.shape)):
        _fail(PyptoValueError, api, f"current_output {_fmt(co.shape)} must have "
              f"previous_output's shape {_fmt(po.shape)}")
    for name, t in (("previous_max", previous_max), ("previous_sum", previous_sum),
                    ("current_max", current_max), ("current_sum", current_sum)):
        v = _online_operand(api, name, t, 1)
        if _dim_eq(v.shape[1], po.shape[1]) is not True:
            _fail(PyptoValueError, api, f"{name} must be [1, {po.shape[1]}] (q_len), got "
                  f"{_fmt(v.shape)}")
    _whole_first_axis(api, "previous_output", po.shape[0])
    m = maximum(previous_max, current_max)
    a = exp(sub(previous_max, m))
    b = exp(sub(current_max, m))
    return (m, add(mul(previous_sum, a), mul(current_sum, b)),
            add(mul(previous_output, a), mul(current_output, b)))
