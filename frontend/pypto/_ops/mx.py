# SPDX-License-Identifier: Apache-2.0
"""The MX (microscaling) ops of the Ascend 950: ``quant_mx`` (a tensor to FP8E4M3 elements and
FP8E8M0 block scales), ``scaled_mm`` (a matmul of MX-quantized operands) and the rounding of
``pypto.cast`` to an MX element type.

MX tensors are held in carrier dtypes (``pypto._mx``), so these ops are recorded as sequences of
the vector and cube ops; every step is exact in fp32 (powers of two, comparisons, the format's
rounding), so the values are those of the format. An MX block is 32 consecutive elements of
the last (quantized) axis with one shared E8M0 scale; PyPTO stores the scales of two blocks
side by side (shape ``[..., ceil(n / 64), 2]``).
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, Tuple

from .. import _mx
from .._dtypes import DataType
from .._enums import CastMode, DequantScaleRoundingMode, ReLuType, SaturationMode
from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._tensor import Tensor
from .common import _emit, _fail, _fmt, _tr, _val, _wrap
from . import cube, elementwise as ew, movement, reductions

_BLOCK = 32  # elements per shared scale
_ELEMENT_TYPES = (DataType.DT_FP8E4M3, DataType.DT_FP8E5M2, DataType.DT_FP4_E2M1)
_FLOAT_IN = (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)


def _require_950(api: str, what: str = "MX element types") -> None:
    """Ops PyPTO documents for the 950PR/950DT only (MX types, ``what`` for others) raise on
    a simulated A2/A3 chip."""
    from .. import _backend

    native = _backend._native()
    name = native.sim_chip_name() if native is not None and hasattr(native, "sim_chip_name") \
        else "unknown"
    if not str(name).startswith("950"):
        _fail(PyptoValueError, api, f"is an Ascend 950 operation ({what}), but the "
              f"simulated chip is '{name}' (an A2/A3 class chip); set PYPTO_SIM_CHIP to a 950 "
              "preset (950pr, 950dt)")


def _exponent(a: Tensor) -> Tensor:
    """floor(log2(a)) for fp32 a >= 0, exactly (-inf for 0): log2 rounded to fp32 may reach the
    next integer just below a power of two, which the comparison with exp2 undoes."""
    e = ew.floor(ew.log2(a))
    return ew.where(ew.gt(ew.exp2(e), a), ew.sub(e, 1.0), e)


def round_to(y: Tensor, dtype: DataType, saturate: bool = True) -> Tensor:
    """fp32 ``y`` rounded to the values of MX element type ``dtype`` (nearest, ties to even;
    subnormals kept). Overflow gives the largest finite value when ``saturate``, else the
    format's inf (E5M2) or NaN (E4M3); E2M1 has neither and always saturates."""
    f = _mx.FORMATS[dtype]
    emin = 1 - f.bias
    emax = (1 << f.ebits) - 1 - f.bias - (1 if f.ieee_specials else 0)
    e = ew.clip(_exponent(ew.abs(y)), emin, emax)
    step = ew.exp2(ew.sub(e, float(f.mbits)))
    q = ew.mul(ew.round(ew.div(y, step)), step)
    if saturate or not f.has_nan:
        return ew.clip(q, -f.max_finite, f.max_finite)
    big = ew.gt(ew.abs(q), f.max_finite)
    if f.ieee_specials:
        return ew.where(big, ew.mul(ew.sign(q), float("inf")), q)
    return ew.where(big, float("nan"), q)


def _relabel(x: Tensor, dtype: DataType) -> Tensor:
    """``x`` (values of ``dtype`` held in fp32) as a tensor of MX type ``dtype``: a cast to
    its carrier, exact."""
    xv = x._value
    tr = _tr("cast")
    return _wrap(_emit(tr, "cast", [xv], {"mode": CastMode.CAST_NONE,
                                          "satmode": SaturationMode.OFF}, xv.shape, dtype,
                       valid_shape=xv.valid_shape))


