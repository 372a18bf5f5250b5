# SPDX-License-Identifier: Apache-2.0
"""Element-wise ops: arithmetic (with the Tensor operators' helpers), math functions,
rounding, comparisons, logical ops, ``where`` and ``clip``. Each follows its op table row's
dtype rule; tensor operands broadcast."""

from __future__ import annotations

import numbers
from typing import Any, Optional

from .. import _tracer, ir
from .._dtypes import DataType
from .._element import Element
from .._enums import OP_ALGORITHMS, LogBaseType, PrecisionType
from .._errors import PyptoNotImplementedError, PyptoTypeError, PyptoValueError
from ..error import short_repr
from .._tensor import Tensor
from .common import (_broadcast, _check_dtype, _dim, _emit, _fail, _fmt, _is_scalar, _need_vec,
                     _result_dtype, _scalar, _tr, _val, _wrap)
from .creation import full
from .movement import cast


def _binary(op: str, x: Any, y: Any, *, attrs: Optional[dict] = None) -> Tensor:
    """x must be a tensor; y a tensor or scalar. Tensors must share a dtype; the op table's
    dtype rule of ``op`` says which and what the result is."""
    tr = _tr(op)
    xv = _val(x, op)
    _check_dtype(op, xv)
    if isinstance(y, Tensor):
        yv = y._value
        if yv.dtype is not xv.dtype:
            _fail(PyptoTypeError, op, f"dtype mismatch: {xv.dtype} and {yv.dtype}; use pypto.cast")
        shape, valid = _broadcast([xv, yv], op)
        inputs = [xv, yv]
    else:
        inputs = [xv, _scalar(y, xv.dtype, op)]
        shape, valid = xv.shape, xv.valid_shape
    return _wrap(_emit(tr, op, inputs, attrs or {}, shape, _result_dtype(op, xv.dtype),
                       valid_shape=valid))


def _commutative(op: str, x: Any, y: Any) -> Tensor:
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x, y = y, x
    return _binary(op, x, y)


