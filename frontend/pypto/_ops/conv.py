# SPDX-License-Identifier: Apache-2.0
"""Convolution as PyPTO exposes it: ``conv`` (1-D, 2-D and 3-D; strides, paddings,
dilations, groups, a bias in extend_params) and its tile shapes ``set_conv_tile_shapes`` /
``get_conv_tile_shapes`` with ``pypto_impl.TileL1Info`` / ``TileL0Info``.

A convolution is a matmul on the cube unit over the image's img2col matrix, as PyPTO's
load3d builds it from the feature map in L1: for each batch and group, ``[P, K] x [K, Cout_g]``
with P the output positions and K = Cin_g x the kernel's elements. Here the img2col rows are
read from the (padded) feature map in global memory with ``load`` (one element per (position,
kernel offset)), so the cube sees the same operands and accumulates the same products in the
same K order; the L1 tile shapes become the matmul's cube tile (m = tileHout x tileWout
positions, k = kAL1, n = tileN) and the conv's own buffer rules replace the matmul's.
docs/convolution.md says what differs from the board (the L1 copy of the feature map).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Optional, Sequence, Tuple

from .. import ir
from .._dtypes import DataType, bytes_of
from .._enums import ReLuType
from .._errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from .._platform import ARCH_950, platform
from ..error import short_repr
from .._tensor import Tensor
from .common import _emit, _fail, _fmt, _tr, _val, _wrap
from .creation import _dtype_arg, arange
from .elementwise import add, floor_div, mul, sub
from .movement import concat, reshape, transpose, view

_CONV_DTYPES = (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)
# PyPTO's bias dtypes per input dtype: on A2/A3 a bf16 convolution takes an fp32 bias, the
# others their own dtype; on the 950 every dtype its own.
_BIAS_A2_A3 = {DataType.DT_FP16: DataType.DT_FP16, DataType.DT_BF16: DataType.DT_FP32,
               DataType.DT_FP32: DataType.DT_FP32}


def _pos_int(api: str, name: str, v: Any, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        _fail(PyptoValueError, api, f"{name} must be an int >= {lo}, got {short_repr(v)}")
    return int(v)


class TileL1Info:
    """The L1 tile of a convolution (PyPTO's ``pypto_impl.TileL1Info``): input rows/columns
    (tileHin, tileWin), output rows/columns (tileHout, tileWout), input channels of the feature
    map and of the weight (tileCinFmap, tileCinWeight), output channels (tileN) and the batch
    (tileBatch, always 1). Positional order as PyPTO's constructor."""

    _FIELDS = ("tileHin", "tileHout", "tileWin", "tileWout", "tileCinFmap", "tileCinWeight",
               "tileN", "tileBatch")

    def __init__(self, tileHin: int = 1, tileHout: int = 1, tileWin: int = 1,  # noqa: N803
                 tileWout: int = 16, tileCinFmap: int = 16, tileCinWeight: int = 16,  # noqa: N803
                 tileN: int = 16, tileBatch: int = 1, *, tileCout: Optional[int] = None):  # noqa: N803
        if tileCout is not None:  # an older spelling: tileCout the channels, tileN the batch
            tileN, tileBatch = tileCout, tileN
        vals = (tileHin, tileHout, tileWin, tileWout, tileCinFmap, tileCinWeight, tileN,
                tileBatch)
        for name, v in zip(self._FIELDS, vals):
            setattr(self, name, _pos_int("pypto_impl.TileL1Info", name, v))

    def __repr__(self) -> str:
        return "TileL1Info(" + ", ".join(f"{f}={getattr(self, f)}" for f in self._FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TileL1Info) and repr(self) == repr(other)


class TileL0Info:
    """The L0 tile of a convolution (PyPTO's ``pypto_impl.TileL0Info``): output rows and
    columns (tileH, tileW; tileH x tileW rows of L0A), the reduction depth tileK and the output
    channels tileN."""

    _FIELDS = ("tileH", "tileW", "tileK", "tileN")

    def __init__(self, tileH: int = 1, tileW: int = 16, tileK: int = 16,  # noqa: N803
                 tileN: int = 16):  # noqa: N803
        for name, v in zip(self._FIELDS, (tileH, tileW, tileK, tileN)):
            setattr(self, name, _pos_int("pypto_impl.TileL0Info", name, v))

    def __repr__(self) -> str:
        return "TileL0Info(" + ", ".join(f"{f}={getattr(self, f)}" for f in self._FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TileL0Info) and repr(self) == repr(other)


def set_conv_tile_shapes(tile_l1_info: TileL1Info, tile_l0_info: Optional[TileL0Info] = None
                         ) -> None:
    """Tile shapes of the convolutions that follow in this scope (required before
    ``pypto.conv``). Without ``tile_l0_info`` the L0 tile is chosen from the L1 tile
    (get_conv_tile_shapes then reports the L0 switch off)."""
    api = "set_conv_tile_shapes"
    tr = _tr(api)
    if not isinstance(tile_l1_info, TileL1Info):
        _fail(PyptoTypeError, api, f"tile_l1_info must be a pypto_impl.TileL1Info, got "
              f"{short_repr(tile_l1_info)}")
    if tile_l0_info is not None and not isinstance(tile_l0_info, TileL0Info):
        _fail(PyptoTypeError, api, f"tile_l0_info must be a pypto_impl.TileL0Info or None, got "
              f"{short_repr(tile_l0_info)}")
    if tile_l1_info.tileBatch != 1:
        _fail(PyptoValueError, api, f"PyPTO's rule tileBatch == 1 (the batch is looped over): "
              f"tileBatch = {tile_l1_info.tileBatch} in TileL1Info")
    tr.top.conv_tile = (tile_l1_info, tile_l0_info)


def get_conv_tile_shapes() -> Tuple[TileL1Info, TileL0Info, bool]:
    """The conv tile shapes in force: (L1 info, L0 info, whether an L0 info was given); the
    defaults of TileL1Info/TileL0Info when none were set."""
    tr = _tr("get_conv_tile_shapes")
    if tr.top.conv_tile is None:
        return TileL1Info(), TileL0Info(), False
    l1, l0 = tr.top.conv_tile
    return l1, (l0 if l0 is not None else TileL0Info()), l0 is not None


def _ceil_align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def _int_list(api: str, name: str, v: Any, n: int, lo: int, hi: int) -> List[int]:
    if not isinstance(v, (list, tuple)) or len(v) != n:
        _fail(PyptoValueError, api, f"{name} must list {n} ints for this convolution, got "
              f"{short_repr(v)}")
    out = []
    for x in v:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not lo <= x <= hi:
            _fail(PyptoValueError, api, f"{name} entries must be ints in [{lo}, {hi}], got "
                  f"{short_repr(v)}")
        out.append(int(x))
    return out


def _rule(api: str, ok: bool, rule: str, values: str, where: str) -> None:
    if not ok:
        _fail(PyptoValueError, api, f"the conv tile breaks PyPTO's rule {rule}: {values} "
              f"({where}); choose other pypto.set_conv_tile_shapes")


def _check_tiles(api: str, l1: TileL1Info, l0: TileL0Info, eb: int, c0: int, hin: int,
                 win: int, hout: int, wout: int, cin: int, cout_g: int, kernel: int) -> None:
    """PyPTO's range and alignment rules of set_conv_tile_shapes
    (docs/zh/api/config/pypto-set_conv_tile_shapes.md); the buffer rules are the compiler's."""
    L1, L0 = "TileL1Info", "TileL0Info"
    _rule(api, l1.tileHin <= hin, "1 <= tileHin <= Hin", f"tileHin = {l1.tileHin}, Hin = {hin}",
          L1)
    _rule(api, l1.tileWin <= win, "1 <= tileWin <= Win", f"tileWin = {l1.tileWin}, Win = {win}",
          L1)
    _rule(api, l1.tileWout % 16 == 0 and l1.tileWout <= _ceil_align(wout, 16),
          "tileWout % 16 == 0 and tileWout <= CeilAlign(Wout, 16)",
          f"tileWout = {l1.tileWout}, Wout = {wout}", L1)
    if wout % 16 == 0:
        _rule(api, l1.tileHout <= hout, "1 <= tileHout <= Hout (Wout % 16 == 0)",
              f"tileHout = {l1.tileHout}, Hout = {hout}", L1)
    else:
        _rule(api, l1.tileHout == 1, "tileHout == 1 when Wout % 16 != 0",
              f"tileHout = {l1.tileHout}, Wout = {wout}", L1)
    for name in ("tileCinFmap", "tileCinWeight"):
        v = getattr(l1, name)
        _rule(api, v <= cin and v * eb % 32 == 0,
              f"1 <= {name} <= Cin and {name} x sizeof(dtype) % 32 == 0",
              f"{name} = {v} ({v * eb} bytes), Cin = {cin}", L1)
    _rule(api, l1.tileN % 16 == 0 and l1.tileN <= _ceil_align(cout_g, 16),
          "tileN % 16 == 0 and tileN <= CeilAlign(Cout / groups, 16)",
          f"tileN = {l1.tileN}, Cout / groups = {cout_g}", L1)
    k_al1 = _ceil_align(l1.tileCinFmap * kernel, c0)
    k_bl1 = _ceil_align(l1.tileCinWeight * kernel, c0)
    _rule(api, c0 <= l0.tileK <= min(k_al1, k_bl1) and l0.tileK % c0 == 0 and
          k_al1 % l0.tileK == 0 and k_bl1 % l0.tileK == 0,
          "C0 <= tileK <= min(kAL1, kBL1), tileK % C0 == 0, kAL1 % tileK == 0 and "
          "kBL1 % tileK == 0 (kAL1 = CeilAlign(tileCinFmap x kernel, C0), kBL1 likewise)",
          f"tileK = {l0.tileK}, C0 = {c0}, kAL1 = {k_al1}, kBL1 = {k_bl1}", L0)
    _rule(api, l0.tileW % 16 == 0 and l0.tileW <= l1.tileWout and l1.tileWout % l0.tileW == 0,
          "tileW % 16 == 0, tileW <= tileWout and tileWout % tileW == 0",
          f"tileW = {l0.tileW}, tileWout = {l1.tileWout}", L0)
    _rule(api, l0.tileH <= l1.tileHout and l1.tileHout % l0.tileH == 0,
          "tileH <= tileHout and tileHout % tileH == 0",
          f"tileH = {l0.tileH}, tileHout = {l1.tileHout}", L0)
    _rule(api, l0.tileN % 16 == 0 and l0.tileN <= l1.tileN,
          "tileN % 16 == 0 and tileN <= TileL1Info.tileN",
          f"tileN = {l0.tileN}, TileL1Info.tileN = {l1.tileN}", L0)


def _default_l0(l1: TileL1Info, c0: int, eb: int, kernel: int) -> TileL0Info:
    """PyPTO's L0 switch off: one output row of tileWout positions, all of tileN, and the
    deepest tileK (a multiple of C0 dividing kAL1 and kBL1) whose L0A/L0B tiles hold 32 KiB."""
    k_al1 = _ceil_align(l1.tileCinFmap * kernel, c0)
    k_bl1 = _ceil_align(l1.tileCinWeight * kernel, c0)
    g = math.gcd(k_al1, k_bl1)
    m = _ceil_align(l1.tileWout, 16)
    n = _ceil_align(l1.tileN, 16)
    best = c0
    for k in range(c0, g + 1, c0):
        if g % k == 0 and max(m, n) * k * eb <= 32 * 1024:
            best = k
    return TileL0Info(1, l1.tileWout, best, l1.tileN)


class _VecTile:
    """Sets the vector tile of the internal ops of a conv (the kernel's own is restored)."""

    def __init__(self, tr: Any):
        self.tr = tr

    def __enter__(self):
        self.saved = self.tr.top.vec_tile
        return self

    def fit(self, shape: Sequence[int]) -> None:
        # Whole trailing axis up to 256 elements, then rows up to 32 KiB of int64.
        last = min(int(shape[-1]), 256)
        tile = [1] * (len(shape) - 1) + [last]
        if len(shape) >= 2:
            tile[-2] = max(1, min(int(shape[-2]), 4096 // last))
        self.tr.top.vec_tile = tuple(tile)

    def __exit__(self, *exc):
        self.tr.top.vec_tile = self.saved
        return False


def _digits(idx: Tensor, sizes: Sequence[int]) -> List[Tensor]:
    """The mixed-radix digits of ``idx`` (row-major over ``sizes``), most significant first."""
    out = []
    rest = idx
    for i in range(len(sizes)):
        inner = math.prod(sizes[i + 1:])
        d = floor_div(rest, inner) if inner > 1 else rest
        out.append(d)
        if inner > 1:
            rest = sub(rest, mul(d, inner))
    return out


def conv(input_conv: Tensor, weight: Tensor, out_dtype: DataType, strides: Sequence[int],
         paddings: Sequence[int], dilations: Sequence[int], *, groups: int = 1,
         transposed: bool = False, output_paddings: Sequence[int] = (),
         extend_params: Any = None) -> Tensor:
    """Convolution (torch.nn.functional.conv1d/2d/3d) of ``input_conv`` (NCL, NCHW or NCDHW)
    with ``weight`` (Cout, Cin / groups, *kernel) on the cube unit: ``strides`` and
    ``dilations`` one per spatial axis, ``paddings`` (before, after) per spatial axis in axis
    order, ``extend_params={'bias_tensor': b}`` adds b (Cout,). out_dtype equals the input's
    dtype (DT_FP16, DT_BF16 or DT_FP32). Needs ``pypto.set_conv_tile_shapes`` first."""
    api = "conv"
    tr = _tr(api)
    xv = _val(input_conv, api, "input_conv")
    wv = _val(weight, api, "weight")
    odt = _dtype_arg(out_dtype, api)
    if transposed:
        _fail(PyptoRuntimeError, api, "transposed=True (transposed convolution) is not "
              "supported (PyPTO: not supported yet)")
    if output_paddings:
        _fail(PyptoValueError, api, "output_paddings apply to transposed convolutions only")
    if xv.rank not in (3, 4, 5) or wv.rank != xv.rank:
        _fail(PyptoRuntimeError, api, f"input_conv and weight must both be 3-D, 4-D or 5-D, got "
              f"{_fmt(xv.shape)} and {_fmt(wv.shape)}")
    for name, v in (("input_conv", xv), ("weight", wv)):
        if v.dtype not in _CONV_DTYPES:
            _fail(PyptoValueError, api, f"{name} must be DT_FP16, DT_BF16 or DT_FP32, got "
                  f"{v.dtype}")
        if any(not isinstance(d, int) for d in v.shape):
            _fail(PyptoValueError, api, f"{name} must have static sizes, got {_fmt(v.shape)} "
                  "(loop over a dynamic batch with pypto.view)")
    if wv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"weight must have input_conv's dtype {xv.dtype}, got "
              f"{wv.dtype}")
    if odt is not xv.dtype:
        _fail(PyptoTypeError, api, f"out_dtype must be input_conv's dtype {xv.dtype}, got {odt}")
    nd = xv.rank - 2
    st = _int_list(api, "strides", strides, nd, 1, 63)
    dl = _int_list(api, "dilations", dilations, nd, 1, 63)
    pd = _int_list(api, "paddings", paddings, 2 * nd, 0, 255)
    g = _pos_int(api, "groups", groups)
    if g > 65535:
        _fail(PyptoValueError, api, f"groups must be in [1, 65535], got {g}")
    n, cin, sp = xv.shape[0], xv.shape[1], list(xv.shape[2:])
    cout, cin_g, ker = wv.shape[0], wv.shape[1], list(wv.shape[2:])
    if cin % g or cout % g or cin_g * g != cin:
        _fail(PyptoValueError, api, f"channels: Cin = {cin} and Cout = {cout} must divide by "
              f"groups = {g}, and weight's Cin ({cin_g}) x groups must be Cin")
    for i in range(nd):
        if not (pd[2 * i] < ker[i] and pd[2 * i + 1] < ker[i]):
            _fail(PyptoValueError, api, f"paddings {pd} must be smaller than the kernel "
                  f"{ker} on each axis")
    if nd >= 2 and (ker[-1] > 255 or ker[-2] > 255):
        _fail(PyptoValueError, api, f"Kh and Kw must be <= 255, got kernel {ker}")
    eb = bytes_of(xv.dtype)
    c0 = 32 // eb
    spp = [sp[i] + pd[2 * i] + pd[2 * i + 1] for i in range(nd)]
    outs = [(spp[i] - dl[i] * (ker[i] - 1) - 1) // st[i] + 1 for i in range(nd)]
    if any(o < 1 for o in outs):
        _fail(PyptoValueError, api, f"the output would be empty: input {sp}, paddings {pd}, "
              f"kernel {ker}, dilations {dl}, strides {st}")
    arch = platform.npuarch
    chip_950 = arch == ARCH_950
    if not chip_950 and (cout // g) % c0:
        _fail(PyptoValueError, api, f"PyPTO's rule on A2/A3 ({arch}): Cout / groups is a "
              f"multiple of C0 = 32 bytes / sizeof(dtype): Cout = {cout}, groups = {g}, C0 = "
              f"{c0} ({xv.dtype})")
    bias = None
    if extend_params is not None:
        if not isinstance(extend_params, dict):
            _fail(PyptoTypeError, api, f"extend_params must be a dict, got "
                  f"{type(extend_params).__name__}")
        for key in extend_params:
            if key not in ("bias_tensor", "scale", "scale_tensor", "relu_type"):
                _fail(PyptoValueError, api, f"unknown extend_params key {short_repr(key)}")
        scale = extend_params.get("scale")
        if extend_params.get("scale_tensor") is not None or (
                scale is not None and not (isinstance(scale, numbers.Real) and scale == 0)):
            _fail(PyptoValueError, api, "extend_params scale/scale_tensor: quantized "
                  "convolutions are not supported (PyPTO: not supported yet)")
        relu = extend_params.get("relu_type")
        if relu is not None and relu is not ReLuType.NO_RELU:
            _fail(PyptoValueError, api, f"extend_params['relu_type'] = {short_repr(relu)}: a "
                  "fused ReLU is not supported (PyPTO: not supported yet); apply pypto.relu "
                  "to the result")
        if extend_params.get("bias_tensor") is not None:
            bias = _val(extend_params["bias_tensor"], api, "extend_params['bias_tensor']")
            if list(bias.shape) != [cout]:
                _fail(PyptoValueError, api, f"bias_tensor must have shape [Cout] = [{cout}], "
                      f"got {_fmt(bias.shape)}")
            want = xv.dtype if chip_950 else _BIAS_A2_A3[xv.dtype]
            if bias.dtype is not want:
                _fail(PyptoTypeError, api, f"bias_tensor of {xv.dtype} inputs must be {want} on "
                      f"{arch} (PyPTO's dtype rule), got {bias.dtype}")
    if tr.top.conv_tile is None:
        _fail(PyptoValueError, api, "needs conv tile shapes: call pypto.set_conv_tile_shapes("
              "pypto_impl.TileL1Info(...), pypto_impl.TileL0Info(...)) before it")
    l1, l0 = tr.top.conv_tile
    kernel = math.prod(ker)
    hin, win = (sp[-2] if nd >= 2 else 1), sp[-1]
    hout, wout = (outs[-2] if nd >= 2 else 1), outs[-1]
    if l0 is None:
        l0 = _default_l0(l1, c0, eb, kernel)
    _check_tiles(api, l1, l0, eb, c0, hin, win, hout, wout, cin, cout // g, kernel)
    tiles = _conv_tiles(l1, l0, c0, kernel, sp, ker, st, dl)
    return _wrap(_lower(tr, xv, wv, bias, odt, n, cin, cin_g, cout, g, sp, ker, st, dl, pd,
                        outs, tiles))


def _lower(tr: Any, xv: ir.Value, wv: ir.Value, bias: Optional[ir.Value], odt: DataType,
           n: int, cin: int, cin_g: int, cout: int, g: int, sp: List[int], ker: List[int],
           st: List[int], dl: List[int], pd: List[int], outs: List[int],
           tiles: Tuple[ir.CubeTile, dict], api: str = "conv") -> ir.Value:
    """The img2col matmul of a convolution, per batch and group, with the cube tile and the
    compiler's buffer-rule sizes ``tiles``."""
    from .composites import _Composite, pad
    nd = len(sp)
    kernel = math.prod(ker)
    positions = math.prod(outs)
    kdepth = cin_g * kernel
    cout_g = cout // g
    spp = [sp[i] + pd[2 * i] + pd[2 * i + 1] for i in range(nd)]
    spp_elems = math.prod(spp)
    # Strides of the padded feature map's spatial axes, in elements.
    sstride = [math.prod(spp[i + 1:]) for i in range(nd)]
    total = n * cin * spp_elems
    idt = DataType.DT_INT64 if total >= 2 ** 31 else DataType.DT_INT32
    x = _wrap(xv)
    with _Composite(api), _VecTile(tr) as vt:
        flat = [n * cin] + sp
        vt.fit(flat)
        xr = reshape(x, flat)
        if any(pd):
            torch_pad: List[int] = []
            for i in reversed(range(nd)):
                torch_pad += [pd[2 * i], pd[2 * i + 1]]
            xr = pad(xr, torch_pad)
        # img2col offsets: position p (row) and kernel element q (column) of a batch/group.
        vt.fit([positions])
        o_digits = _digits(arange(positions, dtype=idt), outs)
        row = None
        for i, d in enumerate(o_digits):
            term = mul(d, st[i] * sstride[i])
            row = term if row is None else add(row, term)
        vt.fit([kdepth])
        q = arange(kdepth, dtype=idt)
        c_digit = floor_div(q, kernel) if kernel > 1 else q
        col = mul(c_digit, spp_elems)
        if kernel > 1:
            k_rest = sub(q, mul(c_digit, kernel))
            for i, d in enumerate(_digits(k_rest, ker)):
                col = add(col, mul(d, dl[i] * sstride[i]))
        vt.fit([positions, 1])
        row2 = reshape(row, [positions, 1])
        vt.fit([1, kdepth])
        col2 = reshape(col, [1, kdepth])
        vt.fit([positions, kdepth])
        base = add(row2, col2)
        w2 = reshape(_wrap(wv), [cout, kdepth])
        b2 = None if bias is None else reshape(_wrap(bias), [1, cout])
        per_batch = []
        for b in range(n):
            parts = []
            for gi in range(g):
                vt.fit([positions, kdepth])
                shift = (b * cin + gi * cin_g) * spp_elems
                offs = add(base, shift) if shift else base
                a = _load(tr, xr._value, offs._value)
                wg = w2 if g == 1 else view(w2, [cout_g, kdepth], [gi * cout_g, 0])
                bg = None
                if b2 is not None:
                    bg = b2 if g == 1 else view(b2, [1, cout_g], [0, gi * cout_g])
                y = _cube(tr, a, wg._value, None if bg is None else bg._value, odt, tiles)
                vt.fit([positions, cout_g])
                parts.append(transpose(_wrap(y), 0, 1))
            vt.fit([cout, positions])
            yb = parts[0] if g == 1 else concat(parts, 0)
            per_batch.append(reshape(yb, [1, cout, positions]))
        vt.fit([n, cout, positions])
        y = per_batch[0] if n == 1 else concat(per_batch, 0)
        out = reshape(y, [n, cout] + outs)
    return out._value


def _load(tr: Any, src: ir.Value, offs: ir.Value) -> ir.Value:
    return _emit(tr, "load", [src, offs], {}, offs.shape, src.dtype)


def _conv_tiles(l1: TileL1Info, l0: TileL0Info, c0: int, kernel: int, sp: List[int],
                ker: List[int], st: List[int], dl: List[int]) -> Tuple[ir.CubeTile, dict]:
    """The cube tile of a convolution's matmul (m = output positions, k = the img2col depth,
    n = output channels) and the sizes the compiler's conv buffer rules read."""
    k_al1 = _ceil_align(l1.tileCinFmap * kernel, c0)
    k_bl1 = _ceil_align(l1.tileCinWeight * kernel, c0)
    hin = sp[-2] if len(sp) >= 2 else 1
    kh, sh, dh = (ker[-2], st[-2], dl[-2]) if len(sp) >= 2 else (1, 1, 1)
    hin_l1 = min((l1.tileHout - 1) * sh + (kh - 1) * dh + 1, hin)
    win_l1 = min((l1.tileWout - 1) * st[-1] + (ker[-1] - 1) * dl[-1] + 1, sp[-1])
    if len(sp) == 3:  # one output depth slice per L1 tile: its kernel's input depths
        hin_l1 *= min((ker[0] - 1) * dl[0] + 1, sp[0])
    rules = {"hw_l0": l0.tileH * l0.tileW, "k_l0": l0.tileK, "n_l0": l0.tileN,
             "hin_l1": hin_l1, "win_l1": win_l1, "k_al1": k_al1, "k_bl1": k_bl1,
             "n_l1": l1.tileN, "c0": c0}
    m_l1 = l1.tileHout * l1.tileWout
    cube = ir.CubeTile(m=(l0.tileH * l0.tileW, m_l1), k=(l0.tileK, k_al1, k_bl1),
                       n=(l0.tileN, l1.tileN), enable_split_k=False)
    return cube, rules


def _cube(tr: Any, a: ir.Value, w: ir.Value, bias: Optional[ir.Value], odt: DataType,
          tiles: Tuple[ir.CubeTile, dict]) -> ir.Value:
    """[P, K] x [N, K]^T on the cube with a convolution's tiles; the compiler checks the
    conv's buffer rules."""
    saved = tr.top.cube_tile
    tr.top.cube_tile = tiles[0]
    try:
        attrs = {"a_trans": False, "b_trans": True, "c_matrix_nz": False, "conv": tiles[1]}
        inputs = [a, w]
        if bias is not None:
            attrs["bias"] = True
            inputs.append(bias)
        return _emit(tr, "matmul", inputs, attrs, [a.shape[0], w.shape[0]], odt)
    finally:
        tr.top.cube_tile = saved