def cast_to_mx(x: Tensor, dtype: DataType, saturate: bool) -> Tensor:
    """``pypto.cast`` to an MX element type: rounds to the format (see :func:`round_to`)."""
    xv = x._value
    if dtype is DataType.DT_FP8E8M0:
        _fail(PyptoTypeError, "cast", "DT_FP8E8M0 holds MX block scales, which pypto.quant_mx "
              "computes; cast to DT_FP8E4M3, DT_FP8E5M2 or DT_FP4_E2M1")
    _require_950("cast")
    y = x if xv.dtype is DataType.DT_FP32 else movement.cast(x, DataType.DT_FP32)
    return _relabel(round_to(y, dtype, saturate), dtype)


def quant_mx(input: Tensor, quant_dtype: DataType = DataType.DT_FP8E4M3,  # noqa: A002
             mode: DequantScaleRoundingMode = DequantScaleRoundingMode.ROUND_DOWN,
             axis: int = -1, performance_mode: bool = False) -> Tuple[Tensor, Tensor]:
    """MX quantization of ``input`` (fp16/bf16/fp32, 1-D to 4-D) along its last axis: per
    block of 32 elements the shared exponent is floor(log2(max |x|)) - 8 (ROUND_DOWN; 8 is
    FP8E4M3's largest exponent), clamped to E8M0's [-127, 127]; the elements are x / 2^shared
    rounded to FP8E4M3 (nearest even, saturating at +-448). Returns ``(quantized, scale)``:
    quantized has input's shape and dtype DT_FP8E4M3, scale is DT_FP8E8M0 of shape
    ``[..., n / 64, 2]``. The last axis must be static and 256-byte aligned (PyPTO's rule)."""
    api = "quant_mx"
    xv = _val(input, api)
    _require_950(api)
    if quant_dtype is not DataType.DT_FP8E4M3:
        _fail(PyptoValueError, api, f"quant_dtype must be DT_FP8E4M3 (the only one PyPTO "
              f"supports), got {short_repr(quant_dtype)}")
    if mode is not DequantScaleRoundingMode.ROUND_DOWN:
        _fail(PyptoValueError, api, f"mode must be ROUND_DOWN (the only one PyPTO supports), "
              f"got {short_repr(mode)}")
    if not isinstance(performance_mode, bool):
        _fail(PyptoTypeError, api, f"performance_mode must be a bool, got "
              f"{short_repr(performance_mode)}")
    if xv.dtype not in _FLOAT_IN:
        _fail(PyptoTypeError, api, f"input must be DT_FP16, DT_BF16 or DT_FP32, got {xv.dtype}")
    if not 1 <= xv.rank <= 4:
        _fail(PyptoValueError, api, f"input must be 1-D to 4-D, got {_fmt(xv.shape)}")
    if isinstance(axis, bool) or axis not in (-1, xv.rank - 1):
        _fail(PyptoValueError, api, f"axis must be the last one (-1 or {xv.rank - 1}), got "
              f"{short_repr(axis)}")
    n = xv.shape[-1]
    if not isinstance(n, numbers.Integral) or any(not isinstance(d, numbers.Integral)
                                                  for d in xv.shape):
        _fail(PyptoValueError, api, f"needs static sizes (quantize views of a dynamic tensor), "
              f"got {_fmt(xv.shape)}")
    width = {DataType.DT_FP32: 4}.get(xv.dtype, 2)
    if (n * width) % 256:
        _fail(PyptoValueError, api, f"the last axis must be 256-byte aligned: {n} x {width} "
              f"bytes ({xv.dtype}) is not a multiple of 256")
    lead = list(xv.shape[:-1])
    x = input if xv.dtype is DataType.DT_FP32 else movement.cast(input, DataType.DT_FP32)
    blocks = movement.reshape(x, lead + [n // _BLOCK, _BLOCK])
    amax = reductions.amax(ew.abs(blocks), -1, keepdim=True)
    shared = ew.clip(ew.sub(_exponent(amax), 8.0), -127.0, 127.0)
    scale = ew.exp2(shared)
    q = round_to(ew.div(blocks, scale), DataType.DT_FP8E4M3)
    quantized = _relabel(movement.reshape(q, list(xv.shape)), DataType.DT_FP8E4M3)
    scales = _relabel(movement.reshape(scale, lead + [n // (2 * _BLOCK), 2]),
                      DataType.DT_FP8E8M0)
    return quantized, scales


_SCALED_MM_KEYS = ("bias_tensor", "relu_type", "scale", "scale_tensor")


def _dequantized(m: Tensor, s: Tensor, k_axis: int, scale_rows_major: bool, api: str,
                 what: str) -> Tensor:
    """fp32 ``m * scale`` of a 2-D MX operand stored with K on axis ``k_axis``: each block of
    32 along K times its E8M0 scale. The scales are ``[rows, K/64, 2]`` when
    ``scale_rows_major``, else ``[K/64, rows, 2]`` (rows: the operand's other axis)."""
    mv, sv = m._value, s._value
    rows, k = mv.shape[1 - k_axis], mv.shape[k_axis]
    if k % (2 * _BLOCK):
        _fail(PyptoValueError, api, f"K = {k} must be a multiple of 64 (two MX blocks of "
              f"{_BLOCK} per scale pair)")
    kb = k // (2 * _BLOCK)
    want = [rows, kb, 2] if scale_rows_major else [kb, rows, 2]
    if list(sv.shape) != want:
        _fail(PyptoValueError, api, f"{what} must be {_fmt(want)} for the {_fmt(mv.shape)} "
              f"operand, got {_fmt(sv.shape)}")
    sf = movement.cast(s, DataType.DT_FP32)
    if not scale_rows_major:
        sf = movement.permute(sf, [1, 0, 2])
    per = movement.reshape(sf, [rows, 2 * kb, 1])
    x = movement.cast(m, DataType.DT_FP32)
    if k_axis == 0:
        x = movement.transpose(x, 0, 1)
    x = movement.reshape(ew.mul(movement.reshape(x, [rows, 2 * kb, _BLOCK]), per), [rows, k])
    return movement.transpose(x, 0, 1) if k_axis == 0 else x


def scaled_mm(mat_a: Tensor, mat_b: Tensor, out_dtype: DataType, scale_a: Tensor,
              scale_b: Tensor, *, a_trans: bool = False, b_trans: bool = False,
              scale_a_trans: bool = False, scale_b_trans: bool = False, c_matrix_nz: bool = False,
              extend_params: Optional[Dict[str, Any]] = None) -> Tensor:
    """``(mat_a * scale_a) @ (mat_b * scale_b)`` for MX operands (FP8E4M3/FP8E5M2, or FP4_E2M1
    with FP4_E2M1) with FP8E8M0 block scales along K: scale_a is ``[M, K/64, 2]``
    (``[K/64, M, 2]`` with scale_a_trans), scale_b ``[K/64, N, 2]`` (``[N, K/64, 2]``). The
    products are exact and accumulate in fp32 on the cube (the operands are dequantized to
    bf16, which holds every scaled MX value of the normal range exactly); out_dtype
    DT_FP16/DT_BF16/DT_FP32. extend_params: bias_tensor and relu_type as for matmul."""
    api = "scaled_mm"
    av, bv = _val(mat_a, api, "mat_a"), _val(mat_b, api, "mat_b")
    _val(scale_a, api, "scale_a")
    _val(scale_b, api, "scale_b")
    _require_950(api)
    for t, name in ((av, "mat_a"), (bv, "mat_b")):
        if t.dtype not in _ELEMENT_TYPES:
            _fail(PyptoTypeError, api, f"{name} must be DT_FP8E4M3, DT_FP8E5M2 or DT_FP4_E2M1, "
                  f"got {t.dtype}")
        if t.rank != 2:
            _fail(PyptoValueError, api, f"{name} must be 2-D here (batched MX matmuls are not "
                  f"simulated), got {_fmt(t.shape)}")
    if (av.dtype is DataType.DT_FP4_E2M1) != (bv.dtype is DataType.DT_FP4_E2M1):
        _fail(PyptoTypeError, api, f"FP4 operands go with FP4 operands only, got {av.dtype} "
              f"and {bv.dtype}")
    for t, name in ((scale_a, "scale_a"), (scale_b, "scale_b")):
        if t._value.dtype is not DataType.DT_FP8E8M0:
            _fail(PyptoTypeError, api, f"{name} must be DT_FP8E8M0, got {t._value.dtype}")
    for flag, name in ((a_trans, "a_trans"), (b_trans, "b_trans"),
                       (scale_a_trans, "scale_a_trans"), (scale_b_trans, "scale_b_trans"),
                       (c_matrix_nz, "c_matrix_nz")):
        if not isinstance(flag, bool):
            _fail(PyptoTypeError, api, f"{name} must be a bool, got {short_repr(flag)}")
    if c_matrix_nz:
        _fail(PyptoValueError, api, "c_matrix_nz must be False (PyPTO: ND output only)")
    if out_dtype not in (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32):
        _fail(PyptoValueError, api, f"out_dtype must be DT_FP16, DT_BF16 or DT_FP32, got "
              f"{short_repr(out_dtype)} (the INT8 output of PyPTO's quantized epilogue is not "
              "simulated)")
    ep = dict(extend_params or {})
    for key in ep:
        if key not in _SCALED_MM_KEYS:
            _fail(PyptoValueError, api, f"unknown extend_params key {short_repr(key)}")
    if ep.get("scale") or ep.get("scale_tensor") is not None:
        _fail(PyptoValueError, api, "extend_params scale/scale_tensor quantize the output to "
              "DT_INT8, which is not simulated; use bias_tensor and relu_type")
    ka, kb_ = av.shape[0 if a_trans else 1], bv.shape[1 if b_trans else 0]
    if ka != kb_:
        _fail(PyptoValueError, api, f"inner sizes differ: mat_a is {_fmt(av.shape)}"
              f"{' (transposed)' if a_trans else ''}, mat_b is {_fmt(bv.shape)}"
              f"{' (transposed)' if b_trans else ''}")
    a = _dequantized(mat_a, scale_a, 0 if a_trans else 1, not scale_a_trans, api, "scale_a")
    b = _dequantized(mat_b, scale_b, 1 if b_trans else 0, scale_b_trans, api, "scale_b")
    mm_ep: Dict[str, Any] = {}
    bias = ep.get("bias_tensor")
    if bias is not None:
        bval = _val(bias, api, "extend_params['bias_tensor']")
        if bval.dtype not in _FLOAT_IN:
            _fail(PyptoTypeError, api, f"bias_tensor must be DT_FP16, DT_BF16 or DT_FP32, got "
                  f"{bval.dtype}")
        mm_ep["bias_tensor"] = bias if bval.dtype is DataType.DT_FP32 else \
            movement.cast(bias, DataType.DT_FP32)
    relu = ep.get("relu_type", ReLuType.NO_RELU)
    if not isinstance(relu, ReLuType):
        _fail(PyptoTypeError, api, f"relu_type must be a pypto.ReLuType, got {short_repr(relu)}")
    mm_ep["relu_type"] = relu
    a16 = movement.cast(a, DataType.DT_BF16)
    b16 = movement.cast(b, DataType.DT_BF16)
    return cube.matmul(a16, b16, out_dtype, a_trans=a_trans, b_trans=b_trans,
                       extend_params=mm_ep)
