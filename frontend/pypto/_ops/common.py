# SPDX-License-Identifier: Apache-2.0
"""What every op family of the kernel language shares: the compiler's op table, and the
checks and recording helpers built on it (operands, sizes, dtypes, scalars, broadcasting).
Every op records through ``_emit``, which applies the op table's checks."""

from __future__ import annotations

import builtins
import contextlib
import importlib
import numbers
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import _mx, _tracer, ir
from .._dtypes import DataType
from .._enums import TileOpFormat
from .._errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError, user_location
from ..error import short_repr
from .._element import Element
from .._symbolic import SymbolicScalar, as_expr, compare, const_value, smin, to_int
from .._tensor import Tensor
from .not_carried import _NotCarried

_bmax = builtins.max


# --- the op table ---------------------------------------------------------------------------


def _load_op_table() -> Dict[str, Dict[str, Any]]:
    """The compiler's op table (frontend/compiler/include/pypto/compiler/op_table.h), by IR op
    name: family, operand form, arity, dtype rule, needs_vec_tile. Read from ``pypto._C``
    directly (not through ``_backend``), as every build of pypto has it."""
    try:
        native = importlib.import_module("pypto._C")
    except ImportError as e:
        raise ImportError("pypto needs its native module pypto._C, which holds the op table; "
                          "build it with tools/setup.sh") from e
    return {row["name"]: row for row in native.op_table()}


_OPS = _load_op_table()


def _op(name: str) -> Dict[str, Any]:
    """The table row of IR op ``name``."""
    row = _OPS.get(name)
    if row is None:
        raise PyptoRuntimeError(f"internal: op {short_repr(name)} is not in the compiler's op table")
    return row


# --- helpers --------------------------------------------------------------------------------


def _fail(cls, api: str, msg: str):
    raise cls(f"pypto.{api}: {msg} ({user_location()})")


def _tr(api: str) -> _tracer.Tracer:
    return _tracer.require(f"pypto.{api}")


def _val(x: Any, api: str, what: str = "input") -> ir.Value:
    if isinstance(x, Tensor):
        return x._value
    _fail(PyptoTypeError, api, f"{what} must be a pypto.Tensor, got {type(x).__name__} {short_repr(x)}")


def _wrap(v: ir.Value) -> Tensor:
    return Tensor._wrap(v)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (numbers.Number, SymbolicScalar, Element)) and not isinstance(x, Tensor)


def _dim(d: Any, api: str, what: str = "size") -> Any:
    """An int or a non-constant integer SymbolicScalar."""
    if isinstance(d, bool):
        _fail(PyptoTypeError, api, f"{what} must be an int or a symbolic scalar, got bool {d}")
    if isinstance(d, numbers.Integral):
        return int(d)
    if isinstance(d, SymbolicScalar):
        d = to_int(d)  # a comparison is the integer 0 or 1, as in PyPTO
        c = const_value(d)
        return d if c is None else int(c)
    if isinstance(d, _NotCarried):
        d._fail()  # the loop's own error: why the counter could not be carried
    _fail(PyptoTypeError, api, f"{what} must be an int or a symbolic scalar, got "
          f"{type(d).__name__} {short_repr(d)}")


def _dim_eq(a: Any, b: Any) -> Optional[bool]:
    """True/False when decidable, None when two symbolic sizes cannot be compared."""
    c = const_value(compare("eq", as_expr(a), as_expr(b)))
    return None if c is None else bool(c)


