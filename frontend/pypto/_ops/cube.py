# SPDX-License-Identifier: Apache-2.0
"""``matmul`` on the cube unit (2-D or batched; transposed operands; PyPTO's
extend_params epilogue: bias, ReLU, dequant or quant scale) and the ``@`` operator."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Dict, List

from .. import ir
from .._dtypes import DataType
from .._enums import ReLuType, TileOpFormat, TransMode
from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._tensor import Tensor
from .common import _dim_eq, _emit, _fail, _fmt, _tr, _val, _wrap
from . import elementwise as _elementwise
from . import movement as _movement
from .creation import _dtype_arg


_MATMUL_IN = {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32, DataType.DT_INT8,
              DataType.DT_FP8, DataType.DT_HF8, DataType.DT_FP8E4M3, DataType.DT_FP8E5M2}
_MATMUL_FLOAT_OUT = {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32}
# int8 operands with a scale: dequantized to a float, or quantized to int8.
_MATMUL_SCALED_INT8_OUT = _MATMUL_FLOAT_OUT | {DataType.DT_INT8}


def matmul(a: Tensor, b: Tensor, out_dtype: DataType, *, a_trans: bool = False,
           b_trans: bool = False, c_matrix_nz: bool = False, extend_params: Any = None) -> Tensor:
    """``a @ b`` on the cube unit: 2-D ``[M, K] x [K, N]`` or batched (3-D/4-D, batch sizes
    broadcast when 1). ``a_trans``/``b_trans`` read the operand transposed. int8 inputs need
    ``out_dtype=DT_INT32``, or a ``scale``/``scale_tensor`` in ``extend_params`` (then
    DT_FP16/DT_BF16/DT_FP32 dequantizes). ``out_dtype=DT_INT8`` with a scale quantizes (fp16,
    bf16, fp32 or int8 operands): the fp32/int32 accumulator (after bias and ReLU) times the
    scale in fp32, rounded to the nearest integer with ties to even and saturated to
    [-128, 127]. PyPTO does not document the fixpipe's rounding; half-to-even with saturation
    is pypto-sim's assumption. Needs ``pypto.set_cube_tile_shapes`` first."""
    tr = _tr("matmul")
    av = _val(a, "matmul", "a")
    bv = _val(b, "matmul", "b")
    odt = _dtype_arg(out_dtype, "matmul")
    for flag, name in ((a_trans, "a_trans"), (b_trans, "b_trans"), (c_matrix_nz, "c_matrix_nz")):
        if not isinstance(flag, bool):
            _fail(PyptoTypeError, "matmul", f"{name} must be a bool, got {short_repr(flag)}")
    ext_inputs, ext_attrs = _matmul_extend(extend_params, av, bv, odt)
    if not 2 <= av.rank <= 4 or not 2 <= bv.rank <= 4:
        _fail(PyptoValueError, "matmul", f"operands must both be 2-D, 3-D or 4-D, got "
              f"{_fmt(av.shape)} and {_fmt(bv.shape)}")
    if av.rank != bv.rank:
        # PyPTO's matmul page: the two matrices' ranks must be the same (no rank broadcast).
        lo, hi = (av, bv) if av.rank < bv.rank else (bv, av)
        ones = [1] * (hi.rank - lo.rank)
        _fail(PyptoValueError, "matmul", f"operands must have the same rank, got "
              f"{av.rank}-D {_fmt(av.shape)} and {bv.rank}-D {_fmt(bv.shape)}; for a batch "
              f"broadcast reshape the {lo.rank}-D one to {_fmt(ones + list(lo.shape))}")
    if av.dtype is not bv.dtype:
        _fail(PyptoTypeError, "matmul", f"operand dtypes differ: {av.dtype} and {bv.dtype}")
    if av.dtype not in _MATMUL_IN:
        _fail(PyptoTypeError, "matmul", f"unsupported operand dtype {av.dtype}")
    scaled = "scale" in ext_attrs or "scale_tensor" in ext_attrs
    if av.dtype is DataType.DT_INT8 and not scaled and odt is not DataType.DT_INT32:
        _fail(PyptoTypeError, "matmul", f"int8 operands need out_dtype DT_INT32, got {odt} "
              "(fp16/bf16 need a dequant scale, int8 a quant scale, in extend_params)")
    if av.dtype is DataType.DT_INT8 and scaled and odt not in _MATMUL_SCALED_INT8_OUT:
        _fail(PyptoTypeError, "matmul", f"a scaled int8 matmul needs out_dtype DT_FP16, "
              f"DT_BF16 or DT_FP32 (dequantizing) or DT_INT8 (quantizing), got {odt}")
    quantizes = scaled and odt is DataType.DT_INT8
    if av.dtype is not DataType.DT_INT8 and odt not in _MATMUL_FLOAT_OUT and not quantizes:
        if odt is DataType.DT_INT8:
            _fail(PyptoTypeError, "matmul", f"out_dtype DT_INT8 for {av.dtype} operands "
                  f"quantizes: it needs extend_params 'scale' or 'scale_tensor'")
        _fail(PyptoTypeError, "matmul", f"out_dtype must be DT_FP16, DT_BF16 or DT_FP32 "
              f"(DT_INT8 with a quant scale) for {av.dtype} operands, got {odt}")

    def mk(v: ir.Value, trans: bool):
        r, c = v.shape[-2], v.shape[-1]
        vr, vc = v.valid_shape[-2:] if v.valid_shape is not None else (r, c)
        return ((c, r), (vc, vr)) if trans else ((r, c), (vr, vc))

    (m, k), (vm, _) = mk(av, a_trans)
    (k2, n), (_, vn) = mk(bv, b_trans)
    if _dim_eq(k, k2) is not True:
        _fail(PyptoValueError, "matmul", f"inner sizes differ: a is {_fmt(av.shape)}"
              f"{' (transposed)' if a_trans else ''}, b is {_fmt(bv.shape)}"
              f"{' (transposed)' if b_trans else ''}")
    batch: List[Any] = []
    for axis in range(av.rank - 2):
        da, db = av.shape[axis], bv.shape[axis]
        if _dim_eq(da, 1):
            batch.append(db)
        elif _dim_eq(db, 1) or _dim_eq(da, db):
            batch.append(da)
        else:
            _fail(PyptoValueError, "matmul", f"batch sizes differ: {_fmt(av.shape)} and "
                  f"{_fmt(bv.shape)}")
    if tr.top.cube_tile is None:
        _fail(PyptoValueError, "matmul", "needs cube tile shapes: call "
              "pypto.set_cube_tile_shapes(m, k, n) before it")
    valid = None
    if av.valid_shape is not None or bv.valid_shape is not None:
        valid = batch + [vm, vn]
    fmt = TileOpFormat.TILEOP_NZ if c_matrix_nz else TileOpFormat.TILEOP_ND
    if ext_inputs or ext_attrs:
        if av.rank != 2:
            _fail(PyptoValueError, "matmul", "extend_params apply to 2-D matmuls only (PyPTO: "
                  "not supported for batched matrix multiplication)")
        for t in ext_inputs:
            if len(t.shape) != 2 or not _dim_eq(t.shape[0], 1) or _dim_eq(t.shape[1], n) is False:
                _fail(PyptoValueError, "matmul", f"bias_tensor and scale_tensor must be [1, N] "
                      f"with N = {n}, got {_fmt(t.shape)}")
    slices = _split_k_slices(tr.top.cube_tile, k)
    if slices > 1:
        if ext_inputs or ext_attrs:
            _fail(PyptoValueError, "matmul", "enable_split_k does not combine with extend_params "
                  "(bias, relu, dequantization): PyPTO adds the K slices' partial sums after "
                  "the cube")
        acc = DataType.DT_INT32 if av.dtype is DataType.DT_INT8 else DataType.DT_FP32
        return _split_k(tr, a, b, odt, acc, a_trans, b_trans, c_matrix_nz, k, slices, len(batch))
    attrs = {"a_trans": a_trans, "b_trans": b_trans, "c_matrix_nz": c_matrix_nz, **ext_attrs}
    return _wrap(_emit(tr, "matmul", [av, bv] + ext_inputs, attrs, batch + [m, n], odt, fmt,
                       valid))


