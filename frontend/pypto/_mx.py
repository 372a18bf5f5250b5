# SPDX-License-Identifier: Apache-2.0
"""The MX (microscaling) element types of the Ascend 950: DT_FP8E4M3, DT_FP8E5M2, DT_FP4_E2M1
(elements) and DT_FP8E8M0 (block scales), as the simulator holds them.

The compiler and executor compute in fp32/fp16/bf16 only, so a tensor of an MX type is held in
a *carrier* dtype that represents every value of the format exactly (fp16 for the element
types, fp32 for E8M0, whose 2^-127 is an fp32 subnormal). Values enter and leave a kernel as
the format's bits (uint8 storage: one FP8 per byte, two FP4 per byte with the element of the
even index in the low nibble); :func:`decode` and :func:`encode` convert at the jit boundary,
bit for bit. Inside a kernel only quant_mx produces MX values (rounded to the format there),
and only scaled_mm, cast, and the data movement ops consume them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

import numpy as np
import torch

from ._dtypes import DataType

__all__ = ["MX_TYPES", "Format", "FORMATS", "carrier", "decode", "encode", "is_mx"]


@dataclass(frozen=True)
class Format:
    """A small binary float format: sign (unless ``signed`` is False), ``ebits`` exponent bits
    of bias ``bias``, ``mbits`` mantissa bits. ``max_finite`` is the largest value;
    ``ieee_specials``: the top exponent holds inf/NaN (E5M2); otherwise only the all-ones code
    is NaN (E4M3: S.1111.111) or there is no NaN (E2M1)."""

    ebits: int
    mbits: int
    bias: int
    max_finite: float
    ieee_specials: bool
    has_nan: bool
    signed: bool = True

    @property
    def bits(self) -> int:
        return int(self.signed) + self.ebits + self.mbits


FORMATS: Dict[DataType, Format] = {
    DataType.DT_FP8E4M3: Format(4, 3, 7, 448.0, False, True),
    DataType.DT_FP8E5M2: Format(5, 2, 15, 57344.0, True, True),
    DataType.DT_FP4_E2M1: Format(2, 1, 1, 6.0, False, False),
    DataType.DT_FP8E8M0: Format(8, 0, 127, 2.0 ** 127, False, True, signed=False),
}

MX_TYPES = frozenset(FORMATS)

_CARRIER = {DataType.DT_FP8E4M3: DataType.DT_FP16, DataType.DT_FP8E5M2: DataType.DT_FP16,
            DataType.DT_FP4_E2M1: DataType.DT_FP16, DataType.DT_FP8E8M0: DataType.DT_FP32}


def is_mx(dtype: DataType) -> bool:
    return dtype in MX_TYPES


def carrier(dtype: DataType) -> DataType:
    """The dtype the compiler computes ``dtype`` in: itself unless it is an MX type."""
    return _CARRIER.get(dtype, dtype)


def _decode_codes(codes: np.ndarray, f: Format) -> np.ndarray:
    """float64 values of the codes (ints) of format ``f``."""
    c = codes.astype(np.int64)
    mmask = (1 << f.mbits) - 1
    emask = (1 << f.ebits) - 1
    man = c & mmask
    exp = (c >> f.mbits) & emask
    sign = ((c >> (f.ebits + f.mbits)) & 1) if f.signed else np.zeros_like(c)
    normal = np.ldexp(1.0 + man / float(1 << f.mbits), exp - f.bias)
    sub = np.ldexp(man / float(1 << f.mbits), 1 - f.bias)
    val = np.where(exp == 0, sub, normal) if f.mbits else np.ldexp(1.0, exp - f.bias)
    if f.ieee_specials:
        val = np.where((exp == emask) & (man == 0), np.inf, val)
        val = np.where((exp == emask) & (man != 0), np.nan, val)
    elif f.has_nan:
        val = np.where((exp == emask) & (man == mmask), np.nan, val)
    return np.where(sign == 1, -val, val)


def _encode_values(v: np.ndarray, f: Format) -> np.ndarray:
    """Codes (int64) of float64 values ``v`` in format ``f``: rounded to nearest, ties to even,
    overflow saturated to the largest finite value (inf too, except E5M2's inf), NaN to the
    format's NaN (0 for E2M1, which has none)."""
    sign = np.signbit(v) & f.signed
    a = np.abs(v)
    nan = np.isnan(a)
    inf = np.isinf(a)
    a = np.where(nan | inf, 0.0, a)
    # round to the format: the step of a's binade, never finer than the subnormal step
    _, e2 = np.frexp(a)
    e = np.maximum(e2 - 1, 1 - f.bias)
    step = np.ldexp(1.0, e - f.mbits)
    r = np.rint(a / step) * step  # exact: a / step has fewer than 53 significant bits
    r = np.minimum(r, f.max_finite)
    if not f.signed:  # E8M0: powers of two only, 2^-127 the smallest (no zero)
        r = np.maximum(r, np.ldexp(1.0, -f.bias))
    _, e2 = np.frexp(r)
    er = e2 - 1
    is_sub = (er < 1 - f.bias) | (r == 0)
    exp_field = np.where(is_sub, 0, er + f.bias)
    frac = np.where(is_sub, r / np.ldexp(1.0, 1 - f.bias), r / np.ldexp(1.0, er) - 1.0)
    man = np.rint(frac * (1 << f.mbits)).astype(np.int64)
    code = (exp_field.astype(np.int64) << f.mbits) | man
    emask = (1 << f.ebits) - 1
    if f.ieee_specials:
        code = np.where(inf, emask << f.mbits, code)
        code = np.where(nan, (emask << f.mbits) | 1, code)
    elif f.has_nan:
        code = np.where(nan, (1 << (f.ebits + f.mbits)) - 1, code)
    else:
        code = np.where(nan, 0, code)
    return np.where(sign, code | (1 << (f.ebits + f.mbits)), code)


def decode(bits: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """The carrier tensor (``carrier(dtype)``) of the uint8 storage ``bits`` of an MX tensor
    (a torch float8 tensor is read through its bytes). FP4: the last axis doubles."""
    f = FORMATS[dtype]
    raw = bits.cpu().contiguous().view(torch.uint8).numpy().astype(np.int64)
    if dtype.is_fp4:
        raw = np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(*raw.shape[:-1], -1)
    vals = _decode_codes(raw, f)
    np_dt = np.float16 if carrier(dtype) is DataType.DT_FP16 else np.float32
    return torch.from_numpy(vals.astype(np_dt)).to(bits.device)


def encode(values: torch.Tensor, dtype: DataType) -> torch.Tensor:
    """The uint8 storage of carrier ``values`` in MX type ``dtype`` (see :func:`_encode_values`
    for rounding). FP4: the last axis halves (even index in the low nibble)."""
    f = FORMATS[dtype]
    codes = _encode_values(values.detach().cpu().double().numpy(), f)
    if dtype.is_fp4:
        codes = codes.reshape(*codes.shape[:-1], -1, 2)
        codes = codes[..., 0] | (codes[..., 1] << 4)
    return torch.from_numpy(codes.astype(np.uint8)).to(values.device)


def to_carriers(params, tensors):
    """The run-time tensor list with each MX-typed parameter's storage decoded into its carrier
    tensor, and the (index, dtype) of the carriers a run writes, which :func:`write_back`
    encodes into the caller's tensors afterwards. ``tensors`` itself is not changed."""
    run = list(tensors)
    written = []
    for i, p in enumerate(params):
        if i < len(run) and is_mx(p.dtype) and isinstance(run[i], torch.Tensor):
            run[i] = decode(run[i], p.dtype)
            if p.is_output_written:
                written.append((i, p.dtype))
    return run, written


def write_back(tensors, run, written) -> None:
    """Encodes the carriers a run wrote (``to_carriers``) into the caller's storage tensors."""
    for i, dtype in written:
        tensors[i].view(torch.uint8).copy_(encode(run[i], dtype))
