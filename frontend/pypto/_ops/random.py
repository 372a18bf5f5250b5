# SPDX-License-Identifier: Apache-2.0
"""``pypto.normal``: standard normal samples from the counter-based Philox4x32-10 generator
and the Box-Muller transform, as PyPTO's doc describes the op (key, counter, alg 1 or 3 =
Philox) and its example output shows: each Philox call (counter + call index) gives four
32-bit words, words (0, 1) and (2, 3) become two samples each (u = the word's low 23 bits /
2^23, u1 at least 1e-7; r = sqrt(-2 ln u1), samples r sin(2 pi u2) and r cos(2 pi u2)).

Recorded as vector ops on DT_INT64 tiles (the 32 x 32-bit products in 16-bit halves, so no
intermediate passes 2^49) and DT_FP32 for the transform, marked ``composite=normal``."""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Sequence, Tuple, Union

from .._dtypes import DataType
from .._errors import PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._tensor import Tensor
from .common import _fail, _tr
from .creation import _dtype_arg, arange
from .elementwise import (add, bitwise_and, bitwise_left_shift, bitwise_right_shift,
                          bitwise_xor, cos, log, maximum, mul, sin, sqrt)
from .movement import cast, concat, reshape

_M32 = 0xFFFFFFFF
_MUL = (0xD2511F53, 0xCD9E8D57)    # Philox4x32 round multipliers
_WEYL = (0x9E3779B9, 0xBB67AE85)   # Philox4x32 key increments
_ROUNDS = 10
_OUT = (DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16)

Word = Union[int, Tensor]  # a 32-bit word: a Python int where it is known when tracing


def _xor(a: Word, b: Word) -> Word:
    if isinstance(a, int) and isinstance(b, int):
        return a ^ b
    if isinstance(a, int):
        a, b = b, a
    return a if isinstance(b, int) and b == 0 else bitwise_xor(a, b)


def _mulhilo(m: int, c: Word) -> Tuple[Word, Word]:
    """(high, low) 32-bit halves of the 64-bit product m x c."""
    if isinstance(c, int):
        p = m * c
        return p >> 32, p & _M32
    p_lo = mul(c, m & 0xFFFF)   # < 2^48
    p_hi = mul(c, m >> 16)      # < 2^48; m x c = p_hi x 2^16 + p_lo
    hi = bitwise_right_shift(add(p_hi, bitwise_right_shift(p_lo, 16)), 16)
    lo = bitwise_and(add(bitwise_left_shift(bitwise_and(p_hi, 0xFFFF), 16), p_lo), _M32)
    return hi, lo


def _philox(ctr: List[Word], key: Tuple[int, int]) -> List[Word]:
    c = list(ctr)
    k0, k1 = key
    for r in range(_ROUNDS):
        hi0, lo0 = _mulhilo(_MUL[0], c[0])
        hi1, lo1 = _mulhilo(_MUL[1], c[2])
        c = [_xor(_xor(hi1, c[1]), k0), lo1, _xor(_xor(hi0, c[3]), k1), lo0]
        if r < _ROUNDS - 1:
            k0, k1 = (k0 + _WEYL[0]) & _M32, (k1 + _WEYL[1]) & _M32
    return c


def _unit(x: Tensor) -> Tensor:
    """The word's low 23 bits as a float in [0, 1): exactly (1.m) - 1 of its mantissa."""
    return mul(cast(bitwise_and(x, 0x7FFFFF), DataType.DT_FP32), 2.0 ** -23)


def _box_muller(x0: Tensor, x1: Tensor) -> Tuple[Tensor, Tensor]:
    u1 = maximum(_unit(x0), 1.0e-7)
    v1 = mul(_unit(x1), 2.0 * math.pi)
    r = sqrt(mul(log(u1), -2.0))
    return mul(sin(v1), r), mul(cos(v1), r)