def _scaled(api: str, y: Any, alpha: Any) -> Any:
    """``alpha * y`` for add/sub's ``alpha`` (PyPTO: ``x + alpha * y``); ``y`` itself when
    alpha is 1, so the common call records no extra op."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        _fail(PyptoTypeError, api, f"alpha must be a number, got {type(alpha).__name__}")
    if alpha == 1:
        return y
    return mul(y, alpha) if isinstance(y, Tensor) else y * alpha


def add(x: Any, y: Any, alpha: Any = 1) -> Tensor:
    """Element-wise ``x + alpha * y`` (broadcasting; one side may be a Python number)."""
    return _commutative("add", x, _scaled("add", y, alpha))


def sub(x: Any, y: Any, alpha: Any = 1) -> Tensor:
    """Element-wise ``x - alpha * y``."""
    y = _scaled("sub", y, alpha)
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        return _reflected_sub(x, y)
    return _binary("sub", x, y)


def mul(x: Any, y: Any) -> Tensor:
    return _commutative("mul", x, y)


def div(x: Any, y: Any, precision_type: Optional[PrecisionType] = None) -> Tensor:
    """Element-wise ``x / y``; ``precision_type`` defaults to HIGH_PRECISION. DT_INT16 and
    DT_INT32 operands divide in fp32 and give DT_FP32 (PyPTO's div page), as torch's ``/``."""
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        return _reflected_div(x, y)
    attrs = {}
    if precision_type is not None:
        _precision_arg("div", precision_type)
        # DivAlgorithm is PyPTO's later spelling of the same choice.
        attrs["precision_type"] = PrecisionType[precision_type.name]
    xdt = _val(x, "div").dtype
    if xdt in _INT_DIV_TO_FP32:
        if isinstance(y, Tensor):
            if y._value.dtype is not xdt:
                _fail(PyptoTypeError, "div", f"dtype mismatch: {xdt} and {y._value.dtype}; "
                      "use pypto.cast")
            y = cast(y, DataType.DT_FP32)
        elif isinstance(y, float) or (isinstance(y, Element) and y.dtype.is_float):
            # PyPTO's div page: an integer input takes no float scalar (it raises there)
            _fail(PyptoTypeError, "div", f"a {xdt} input divides by an int or a {xdt} tensor, "
                  f"not the float {short_repr(y.value if isinstance(y, Element) else y)}; "
                  "cast the input to a float dtype first")
        x = cast(x, DataType.DT_FP32)
    return _binary("div", x, y, attrs=attrs)


#: The integer dtypes PyPTO's div converts to fp32 (its result is DT_FP32).
_INT_DIV_TO_FP32 = (DataType.DT_INT16, DataType.DT_INT32)


def maximum(x: Any, y: Any) -> Tensor:
    return _commutative("maximum", x, y)


def minimum(x: Any, y: Any) -> Tensor:
    return _commutative("minimum", x, y)


def _precision_arg(api: str, precision_type: Any) -> None:
    # PyPTO's HIGH_PRECISION/INTRINSIC choice of instruction sequence; SIM computes exactly.
    alg = OP_ALGORITHMS.get(api)
    if precision_type is not None and not isinstance(precision_type, PrecisionType) and not (
            alg is not None and isinstance(precision_type, alg)):
        _fail(PyptoTypeError, api, f"precision_type must be a pypto.PrecisionType"
              f"{' or pypto.' + alg.__name__ if alg is not None else ''}, got "
              f"{precision_type!r}")


def _scalar_first(op: str, x: Any, y: Any) -> Tensor:
    """``op(x, y)`` where x may be a number and y a tensor: the number becomes a tensor of
    y's shape and dtype (pypto.full), so non-commutative ops keep their operand order."""
    if not isinstance(x, Tensor) and isinstance(y, Tensor) and _is_scalar(x):
        yv = y._value
        x = full(list(yv.shape), x, yv.dtype, valid_shape=(
            list(yv.valid_shape) if yv.valid_shape is not None else None))
    return _binary(op, x, y)


def remainder(x: Any, y: Any, precision_type: Optional[PrecisionType] = None) -> Tensor:
    """Element-wise ``x - floor(x / y) * y`` (the divisor's sign, torch.remainder); either
    side may be a number."""
    _precision_arg("remainder", precision_type)
    return _scalar_first("remainder", x, y)


def fmod(input: Any, other: Any,  # noqa: A002
         precision_type: Optional[PrecisionType] = None) -> Tensor:
    """Element-wise C remainder ``input - trunc(input / other) * other`` (the dividend's sign,
    torch.fmod); ``other`` may be a number."""
    _precision_arg("fmod", precision_type)
    return _binary("fmod", input, other)


def atan2(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """Element-wise angle of ``(other, input)`` in radians (torch.atan2); float tensors."""
    return _scalar_first("atan2", input, other)


def copysign(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``|input|`` with the sign of ``other`` (torch.copysign; -0.0 counts as negative). PyPTO's
    page also takes DT_INT32 and DT_INT16 tensors, where 0 counts as positive; the op table's
    copysign is float-only, so those are ``where(other < 0, -|input|, |input|)``."""
    if isinstance(input, Tensor) and input._value.dtype in (DataType.DT_INT32,
                                                            DataType.DT_INT16):
        dt = input._value.dtype
        if not isinstance(other, Tensor) or other._value.dtype is not dt:
            _fail(PyptoTypeError, "copysign", f"a {dt} input needs other a {dt} tensor, got "
                  f"{other._value.dtype if isinstance(other, Tensor) else short_repr(other)}")
        magnitude = abs(input)
        return where(lt(other, 0), neg(magnitude), magnitude)
    return _scalar_first("copysign", input, other)


def hypot(self: Tensor, other: Any) -> Tensor:
    """Element-wise ``sqrt(self**2 + other**2)`` without overflow (torch.hypot)."""
    return _commutative("hypot", self, other)


def gcd(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """Element-wise greatest common divisor of integer tensors (non-negative; gcd(0, 0) = 0)."""
    return _commutative("gcd", input, other)


def floor_div(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Element-wise integer division rounded toward -inf (torch.floor_divide on integers)."""
    return _scalar_first("floor_div", input, other)


def ceil_div(self: Any, other: Any) -> Tensor:
    """Element-wise integer division rounded toward +inf."""
    return _scalar_first("ceil_div", self, other)


def bitwise_and(self: Tensor, other: Any) -> Tensor:
    return _commutative("bitwise_and", self, other)


def bitwise_or(self: Tensor, other: Any) -> Tensor:
    return _commutative("bitwise_or", self, other)


def bitwise_xor(self: Tensor, other: Any) -> Tensor:
    return _commutative("bitwise_xor", self, other)


def bitwise_left_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input << other`` (integers; torch's: a count outside [0, bits) gives 0)."""
    return _scalar_first("bitwise_left_shift", input, other)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input >> other``, arithmetic (a count outside [0, bits) fills with the sign)."""
    return _scalar_first("bitwise_right_shift", input, other)


def pow(x: Any, y: Any, precision_type: Any = None) -> Tensor:  # noqa: A001
    """Element-wise ``x ** y``; ``y`` may be a tensor (of another dtype: both promote as
    :func:`_pow_result_dtype` says) or a number. ``precision_type`` (PrecisionType or
    PowAlgorithm) is checked; SIM computes the exact result."""
    _precision_arg("pow", precision_type)
    if not isinstance(x, Tensor):
        _fail(PyptoNotImplementedError, "pow", "a scalar base is not supported; write "
              "pypto.exp(y * math.log(base))")
    xdt = _val(x, "pow").dtype
    if isinstance(y, Tensor):
        to = _pow_result_dtype(xdt, y._value.dtype)
        if to is not None:
            x, y = (t if t._value.dtype is to else cast(t, to) for t in (x, y))
    elif xdt is DataType.DT_INT32 and isinstance(y, float):
        x = cast(x, DataType.DT_FP32)  # PyPTO's pow page: an int32 base to a float gives fp32
    return _binary("pow", x, y)


#: PyPTO's pow page orders the dtypes it promotes between: fp32 > fp16 > bf16 > int32.
_POW_RANK = {DataType.DT_FP32: 3, DataType.DT_FP16: 2, DataType.DT_BF16: 1, DataType.DT_INT32: 0}


def _pow_result_dtype(a: DataType, b: DataType) -> Optional[DataType]:
    """The dtype two tensor operands of pow of different dtypes compute in (PyPTO's pow page:
    the larger of the two, fp32 for fp16 with bf16), or None: no promotion between them."""
    if a is b or a not in _POW_RANK or b not in _POW_RANK:
        return None
    if {a, b} == {DataType.DT_FP16, DataType.DT_BF16}:
        return DataType.DT_FP32
    return a if _POW_RANK[a] > _POW_RANK[b] else b


def _reflected_sub(s: Any, t: Tensor) -> Tensor:
    # s - t == -(t - s): keeps the scalar in the second operand slot (as PyPTO lowers it).
    return neg(_binary("sub", t, s))


def _reflected_div(s: Any, t: Tensor) -> Tensor:
    # s / t == reciprocal(t) * s; an integer t divides in fp32, as div's integer operands do.
    if _val(t, "div").dtype in _INT_DIV_TO_FP32:
        t = cast(t, DataType.DT_FP32)
    return _binary("mul", reciprocal(t), s)


def _binary_operator(op: str, x: Tensor, y: Any) -> Any:
    if not isinstance(y, Tensor) and not _is_scalar(y):
        return NotImplemented
    if op == "add":
        return add(x, y)
    if op == "sub":
        return sub(x, y)
    if op == "mul":
        return mul(x, y)
    if op == "div":
        return div(x, y)
    return _binary(op, x, y)


def _emit_same_shape(tr: _tracer.Tracer, op: str, xv: ir.Value) -> Tensor:
    """Records a one-input op whose result has the input's shape, valid shape and dtype."""
    return _wrap(_emit(tr, op, [xv], {}, xv.shape, xv.dtype, valid_shape=xv.valid_shape))


def _unary(op: str, x: Any) -> Tensor:
    tr = _tr(op)
    xv = _val(x, op)
    _check_dtype(op, xv)
    return _wrap(_emit(tr, op, [xv], {}, xv.shape, _result_dtype(op, xv.dtype),
                       valid_shape=xv.valid_shape))


def _unary_op(op: str):
    """The public wrapper ``pypto.<op>(x)`` of an element-wise math op (same name, signature
    and module as a hand-written ``def``); its dtype rule is the op table's."""

    def wrapper(x: Tensor) -> Tensor:
        return _unary(op, x)

    wrapper.__name__ = wrapper.__qualname__ = op
    return wrapper


neg = _unary_op("neg")
abs = _unary_op("abs")  # noqa: A001
relu = _unary_op("relu")


def _precise_unary_op(op: str):
    """``pypto.<op>(x, precision_type=None)``: PrecisionType or the op's algorithm enum
    (ExpAlgorithm, ...), checked; SIM computes the exact result either way."""

    def wrapper(x: Tensor, precision_type: Any = None) -> Tensor:
        _precision_arg(op, precision_type)
        return _unary(op, x)

    wrapper.__name__ = wrapper.__qualname__ = op
    return wrapper


exp = _precise_unary_op("exp")
sqrt = _precise_unary_op("sqrt")
rsqrt = _precise_unary_op("rsqrt")
reciprocal = _precise_unary_op("reciprocal")


def log(input: Tensor, base: Any = None, precision_type: Any = None) -> Tensor:  # noqa: A002
    """Element-wise logarithm: natural, or of ``base`` (a pypto.LogBaseType: LOG_E, LOG_2,
    LOG_10). As in PyPTO, the second argument may instead be the precision (PrecisionType or
    LogAlgorithm), which SIM checks and computes exactly either way."""
    if base is not None and not isinstance(base, LogBaseType):
        base, precision_type = None, base if precision_type is None else precision_type
    _precision_arg("log", precision_type)
    op = {None: "log", LogBaseType.LOG_E: "log", LogBaseType.LOG_2: "log2",
          LogBaseType.LOG_10: "log10"}[base]
    return _unary(op, input)
sigmoid = _unary_op("sigmoid")
tanh = _unary_op("tanh")


def floor(x: Tensor) -> Tensor:
    """Rounds toward -inf (float tensors); integer tensors are returned unchanged."""
    if isinstance(x, Tensor) and not x._value.dtype.is_float:
        return x
    return _unary("floor", x)


def ceil(x: Tensor) -> Tensor:
    """Rounds toward +inf (float tensors); integer tensors are returned unchanged."""
    if isinstance(x, Tensor) and not x._value.dtype.is_float:
        return x
    return _unary("ceil", x)


def trunc(x: Tensor) -> Tensor:
    """Rounds toward zero (float tensors); integer tensors are returned unchanged."""
    if isinstance(x, Tensor) and not x._value.dtype.is_float:
        return x
    return _unary("trunc", x)


def _param_op(op: str, x: Any, param: Any, param_dtype: DataType, attrs: dict) -> Tensor:
    """Records a one-tensor op with a scalar parameter (the op table's form "param")."""
    tr = _tr(op)
    xv = _val(x, op)
    _check_dtype(op, xv)
    _need_vec(tr, op)
    sc = _scalar(param, param_dtype, op)
    return _wrap(_emit(tr, op, [xv, sc], attrs, xv.shape, xv.dtype, valid_shape=xv.valid_shape))


def round(x: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyPTO's name
    """Rounds half to even at ``decimals`` decimal places (negative: left of the point), like
    ``torch.round(x, decimals=...)``; integer tensors are returned unchanged."""
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        _fail(PyptoTypeError, "round", f"decimals must be an int, got {short_repr(decimals)}")
    if isinstance(x, Tensor) and not x._value.dtype.is_float:
        return x
    return _param_op("round", x, int(decimals), DataType.DT_INT32, {"decimals": int(decimals)})


sign = _unary_op("sign")
erf = _unary_op("erf")
erfc = _unary_op("erfc")
sin = _unary_op("sin")
cos = _unary_op("cos")
log1p = _unary_op("log1p")
expm1 = _unary_op("expm1")
exp2 = _unary_op("exp2")
log2 = _precise_unary_op("log2")
log10 = _precise_unary_op("log10")
cbrt = _unary_op("cbrt")
cosh = _unary_op("cosh")
sinh = _unary_op("sinh")
tan = _unary_op("tan")
asin = _unary_op("asin")
acos = _unary_op("acos")
atan = _unary_op("atan")
acosh = _unary_op("acosh")
asinh = _unary_op("asinh")
atanh = _unary_op("atanh")
isfinite = _unary_op("isfinite")
isnan = _unary_op("isnan")
isinf = _unary_op("isinf")
signbit = _unary_op("signbit")
bitwise_not = _unary_op("bitwise_not")


def lrelu(x: Tensor, negative_slope: Any = 0.01) -> Tensor:
    """Leaky ReLU: ``x`` where ``x >= 0``, else ``negative_slope * x`` (the slope is used as
    an FP32 value, like PyPTO's ``Element(DT_FP32, slope)``)."""
    if isinstance(negative_slope, bool) or not isinstance(negative_slope, numbers.Real):
        _fail(PyptoTypeError, "lrelu", f"negative_slope must be a number, got {short_repr(negative_slope)}")
    return _param_op("lrelu", x, float(negative_slope), DataType.DT_FP32, {})


def _triangle(op: str, x: Any, diagonal: Any) -> Tensor:
    xv = _val(x, op)
    if xv.rank < 2:
        _fail(PyptoValueError, op, f"needs a tensor of rank 2 or more, got {_fmt(xv.shape)}")
    d = _dim(diagonal, op, "diagonal")
    return _param_op(op, x, d, DataType.DT_INT32, {})


def triu(x: Tensor, diagonal: Any = 0) -> Tensor:
    """The upper triangle of the last two axes (on and above ``diagonal``), zeros elsewhere.
    ``diagonal`` may be an int or a symbolic scalar (in the whole tensor's coordinates)."""
    return _triangle("triu", x, diagonal)


def tril(x: Tensor, diagonal: Any = 0) -> Tensor:
    """The lower triangle of the last two axes (on and below ``diagonal``), zeros elsewhere."""
    return _triangle("tril", x, diagonal)


_FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _compare(op: str, x: Any, y: Any) -> Tensor:
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        op, x, y = _FLIPPED[op], y, x
    return _binary(op, x, y)


def _compare_operator(op: str, x: Tensor, y: Any) -> Any:
    if not isinstance(y, Tensor) and not _is_scalar(y):
        return NotImplemented
    return _compare(op, x, y)


def _compare_op(op: str, doc: Optional[str] = None):
    """The public wrapper ``pypto.<op>(x, y)`` of an element-wise comparison."""

    def wrapper(x: Any, y: Any) -> Tensor:
        return _compare(op, x, y)

    wrapper.__name__ = wrapper.__qualname__ = op
    wrapper.__doc__ = doc
    return wrapper


eq = _compare_op("eq", """Element-wise ``x == y`` as DT_BOOL.""")
ne = _compare_op("ne")
lt = _compare_op("lt")
le = _compare_op("le")
gt = _compare_op("gt")
ge = _compare_op("ge")


def _logical(op: str, x: Any, y: Any = None) -> Tensor:
    for t in (x, y) if y is not None else (x,):
        if isinstance(t, Tensor):
            _check_dtype(op, t._value)
    if y is None:
        xv = _val(x, op)
        return _wrap(_emit(_tr(op), op, [xv], {}, xv.shape, DataType.DT_BOOL,
                           valid_shape=xv.valid_shape))
    if not isinstance(x, Tensor):
        x, y = y, x
    return _binary(op, x, y)


def logical_and(x: Any, y: Any) -> Tensor:
    return _logical("logical_and", x, y)


def logical_or(x: Any, y: Any) -> Tensor:
    return _logical("logical_or", x, y)


def logical_not(x: Tensor) -> Tensor:
    return _logical("logical_not", x)


def where(condition: Tensor, x: Any, y: Any) -> Tensor:
    """Element-wise ``x if condition else y``; x and y may be tensors, numbers or
    pypto.Element. With two scalars the result has the condition's shape and the Elements'
    dtype, DT_FP32 for plain numbers (PyPTO turns a number into a DT_FP32 Element)."""
    tr = _tr("where")
    cv = _val(condition, "where", "condition")
    _check_dtype("where", cv)
    tensors = [t._value for t in (x, y) if isinstance(t, Tensor)]
    if not tensors:
        kinds = {t.dtype for t in (x, y) if isinstance(t, Element)}
        if len(kinds) > 1:
            _fail(PyptoTypeError, "where", f"the Elements' dtypes differ: {x.dtype} and {y.dtype}")
        dtype = kinds.pop() if kinds else DataType.DT_FP32
        inputs = [cv] + [_scalar(t, dtype, "where") for t in (x, y)]
        return _wrap(_emit(tr, "where", inputs, {}, cv.shape, dtype,
                           valid_shape=cv.valid_shape))
    dtype = tensors[0].dtype
    if any(t.dtype is not dtype for t in tensors):
        _fail(PyptoTypeError, "where", f"dtype mismatch: {tensors[0].dtype} and {tensors[1].dtype}")
    inputs = [cv] + [t._value if isinstance(t, Tensor) else _scalar(t, dtype, "where")
                     for t in (x, y)]
    shape, valid = _broadcast([cv] + tensors, "where")
    return _wrap(_emit(tr, "where", inputs, {}, shape, dtype, valid_shape=valid))


def clip(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamps to ``[min, max]`` (either may be None, a number or a tensor). Recorded as
    ``maximum`` then ``minimum`` with attribute ``composite="clip"``; with neither bound it is
    a copy of ``x``, as PyPTO's clip page gives it."""
    tr = _tr("clip")
    _val(x, "clip")
    if min is None and max is None:
        from .movement import clone  # movement imports this module
        return clone(x)
    saved, tr.composite = tr.composite, "clip"
    try:
        out = x
        if min is not None:
            out = _binary("maximum", out, min)
        if max is not None:
            out = _binary("minimum", out, max)
    finally:
        tr.composite = saved
    return out
