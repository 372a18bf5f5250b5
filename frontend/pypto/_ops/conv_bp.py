# SPDX-License-Identifier: Apache-2.0
"""The input gradient of a 2-D convolution as PyPTO exposes it on A2/A3:
``conv_backward_input`` and its tile shapes ``set_convbp_input_tile_shapes`` with
``pypto_impl.ConvBpTileL1Info`` / ``ConvBpTileL0Info`` (PyPTO does not offer them on the 950).

PyPTO computes it as the matmul ``(HiWi, CoutKhKw) x (CoutKhKw, Cin)``. Here that matmul is
the img2col matmul of pypto.conv over grad_output with zeros inserted between its elements
(stride - 1 per axis) and padded by ``dilation x (K - 1) - padding``, with the kernel turned
half a turn and its channel axes swapped: the same operands, the same K order (Cout, then the
kernel), accumulated on the cube in fp32.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Sequence, Tuple

from .. import ir
from .._dtypes import DataType, bytes_of
from .._errors import PyptoTypeError, PyptoValueError
from .._platform import ARCH_950, platform
from ..error import short_repr
from .._tensor import Tensor
from .common import _fail, _fmt, _tr, _val, _wrap
from .conv import _VecTile, _ceil_align, _digits, _int_list, _load, _lower, _pos_int
from .creation import _dtype_arg, arange, full
from .elementwise import add, mul, sub
from .movement import concat, reshape, view

_BP_DTYPES = (DataType.DT_FP16, DataType.DT_BF16)


class _BpTile:
    """What both tile infos share: their fields checked as positive ints, a repr naming them
    and equality by value."""

    _FIELDS: Tuple[str, ...] = ()

    def _set(self, values: Sequence[int]) -> None:
        for name, v in zip(self._FIELDS, values):
            setattr(self, name, _pos_int(f"pypto_impl.{type(self).__name__}", name, v))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{f}={getattr(self, f)}"
                                                     for f in self._FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and repr(self) == repr(other)


class ConvBpTileL1Info(_BpTile):
    """The L1 tile of conv_backward_input (PyPTO's ``pypto_impl.ConvBpTileL1Info``): tileML1
    input positions (Hi x Wi merged), tileNL1 input channels, tileKL1 of Cout x Kh x Kw."""

    _FIELDS = ("tileML1", "tileNL1", "tileKL1")

    def __init__(self, tileML1: int = 16, tileNL1: int = 16, tileKL1: int = 16):  # noqa: N803
        self._set((tileML1, tileNL1, tileKL1))


class ConvBpTileL0Info(_BpTile):
    """The L0 tile of conv_backward_input (PyPTO's ``pypto_impl.ConvBpTileL0Info``): tileML0,
    tileNL0 and tileKL0, the matmul's L0 tile on its M, N and K axes."""

    _FIELDS = ("tileML0", "tileNL0", "tileKL0")

    def __init__(self, tileML0: int = 16, tileNL0: int = 16, tileKL0: int = 16):  # noqa: N803
        self._set((tileML0, tileNL0, tileKL0))


def _refuse_950(api: str) -> None:
    if platform.npuarch == ARCH_950:
        _fail(PyptoValueError, api, "PyPTO offers it on Atlas A2/A3 only, not on the Ascend "
              f"950 ({platform.npuarch}); set PYPTO_SIM_CHIP to an A2/A3 preset")


def set_convbp_input_tile_shapes(l1_info: ConvBpTileL1Info, l0_info: ConvBpTileL0Info) -> None:
    """Tile shapes of the conv_backward_input calls that follow in this scope (required
    before them)."""
    api = "set_convbp_input_tile_shapes"
    tr = _tr(api)
    _refuse_950(api)
    if not isinstance(l1_info, ConvBpTileL1Info):
        _fail(PyptoTypeError, api, f"l1_info must be a pypto_impl.ConvBpTileL1Info, got "
              f"{short_repr(l1_info)}")
    if not isinstance(l0_info, ConvBpTileL0Info):
        _fail(PyptoTypeError, api, f"l0_info must be a pypto_impl.ConvBpTileL0Info, got "
              f"{short_repr(l0_info)}")
    tr.top.convbp_tile = (l1_info, l0_info)


def _check_tiles(api: str, l1: ConvBpTileL1Info, l0: ConvBpTileL0Info, wi: int, cin: int,
                 cout: int, kernel: int) -> None:
    """PyPTO's range and alignment rules of set_convbp_input_tile_shapes
    (docs/zh/api/config/pypto-set_convbp_input_tile_shapes.md); the buffer rules are the
    compiler's."""
    rule = _bp_rule(api)
    L1, L0 = "ConvBpTileL1Info", "ConvBpTileL0Info"
    rule(l1.tileML1 <= wi or l1.tileML1 % wi == 0, "tileML1 <= Wi or tileML1 % Wi == 0",
         f"tileML1 = {l1.tileML1}, Wi = {wi}", L1)
    rule(l1.tileNL1 % 16 == 0 and l1.tileNL1 <= cin, "tileNL1 % 16 == 0 and tileNL1 <= Cin",
         f"tileNL1 = {l1.tileNL1}, Cin = {cin}", L1)
    k_max = _ceil_align(cout, 16) * kernel
    rule(l1.tileKL1 % (16 * kernel) == 0 and l1.tileKL1 <= k_max,
         "tileKL1 % (16 x Kh x Kw) == 0 and tileKL1 <= CeilAlign(Cout, 16) x Kh x Kw",
         f"tileKL1 = {l1.tileKL1}, Kh x Kw = {kernel}, Cout = {cout}", L1)
    rule(l0.tileML0 % 16 == 0 and l0.tileML0 <= _ceil_align(l1.tileML1, 16),
         "tileML0 % 16 == 0 and tileML0 <= CeilAlign(tileML1, 16)",
         f"tileML0 = {l0.tileML0}, tileML1 = {l1.tileML1}", L0)
    rule(l0.tileNL0 % 16 == 0 and l0.tileNL0 <= l1.tileNL1,
         "tileNL0 % 16 == 0 and tileNL0 <= tileNL1",
         f"tileNL0 = {l0.tileNL0}, tileNL1 = {l1.tileNL1}", L0)
    rule(l0.tileKL0 % 16 == 0 and l0.tileKL0 <= l1.tileKL1,
         "tileKL0 % 16 == 0 and tileKL0 <= tileKL1",
         f"tileKL0 = {l0.tileKL0}, tileKL1 = {l1.tileKL1}", L0)


def _bp_rule(api: str):
    def rule(ok: bool, text: str, values: str, where: str) -> None:
        if not ok:
            _fail(PyptoValueError, api, f"the convbp tile breaks PyPTO's rule {text}: {values} "
                  f"({where}); choose other pypto.set_convbp_input_tile_shapes")
    return rule


def _zero_insert(g: Tensor, rows: int, h: int, w: int, sh: int, sw: int,
                 vt: _VecTile) -> Tuple[Tensor, int, int]:
    """``g`` [rows, h, w] with stride - 1 zeros between neighbours on each spatial axis:
    [rows, (h - 1) x sh + 1, (w - 1) x sw + 1] (the strided convolution's output grid)."""
    dt = _val(g, "conv_backward_input").dtype
    wd, hd = (w - 1) * sw + 1, (h - 1) * sh + 1
    if sw > 1:
        vt.fit([rows * h * w, sw])
        cols = concat([reshape(g, [rows * h * w, 1]), full([rows * h * w, sw - 1], 0.0, dt)], 1)
        vt.fit([rows * h, w * sw])
        g = view(reshape(cols, [rows * h, w * sw]), [rows * h, wd], [0, 0])
    if sh > 1:
        vt.fit([rows * h, sh * wd])
        lines = concat([reshape(g, [rows * h, wd]), full([rows * h, (sh - 1) * wd], 0.0, dt)], 1)
        vt.fit([rows, h * sh, wd])
        g = view(reshape(lines, [rows, h * sh, wd]), [rows, hd, wd], [0, 0, 0])
    else:
        vt.fit([rows, h, wd])
        g = reshape(g, [rows, h, wd])
    return g, hd, wd


def _turned_weight(tr: Any, w: Tensor, cout: int, cin: int, ker: List[int],
                   vt: _VecTile) -> Tensor:
    """The kernel [Cout, Cin, Kh, Kw] as [Cin, Cout, Kh, Kw] turned half a turn (both
    spatial axes reversed): element (ci, co, k) reads (co, ci, Kh x Kw - 1 - k)."""
    kernel = math.prod(ker)
    depth = cout * kernel
    idt = DataType.DT_INT32
    vt.fit([cout * cin * kernel])
    flat = reshape(w, [cout * cin * kernel])
    vt.fit([depth])
    co, k = _digits(arange(depth, dtype=idt), [cout, kernel])
    col = sub(add(mul(co, cin * kernel), kernel - 1), k)
    vt.fit([cin])
    row = mul(arange(cin, dtype=idt), kernel)
    vt.fit([cin, depth])
    offs = add(reshape(row, [cin, 1]), reshape(col, [1, depth]))
    turned = _wrap(_load(tr, flat._value, offs._value))
    return reshape(turned, [cin, cout] + ker)


def conv_backward_input(grad_output: Tensor, input_size: Sequence[int], weight: Tensor,
                        out_dtype: DataType, strides: Sequence[int], paddings: Sequence[int],
                        dilations: Sequence[int], *, groups: int = 1) -> Tensor:
    """The input gradient of a 2-D convolution (torch.nn.grad.conv2d_input): ``grad_output``
    (N, Cout, Hout, Wout) and ``weight`` (Cout, Cin, Kh, Kw) of DT_FP16 or DT_BF16 give
    ``input_size`` (N, Cin, Hin, Win). ``paddings`` is [top, bottom, left, right] with equal
    sides. Needs ``pypto.set_convbp_input_tile_shapes`` first; Atlas A2/A3 only."""
    api = "conv_backward_input"
    tr = _tr(api)
    _refuse_950(api)
    gv = _val(grad_output, api, "grad_output")
    wv = _val(weight, api, "weight")
    odt = _dtype_arg(out_dtype, api)
    for name, v in (("grad_output", gv), ("weight", wv)):
        if v.rank != 4 or any(not isinstance(d, int) for d in v.shape):
            _fail(PyptoValueError, api, f"{name} must be a static 4-D (NCHW) tensor, got "
                  f"{_fmt(v.shape)}")
        if v.dtype not in _BP_DTYPES:
            _fail(PyptoValueError, api, f"{name} must be DT_FP16 or DT_BF16, got {v.dtype}")
        if any(d > 1000000 for d in v.shape):
            _fail(PyptoValueError, api, f"{name}'s sizes must be in [1, 1000000], got "
                  f"{_fmt(v.shape)}")
    if wv.dtype is not gv.dtype or odt is not gv.dtype:
        _fail(PyptoTypeError, api, f"weight and out_dtype must have grad_output's dtype "
              f"{gv.dtype}, got {wv.dtype} and {odt}")
    size = _int_list(api, "input_size", input_size, 4, 1, 1000000)
    st = _int_list(api, "strides", strides, 2, 1, 63)
    pd = _int_list(api, "paddings", paddings, 4, 0, 255)
    dl = _int_list(api, "dilations", dilations, 2, 1, 63)
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups != 1:
        _fail(PyptoValueError, api, f"groups must be 1 (PyPTO supports no other), got "
              f"{short_repr(groups)}")
    n, cout, ho, wo = gv.shape
    wcout, cin, kh, kw = wv.shape
    ker = [kh, kw]
    if wcout != cout or size[0] != n or size[1] != cin:
        _fail(PyptoValueError, api, f"shapes disagree: grad_output {_fmt(gv.shape)}, weight "
              f"{_fmt(wv.shape)} (Cout, Cin, Kh, Kw) and input_size {size} (N, Cin, Hin, Win)")
    eb = bytes_of(gv.dtype)
    if kh > 255 or kw > 255 or kh * kw * 32 // eb > 65535:
        _fail(PyptoValueError, api, f"the kernel {kh}x{kw} breaks PyPTO's rule Kh, Kw <= 255 "
              f"and Kh x Kw x 32 / sizeof(dtype) <= 65535")
    if pd[0] != pd[1] or pd[2] != pd[3]:
        _fail(PyptoValueError, api, f"paddings {pd} must pad both sides alike (top == bottom, "
              "left == right), as PyPTO requires")
    span = [(ker[i] - 1) * dl[i] + 1 for i in range(2)]
    for i, axis in enumerate("HW"):
        if not st[i] < span[i] or not pd[2 * i] < span[i]:
            _fail(PyptoValueError, api, f"stride{axis} = {st[i]} and padding{axis} = "
                  f"{pd[2 * i]} must be below (K{axis.lower()} - 1) x dilation{axis} + 1 = "
                  f"{span[i]} (PyPTO's rule)")
    outs = [ho, wo]
    for i, axis in enumerate("HW"):
        lo = (outs[i] - 1) * st[i] - 2 * pd[2 * i] + span[i]
        if not lo <= size[2 + i] <= lo + st[i] - 1:
            _fail(PyptoValueError, api, f"input_size's {axis}in = {size[2 + i]} must be in "
                  f"[{lo}, {lo + st[i] - 1}] for {axis}out = {outs[i]} (PyPTO's "
                  f"{axis}inMin/{axis}inMax)")
    if tr.top.convbp_tile is None:
        _fail(PyptoValueError, api, "needs tile shapes: call pypto.set_convbp_input_tile_shapes("
              "pypto_impl.ConvBpTileL1Info(...), pypto_impl.ConvBpTileL0Info(...)) before it")
    l1, l0 = tr.top.convbp_tile
    hi, wi = size[2], size[3]
    kernel = kh * kw
    _check_tiles(api, l1, l0, wi, cin, cout, kernel)
    return _wrap(_lower_bp(tr, grad_output, weight, gv.dtype, n, cin, cout, ho, wo, hi, wi, ker,
                           st, dl, pd, l1, l0))


def _bp_tiles(l1: ConvBpTileL1Info, l0: ConvBpTileL0Info, wi: int, ho: int, wo: int,
              ker: List[int], st: List[int], dl: List[int]) -> Tuple[ir.CubeTile, dict]:
    """The cube tile (M = Hin x Win, N = Cin, K = Cout x Kh x Kw) and the sizes of PyPTO's
    buffer rules (houtL1, woutL1, coutL1 as its page defines them)."""
    kernel = ker[0] * ker[1]
    hout_l1 = min(-(-l1.tileML1 // wi) + (ker[0] - 1) * dl[0], (ho - 1) * st[0] + 1)
    wout_l1 = min(min(l1.tileML1, wi) + (ker[1] - 1) * dl[1], (wo - 1) * st[1] + 1)
    rules = {"backward_input": True, "hw_l0": l0.tileML0, "k_l0": l0.tileKL0, "n_l0": l0.tileNL0,
             "hin_l1": hout_l1, "win_l1": wout_l1, "k_al1": l1.tileKL1 // kernel,
             "k_bl1": l1.tileKL1, "n_l1": l1.tileNL1, "c0": 16}
    cube = ir.CubeTile(m=(l0.tileML0, l1.tileML1), k=(l0.tileKL0, l1.tileKL1, l1.tileKL1),
                       n=(l0.tileNL0, l1.tileNL1), enable_split_k=False)
    return cube, rules


def _lower_bp(tr: Any, g: Tensor, w: Tensor, dt: DataType, n: int, cin: int, cout: int, ho: int,
              wo: int, hi: int, wi: int, ker: List[int], st: List[int], dl: List[int],
              pd: List[int], l1: ConvBpTileL1Info, l0: ConvBpTileL0Info) -> ir.Value:
    from .composites import _Composite
    api = "conv_backward_input"
    with _Composite(api), _VecTile(tr) as vt:
        vt.fit([n * cout, ho, wo])
        g3 = reshape(g, [n * cout, ho, wo])
        gz, hd, wd = _zero_insert(g3, n * cout, ho, wo, st[0], st[1], vt)
        # The stride-1 convolution over gz: dilation x (K - 1) - padding before, and after
        # whatever makes Hin/Win (input_size picks it within PyPTO's range).
        bp_pd = []
        for i, (size, d) in enumerate(((hi, hd), (wi, wd))):
            before = (ker[i] - 1) * dl[i] - pd[2 * i]
            bp_pd += [before, size + (ker[i] - 1) * dl[i] - d - before]
        gz4 = reshape(gz, [n, cout, hd, wd])
        wt = _turned_weight(tr, w, cout, cin, ker, vt)
    tiles = _bp_tiles(l1, l0, wi, ho, wo, ker, st, dl)
    return _lower(tr, gz4._value, wt._value, None, dt, n, cout, cout, cin, 1, [hd, wd], ker,
                  [1, 1], dl, bp_pd, [hi, wi], tiles, api=api)
