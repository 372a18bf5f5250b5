# SPDX-License-Identifier: Apache-2.0
"""Layout conversions recorded as reshapes, permutes and views (composites): ``pack`` (a
tensor's bytes as DT_UINT8) and ``transdata`` (NCHW weights to PyPTO's Fractal_Z layout).

Both follow PyPTO's API pages (docs/zh/api/operation/pypto-pack.md, pypto-transdata.md);
transdata makes NCHW -> NC1HWC0, NCHW -> Fractal_Z, NC1HWC0 -> NCHW and NCDHW -> Fractal_Z_3D;
NDC1HWC0's 6-D tensors are past the compiler's rank limit and raise.
"""

from __future__ import annotations

import numbers
from typing import Any, List

from .. import ir
from .._dtypes import DataType
from .._enums import TileOpFormat
from .._errors import PyptoNotImplementedError, PyptoTypeError, PyptoValueError
from .._limits import RANK_LIMIT_TEXT
from .common import _fail, _fmt, _tr, _val
from .composites import _Composite
from .movement import concat, permute, reshape, view

__all__ = ["pack", "transdata"]

#: The dtypes PyPTO's pack takes (its page's list).
_PACK_DTYPES = (DataType.DT_BF16, DataType.DT_FP16, DataType.DT_FP32, DataType.DT_INT64,
                DataType.DT_UINT64, DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_INT16,
                DataType.DT_UINT16, DataType.DT_INT8, DataType.DT_UINT8)

#: The dtypes PyPTO's transdata takes (its page's list).
_TRANSDATA_DTYPES = (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_INT8, DataType.DT_INT16,
                     DataType.DT_INT32, DataType.DT_FP32)

_INT32_MAX = 2**31 - 1

#: Fractal_Z's N0: the cube's output-channel block.
_N0 = 16


def _static_shape(api: str, xv: ir.Value) -> List[int]:
    """``xv``'s shape as ints; PyPTO's rules on it: not empty, at most INT32_MAX elements."""
    if not all(isinstance(d, numbers.Integral) for d in xv.shape):
        _fail(PyptoValueError, api, f"needs a static shape, got {_fmt(xv.shape)}")
    shape = [int(d) for d in xv.shape]
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        _fail(PyptoValueError, api, f"does not take an empty tensor, got {_fmt(shape)}")
    if n > _INT32_MAX:
        _fail(PyptoValueError, api, f"takes at most {_INT32_MAX} (INT32_MAX) elements, got "
              f"{n} in {_fmt(shape)}")
    return shape


def _vec_tile_rank(api: str, rank: int) -> List[int]:
    """The vec tile shape in force; PyPTO: it has the input's rank."""
    tile = _tr(api).top.vec_tile
    if tile is None:
        _fail(PyptoValueError, api, "needs vector tile shapes: call "
              "pypto.set_vec_tile_shapes(...) with one size per input axis before it")
    if len(tile) != rank:
        _fail(PyptoValueError, api, f"the vec tile shape {list(tile)} must have the input's "
              f"{rank} axes")
    return list(tile)


def pack(self: Any) -> Any:
    """PyPTO's pack: ``self`` flattened to 1-D and its bytes read as DT_UINT8 (little-endian, so
    an element's low byte comes first); the result has ``numel * bytes_of(dtype)`` elements.
    ``torch``: ``x.contiguous().view(-1).view(torch.uint8)``.

    Example::

        pypto.set_vec_tile_shapes(4, 16)
        y = pypto.pack(x)          # x: [1, 2] DT_INT32 -> y: [8] DT_UINT8
    """
    api = "pack"
    xv = _val(self, api)
    if xv.dtype not in _PACK_DTYPES:
        _fail(PyptoTypeError, api, f"input dtype {xv.dtype} is not one PyPTO packs (expected "
              f"one of {', '.join(str(d) for d in _PACK_DTYPES)})")
    if xv.format is TileOpFormat.TILEOP_NZ:
        _fail(PyptoValueError, api, "does not take a TILEOP_NZ tensor (PyPTO's constraint); "
              "pass an ND tensor")
    if not 1 <= xv.rank <= 4:
        _fail(PyptoValueError, api, f"takes 1-D to 4-D tensors, got {_fmt(xv.shape)}")
    shape = _static_shape(api, xv)
    _vec_tile_rank(api, xv.rank)
    n = 1
    for d in shape:
        n *= d
    with _Composite(api):
        flat = reshape(self, [n]) if xv.rank != 1 else self
        return view(flat, [n], [0], dtype=DataType.DT_UINT8)