def _fmt(shape: Sequence[Any]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _norm_axis(axis: Any, rank: int, api: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        _fail(PyptoTypeError, api, f"dim must be an int, got {short_repr(axis)}")
    a = int(axis)
    if not -rank <= a < rank:
        _fail(PyptoValueError, api, f"dim {axis} is out of range for a {rank}-D tensor "
              f"(expected [{-rank}, {rank - 1}])")
    return a + rank if a < 0 else a


def _need_vec(tr: _tracer.Tracer, api: str) -> None:
    """Rejects op ``api`` outside set_vec_tile_shapes when the op table says it needs one."""
    if _op(api)["needs_vec_tile"] and tr.top.vec_tile is None:
        _fail(PyptoValueError, api, "needs vector tile shapes: call "
              "pypto.set_vec_tile_shapes(...) before it")


@contextlib.contextmanager
def _vec_tile_within(tr: _tracer.Tracer, tile: Optional[Tuple[int, ...]]) -> Iterator[None]:
    """The ops an op emits for itself inside the block take `tile` as the vec tile; the
    kernel's own is back after it, whatever the block raised."""
    saved, tr.top.vec_tile = tr.top.vec_tile, tile
    try:
        yield
    finally:
        tr.top.vec_tile = saved


def _check_numeric(v: ir.Value, api: str) -> None:
    if v.dtype is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, "does not accept DT_BOOL tensors")


def _check_float(v: ir.Value, api: str) -> None:
    if not v.dtype.is_float:
        _fail(PyptoTypeError, api, f"needs a floating-point tensor, got {v.dtype}; "
              "use pypto.cast first")


#: PyPTO's logical_and/or/not take these (docs/api/operation/pypto-logical_*.md): a number is
#: True when it is not 0.
_LOGICAL_DTYPES = (DataType.DT_BOOL, DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16,
                   DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT16, DataType.DT_INT32)


def _check_dtype(op: str, v: ir.Value) -> None:
    """Applies the op table's dtype rule of ``op`` to ``v``, its (first) tensor operand."""
    rule = _op(op)["dtype_rule"]
    if rule in ("numeric", "float", "index"):
        _check_numeric(v, op)
    if rule == "float":
        _check_float(v, op)
    elif rule == "integer" and (v.dtype.is_float or v.dtype is DataType.DT_BOOL):
        _fail(PyptoTypeError, op, f"needs an integer tensor, got {v.dtype}")
    elif rule == "test":
        _check_numeric(v, op)
    elif rule == "logical" and v.dtype not in _LOGICAL_DTYPES:
        _fail(PyptoTypeError, op, f"needs DT_BOOL or numeric tensors "
              f"({', '.join(d.name for d in _LOGICAL_DTYPES)}), got {v.dtype}")
    elif rule == "select" and v.dtype is not DataType.DT_BOOL:
        _fail(PyptoTypeError, op, f"condition must be a DT_BOOL tensor, got {v.dtype}")


def _result_dtype(op: str, dtype: DataType) -> DataType:
    """The result dtype of element-wise ``op`` over operands of ``dtype`` (its dtype rule)."""
    return DataType.DT_BOOL if _op(op)["dtype_rule"] in ("compare", "test", "logical") else dtype


def _emit(tr: _tracer.Tracer, op: str, inputs: Sequence[Any], attrs: Dict[str, Any],
          shape: Sequence[Any], dtype: DataType, fmt: TileOpFormat = TileOpFormat.TILEOP_ND,
          valid_shape: Optional[Sequence[Any]] = None) -> ir.Value:
    """Records op ``op`` (``Tracer.emit_op``) after the op table's checks: a known op, the
    table's number of inputs, a vec tile in force if it needs one."""
    row = _op(op)
    n = row["arity"]
    if (n >= 0 and len(inputs) != n) or (n < 0 and not inputs):
        raise PyptoRuntimeError(f"internal: pypto.{op} recorded {len(inputs)} inputs; the op "
                                f"table says {n if n >= 0 else 'one or more'}")
    _need_vec(tr, op)
    _check_static_operands(op, row["family"], inputs)
    _check_mx_operands(op, row["family"], inputs)
    return tr.emit_op(op, inputs, attrs, shape, dtype, fmt, valid_shape)


#: Ops that take MX-typed tensors (held in a carrier dtype, see pypto._mx) as they are: data
#: movement, and the exact conversions out of the format. Arithmetic on them would compute in
#: the carrier and leave values outside the format.
_MX_FAMILIES = ("view", "reshape", "permute", "concat", "indexed", "matmul")
_MX_OPS = ("cast", "clone", "expand_clone")


def _check_mx_operands(op: str, family: str, inputs: Sequence[Any]) -> None:
    if family in _MX_FAMILIES or op in _MX_OPS:
        return
    for v in inputs:
        if isinstance(v, ir.Value) and _mx.is_mx(v.dtype):
            _fail(PyptoTypeError, op, f"{v.dtype} tensors hold MX-quantized values; pypto.cast "
                  "them to DT_FP32/DT_FP16/DT_BF16 first (pypto.scaled_mm multiplies them)")


#: Op families that compute on their operands' tiles. As in PyPTO, their tensor operands must
#: have concrete sizes: a whole tensor with a DYNAMIC axis (size -1 at compile time) is
#: rejected; a kernel loops over the dynamic axis and computes on pypto.view tiles of static
#: shape (their valid_shape may be symbolic). Moving data (view, reshape, assemble, copies)
#: takes dynamic sizes, and so does scatter_update's destination, which only its rows address.
_STATIC_OPERAND_FAMILIES = frozenset({"elementwise", "reduce", "matmul", "scan", "indexed"})
_DATA_MOVEMENT_OPS = frozenset({"clone", "expand_clone"})


def _check_static_operands(op: str, family: str, inputs: Sequence[Any]) -> None:
    if family not in _STATIC_OPERAND_FAMILIES or op in _DATA_MOVEMENT_OPS:
        return
    for n, v in enumerate(inputs):
        if not isinstance(v, ir.Value):
            continue
        if op in ("scatter_update", "load") and n == 0:
            continue  # addressed by rows / elements in global memory (PyPTO: a GM tensor)
        for axis, d in enumerate(v.shape):
            if const_value(as_expr(d)) is not None:
                continue
            hint = (f"its size {d} is dynamic; loop over the dynamic axis with pypto.loop and "
                    "compute on pypto.view tiles of static shape (valid_shape may be symbolic)")
            if family == "matmul":
                _fail(PyptoValueError, op, f"operand{n + 1} dim[{axis}] = -1, must be > 0 "
                      f"({hint})")
            _fail(PyptoValueError, op, f"Input operand (name: {v.ref()}) at dimension[{axis}] "
                  f"has invalid shape value: -1 ({hint})")


def _scalar(x: Any, dtype: DataType, api: str) -> ir.Scalar:
    if isinstance(x, Element):  # a typed constant: its value, in the tensor's dtype
        x = x.value
    if isinstance(x, SymbolicScalar):
        c = const_value(x)
        if c is None:
            return ir.Scalar(to_int(x), dtype)  # a comparison operand is 0 or 1, as in PyPTO
        x = c
    if isinstance(x, bool):
        if dtype is not DataType.DT_BOOL:
            _fail(PyptoTypeError, api, f"bool scalar {x} with a {dtype} tensor")
        return ir.Scalar(bool(x), dtype)
    if isinstance(x, numbers.Integral):
        return ir.Scalar(int(x), dtype)
    if isinstance(x, numbers.Real):
        if not dtype.is_float:
            _fail(PyptoTypeError, api, f"float scalar {x} with an integer tensor {dtype}; "
                  "cast the tensor first")
        return ir.Scalar(float(x), dtype)
    _fail(PyptoTypeError, api, f"operand must be a pypto.Tensor or a Python number, got "
          f"{type(x).__name__} {short_repr(x)}")


def _broadcast(values: Sequence[ir.Value], api: str) -> Tuple[Tuple[Any, ...],
                                                              Optional[Tuple[Any, ...]]]:
    """Numpy-style broadcast of the shapes; returns (shape, valid_shape or None)."""
    rank = _bmax(v.rank for v in values)
    out: List[Any] = []
    valid: List[Any] = []
    any_valid = any(v.valid_shape is not None for v in values)
    for axis in range(rank):
        dims = []
        for v in values:
            i = axis - (rank - v.rank)
            if i >= 0:
                vs = v.valid_shape[i] if v.valid_shape is not None else v.shape[i]
                dims.append((v.shape[i], vs))
        chosen = None
        for d, vs in dims:
            if _dim_eq(d, 1):
                continue
            if chosen is None:
                chosen = (d, vs)
                continue
            eq = _dim_eq(chosen[0], d)
            if eq is None:
                _fail(PyptoValueError, api, "cannot tell whether the symbolic sizes "
                      f"{chosen[0]} and {d} are equal (shapes "
                      f"{', '.join(_fmt(v.shape) for v in values)}); use pypto.view to make "
                      "tiles of the same shape")
            if not eq:
                _fail(PyptoValueError, api, "cannot broadcast shapes "
                      f"{', '.join(_fmt(v.shape) for v in values)}")
            chosen = (chosen[0], _combine_valid(chosen[1], vs))
        if chosen is None:
            chosen = (1, 1)
        out.append(chosen[0])
        valid.append(chosen[1])
    return tuple(out), (tuple(valid) if any_valid else None)


def _combine_valid(a: Any, b: Any) -> Any:
    if _dim_eq(a, b):
        return a
    c = smin(a, b)
    return const_value(c) if c.is_const() else c


def _simplify(e: Any) -> Any:
    c = const_value(e)
    return e if c is None else int(c)