def _split_k_slices(cube: Any, k: Any) -> int:
    """How many kL1 slices ``enable_split_k`` cuts a static K into (1: no split)."""
    if cube is None or not cube.enable_split_k or not isinstance(k, int):
        return 1
    return -(-k // cube.k[1])


def _split_k(tr: Any, a: Tensor, b: Tensor, odt: DataType, acc: DataType, a_trans: bool,
             b_trans: bool, c_matrix_nz: bool, k: int, slices: int, nbatch: int) -> Tensor:
    """PyPTO's automatic multi-core split K (``enable_split_k``, matmul_performance_guide.md
    "K轴分核"): the graph its manual form builds. Each kL1 slice of K is a matmul of its own
    (a cube task per output tile) with an ``acc`` (fp32 or int32) result, and the partial sums
    are added in order by vector ops whose tile is the matmul's output tile (the automatic
    form does not take a vector tile). PyPTO documents the switch for fp32/int32 results only;
    another ``odt`` is the sum cast once."""
    cube = tr.top.cube_tile
    kl1 = cube.k[1]
    rank = nbatch + 2
    a_k, b_k = (rank - 2 if a_trans else rank - 1), (rank - 1 if b_trans else rank - 2)

    def part(x: Tensor, axis: int, lo: int, hi: int) -> Tensor:
        key = tuple(slice(lo, hi) if i == axis else slice(None) for i in range(rank))
        return x[key]

    saved_cube, saved_vec = cube, tr.top.vec_tile
    tr.top.cube_tile = dataclasses.replace(cube, enable_split_k=False)
    try:
        parts = [matmul(part(a, a_k, lo, min(lo + kl1, k)), part(b, b_k, lo, min(lo + kl1, k)),
                        acc, a_trans=a_trans, b_trans=b_trans, c_matrix_nz=c_matrix_nz)
                 for lo in range(0, k, kl1)]
        tr.top.vec_tile = (1,) * nbatch + (cube.m[1], cube.n[1])
        total = parts[0]
        for p in parts[1:]:
            total = _elementwise.add(total, p)
        if odt is not acc:
            total = _movement.cast(total, odt)
    finally:
        tr.top.cube_tile, tr.top.vec_tile = saved_cube, saved_vec
    return total


_MATMUL_EXTEND_KEYS = ("bias_tensor", "scale", "scale_tensor", "relu_type", "trans_mode")
_BIAS_DTYPES = {
    DataType.DT_FP16: (DataType.DT_FP16, DataType.DT_FP32),
    DataType.DT_BF16: (DataType.DT_BF16, DataType.DT_FP32),
    DataType.DT_FP32: (DataType.DT_FP32,),
    DataType.DT_INT8: (DataType.DT_INT32,),
}


def _matmul_extend(ep: Any, av: ir.Value, bv: ir.Value, odt: DataType):
    """PyPTO's matmul extend_params as extra inputs (bias, then scale tensor) and attrs. The
    epilogue runs on the accumulator: + bias, ReLU, * scale (dequant, or quant to DT_INT8),
    then the cast to out_dtype."""
    api = "matmul"
    if ep is None:
        return [], {}
    if not isinstance(ep, dict):
        _fail(PyptoTypeError, api, f"extend_params must be a dict, got {type(ep).__name__}")
    for key in ep:
        if key not in _MATMUL_EXTEND_KEYS:
            _fail(PyptoValueError, api, f"unknown extend_params key {short_repr(key)} (expected one of "
                  f"{', '.join(_MATMUL_EXTEND_KEYS)})")
    inputs: List[ir.Value] = []
    attrs: Dict[str, Any] = {}
    bias = ep.get("bias_tensor")
    if bias is not None:
        bval = _val(bias, api, "extend_params['bias_tensor']")
        ok = _BIAS_DTYPES.get(av.dtype, ())
        if bval.dtype not in ok:
            _fail(PyptoTypeError, api, f"bias_tensor of {av.dtype} operands must be "
                  f"{' or '.join(d.name for d in ok) or 'absent'}, got {bval.dtype}")
        if bval.rank == 1:
            # A [N] bias (PyPTO's model kernels pass one) is the [1, N] its docs name: a view.
            bval = _val(_movement.reshape(bias, [1] + list(bval.shape), inplace=True), api)
        inputs.append(bval)
        attrs["bias"] = True
    st = ep.get("scale_tensor")
    if st is not None:
        sval = _val(st, api, "extend_params['scale_tensor']")
        if sval.dtype not in (DataType.DT_UINT64, DataType.DT_INT64):
            _fail(PyptoTypeError, api, f"scale_tensor must be DT_UINT64 (DT_INT64 holding the "
                  f"same bits on CPU), got {sval.dtype}")
        inputs.append(sval)
        attrs["scale_tensor"] = True
    scale = ep.get("scale", 0.0)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        _fail(PyptoTypeError, api, f"extend_params['scale'] must be a number, got {short_repr(scale)}")
    if scale != 0:
        attrs["scale"] = float(scale)
    if ("scale" in attrs or "scale_tensor" in attrs) and odt is not DataType.DT_INT8 \
            and av.dtype is not DataType.DT_INT8:
        _fail(PyptoValueError, api, f"scale/scale_tensor dequantize int8 matmuls or quantize "
              f"to out_dtype DT_INT8; the operands are {av.dtype} and out_dtype {odt}")
    relu = ep.get("relu_type", ReLuType.NO_RELU)
    if not isinstance(relu, ReLuType):
        _fail(PyptoTypeError, api, f"relu_type must be a pypto.ReLuType, got {short_repr(relu)}")
    if relu is ReLuType.RELU:
        attrs["relu"] = True
    tm = ep.get("trans_mode", TransMode.CAST_NONE)
    if not isinstance(tm, TransMode):
        _fail(PyptoTypeError, api, f"trans_mode must be a pypto.TransMode, got {short_repr(tm)}")
    if tm is not TransMode.CAST_NONE:
        if av.dtype is not DataType.DT_FP32 or odt is not DataType.DT_FP32:
            _fail(PyptoValueError, api, "trans_mode needs DT_FP32 operands and out_dtype")
        attrs["trans_mode"] = tm.name
    return inputs, attrs


def _matmul_operator(a: Any, b: Any) -> Any:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return NotImplemented
    bdt = b._value.dtype
    return matmul(a, b, DataType.DT_INT32 if bdt is DataType.DT_INT8 else bdt)