def _fractal_z(x: Any, shape: List[int], c0: int, group: int) -> Any:
    """NCHW weights ``[N, C, H, W]`` (N = group x per-group outputs, C the per-group inputs)
    as Fractal_Z ``[group*C1*H*W, N1, N0, C0]``: group g's block holds
    ``out[(c1*H + h)*W + w, n1, n0, c0] = x[g*N/group + n1*N0 + n0, c1*C0 + c0, h, w]``."""
    n, c, h, w = shape
    ng = n // group
    c1, n1 = c // c0, ng // _N0
    blocks = []
    for g in range(group):
        xg = x if group == 1 else view(x, [ng, c, h, w], [g * ng, 0, 0, 0])
        # [N, C1, C0, HW] -> [C1, HW, N, C0]: the cube's weight fractals, C0 innermost.
        t = permute(reshape(xg, [ng, c1, c0, h * w]), [1, 3, 0, 2])
        blocks.append(reshape(t, [c1 * h * w, n1, _N0, c0]))
    return blocks[0] if group == 1 else concat(blocks, 0)


def _fractal_z_3d(x: Any, shape: List[int], c0: int, group: int) -> Any:
    """NCDHW weights ``[N, C, D, H, W]`` as Fractal_Z_3D ``[group*D*C1*H*W, N1, N0, C0]``
    (CANN's (D, C1, H, W, N1, N0, C0)): group g's block holds ``out[((d*C1 + c1)*H + h)*W + w,
    n1, n0, c0] = x[g*N/group + n1*N0 + n0, c1*C0 + c0, d, h, w]``."""
    n, c, d, h, w = shape
    ng = n // group
    c1, n1 = c // c0, ng // _N0
    blocks = []
    for g in range(group):
        xg = x if group == 1 else view(x, [ng, c, d, h, w], [g * ng, 0, 0, 0, 0])
        # [N, C1, C0, D, HW] -> [D, C1, HW, N, C0] (H and W stay together: five axes at most).
        t = permute(reshape(xg, [ng, c1, c0, d, h * w]), [3, 1, 4, 0, 2])
        blocks.append(reshape(t, [d * c1 * h * w, n1, _N0, c0]))
    return blocks[0] if group == 1 else concat(blocks, 0)