def _int_list(api: str, name: str, v: Any, n: Sequence[int], hi: int) -> List[int]:
    if not isinstance(v, (list, tuple)) or len(v) not in n:
        _fail(PyptoValueError, api, f"{name} must be a list of {' or '.join(map(str, n))} "
              f"ints, got {short_repr(v)}")
    for x in v:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not 0 <= x <= hi:
            _fail(PyptoValueError, api, f"{name} entries must be ints in [0, {hi}], got "
                  f"{short_repr(v)}")
    return [int(x) for x in v]


def normal(shape: Sequence[int], key: Sequence[int], counter: Sequence[int],
           alg: Sequence[int], dtype: DataType) -> Tensor:
    """A ``shape`` tensor (1-4 axes) of N(0, 1) samples in ``dtype`` (DT_FP32, DT_FP16,
    DT_BF16) from the Philox generator with seed ``key`` ([k], 64-bit) and ``counter``
    ([c0, c1]; as in PyPTO, c0 is taken as 0); ``alg`` is [1] (Philox) or [3] (auto: Philox).
    The same arguments give the same samples; element i is sample i % 4 of call i // 4. As
    in PyPTO, the vec tile in force must equal ``shape``, its last axis a multiple of 4."""
    api = "normal"
    tr = _tr(api)
    if not isinstance(shape, (list, tuple)) or not 1 <= len(shape) <= 4:
        _fail(PyptoValueError, api, f"shape must list 1 to 4 sizes, got {short_repr(shape)}")
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            _fail(PyptoValueError, api, f"shape sizes must be positive ints, got "
                  f"{short_repr(shape)}")
    k = _int_list(api, "key", key, (1,), 2 ** 64 - 1)[0]
    ctr = _int_list(api, "counter", counter, (2,), 2 ** 64 - 1)
    a = _int_list(api, "alg", alg, (1,), 2 ** 31)[0]
    if a not in (1, 3):
        _fail(PyptoValueError, api, f"alg must be [1] (Philox) or [3] (auto_select: Philox), "
              f"got {short_repr(alg)}")
    odt = _dtype_arg(dtype, api)
    if odt not in _OUT:
        _fail(PyptoTypeError, api, f"dtype must be DT_FP32, DT_FP16 or DT_BF16, got {odt}")
    tile = tr.top.vec_tile
    if tile is None or list(tile) != [int(d) for d in shape] or shape[-1] % 4:
        _fail(PyptoValueError, api, f"PyPTO's rule: the vec tile equals the shape and its last "
              f"axis is a multiple of 4 (one tile, whole Philox calls): vec tile "
              f"{None if tile is None else list(tile)}, shape {list(shape)}; call "
              f"pypto.set_vec_tile_shapes({', '.join(str(int(d)) for d in shape)}) first")
    from .composites import _Composite
    from .conv import _VecTile
    n = math.prod(int(d) for d in shape)
    calls = n // 4
    with _Composite(api), _VecTile(tr) as vt:
        vt.fit([calls])
        # The 128-bit counter [c0 = 0, c1] plus the call index: its low word is the index.
        words = _philox([arange(calls, dtype=DataType.DT_INT64), 0, ctr[1] & _M32,
                         ctr[1] >> 32], (k & _M32, k >> 32))
        words = [w if isinstance(w, Tensor) else None for w in words]
        if any(w is None for w in words):  # ten rounds make every word depend on the index
            raise AssertionError("normal: a Philox word did not depend on the call index")
        f0, f1 = _box_muller(words[0], words[1])
        f2, f3 = _box_muller(words[2], words[3])
        vt.fit([calls, 1])
        cols = [reshape(f, [calls, 1]) for f in (f0, f1, f2, f3)]
        vt.fit([calls, 4])
        flat = reshape(concat(cols, 1), [calls * 4])
        vt.fit([n])
        out = reshape(flat, [int(d) for d in shape])
        if odt is not DataType.DT_FP32:
            vt.fit([int(d) for d in shape])
            out = cast(out, odt)
    return out