def _nc1hwc0(x: Any, shape: List[int], c0: int) -> Any:
    """NCHW ``[N, C, H, W]`` as NC1HWC0 ``[N, C1, H, W, C0]``: ``out[n, c1, h, w, c0] =
    x[n, c1*C0 + c0, h, w]``."""
    n, c, h, w = shape
    return permute(reshape(x, [n, c // c0, c0, h, w]), [0, 1, 3, 4, 2])


def _nchw_of_nc1hwc0(x: Any, shape: List[int]) -> Any:
    """NC1HWC0 ``[N, C1, H, W, C0]`` back to NCHW ``[N, C1*C0, H, W]``."""
    n, c1, h, w, c0 = shape
    return reshape(permute(x, [0, 1, 4, 2, 3]), [n, c1 * c0, h, w])


def _tile_checks(api: str, fmt: TileOpFormat, tile: List[int], c0: int, nbytes: int,
                 n_axis: int, c_axis: int, w_axis: int) -> None:
    """PyPTO's tile rules of a conversion (its page's table): N in N0 blocks (n_axis >= 0), C in
    C0 blocks (c_axis >= 0), W in 32 bytes."""
    rules = []
    if n_axis >= 0 and tile[n_axis] % _N0:
        rules.append(f"N a multiple of N0 = {_N0}")
    if c_axis >= 0 and tile[c_axis] % c0:
        rules.append(f"C a multiple of C0 = {c0}")
    if (tile[w_axis] * nbytes) % 32:
        rules.append(f"W a multiple of 32 bytes ({32 // nbytes} elements)")
    if rules:
        _fail(PyptoValueError, api, f"{fmt.name}: the vec tile shape {tile} must have "
              f"{', '.join(rules)}")


#: The conversion whose tensors pass the compiler's rank limit.
_SIX_D = {
    TileOpFormat.TILEOP_NDC1HWC0: "NCDHW -> NDC1HWC0 gives a 6-D [N, D, C1, H, W, C0] tensor",
}


def transdata(input: Any, transDataType: Any, group: int = 1) -> Any:  # noqa: A002,N803
    """PyPTO's transdata on A2/A3: converts a tensor to the layout ``transDataType`` names,
    with ``C0`` the elements of 32 bytes and ``N0 = 16`` (PyPTO pads nothing: C a multiple of
    C0, N / group a multiple of N0 where N is blocked):

    * ``TILEOP_NC1HWC0``: NCHW ``[N, C, H, W]`` to ``[N, C1, H, W, C0]``;
    * ``TILEOP_FRACTAL_Z``: NCHW convolution weights (``group`` groups of ``N / group`` output
      channels) to ``[group*C1*H*W, N1, 16, C0]``;
    * ``TILEOP_FRACTAL_Z_3D``: NCDHW weights to ``[group*D*C1*H*W, N1, 16, C0]``;
    * ``TILEOP_ND``: NC1HWC0 ``[N, C1, H, W, C0]`` back to NCHW ``[N, C1*C0, H, W]``.

    ``TILEOP_NDC1HWC0`` (and ND back from it) has 6-D tensors and raises
    PyptoNotImplementedError. The vec tile shape has the input's rank (PyPTO's rules per
    conversion: N in N0 blocks, C in C0 blocks, W in 32 bytes, C0 not split).

    Example::

        pypto.set_vec_tile_shapes(16, 16, 3, 16)
        wz = pypto.transdata(w, pypto.TileOpFormat.TILEOP_FRACTAL_Z)   # w: [32, 16, 3, 3] fp16
    """
    api = "transdata"
    xv = _val(input, api)
    if not isinstance(transDataType, TileOpFormat):
        _fail(PyptoTypeError, api, f"transDataType must be a pypto.TileOpFormat, got "
              f"{type(transDataType).__name__} {transDataType!r}")
    if isinstance(group, bool) or not isinstance(group, numbers.Integral) or group < 1:
        _fail(PyptoValueError, api, f"group must be a positive int, got {group!r}")
    if xv.dtype not in _TRANSDATA_DTYPES:
        _fail(PyptoTypeError, api, f"input dtype {xv.dtype} is not one PyPTO converts "
              f"(expected one of {', '.join(str(d) for d in _TRANSDATA_DTYPES)})")
    if transDataType in _SIX_D:
        _fail(PyptoNotImplementedError, api, f"{transDataType.name}: {_SIX_D[transDataType]}; "
              f"pypto-sim's compiler holds tensors of {RANK_LIMIT_TEXT}")
    fmt = transDataType
    ranks = {TileOpFormat.TILEOP_NC1HWC0: 4, TileOpFormat.TILEOP_FRACTAL_Z: 4,
             TileOpFormat.TILEOP_FRACTAL_Z_3D: 5, TileOpFormat.TILEOP_ND: 5}
    if fmt not in ranks:
        _fail(PyptoValueError, api, f"{fmt.name} is not a conversion PyPTO's transdata makes "
              "(TILEOP_NC1HWC0, TILEOP_FRACTAL_Z, TILEOP_NDC1HWC0, TILEOP_FRACTAL_Z_3D or "
              "TILEOP_ND)")
    layout = {TileOpFormat.TILEOP_NC1HWC0: "NCHW", TileOpFormat.TILEOP_FRACTAL_Z: "NCHW",
              TileOpFormat.TILEOP_FRACTAL_Z_3D: "NCDHW", TileOpFormat.TILEOP_ND: "NC1HWC0"}
    if xv.rank != ranks[fmt]:
        hint = (" (ND back from NDC1HWC0 would take a 6-D one)"
                if fmt is TileOpFormat.TILEOP_ND else "")
        _fail(PyptoValueError, api, f"{fmt.name} converts a {ranks[fmt]}-D {layout[fmt]} "
              f"tensor, got {_fmt(xv.shape)}{hint}")
    if fmt is not TileOpFormat.TILEOP_ND and xv.format is not TileOpFormat.TILEOP_ND:
        _fail(PyptoValueError, api, f"{fmt.name} converts an ND tensor, got {xv.format}")
    shape = _static_shape(api, xv)
    tile = _vec_tile_rank(api, ranks[fmt])
    nbytes = xv.dtype.bits // 8
    c0 = 32 // nbytes
    if fmt is TileOpFormat.TILEOP_ND:
        if shape[4] != c0:
            _fail(PyptoValueError, api, f"TILEOP_ND converts an NC1HWC0 tensor, whose last axis "
                  f"is C0 = {c0} for {xv.dtype}; got {_fmt(shape)}")
        _tile_checks(api, fmt, tile, c0, nbytes, -1, -1, 3)
        if tile[4] != c0:
            _fail(PyptoValueError, api, f"TILEOP_ND: the vec tile shape {tile} must not split "
                  f"C0 (its last size must be {c0})")
        with _Composite(api):
            return _nchw_of_nc1hwc0(input, shape)
    n, c = shape[0], shape[1]
    blocked_n = fmt is not TileOpFormat.TILEOP_NC1HWC0
    _tile_checks(api, fmt, tile, c0, nbytes, 0 if blocked_n else -1, 1, ranks[fmt] - 1)
    grouped = n if blocked_n else c
    if grouped % group:
        _fail(PyptoValueError, api, f"group {group} must divide {'N' if blocked_n else 'C'} = "
              f"{grouped} (the input's axis {0 if blocked_n else 1})")
    if blocked_n and (n // group) % _N0:
        _fail(PyptoValueError, api, f"N / group = {n // group} must be a multiple of N0 = "
              f"{_N0} (PyPTO's transdata does not pad)")
    if c % c0 or (not blocked_n and (c // group) % c0):
        per = "C" if blocked_n else "C / group"
        _fail(PyptoValueError, api, f"{per} = {c if blocked_n else c // group} must be a "
              f"multiple of C0 = {c0} for {xv.dtype} (32 bytes; PyPTO's transdata does not pad)")
    with _Composite(api):
        if fmt is TileOpFormat.TILEOP_NC1HWC0:
            return _nc1hwc0(input, shape, c0)
        if fmt is TileOpFormat.TILEOP_FRACTAL_Z_3D:
            return _fractal_z_3d(input, shape, c0, group)
        return _fractal_z(input, shape, c0, group)
