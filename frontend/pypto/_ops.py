# SPDX-License-Identifier: Apache-2.0
"""The kernel language: tiling, control flow and tensor operations usable in a jit kernel.

Every function records into the kernel being traced (see ``_tracer``) and returns a new
``Tensor`` handle; none computes data. Shapes may hold SymbolicScalars (dynamic axes, tails).

Example::

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 128)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 64)):
            rows = pypto.min(n - i * 64, 64)
            t = pypto.view(x, [64, 128], [i * 64, 0], valid_shape=[rows, 128])
            y[i * 64:, :] = pypto.exp(t)
"""

from __future__ import annotations

import builtins
import importlib
import math
import numbers
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _options, _tracer
from . import ir
from ._dtypes import DataType
from ._enums import (CastMode, PrecisionType, ReLuType, SaturationMode, TileOpFormat,
                     TransMode)
from ._errors import (PyptoNotImplementedError, PyptoRuntimeError, PyptoTypeError,
                      PyptoValueError, user_location)
from .error import short_repr
from ._symbolic import (SymbolicScalar, as_expr, compare, const_value, floordiv, load,
                        smax, smin, to_int)
from ._source import assignment_lines, loop_carried_names, loop_live_out_names
from ._tensor import Tensor

_bmin, _bmax, _bsum, _babs = builtins.min, builtins.max, builtins.sum, builtins.abs

__all__ = [
    "set_vec_tile_shapes", "get_vec_tile_shapes", "set_cube_tile_shapes", "set_semantic_label",
    "loop", "is_loop_begin", "is_loop_end", "cond", "min", "max", "ceildiv",
    "view", "assemble", "reshape", "transpose", "permute", "unsqueeze", "expand_clone",
    "concat", "cast", "clone", "full", "zeros", "ones",
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal",
    "relu", "sigmoid", "tanh", "floor", "maximum", "minimum", "remainder", "clip", "where", "pow",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not",
    "sum", "amax", "amin", "softmax", "matmul",
    "ceil", "trunc", "round", "sign", "erf", "erfc", "sin", "cos", "log1p", "expm1", "lrelu",
    "triu", "tril", "prod", "argmax", "argmin", "cumsum", "cumprod", "loop_unroll",
    "gather", "scatter", "scatter_", "scatter_update", "ReLuType", "TransMode",
    "exp2", "log2", "log10", "cbrt", "cosh", "sinh",
    "tan", "asin", "acos", "atan", "atan2", "copysign", "hypot", "fmod", "isfinite", "isnan",
    "isinf", "signbit", "gcd", "floor_div", "ceil_div", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "arange",
    "one_hot", "index_select", "index_add", "index_add_", "topk", "argsort", "sort",
    "LReLU", "axpy", "axpy_", "prelu", "rms_norm", "pad", "var", "std",
    "expand_exp_dif", "fillpad", "gathermask", "quantize", "dequantize", "indexput_",
    "atomic_add",
]


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
    return isinstance(x, (numbers.Number, SymbolicScalar)) and not isinstance(x, Tensor)


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


def _check_numeric(v: ir.Value, api: str) -> None:
    if v.dtype is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, "does not accept DT_BOOL tensors")


def _check_float(v: ir.Value, api: str) -> None:
    if not v.dtype.is_float:
        _fail(PyptoTypeError, api, f"needs a floating-point tensor, got {v.dtype}; "
              "use pypto.cast first")


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
    elif rule == "logical" and v.dtype is not DataType.DT_BOOL:
        _fail(PyptoTypeError, op, f"needs DT_BOOL tensors, got {v.dtype}")
    elif rule == "select" and v.dtype is not DataType.DT_BOOL:
        _fail(PyptoTypeError, op, f"condition must be a DT_BOOL tensor, got {v.dtype}")


def _result_dtype(op: str, dtype: DataType) -> DataType:
    """The result dtype of element-wise ``op`` over operands of ``dtype`` (its dtype rule)."""
    return DataType.DT_BOOL if _op(op)["dtype_rule"] in ("compare", "test") else dtype


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
    return tr.emit_op(op, inputs, attrs, shape, dtype, fmt, valid_shape)


#: Op families that compute on their operands' tiles. As in PyPTO, their tensor operands must
#: have concrete sizes: a whole tensor with a DYNAMIC axis (size -1 at compile time) is
#: rejected; a kernel loops over the dynamic axis and computes on pypto.view tiles of static
#: shape (their valid_shape may be symbolic). Moving data (view, reshape, assemble, copies)
#: takes dynamic sizes.
_STATIC_OPERAND_FAMILIES = frozenset({"elementwise", "reduce", "matmul", "scan", "indexed"})
_DATA_MOVEMENT_OPS = frozenset({"clone", "expand_clone"})


def _check_static_operands(op: str, family: str, inputs: Sequence[Any]) -> None:
    if family not in _STATIC_OPERAND_FAMILIES or op in _DATA_MOVEMENT_OPS:
        return
    for n, v in enumerate(inputs):
        if not isinstance(v, ir.Value):
            continue
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


# --- tiling and labels -----------------------------------------------------------------------


def set_vec_tile_shapes(*dims: Any) -> None:
    """Vector tile size per axis (1 to 4 positive ints) for the ops that follow in this scope.

    Example: ``pypto.set_vec_tile_shapes(64, 128)``. Scoped like PyPTO's config: a value set
    inside a pypto.loop body is in force until the end of that body only.
    """
    tr = _tracer.current()  # outside a kernel: the current pypto.options scope
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    if not 1 <= len(dims) <= 4:
        _fail(PyptoValueError, "set_vec_tile_shapes", f"expects 1 to 4 sizes, got {len(dims)}")
    out = []
    for i, d in enumerate(dims):
        c = const_value(d) if not isinstance(d, bool) else None
        if c is None or isinstance(c, bool) or c <= 0:
            _fail(PyptoValueError, "set_vec_tile_shapes",
                  f"size {i} is {short_repr(d)}; every size must be a positive int")
        out.append(int(c))
    if tr is None:
        _options.set_options(vec_tile_shapes=out)
    else:
        tr.top.vec_tile = tuple(out)


def get_vec_tile_shapes() -> List[int]:
    """The vector tile shape in force (in the kernel being traced, else in the current
    pypto.options scope) as a list, as PyPTO returns it; [] when none was set."""
    tr = _tracer.current()
    v = tr.top.vec_tile if tr is not None else _options.scope_vec_tile()
    return [] if v is None else list(v)


def _tile_pair(x: Any, what: str, sizes: Tuple[int, ...]) -> Tuple[int, ...]:
    api = "set_cube_tile_shapes"
    if not isinstance(x, (list, tuple)) or len(x) not in sizes:
        _fail(PyptoValueError, api, f"{what} must be a list [L0, L1]"
              f"{' or [L0, L1a, L1b]' if 3 in sizes else ''}, got {short_repr(x)}")
    vals = []
    for v in x:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v <= 0:
            _fail(PyptoValueError, api, f"{what} entries must be positive ints, got {short_repr(x)}")
        vals.append(int(v))
    for l1 in vals[1:]:
        if l1 % vals[0] != 0:
            _fail(PyptoValueError, api, f"{what}: L1 tile {l1} is not a multiple of the L0 tile "
                  f"{vals[0]}")
    return tuple(vals)


def set_cube_tile_shapes(m: Sequence[int], k: Sequence[int], n: Sequence[int],
                         enable_split_k: bool = False) -> None:
    """Cube (matmul) tiling: each of m, k, n is ``[L0, L1]``; k may have a third entry (the L1
    tile of the right operand; defaults to k[1]). Required before ``pypto.matmul``.

    Example: ``pypto.set_cube_tile_shapes([64, 64], [64, 256], [128, 128])``.
    """
    tr = _tracer.current()  # outside a kernel: the current pypto.options scope
    mm = _tile_pair(m, "m", (2,))
    kk = _tile_pair(k, "k", (2, 3))
    nn = _tile_pair(n, "n", (2,))
    if len(kk) == 2:
        kk = (kk[0], kk[1], kk[1])
    if not isinstance(enable_split_k, bool):
        _fail(PyptoTypeError, "set_cube_tile_shapes", "enable_split_k must be a bool")
    cube = ir.CubeTile(m=mm, k=kk, n=nn, enable_split_k=enable_split_k)
    if tr is None:
        _options.set_options(cube_tile_shapes=cube)
    else:
        tr.top.cube_tile = cube


def set_semantic_label(label: str) -> None:
    """Attaches ``label`` to the ops that follow in this scope (used by pass options)."""
    import re

    tr = _tr("set_semantic_label")
    if not isinstance(label, str) or not label:
        _fail(PyptoTypeError, "set_semantic_label", f"label must be a non-empty str, got {short_repr(label)}")
    if re.fullmatch(r"func\d+_\d+", label):
        _fail(PyptoValueError, "set_semantic_label",
              f"label {short_repr(label)} is reserved (pattern func<N>_<M>)")
    tr.top.label = label


# --- control flow ----------------------------------------------------------------------------


def _loop_bound(x: Any, what: str) -> Any:
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, SymbolicScalar)):
        _fail(PyptoTypeError, "loop", f"{what} must be an int or a symbolic scalar, got "
              f"{type(x).__name__} {short_repr(x)}")
    return _dim(x, "loop", what)


class loop:
    """A device loop: ``for i in pypto.loop(stop)`` / ``pypto.loop(start, stop, step=1, *, name,
    idx_name, unroll_list, parallel, submit_before_loop)``.

    ``i`` is a SymbolicScalar. The body is traced once per path through symbolic ``if``
    conditions (``if pypto.is_loop_begin(i):``); each path becomes a guarded root variant.
    ``parallel=True`` promises independent iterations (with ``device_sched_parallelism``).
    ``break`` and ``return`` are not allowed in the body; ``continue`` ends the iteration.
    Tensors made in the body leave it through variables: a tensor variable the body reads and
    then rebinds (``acc = acc + t``) is carried from one iteration to the next as in Python,
    through a buffer of its shape and dtype made before the loop (the same as writing
    ``acc[:] = acc + t``); a variable the body binds and the code after the loop reads (PyPTO's
    liveness) gets such a buffer too, unfilled, so it holds the last iteration's value. After
    the loop the variable is that buffer. Other ways out (a list) are rejected at the use.
    A Python int (or symbolic scalar) that the body reads and then reassigns is carried from
    one iteration to the next as in Python, provided each iteration adds the same loop-invariant
    amount (``off += tile``): iteration k sees ``init + k * tile`` and after the loop the
    variable holds ``init + trip_count * tile``.
    """

    def __init__(self, *args: Any, name: Optional[str] = None, idx_name: Optional[str] = None,
                 unroll_list: Optional[Sequence[int]] = None, parallel: bool = False,
                 submit_before_loop: bool = False):
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            _fail(PyptoTypeError, "loop", f"expects (stop), (start, stop) or (start, stop, step), "
                  f"got {len(args)} positional arguments")
        self.start = _loop_bound(start, "start")
        self.stop = _loop_bound(stop, "stop")
        self.step = _loop_bound(step, "step")
        if isinstance(self.step, SymbolicScalar) or self.step <= 0:
            _fail(PyptoValueError, "loop", f"step must be a positive int, got {short_repr(step)}")
        if name is not None and not isinstance(name, str):
            _fail(PyptoTypeError, "loop", f"name must be a str, got {short_repr(name)}")
        if idx_name is not None and (not isinstance(idx_name, str) or not idx_name.isidentifier()):
            _fail(PyptoValueError, "loop", f"idx_name must be an identifier, got {short_repr(idx_name)}")
        for flag, fname in ((parallel, "parallel"), (submit_before_loop, "submit_before_loop")):
            if not isinstance(flag, bool):
                _fail(PyptoTypeError, "loop", f"{fname} must be a bool, got {short_repr(flag)}")
        factors = {1}
        if unroll_list is not None:
            if not isinstance(unroll_list, (list, tuple)):
                _fail(PyptoTypeError, "loop", f"unroll_list must be a list of ints, got "
                      f"{short_repr(unroll_list)}")
            for f in unroll_list:
                if isinstance(f, bool) or not isinstance(f, numbers.Integral) or f <= 0:
                    _fail(PyptoValueError, "loop", f"unroll_list entries must be positive ints, "
                          f"got {short_repr(unroll_list)}")
                factors.add(int(f))
        self.unroll_list = tuple(sorted(factors, reverse=True))
        self.name = name
        self.idx_name = idx_name
        self.parallel = parallel
        self.submit_before_loop = submit_before_loop
        self.loc = user_location()

    def __iter__(self):
        return self._iterate(sys._getframe(1))  # the frame running the `for` statement

    def _iterate(self, frame):
        tr = _tr("loop")
        where = f"pypto.loop at {self.loc}"
        ol = tr.begin_loop(self.start, self.stop, self.step, idx_name=self.idx_name,
                           name=self.name, parallel=self.parallel,
                           unroll_list=self.unroll_list,
                           submit_before_loop=self.submit_before_loop, loc=self.loc)
        lv = _LoopVars(frame, where)
        mark = tr.mark()
        # The body is first traced with the carried variables' values at loop entry. When a
        # path changes a carried int, the trace so far is dropped and the body traced again
        # with that int as a placeholder symbol, until no further variable starts moving.
        # A carried tensor (read, then rebound: ``y = x + y``) gets a buffer made before the
        # loop and holding its entry value; the body reads the buffer and each path writes
        # its new value back into it, so the loop computes what Python's loop would.
        while True:
            explorer = _tracer.PathExplorer(where)
            updates: Dict[str, List[Any]] = {n: [] for n in lv.moving}
            restart = False
            while explorer.start_path():
                lv.start_path()
                scope = tr.push_variant(ol.node, explorer)
                snapshot = _watched_locals(frame, lv.carried)
                yield ol.index
                tr.check_top(scope, where)
                lv.write_back(frame)
                moved, tensors = _check_rebinding(frame, snapshot, lv, scope)
                tr.pop_variant(scope, where)
                explorer.end_path()
                live = lv.live_out_tensors(tr, frame)
                if tensors:
                    lv.add_tensor_carries(tr, ol.node, tensors)
                if live:
                    lv.add_live_out_buffers(tr, ol.node, live)
                if moved:
                    lv.add_moving(tr, moved)
                if moved or tensors or live:
                    restart = True
                    break
                now = frame.f_locals
                for n in lv.moving:
                    updates[n].append(now.get(n))
            if not restart:
                break
            tr.rewind(mark, ol.node)
        tr.end_loop(ol)
        if lv.moving:
            lv.finish(tr, ol, updates)
        lv.finish_tensors()


def loop_unroll(*args: Any, unroll_list: Sequence[int], name: Optional[str] = None,
                idx_name: Optional[str] = None, parallel: bool = False,
                submit_before_loop: bool = False):
    """``for i, n in pypto.loop_unroll(start, stop, step=1, *, unroll_list=[...])``: like
    pypto.loop, but a separate device loop per unroll factor f (descending, 1 always added),
    each stepping by ``step * f`` over as many iterations as fit in multiples of f (the rest
    goes to the next smaller factor). The body is traced once per factor and gets the index
    and ``n = step * f``, the number of (unit-step) iterations it covers."""
    outer = sys._getframe(1)  # the frame running the `for` statement
    spec = loop(*args, name=name, idx_name=idx_name, unroll_list=unroll_list, parallel=parallel,
                submit_before_loop=submit_before_loop)
    if not isinstance(unroll_list, (list, tuple)) or not unroll_list:
        _fail(PyptoValueError, "loop_unroll", f"unroll_list must be a non-empty list of ints, "
              f"got {short_repr(unroll_list)}")
    return _unrolled(spec, outer)


def _unrolled(spec: "loop", frame):
    begin = spec.start
    for f in spec.unroll_list:
        span = spec.step * f
        count = max(floordiv(as_expr(spec.stop) - begin, as_expr(span)), 0)
        end = _simplify(as_expr(begin) + count * span)
        idx = None if spec.idx_name is None else f"{spec.idx_name}_x{f}"  # names stay unique
        part = loop(begin, end, span, name=spec.name, idx_name=idx,
                    parallel=spec.parallel, submit_before_loop=spec.submit_before_loop)
        part.loc = spec.loc
        for i in part._iterate(frame):
            yield i, span
        begin = end


def _watched_locals(frame, carried) -> dict:
    return {k: v for k, v in frame.f_locals.items()
            if k in carried or isinstance(v, (Tensor, SymbolicScalar))}


def _set_locals(frame, values: Dict[str, Any]) -> None:
    """Rebinds local variables of ``frame`` (the kernel function running a ``for`` over a
    pypto.loop), so that its body reads a loop-carried int as an expression of the index."""
    if not values:
        return
    if sys.version_info >= (3, 13):  # PEP 667: f_locals writes through to the frame
        for k, v in values.items():
            frame.f_locals[k] = v
        return
    import ctypes  # noqa: PLC0415 - only loops with carried ints need it

    frame.f_locals.update(values)
    to_fast = ctypes.pythonapi.PyFrame_LocalsToFast
    to_fast.argtypes = [ctypes.py_object, ctypes.c_int]
    to_fast.restype = None
    to_fast(frame, 0)


def _carriable(x: Any) -> bool:
    """An int or integer SymbolicScalar: what a pypto.loop can carry across iterations."""
    if isinstance(x, SymbolicScalar):
        return not x.is_bool
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _same_scalar(old: Any, new: Any) -> bool:
    if isinstance(old, SymbolicScalar) or isinstance(new, SymbolicScalar):
        return (isinstance(old, SymbolicScalar) and isinstance(new, SymbolicScalar)
                and old.key == new.key)
    return (isinstance(old, numbers.Number) and isinstance(new, numbers.Number)
            and old == new)


def _reads_data(e: SymbolicScalar) -> bool:
    """Whether ``e`` contains a read of tensor data (``x[i, j]`` of an input tensor)."""
    if e.op == "load":
        return True
    if e.op in ("const", "bool", "sym"):
        return False
    return any(_reads_data(a) for a in e.args)


class _LoopVars:
    """The loop-carried variables of one pypto.loop body (names the body reads before it
    assigns them, from the bytecode) and the ints among them that change per iteration."""

    def __init__(self, frame, where: str):
        self.frame = frame
        self.where = where
        self.code, self.lasti = frame.f_code, frame.f_lasti
        self.carried = loop_carried_names(self.code, self.lasti)
        #: Names the body binds that the code after the loop reads (PyPTO's liveness: a tensor
        #: made in the body is used after the loop, holding the last iteration's value).
        self.live_out = loop_live_out_names(self.code, self.lasti) - self.carried
        self.entry = {k: v for k, v in frame.f_locals.items() if k in self.carried}
        self.moving: Dict[str, SymbolicScalar] = {}  # name -> placeholder symbol
        self.buffers: Dict[str, Tensor] = {}  # carried tensor name -> its loop buffer

    def assigned_at(self, name: str) -> str:
        file = self.code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
        lines = assignment_lines(self.code, self.lasti, name)
        return ", ".join(f"{file}:{n}" for n in lines) or self.where

    def start_path(self) -> None:
        _set_locals(self.frame, {**self.moving, **self.buffers})

    def add_tensor_carries(self, tr: _tracer.Tracer, loop_node: Any,
                           names: List[Tuple[str, Tensor]]) -> None:
        """Buffers for carried tensors, made (and filled with the entry values) just before
        the loop statement."""
        body = tr.top.variant.body
        at = next(i for i, st in enumerate(body) if st is loop_node)
        for name, entry in names:
            buf = alloc(list(entry.shape), entry.dtype, entry.format)
            _setitem(buf, slice(None), entry)
            self.buffers[name] = buf
        # alloc and the copy were appended after the loop: move them in front of it.
        moved = body[at + 1:]
        del body[at + 1:]
        body[at:at] = moved

    def live_out_tensors(self, tr: _tracer.Tracer, frame) -> List[Tuple[str, Tensor]]:
        """(name, value) of live-out variables this path bound to a tensor made in the body
        (invisible after the loop) that have no buffer yet. Called after the path's scope
        is popped, so ``tr.top`` is the scope the loop statement is in."""
        now = frame.f_locals
        found: List[Tuple[str, Tensor]] = []
        for name in sorted(self.live_out):
            v = now.get(name)
            if name in self.buffers or not isinstance(v, Tensor):
                continue
            made_in = tr.value_scope(v._value)
            if made_in is None or not tr.top.is_within(made_in):
                found.append((name, v))
        return found

    def add_live_out_buffers(self, tr: _tracer.Tracer, loop_node: Any,
                             names: List[Tuple[str, Tensor]]) -> None:
        """Buffers for live-out tensors, made just before the loop statement (no entry
        value: each path writes its value at its end, so after the loop the variable holds
        the last iteration's)."""
        body = tr.top.variant.body
        at = next(i for i, st in enumerate(body) if st is loop_node)
        for name, v in names:
            self.buffers[name] = alloc(list(v.shape), v.dtype, v.format)
        moved = body[at + 1:]
        del body[at + 1:]
        body[at:at] = moved

    def write_back(self, frame) -> None:
        """At the end of a path, the carried tensors' new values go into their buffers."""
        if not self.buffers:
            return
        now = frame.f_locals
        for name, buf in self.buffers.items():
            new = now.get(name, buf)
            if new is buf:
                continue
            if not isinstance(new, Tensor):
                raise _carried_error(self.where, name, buf, new)
            if tuple(new.shape) != tuple(buf.shape) or new.dtype != buf.dtype:
                raise PyptoValueError(
                    f"{self.where}: variable '{name}' is carried from one iteration to the "
                    f"next (read in the body, then reassigned), but the body changes it from "
                    f"shape {_fmt(buf.shape)} {buf.dtype} to shape {_fmt(new.shape)} "
                    f"{new.dtype}; a carried tensor keeps its shape and dtype")
            _setitem(buf, slice(None), new)

    def finish_tensors(self) -> None:
        _set_locals(self.frame, dict(self.buffers))

    def add_moving(self, tr: _tracer.Tracer, names: List[str]) -> None:
        for n in names:
            self.moving[n] = tr.new_carried(n, f"variable '{n}' of the {self.where}")

    def error(self, name: str, why: str, value: Any = 0) -> PyptoValueError:
        if isinstance(value, bool):
            fix = ("only ints and symbolic scalars are carried; for a first-iteration flag use "
                   "`if pypto.is_loop_begin(i):` instead")
        elif not _carriable(value):
            fix = ("only ints and symbolic scalars are carried; keep the value in a tensor "
                   f"created before the loop (updated in place: {name}[:] = ...) or compute it "
                   "from the loop index")
        else:
            fix = (f"a pypto.loop carries an int or symbolic scalar changed by the same "
                   f"loop-invariant amount each iteration ({name} += tile, {name} -= n); "
                   f"otherwise compute it from the loop index (e.g. {name} = i * tile)")
        return PyptoValueError(
            f"{self.where}: variable '{name}' (assigned at {self.assigned_at(name)}) is read in "
            f"the loop body and then reassigned there, so Python carries it from one iteration "
            f"to the next; {why}: {fix}")

    def _increment(self, name: str, v: SymbolicScalar, updates: List[Any],
                   own: Dict[str, Optional[str]], readable: Dict[str, Any]) -> SymbolicScalar:
        """The loop-invariant amount every path adds to carried int ``name`` (its
        placeholder ``v``), or the error saying why there is none."""
        step_d: Optional[SymbolicScalar] = None
        for new in updates:
            if not _carriable(new):
                raise self.error(name, f"a path leaves it as {type(new).__name__} {short_repr(new)}, "
                                 "not an int", new)
            d = as_expr(new) - v
            shown = as_expr(new).subs(readable)
            bad = sorted(s for s in d.free_symbols() if s in own)
            if v.name in bad:
                raise self.error(name, f"its update `{name} = {shown}` is not of the form "
                                 f"{name} + d")
            if bad:
                what = " and ".join("the loop index" if own[s] is None else f"'{own[s]}'"
                                    for s in bad)
                raise self.error(name, f"its increment `{d.subs(readable)}` depends on "
                                 f"{what}, which {'change' if len(bad) > 1 else 'changes'} "
                                 "from one iteration to the next")
            if _reads_data(d):
                raise self.error(name, f"its increment `{d.subs(readable)}` depends on "
                                 "tensor data")
            if step_d is not None and step_d.key != d.key:
                raise self.error(name, f"its increment differs between branch paths "
                                 f"(`{step_d.subs(readable)}` and `{d.subs(readable)}`)")
            step_d = d
        return step_d

    def finish(self, tr: _tracer.Tracer, ol: _tracer.OpenLoop,
               updates: Dict[str, List[Any]]) -> None:
        """Checks that every moving int is ``v + d`` on every path with one loop-invariant
        ``d``, replaces its placeholder in the loop's IR by ``init + k * d`` (k: the iteration
        number) and leaves ``init + trip_count * d`` in the variable."""
        step = as_expr(ol.step)
        k = as_expr(ol.index) - ol.start
        if const_value(step) != 1:
            k = floordiv(k, step)
        trips = smax(floordiv(as_expr(ol.stop) - ol.start + step - 1, step), as_expr(0))
        own = {v.name: n for n, v in self.moving.items()}
        own[ol.index.name] = None
        mapping: Dict[str, Any] = {}
        after: Dict[str, Any] = {}
        readable = {p.name: SymbolicScalar(m) for m, p in self.moving.items()}
        failed: Dict[str, PyptoValueError] = {}
        for name, v in self.moving.items():
            try:
                step_d = self._increment(name, v, updates[name], own, readable)
            except PyptoValueError as e:
                failed[name] = e
                continue
            init = as_expr(self.entry[name])
            mapping[v.name] = init + k * step_d
            final = init + trips * step_d
            after[name] = final.args[0] if final.op == "const" else final
        if failed:
            # A counter the loop cannot carry is an error only if the loop's IR uses it; one
            # the body only prints (PyPTO's compile-time print examples) is left unusable.
            used = _tracer.mentions(ol.node, {self.moving[n].name for n in failed})
            for name, e in failed.items():
                if self.moving[name].name in used:
                    raise e
                after[name] = _NotCarried(name, str(e))
        _tracer.substitute(ol.node, mapping)
        for v in self.moving.values():
            tr.retire_carried(v)
        _set_locals(self.frame, after)


class _NotCarried:
    """What a loop-carried int the loop could not carry holds after the loop (the body only
    printed it): printing shows why, any other use raises the error."""

    __slots__ = ("name", "why")

    def __init__(self, name: str, why: str):
        self.name = name
        self.why = why

    def __repr__(self) -> str:
        return f"<'{self.name}', not carried: {self.why}>"

    def __format__(self, spec: str) -> str:
        return f"<'{self.name}': not carried by the pypto.loop>"

    __str__ = __format__

    def _same(self, *_: Any) -> "_NotCarried":
        return self  # arithmetic (the body's own counting) stays not carried

    def _fail(self, *_: Any) -> Any:
        raise PyptoValueError(self.why)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = _same
    __truediv__ = __rtruediv__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __bool__ = __index__ = __int__ = __float__ = _fail
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: Any) -> Any:
        self._fail()

    __ne__ = __eq__


def _carried_error(where: str, name: str, old: Any, new: Any) -> PyptoValueError:
    return PyptoValueError(
        f"{where}: variable '{name}' is read in the loop body and then reassigned there, so "
        f"Python carries it into the next iteration; it changes from a "
        f"{type(old).__name__} to {type(new).__name__} {new!r}, and a pypto.loop carries a "
        f"tensor only as a tensor of the same shape and dtype")


def _check_rebinding(frame, snapshot: dict, lv: _LoopVars,
                     scope: _tracer.Scope) -> Tuple[List[str], List[Tuple[str, Tensor]]]:
    """Names of carried ints this path changed that were not yet moving, and (name, entry
    value) of carried tensors it rebound that have no buffer yet. Rejects other loop-carried
    rebindings (values that are neither ints nor tensors)."""
    now = frame.f_locals
    moved: List[str] = []
    tensors: List[Tuple[str, Tensor]] = []
    for name, old in snapshot.items():
        if name in lv.moving or name in lv.buffers:
            continue
        new = now.get(name, old)
        if new is old or isinstance(new, _NotCarried):
            continue  # an inner loop could not carry it: it stays so, an error on use
        carried = name in lv.carried or (isinstance(old, Tensor)
                                         and old._value.id in scope.consumed)
        if not carried:
            continue
        if isinstance(old, Tensor):
            if not isinstance(new, Tensor):
                raise _carried_error(lv.where, name, old, new)
            tensors.append((name, old))
            continue
        if _same_scalar(old, new):
            continue
        if _carriable(old) and _carriable(new):
            moved.append(name)
            continue
        raise lv.error(name, f"it changes from {type(old).__name__} {short_repr(old)} to "
                       f"{type(new).__name__} {short_repr(new)}", old if not _carriable(old) else new)
    return moved, tensors


def is_loop_begin(index: SymbolicScalar) -> SymbolicScalar:
    """``index == start`` of the pypto.loop whose index is ``index``."""
    ol = _tr("is_loop_begin").find_loop(index, "pypto.is_loop_begin")
    return compare("eq", ol.index, ol.start)


def is_loop_end(index: SymbolicScalar) -> SymbolicScalar:
    """``index + step >= stop``: the last iteration of the pypto.loop of ``index``."""
    ol = _tr("is_loop_end").find_loop(index, "pypto.is_loop_end")
    return compare("ge", ol.index + ol.step, ol.stop)


def cond(x: Any) -> Any:
    """Identity (PyPTO needs it only in its legacy recording mode)."""
    return x


def min(a: Any, b: Any) -> Any:  # noqa: A001 - PyPTO's name
    """Minimum of two ints or symbolic scalars (an int when both are ints)."""
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        r = smin(a, b)
        return r.args[0] if r.op == "const" else r
    return _bmin(a, b)


def max(a: Any, b: Any) -> Any:  # noqa: A001
    """Maximum of two ints or symbolic scalars."""
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        r = smax(a, b)
        return r.args[0] if r.op == "const" else r
    return _bmax(a, b)


def ceildiv(a: Any, b: Any) -> Any:
    """``(a + b - 1) // b``."""
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        r = floordiv(as_expr(a) + b - 1, as_expr(b))
        return r.args[0] if r.op == "const" else r
    return (a + b - 1) // b


# --- creation --------------------------------------------------------------------------------


def _shape_arg(shape: Any, api: str) -> Tuple[Any, ...]:
    if isinstance(shape, (numbers.Integral, SymbolicScalar)) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        _fail(PyptoTypeError, api, f"shape must be a list of sizes, got {short_repr(shape)}")
    out = tuple(_dim(d, api) for d in shape)
    for d in out:
        if isinstance(d, int) and d < 1:
            _fail(PyptoValueError, api, f"sizes must be >= 1, got shape {_fmt(out)}")
    return out


def _valid_arg(valid_shape: Any, shape: Tuple[Any, ...], api: str) -> Optional[Tuple[Any, ...]]:
    if valid_shape is None:
        return None
    if not isinstance(valid_shape, (list, tuple)) or len(valid_shape) != len(shape):
        _fail(PyptoValueError, api, f"valid_shape must be a list of {len(shape)} sizes, got "
              f"{short_repr(valid_shape)}")
    out = tuple(_dim(d, api, "valid_shape entry") for d in valid_shape)
    for v, d in zip(out, shape):
        if isinstance(v, int) and isinstance(d, int) and not 0 <= v <= d:
            _fail(PyptoValueError, api, f"valid_shape {_fmt(out)} exceeds shape {_fmt(shape)}")
    return out


def _dtype_arg(dtype: Any, api: str) -> DataType:
    if not isinstance(dtype, DataType):
        _fail(PyptoTypeError, api, f"dtype must be a pypto DataType such as pypto.DT_FP32, got "
              f"{short_repr(dtype)}")
    return dtype


def alloc(shape: Any, dtype: Optional[DataType] = None,
          format: Optional[TileOpFormat] = None) -> Tensor:
    """A local, uninitialized tensor (``pypto.Tensor(shape, dtype)`` inside a kernel)."""
    tr = _tr("Tensor")
    if shape is None:
        _fail(PyptoValueError, "Tensor", "a local tensor needs a shape")
    for d in (shape if isinstance(shape, (list, tuple)) else [shape]):
        if d is Ellipsis or not isinstance(d, (numbers.Integral, SymbolicScalar)):
            _fail(PyptoTypeError, "Tensor", f"a local tensor needs concrete sizes (ints or "
                  f"symbolic scalars), got {short_repr(shape)}")
    shp = _shape_arg(shape, "Tensor")
    dt = DataType.DT_FP32 if dtype is None else _dtype_arg(dtype, "Tensor")
    fmt = TileOpFormat.TILEOP_ND if format is None else format
    return _wrap(_emit(tr, "alloc", [], {}, shp, dt, fmt))


def full(size: Any, value: Any, dtype: DataType, *, valid_shape: Any = None) -> Tensor:
    """A tensor of ``size`` filled with ``value`` (a number or a symbolic scalar)."""
    tr = _tr("full")
    shp = _shape_arg(size, "full")
    dt = _dtype_arg(dtype, "full")
    _need_vec(tr, "full")  # before the fill value's checks: a missing tile is reported first
    sc = _scalar(value, dt, "full")
    return _wrap(_emit(tr, "full", [sc], {}, shp, dt,
                           valid_shape=_valid_arg(valid_shape, shp, "full")))


_INT32_RANGE = (-(2 ** 31), 2 ** 31 - 1)


def arange(*args: Any, dtype: Optional[DataType] = None) -> Tensor:
    """``arange(end)``, ``arange(start, end)`` or ``arange(start, end, step)``: the 1-D
    tensor ``start, start + step, ...`` below ``end`` (``ceil((end - start) / step)``
    values), as PyPTO: DT_INT32 when every argument is an int (DT_INT64 past the int32
    range), else DT_FP32. ``dtype`` (keyword, an extension) asks for another dtype. Each value
    is ``start + i * step`` computed in double and rounded once (torch.arange)."""
    api = "arange"
    tr = _tr(api)
    if not 1 <= len(args) <= 3:
        _fail(PyptoValueError, api, f"takes 1 to 3 arguments (end | start, end | start, end, "
              f"step), got {len(args)}")
    start, end, step = (0, args[0], 1) if len(args) == 1 else (
        (args[0], args[1], 1) if len(args) == 2 else args)
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            _fail(PyptoTypeError, api, f"{name} must be an int or a float, got {v!r}")
    if step == 0 or (isinstance(step, float) and builtins.abs(step) <= 1e-8):
        _fail(PyptoValueError, api, f"step must not be 0 (|step| > 1e-8), got {step!r}")
    ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    # torch: ceil((end - start) / step), exact for ints, in double for floats.
    n = -((int(start) - int(end)) // int(step)) if ints else \
        math.ceil((float(end) - float(start)) / float(step))
    if n <= 0:
        _fail(PyptoValueError, api, f"(end - start) / step must be > 0, got start={start!r}, "
              f"end={end!r}, step={step!r}")
    if dtype is None:
        if ints:
            inside = all(_INT32_RANGE[0] <= v <= _INT32_RANGE[1] for v in (start, end, step))
            dtype = DataType.DT_INT32 if inside else DataType.DT_INT64
        else:
            dtype = DataType.DT_FP32
    dt = _dtype_arg(dtype, api)
    if dt is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, "dtype DT_BOOL is not a numeric dtype")
    if not dt.is_float and not ints:
        _fail(PyptoTypeError, api, f"float arguments with the integer dtype {dt}")
    _need_vec(tr, api)
    inputs = [ir.Scalar(int(start) if ints else float(start), dt),
              ir.Scalar(int(step) if ints else float(step), dt)]
    return _wrap(_emit(tr, api, inputs, {}, (n,), dt))


def _size_args(size: Tuple[Any, ...]) -> Any:
    return size[0] if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)


def zeros(*size: Any, dtype: DataType = DataType.DT_FP32, valid_shape: Any = None) -> Tensor:
    """``pypto.zeros(64, 128, dtype=pypto.DT_FP16)`` or ``pypto.zeros([64, 128], ...)``."""
    return full(_size_args(size), 0.0 if dtype.is_float else 0, dtype, valid_shape=valid_shape)


def ones(*size: Any, dtype: DataType = DataType.DT_FP32, valid_shape: Any = None) -> Tensor:
    return full(_size_args(size), 1.0 if dtype.is_float else 1, dtype, valid_shape=valid_shape)


# --- element-wise ----------------------------------------------------------------------------


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
    """Element-wise ``x / y``; ``precision_type`` defaults to HIGH_PRECISION."""
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        return _reflected_div(x, y)
    attrs = {}
    if precision_type is not None:
        if not isinstance(precision_type, PrecisionType):
            _fail(PyptoTypeError, "div", f"precision_type must be a pypto.PrecisionType, got "
                  f"{short_repr(precision_type)}")
        attrs["precision_type"] = precision_type
    return _binary("div", x, y, attrs=attrs)


def maximum(x: Any, y: Any) -> Tensor:
    return _commutative("maximum", x, y)


def minimum(x: Any, y: Any) -> Tensor:
    return _commutative("minimum", x, y)


def _precision_arg(api: str, precision_type: Any) -> None:
    # PyPTO's HIGH_PRECISION/INTRINSIC choice of instruction sequence; SIM computes exactly.
    if precision_type is not None and not isinstance(precision_type, PrecisionType):
        _fail(PyptoTypeError, api, f"precision_type must be a pypto.PrecisionType, got "
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
    """``|input|`` with the sign of ``other`` (torch.copysign; -0.0 counts as negative)."""
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


def pow(x: Any, y: Any) -> Tensor:  # noqa: A001
    """Element-wise ``x ** y``; ``y`` may be a tensor or a number."""
    if not isinstance(x, Tensor):
        _fail(PyptoNotImplementedError, "pow", "a scalar base is not supported; write "
              "pypto.exp(y * math.log(base))")
    return _binary("pow", x, y)


def _reflected_sub(s: Any, t: Tensor) -> Tensor:
    # s - t == -(t - s): keeps the scalar in the second operand slot (as PyPTO lowers it).
    return neg(_binary("sub", t, s))


def _reflected_div(s: Any, t: Tensor) -> Tensor:
    # s / t == reciprocal(t) * s
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
exp = _unary_op("exp")
log = _unary_op("log")
sqrt = _unary_op("sqrt")
rsqrt = _unary_op("rsqrt")
reciprocal = _unary_op("reciprocal")
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
log2 = _unary_op("log2")
log10 = _unary_op("log10")
cbrt = _unary_op("cbrt")
cosh = _unary_op("cosh")
sinh = _unary_op("sinh")
tan = _unary_op("tan")
asin = _unary_op("asin")
acos = _unary_op("acos")
atan = _unary_op("atan")
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
        tr = _tr(op)
        return _emit_same_shape(tr, op, _val(x, op))
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
    """Element-wise ``x if condition else y``; x and y may be tensors or numbers."""
    tr = _tr("where")
    cv = _val(condition, "where", "condition")
    _check_dtype("where", cv)
    tensors = [t._value for t in (x, y) if isinstance(t, Tensor)]
    if not tensors:
        _fail(PyptoTypeError, "where", "x or y must be a tensor (the result dtype comes from it)")
    dtype = tensors[0].dtype
    if any(t.dtype is not dtype for t in tensors):
        _fail(PyptoTypeError, "where", f"dtype mismatch: {tensors[0].dtype} and {tensors[1].dtype}")
    inputs = [cv] + [t._value if isinstance(t, Tensor) else _scalar(t, dtype, "where")
                     for t in (x, y)]
    shape, valid = _broadcast([cv] + tensors, "where")
    return _wrap(_emit(tr, "where", inputs, {}, shape, dtype, valid_shape=valid))


def clip(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamps to ``[min, max]`` (either may be None, a number or a tensor). Recorded as
    ``maximum`` then ``minimum`` with attribute ``composite="clip"``."""
    tr = _tr("clip")
    _val(x, "clip")
    if min is None and max is None:
        _fail(PyptoValueError, "clip", "give min, max or both")
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


# --- reductions ------------------------------------------------------------------------------


def _reduce(op: str, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """A reduction (or, for the scan family, a scan keeping every axis) over ``dim``; the
    result dtype follows the op table's rule ("index": DT_INT32)."""
    tr = _tr(op)
    xv = _val(x, op)
    _check_dtype(op, xv)
    if not isinstance(keepdim, bool):
        _fail(PyptoTypeError, op, f"keepdim must be a bool, got {short_repr(keepdim)}")
    dims_in = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if not dims_in:
        _fail(PyptoValueError, op, "dim must not be empty")
    dims = sorted({_norm_axis(d, xv.rank, op) for d in dims_in})
    row = _op(op)
    if (row["family"] == "scan" or row["dtype_rule"] == "index") and len(dims) != 1:
        _fail(PyptoValueError, op, f"dim must be one axis, got {short_repr(dim)}")
    if row["family"] == "scan":
        return _wrap(_emit(tr, op, [xv], {"dims": dims, "keepdim": True}, xv.shape, xv.dtype,
                           valid_shape=xv.valid_shape))
    out_dtype = DataType.DT_INT32 if row["dtype_rule"] == "index" else xv.dtype
    shape, valid = [], []
    for axis, d in enumerate(xv.shape):
        vs = xv.valid_shape[axis] if xv.valid_shape is not None else d
        if axis in dims:
            if keepdim:
                shape.append(1)
                valid.append(1)
        else:
            shape.append(d)
            valid.append(vs)
    if not shape:
        shape, valid = [1], [1]
    return _wrap(_emit(tr, op, [xv], {"dims": dims, "keepdim": keepdim}, shape, out_dtype,
                           valid_shape=valid if xv.valid_shape is not None else None))


def sum(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (an int or a list of ints)."""
    return _reduce("sum", x, dim, keepdim)


def amax(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:
    return _reduce("amax", x, dim, keepdim)


def amin(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:
    return _reduce("amin", x, dim, keepdim)


def prod(x: Tensor, dim: Any = -1, keepdim: bool = False) -> Tensor:
    """Product over ``dim`` (an int or a list of ints)."""
    return _reduce("prod", x, dim, keepdim)


def argmax(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index (DT_INT32) of the first maximum along ``dim``; a NaN counts as the maximum."""
    return _reduce("argmax", x, dim, keepdim)


def argmin(x: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index (DT_INT32) of the first minimum along ``dim``; a NaN counts as the minimum."""
    return _reduce("argmin", x, dim, keepdim)


def cumsum(x: Tensor, dim: int) -> Tensor:
    """Inclusive running sum along ``dim``; the result keeps ``x``'s dtype (torch's integer
    cumsum gives int64; here int32 stays int32 and wraps)."""
    return _reduce("cumsum", x, dim, False)


def cumprod(x: Tensor, dim: int) -> Tensor:
    """Inclusive running product along ``dim``; the result keeps ``x``'s dtype."""
    return _reduce("cumprod", x, dim, False)


# --- sorting ---------------------------------------------------------------------------------


def _sorted(op: str, api: str, x: Any, k: Any, dim: Any, descending: bool) -> Tensor:
    """Records IR op ``op`` (sort: values, argsort: DT_INT32 indices) keeping the first ``k``
    entries of the sort along ``dim`` (None: the last axis)."""
    tr = _tr(api)
    xv = _val(x, api)
    _check_numeric(xv, api)
    if not isinstance(descending, bool):
        _fail(PyptoTypeError, api, f"descending/largest must be a bool, got {descending!r}")
    d = _norm_axis(-1 if dim is None else dim, xv.rank, api)
    n = xv.shape[d]
    if k is None:
        k = n
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        _fail(PyptoTypeError, api, f"k must be an int, got {k!r}")
    if k < 1 or (isinstance(n, int) and k > n):
        _fail(PyptoValueError, api, f"k must satisfy 1 <= k <= {n} (the size of dim {d}), "
              f"got {k}")
    shape = list(xv.shape)
    shape[d] = int(k)
    valid = None
    if xv.valid_shape is not None:
        valid = list(xv.valid_shape)
        valid[d] = int(k)
    dtype = DataType.DT_INT32 if op == "argsort" else xv.dtype
    return _wrap(_emit(tr, op, [xv], {"dims": [d], "keepdim": True, "k": int(k),
                                      "descending": descending}, shape, dtype,
                       valid_shape=valid))


def topk(input: Tensor, k: int, dim: Optional[int] = None,  # noqa: A002
         largest: bool = True) -> Tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` (default the last
    axis) and their DT_INT32 indices, in sorted order, as ``(values, indices)``. Ties keep
    their original order (torch leaves that order unspecified). The sorted axis stays whole in
    each tile."""
    return (_sorted("sort", "topk", input, k, dim, largest),
            _sorted("argsort", "topk", input, k, dim, largest))


def argsort(input: Tensor, dim: Optional[int] = None,  # noqa: A002
            descending: bool = True) -> Tensor:
    """DT_INT32 indices that sort ``input`` along ``dim`` (default the last axis); PyPTO's
    default is descending. Stable: equal values keep their order (torch.sort(stable=True));
    NaN sorts as the largest value."""
    return _sorted("argsort", "argsort", input, None, dim, descending)


def sort(input: Tensor, dim: int = -1, descending: bool = False) -> Tuple[Tensor, Tensor]:  # noqa: A002
    """torch.sort (stable): ``(values, indices)`` along ``dim``, indices DT_INT32."""
    return (_sorted("sort", "sort", input, None, dim, descending),
            _sorted("argsort", "sort", input, None, dim, descending))


# --- indexed ops -------------------------------------------------------------------------------

_INDEX_DTYPES = (DataType.DT_INT32, DataType.DT_INT64)


def _index_operands(api: str, x: Any, index: Any, dtypes=_INDEX_DTYPES):
    xv = _val(x, api)
    iv = _val(index, api, "index")
    _check_numeric(xv, api)
    if iv.dtype not in dtypes:
        _fail(PyptoTypeError, api, f"index must be a {' or '.join(d.name for d in dtypes)} "
              f"tensor, got {iv.dtype}")
    return xv, iv


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """torch.gather: ``out[i][j][k] = input[i][index[i][j][k]][k]`` for ``dim == 1`` (and
    likewise for the other axes). ``index`` (DT_INT32/DT_INT64) has ``input``'s rank and is no
    larger on the other axes; the result has ``index``'s shape and ``input``'s dtype. Tiles
    follow ``set_vec_tile_shapes`` over the result; the indexed axis is never split."""
    api = "gather"
    tr = _tr(api)
    xv, iv = _index_operands(api, input, index)
    if iv.rank != xv.rank:
        _fail(PyptoValueError, api, f"index must have the input's rank {xv.rank}, got "
              f"{_fmt(iv.shape)}")
    d = _norm_axis(dim, xv.rank, api)
    for axis in range(xv.rank):
        if axis != d and isinstance(iv.shape[axis], int) and isinstance(xv.shape[axis], int) \
                and iv.shape[axis] > xv.shape[axis]:
            _fail(PyptoValueError, api, f"index {_fmt(iv.shape)} is larger than the input "
                  f"{_fmt(xv.shape)} on axis {axis}")
    return _wrap(_emit(tr, "gather", [xv, iv], {"dims": [d]}, iv.shape, xv.dtype,
                       valid_shape=iv.valid_shape))


def _row_index(api: str, xv: ir.Value, d: int, index: Any, shape: Sequence[Any]) -> Tensor:
    """A 1-D index along axis ``d`` as a gather/scatter index of ``shape`` (the index on axis
    ``d``, broadcast over the others)."""
    iv = _val(index, api, "index")
    if iv.dtype not in _INDEX_DTYPES:
        _fail(PyptoTypeError, api, f"index must be a DT_INT32 or DT_INT64 tensor, got "
              f"{iv.dtype}")
    if iv.rank != 1:
        _fail(PyptoValueError, api, f"index must be 1-D, got {_fmt(iv.shape)}")
    lead = [1] * xv.rank
    lead[d] = iv.shape[0]
    idx = reshape(index, lead, inplace=True)
    if all(_dim_eq(a, b) for a, b in zip(lead, shape)):
        return idx
    return expand_clone(idx, list(shape))


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """torch.index_select: the slices ``index[i]`` of ``input`` along ``dim`` (a 1-D
    DT_INT32/DT_INT64 ``index``); the result has ``input``'s shape with ``len(index)`` on
    ``dim``. Computed as a gather (the indexed axis stays whole in each tile)."""
    api = "index_select"
    xv = _val(input, api)
    _check_numeric(xv, api)
    d = _norm_axis(dim, xv.rank, api)
    iv = _val(index, api, "index")
    shape = list(xv.shape)
    shape[d] = iv.shape[0] if iv.rank == 1 else None
    return gather(input, d, _row_index(api, xv, d, index, shape))


def _index_add(api: str, input: Any, dim: Any, index: Any, source: Any,  # noqa: A002
               alpha: Any) -> Tuple[Any, int, Tensor, Tensor]:
    xv = _val(input, api)
    sv = _val(source, api, "source")
    _check_numeric(xv, api)
    if sv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"source dtype {sv.dtype} differs from the input's "
              f"{xv.dtype}")
    if sv.rank != xv.rank:
        _fail(PyptoValueError, api, f"source must have the input's rank {xv.rank}, got "
              f"{_fmt(sv.shape)}")
    d = _norm_axis(dim, xv.rank, api)
    iv = _val(index, api, "index")
    if iv.rank == 1 and _dim_eq(iv.shape[0], sv.shape[d]) is False:
        _fail(PyptoValueError, api, f"index has {iv.shape[0]} entries but source has "
              f"{sv.shape[d]} on dim {d}")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        _fail(PyptoTypeError, api, f"alpha must be a number, got {alpha!r}")
    src = source if alpha == 1 else mul(source, alpha)
    return input, d, _row_index(api, xv, d, index, sv.shape), src


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
              alpha: Any = 1) -> Tensor:
    """torch.index_add (out of place): a copy of ``input`` with ``alpha * source[.., i, ..]``
    added to slice ``index[i]`` along ``dim``, each update rounded to the dtype, in index
    order. Computed as a scatter with reduce='add' (``alpha != 1`` first rounds
    ``alpha * source`` to the dtype, where torch rounds once after the add)."""
    x, d, idx, src = _index_add("index_add", input, dim, index, source, alpha)
    return scatter(x, d, idx, src, reduce="add")


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
               alpha: Any = 1) -> Tensor:
    """In-place ``index_add``: ``input`` is updated and returned."""
    x, d, idx, src = _index_add("index_add_", input, dim, index, source, alpha)
    return scatter_(x, d, idx, src, reduce="add")


def one_hot(input: Tensor, num_classes: int) -> Tensor:  # noqa: A002
    """PyPTO's one_hot: DT_INT64 of shape ``input.shape + [num_classes]``, 1 where the last
    index equals the input's value (an integer tensor of values in ``[0, num_classes)``).
    The vec tile covers the result; its last entry should be ``num_classes``."""
    api = "one_hot"
    xv = _val(input, api)
    if xv.dtype.is_float or xv.dtype is DataType.DT_BOOL:
        _fail(PyptoTypeError, api, f"needs an integer tensor, got {xv.dtype}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or \
            num_classes < 1:
        _fail(PyptoValueError, api, f"num_classes must be a positive int, got {num_classes!r}")
    x = input
    if xv.dtype not in (DataType.DT_INT32, DataType.DT_INT64):
        x = cast(input, DataType.DT_INT32)
    classes = arange(int(num_classes), dtype=x._value.dtype)
    return cast(_binary("eq", unsqueeze(x, -1), classes), DataType.DT_INT64)


_SCATTER_REDUCE = {None: "none", "add": "add", "multiply": "multiply"}


def scatter(input: Tensor, dim: int, index: Tensor, src: Any, *,  # noqa: A002
            reduce: Optional[str] = None) -> Tensor:
    """torch.scatter (out of place): a copy of ``input`` with ``out[i][index[i][j][k]][k] =
    src[i][j][k]`` for ``dim == 1`` (likewise for the other axes). ``src`` is a tensor of
    ``input``'s dtype (no smaller than ``index``) or a number (rounded to ``input``'s dtype);
    ``reduce`` is None, ``'add'`` or ``'multiply'``. Duplicate indices without reduce keep the
    last update in row-major index order."""
    api = "scatter"
    tr = _tr(api)
    xv, iv = _index_operands(api, input, index)
    if reduce not in _SCATTER_REDUCE:
        _fail(PyptoValueError, api, f"reduce must be None, 'add' or 'multiply', got {short_repr(reduce)}")
    if iv.rank != xv.rank:
        _fail(PyptoValueError, api, f"index must have the input's rank {xv.rank}, got "
              f"{_fmt(iv.shape)}")
    d = _norm_axis(dim, xv.rank, api)
    if isinstance(src, Tensor):
        sv = src._value
        if sv.dtype is not xv.dtype:
            _fail(PyptoTypeError, api, f"src dtype {sv.dtype} differs from the input's "
                  f"{xv.dtype}")
        if sv.rank != xv.rank:
            _fail(PyptoValueError, api, f"src must have the input's rank {xv.rank}")
        src_in: Any = sv
    elif _is_scalar(src):
        src_in = _scalar(src, xv.dtype, api)
    else:
        _fail(PyptoTypeError, api, f"src must be a pypto.Tensor or a number, got "
              f"{type(src).__name__}")
    for axis in range(xv.rank):
        if axis != d and isinstance(iv.shape[axis], int) and isinstance(xv.shape[axis], int) \
                and iv.shape[axis] > xv.shape[axis]:
            _fail(PyptoValueError, api, f"index {_fmt(iv.shape)} is larger than the input "
                  f"{_fmt(xv.shape)} on axis {axis}")
    return _wrap(_emit(tr, "scatter", [xv, iv, src_in],
                       {"dims": [d], "reduce": _SCATTER_REDUCE[reduce]}, xv.shape, xv.dtype,
                       valid_shape=xv.valid_shape))


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any, *,  # noqa: A002
             reduce: Optional[str] = None) -> Tensor:
    """In-place ``scatter``: ``input`` is updated (a whole-tensor write of the result) and
    returned."""
    out = scatter(input, dim, index, src, reduce=reduce)
    tr = _tr("scatter_")
    _write(tr, out._value, [0] * input._value.rank, input._value, "scatter_")
    return input


def scatter_update(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """PyPTO's row scatter (paged KV caches): with ``index`` ``[b, s]``, row
    ``index[i][j]`` of ``input`` (its axes before the last flattened: ``[rows, d]`` 2-D or
    ``[blocks, block_size, 1, d]`` 4-D) becomes source row ``i * s + j`` (``src`` ``[b * s,
    d]`` or ``[b, s, 1, d]``). Returns the updated tensor (a new value; assign it, e.g.
    ``cache_out[:] = pypto.scatter_update(cache, -2, index, src)``). ``dim`` must be -2."""
    api = "scatter_update"
    tr = _tr(api)
    xv, iv = _index_operands(api, input, index,
                             (DataType.DT_INT64, DataType.DT_INT32, DataType.DT_INT16))
    sv = _val(src, api, "src")
    if dim != -2:
        _fail(PyptoValueError, api, f"dim must be -2 (PyPTO supports only that), got {short_repr(dim)}")
    if xv.rank not in (2, 4) or sv.rank != xv.rank:
        _fail(PyptoValueError, api, f"input and src must both be 2-D or 4-D, got "
              f"{_fmt(xv.shape)} and {_fmt(sv.shape)}")
    if iv.rank != 2:
        _fail(PyptoValueError, api, f"index must be 2-D [b, s], got {_fmt(iv.shape)}")
    if sv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"src dtype {sv.dtype} differs from the input's {xv.dtype}")
    if _dim_eq(sv.shape[-1], xv.shape[-1]) is False:
        _fail(PyptoValueError, api, f"src rows {_fmt(sv.shape)} and input rows "
              f"{_fmt(xv.shape)} differ in their last axis")
    return _wrap(_emit(tr, "scatter_update", [xv, iv, sv], {}, xv.shape, xv.dtype,
                       valid_shape=xv.valid_shape))


# --- data movement ---------------------------------------------------------------------------


def cast(x: Tensor, dtype: DataType, mode: Optional[CastMode] = None,
         satmode: Optional[SaturationMode] = None) -> Tensor:
    """Converts to ``dtype`` with rounding ``mode`` (default CAST_NONE) and ``satmode``."""
    tr = _tr("cast")
    xv = _val(x, "cast")
    dt = _dtype_arg(dtype, "cast")
    mode = CastMode.CAST_NONE if mode is None else mode
    satmode = SaturationMode.OFF if satmode is None else satmode
    if not isinstance(mode, CastMode):
        _fail(PyptoTypeError, "cast", f"mode must be a pypto.CastMode, got {short_repr(mode)}")
    if not isinstance(satmode, SaturationMode):
        _fail(PyptoTypeError, "cast", f"satmode must be a pypto.SaturationMode, got {short_repr(satmode)}")
    return _wrap(_emit(tr, "cast", [xv], {"mode": mode, "satmode": satmode}, xv.shape, dt,
                           valid_shape=xv.valid_shape))


def clone(x: Tensor) -> Tensor:
    """A copy of ``x``."""
    tr = _tr("clone")
    xv = _val(x, "clone")
    return _wrap(_emit(tr, "clone", [xv], {}, xv.shape, xv.dtype, xv.format, xv.valid_shape))


def view(x: Tensor, shape: Sequence[Any], offsets: Sequence[Any], *, valid_shape: Any = None,
         dtype: Optional[DataType] = None) -> Tensor:
    """The window of static ``shape`` at ``offsets`` (ints or symbolic) of ``x``.

    ``valid_shape`` gives the live extent of a tail window; only that part is read. Without
    it, the valid extent is derived from ``x``'s own valid_shape. ``dtype`` reinterprets bits
    (the last axis scales by the size ratio).
    """
    tr = _tr("view")
    xv = _val(x, "view")
    shp = _shape_arg(shape, "view")
    if not isinstance(offsets, (list, tuple)) or len(offsets) != xv.rank or len(shp) != xv.rank:
        _fail(PyptoValueError, "view", f"shape and offsets need {xv.rank} entries for a "
              f"{xv.rank}-D tensor, got shape {short_repr(list(shape))} and offsets {short_repr(offsets)}")
    offs = tuple(_dim(o, "view", "offset") for o in offsets)
    for axis, (o, s, d) in enumerate(zip(offs, shp, xv.shape)):
        if isinstance(o, int) and o < 0:
            _fail(PyptoValueError, "view", f"offset {o} on axis {axis} is negative")
        end = const_value(as_expr(o) + s)
        if end is not None and isinstance(d, int) and end > d and valid_shape is None:
            _fail(PyptoValueError, "view", f"window {_fmt(shp)} at offsets {_fmt(offs)} exceeds "
                  f"the shape {_fmt(xv.shape)} on axis {axis}; pass valid_shape for a tail")
    valid = _valid_arg(valid_shape, shp, "view")
    if valid is None and xv.valid_shape is not None:
        valid = tuple(_simplify(smin(s, smax(as_expr(v) - o, 0)))
                      for s, v, o in zip(shp, xv.valid_shape, offs))
    elif valid is None and any(isinstance(d, int) and isinstance(s, int) and d % s
                               and const_value(o) is None
                               for s, d, o in zip(shp, xv.shape, offs)):
        # As in PyPTO, a window without valid_shape is clipped to what its source holds: a
        # loop of windows over a static size that is not a multiple of the window ends in a
        # partial block (windows that divide the size are left whole).
        valid = tuple(_simplify(smin(s, smax(as_expr(d) - o, 0)))
                      for s, d, o in zip(shp, xv.shape, offs))
    attrs: dict = {"offsets": list(offs)}
    out_dtype = xv.dtype
    if dtype is not None:
        out_dtype = _dtype_arg(dtype, "view")
        if out_dtype.bits != xv.dtype.bits:
            last = shp[-1]
            if not isinstance(last, int) or (last * xv.dtype.bits) % out_dtype.bits:
                _fail(PyptoValueError, "view", f"cannot reinterpret {xv.dtype} as {out_dtype}: "
                      f"the last size {last} does not scale to a whole number of elements")
            shp = shp[:-1] + (last * xv.dtype.bits // out_dtype.bits,)
            valid = None if valid is None else valid[:-1] + (shp[-1],)
        attrs["dtype"] = out_dtype
    return _wrap(_emit(tr, "view", [xv], attrs, shp, out_dtype, xv.format, valid))


def _simplify(e: Any) -> Any:
    c = const_value(e)
    return e if c is None else int(c)


def reshape(x: Tensor, shape: Sequence[Any], *, valid_shape: Any = None,
            inplace: bool = False) -> Tensor:
    """Same elements, new shape (one entry may be -1). A non-inplace reshape needs int sizes."""
    tr = _tr("reshape")
    xv = _val(x, "reshape")
    if not isinstance(shape, (list, tuple)):
        _fail(PyptoTypeError, "reshape", f"shape must be a list, got {short_repr(shape)}")
    entries = list(shape)
    infer = [i for i, d in enumerate(entries) if isinstance(d, numbers.Integral) and d == -1]
    if len(infer) > 1:
        _fail(PyptoValueError, "reshape", f"only one -1 is allowed, got {short_repr(list(shape))}")
    if not inplace and (any(isinstance(d, SymbolicScalar) and not d.is_const() for d in entries)
                        or any(isinstance(d, SymbolicScalar) for d in xv.shape)):
        # PyPTO's wording (its tests match it), then our hint.
        _fail(PyptoValueError, "reshape", "reshape() requires integer shape when "
              "'inplace=False'; use inplace=True for dynamic shapes")
    total = as_expr(1)
    for d in xv.shape:
        total = total * d
    if infer:
        known = as_expr(1)
        for i, d in enumerate(entries):
            if i != infer[0]:
                known = known * _dim(d, "reshape")
        q = const_value(floordiv(total, known))
        r = const_value(total % known)
        if q is None or r != 0:
            _fail(PyptoValueError, "reshape", f"cannot infer -1 in {short_repr(list(shape))} from "
                  f"{_fmt(xv.shape)}")
        entries[infer[0]] = q
    shp = _shape_arg(entries, "reshape")
    new_total = as_expr(1)
    for d in shp:
        new_total = new_total * d
    if _dim_eq(total, new_total) is False:
        _fail(PyptoValueError, "reshape", f"cannot reshape {_fmt(xv.shape)} "
              f"({total} elements) to {_fmt(shp)}")
    if not isinstance(inplace, bool):
        _fail(PyptoTypeError, "reshape", "inplace must be a bool")
    return _wrap(_emit(tr, "reshape", [xv], {"inplace": inplace}, shp, xv.dtype, xv.format,
                           _valid_arg(valid_shape, shp, "reshape")))


def permute(x: Tensor, dims: Sequence[int]) -> Tensor:
    """Reorders the axes: output axis i is input axis ``dims[i]``."""
    tr = _tr("permute")
    xv = _val(x, "permute")
    if not isinstance(dims, (list, tuple)) or len(dims) != xv.rank:
        _fail(PyptoValueError, "permute", f"dims must list {xv.rank} axes, got {short_repr(dims)}")
    d = [_norm_axis(a, xv.rank, "permute") for a in dims]
    if sorted(d) != list(range(xv.rank)):
        _fail(PyptoValueError, "permute", f"dims {short_repr(list(dims))} is not a permutation")
    return _permute_op(tr, "permute", xv, d, {"dims": d})


def _permute_op(tr, op, xv, d, attrs):
    shape = [xv.shape[a] for a in d]
    valid = None if xv.valid_shape is None else [xv.valid_shape[a] for a in d]
    return _wrap(_emit(tr, op, [xv], attrs, shape, xv.dtype, valid_shape=valid))


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swaps two axes."""
    tr = _tr("transpose")
    xv = _val(x, "transpose")
    a = _norm_axis(dim0, xv.rank, "transpose")
    b = _norm_axis(dim1, xv.rank, "transpose")
    d = list(range(xv.rank))
    d[a], d[b] = d[b], d[a]
    return _permute_op(tr, "transpose", xv, d, {"dims": [a, b]})


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Inserts an axis of size 1 at ``dim`` (recorded as an in-place reshape)."""
    tr = _tr("unsqueeze")
    xv = _val(x, "unsqueeze")
    a = _norm_axis(dim, xv.rank + 1, "unsqueeze")
    shape = list(xv.shape)
    shape.insert(a, 1)
    valid = None
    if xv.valid_shape is not None:
        valid = list(xv.valid_shape)
        valid.insert(a, 1)
    return _wrap(_emit(tr, "reshape", [xv], {"inplace": True}, shape, xv.dtype, xv.format,
                           valid))


def expand_clone(x: Tensor, shape: Sequence[Any], *, valid_shape: Any = None) -> Tensor:
    """Broadcasts size-1 axes of ``x`` to ``shape`` into a new tensor."""
    tr = _tr("expand_clone")
    xv = _val(x, "expand_clone")
    shp = _shape_arg(shape, "expand_clone")
    if len(shp) != xv.rank:
        _fail(PyptoValueError, "expand_clone", f"shape {_fmt(shp)} must have rank {xv.rank}")
    for axis, (src, dst) in enumerate(zip(xv.shape, shp)):
        if not (_dim_eq(src, 1) or _dim_eq(src, dst)):
            _fail(PyptoValueError, "expand_clone", f"cannot expand {_fmt(xv.shape)} to "
                  f"{_fmt(shp)} (axis {axis})")
    _need_vec(tr, "expand_clone")  # before valid_shape's checks: a missing tile first
    return _wrap(_emit(tr, "expand_clone", [xv], {}, shp, xv.dtype,
                           valid_shape=_valid_arg(valid_shape, shp, "expand_clone")))


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Joins tensors along ``dim``; the other sizes and the dtypes must match."""
    tr = _tr("concat")
    if not isinstance(tensors, (list, tuple)) or not tensors:
        _fail(PyptoValueError, "concat", "expects a non-empty list of tensors")
    vals = [_val(t, "concat") for t in tensors]
    first = vals[0]
    a = _norm_axis(dim, first.rank, "concat")
    total: Any = as_expr(0)
    for v in vals:
        if v.rank != first.rank or v.dtype is not first.dtype:
            _fail(PyptoValueError, "concat", f"all tensors need rank {first.rank} and dtype "
                  f"{first.dtype}, got {v.dtype}{_fmt(v.shape)}")
        for axis in range(first.rank):
            if axis != a and _dim_eq(v.shape[axis], first.shape[axis]) is not True:
                _fail(PyptoValueError, "concat", f"shapes {_fmt(first.shape)} and "
                      f"{_fmt(v.shape)} differ outside dim {a}")
        total = total + v.shape[a]
    shape = list(first.shape)
    shape[a] = _simplify(total)
    return _wrap(_emit(tr, "concat", vals, {"dim": a}, shape, first.dtype))


def _write(tr: _tracer.Tracer, src: ir.Value, offsets: Sequence[Any], dst: ir.Value, api: str,
           attrs: Optional[dict] = None, region: Optional[Sequence[Optional[Any]]] = None,
           exact: Optional[Sequence[bool]] = None) -> None:
    if src.rank != dst.rank:
        _fail(PyptoValueError, api, f"source rank {src.rank} {_fmt(src.shape)} does not match "
              f"destination rank {dst.rank} {_fmt(dst.shape)}")
    if src.dtype is not dst.dtype:
        _fail(PyptoTypeError, api, f"source dtype {src.dtype} does not match destination dtype "
              f"{dst.dtype}; use pypto.cast")
    if len(offsets) != dst.rank:
        _fail(PyptoValueError, api, f"needs {dst.rank} offsets, got {len(offsets)}")
    offs = tuple(_dim(o, api, "offset") for o in offsets)
    for axis in range(dst.rank):
        o, s, d = offs[axis], src.shape[axis], dst.shape[axis]
        if isinstance(o, int) and o < 0:
            _fail(PyptoValueError, api, f"offset {o} on axis {axis} is negative")
        if region is not None and region[axis] is not None:
            same = _dim_eq(region[axis], s)
            if exact[axis] and same is False:
                _fail(PyptoValueError, api, f"the slice has size {region[axis]} on axis {axis} "
                      f"but the value has shape {_fmt(src.shape)}")
        end = const_value(as_expr(o) + s)
        if end is not None and isinstance(d, int) and end > d and src.valid_shape is None:
            _fail(PyptoValueError, api, f"writing {_fmt(src.shape)} at offsets {_fmt(offs)} "
                  f"exceeds the destination shape {_fmt(dst.shape)} on axis {axis}")
    tr.emit_write(dst, src, offs, attrs, api=f"pypto.{api}")


def assemble(src: Any, offsets: Any, dst: Any = None, parallel: bool = False) -> None:
    """Writes ``src`` into ``dst`` at ``offsets``: ``pypto.assemble(tile, [i * 64, 0], out)``,
    or several at once: ``pypto.assemble([(t0, offs0), (t1, offs1)], out, parallel=True)``.
    Only the valid region of ``src`` is written."""
    tr = _tr("assemble")
    if isinstance(src, (list, tuple)):
        if dst is not None:
            _fail(PyptoTypeError, "assemble", "the list form is assemble([(src, offsets), ...], "
                  "dst, parallel=False)")
        dst, items = offsets, src
    else:
        items = [(src, offsets)]
    if not isinstance(parallel, bool):
        _fail(PyptoTypeError, "assemble", f"parallel must be a bool, got {short_repr(parallel)}")
    dv = _val(dst, "assemble", "dst")
    for item in items:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            _fail(PyptoTypeError, "assemble", f"list items must be (src, offsets) pairs, got "
                  f"{short_repr(item)}")
        sv = _val(item[0], "assemble", "src")
        offs = item[1]
        if not isinstance(offs, (list, tuple)):
            _fail(PyptoTypeError, "assemble", f"offsets must be a list, got {short_repr(offs)}")
        _write(tr, sv, offs, dv, "assemble", {"parallel": True} if parallel else None)


# --- indexing --------------------------------------------------------------------------------


def _normalize_key(t: Tensor, key: Any, api: str):
    """-> list of (kind, start, size_or_None, exact) per axis; kind 'slice' or 'index'."""
    xv = t._value
    if not isinstance(key, tuple):
        key = (key,)
    if _bsum(1 for k in key if k is Ellipsis) > 1:
        _fail(PyptoValueError, api, "at most one '...' is allowed in an index")
    n_real = _bsum(1 for k in key if k is not Ellipsis)
    if n_real > xv.rank:
        _fail(PyptoValueError, api, f"too many indices ({n_real}) for a {xv.rank}-D tensor")
    expanded: List[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (xv.rank - n_real))
        else:
            expanded.append(k)
    expanded.extend([slice(None)] * (xv.rank - len(expanded)))
    out = []
    for axis, (k, dim) in enumerate(zip(expanded, xv.shape)):
        if isinstance(k, slice):
            if k.step is not None and const_value(k.step) != 1:
                _fail(PyptoValueError, api, f"step must be 1 or None, got {short_repr(k.step)}")
            start = 0 if k.start is None else _dim(k.start, api, "slice start")
            start = _neg_index(start, dim, axis, api)
            if k.stop is None:
                size = _simplify(as_expr(dim) - start)
                out.append(("slice", start, size, False))
                continue
            stop = _neg_index(_dim(k.stop, api, "slice stop"), dim, axis, api)
            size = const_value(as_expr(stop) - start)
            if size is None:
                _fail(PyptoValueError, api, f"slice {start}:{stop} on axis {axis} must have a "
                      "size that simplifies to an int (stop - start)")
            if size <= 0:
                _fail(PyptoValueError, api, f"slice {start}:{stop} on axis {axis} is empty")
            if isinstance(dim, int) and isinstance(stop, int) and stop > dim:
                _fail(PyptoValueError, api, f"slice {start}:{stop} exceeds size {dim} of axis "
                      f"{axis}")
            out.append(("slice", start, int(size), True))
        elif isinstance(k, (numbers.Integral, SymbolicScalar)) and not isinstance(k, bool):
            idx = _neg_index(_dim(k, api, "index"), dim, axis, api)
            if isinstance(idx, int) and isinstance(dim, int) and idx >= dim:
                _fail(PyptoValueError, api, f"index {k} is out of range for size {dim} of axis "
                      f"{axis}")
            out.append(("index", idx, 1, True))
        else:
            _fail(PyptoTypeError, api, f"unsupported index {short_repr(k)} on axis {axis}; use ints, "
                  "slices with step 1, symbolic scalars or '...'")
    return out


def _neg_index(i: Any, dim: Any, axis: int, api: str) -> Any:
    if isinstance(i, int) and i < 0:
        if not isinstance(dim, int):
            _fail(PyptoValueError, api, f"negative index {i} on dynamic axis {axis}")
        if i + dim < 0:
            _fail(PyptoValueError, api, f"index {i} is out of range for size {dim} of axis "
                  f"{axis}")
        return i + dim
    return i


def _getitem(t: Tensor, key: Any) -> Any:
    api = "Tensor.__getitem__"
    tr = _tr(api)
    xv = t._value
    norm = _normalize_key(t, key, api)
    if all(kind == "index" for kind, *_ in norm):
        # x[i, j]: an element read, which becomes a run-time scalar (PyPTO: GetTensorData).
        if xv.name is None or not xv.dtype.is_int:
            _fail(PyptoValueError, api, "reading one element is supported only from integer "
                  f"kernel input tensors, not from {xv.ref()} ({xv.dtype}); use slicing to get "
                  "a tile")
        tr.use(xv, api)
        return load(xv.name, [start for _, start, _, _ in norm])
    if all(kind == "slice" and isinstance(start, int) and start == 0 and
           _dim_eq(size, d) is True for (kind, start, size, _), d in zip(norm, xv.shape)):
        return t
    shape = [size for _, _, size, _ in norm]
    offsets = [start for _, start, _, _ in norm]
    out = view(t, shape, offsets)
    dropped = [axis for axis, (kind, *_) in enumerate(norm) if kind == "index"]
    if dropped:
        ov = out._value
        keep = [a for a in range(ov.rank) if a not in dropped]
        valid = None if ov.valid_shape is None else [ov.valid_shape[a] for a in keep]
        out = _wrap(_emit(tr, "reshape", [ov], {"inplace": True},
                              [ov.shape[a] for a in keep], ov.dtype, ov.format, valid))
    return out


def _setitem(t: Tensor, key: Any, value: Any) -> None:
    api = "Tensor.__setitem__"
    tr = _tr(api)
    dv = t._value
    norm = _normalize_key(t, key, api)
    offsets = [start for _, start, _, _ in norm]
    region = [size for _, _, size, _ in norm]
    exact = [ex for *_, ex in norm]
    if isinstance(value, Tensor):
        sv = value._value
    elif _is_scalar(value):
        sv = full(region, value, dv.dtype)._value
    else:
        _fail(PyptoTypeError, api, f"can only assign a pypto.Tensor or a number, got "
              f"{type(value).__name__}")
    index_axes = [a for a, (kind, *_) in enumerate(norm) if kind == "index"]
    if index_axes and sv.rank == dv.rank - len(index_axes):
        shape = list(sv.shape)
        valid = None if sv.valid_shape is None else list(sv.valid_shape)
        for a in index_axes:
            shape.insert(a, 1)
            if valid is not None:
                valid.insert(a, 1)
        sv = _emit(tr, "reshape", [sv], {"inplace": True}, shape, sv.dtype, sv.format, valid)
    _write(tr, sv, offsets, dv, "Tensor.__setitem__", region=region, exact=exact)


# --- composites and matmul -------------------------------------------------------------------


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax over ``dim``, computed in FP32: cast -> amax -> sub -> exp -> sum -> div ->
    cast back. Every recorded op carries ``composite="softmax"``."""
    tr = _tr("softmax")
    xv = _val(x, "softmax")
    _check_float(xv, "softmax")
    saved, tr.composite = tr.composite, "softmax"
    try:
        orig = xv.dtype
        xf = cast(x, DataType.DT_FP32) if orig is not DataType.DT_FP32 else x
        m = amax(xf, dim, keepdim=True)
        e = exp(sub(xf, m))
        s = sum(e, dim, keepdim=True)
        r = div(e, s)
        return cast(r, orig) if orig is not DataType.DT_FP32 else r
    finally:
        tr.composite = saved


class _Composite:
    """Marks every op recorded inside it with ``composite=<name>`` (as softmax does)."""

    def __init__(self, api: str):
        self.tr = _tr(api)
        self.name = api

    def __enter__(self):
        self.saved, self.tr.composite = self.tr.composite, self.name
        return self

    def __exit__(self, *exc):
        self.tr.composite = self.saved
        return False


def _to_fp32(x: Tensor) -> Tensor:
    return cast(x, DataType.DT_FP32) if x._value.dtype is not DataType.DT_FP32 else x


def _from_fp32(x: Tensor, dtype: DataType) -> Tensor:
    return cast(x, dtype) if dtype is not DataType.DT_FP32 else x


def LReLU(input: Tensor, negative_slope: Any = 0.01) -> Tensor:  # noqa: A002,N802
    """PyPTO's other name of :func:`lrelu`."""
    return lrelu(input, negative_slope)


def axpy_(y: Tensor, x: Tensor, alpha: Any = 1.0) -> Tensor:
    """In place ``y = alpha * x + y`` (x broadcasts to y; y keeps its shape), computed in fp32
    and rounded once to y's dtype (torch.add(y, x, alpha=alpha)); y and x have one float dtype,
    or y is DT_FP32 and x DT_FP16. Returns y."""
    api = "axpy"
    yv, xv = _val(y, api, "y"), _val(x, api, "x")
    _check_float(yv, api)
    _check_float(xv, api)
    if xv.dtype is not yv.dtype and not (yv.dtype is DataType.DT_FP32 and
                                         xv.dtype is DataType.DT_FP16):
        _fail(PyptoTypeError, api, f"y {yv.dtype} and x {xv.dtype}: the dtypes must be equal, "
              "or y DT_FP32 and x DT_FP16")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        _fail(PyptoTypeError, api, f"alpha must be a number, got {alpha!r}")
    if xv.rank != yv.rank:
        _fail(PyptoValueError, api, f"y {_fmt(yv.shape)} and x {_fmt(xv.shape)} need equal ranks")
    with _Composite(api) as c:
        xf = _to_fp32(x)
        r = add(_to_fp32(y), xf if alpha == 1 else mul(xf, float(alpha)))
        r = _from_fp32(r, yv.dtype)
        if _broadcast([r._value, yv], api)[0] != tuple(yv.shape):
            _fail(PyptoValueError, api, f"x {_fmt(xv.shape)} broadcasts beyond y "
                  f"{_fmt(yv.shape)}")
        _write(c.tr, r._value, [0] * yv.rank, yv, api)
    return y


def axpy(y: Tensor, x: Tensor, alpha: Any = 1.0) -> Tensor:
    """PyPTO's axpy: the same in-place update as :func:`axpy_`; returns y."""
    return axpy_(y, x, alpha)


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """torch.prelu: ``x`` where ``x > 0``, else ``weight * x``; ``weight`` has one element or
    one per channel (axis 1), of the input's float dtype."""
    api = "prelu"
    xv, wv = _val(input, api), _val(weight, api, "weight")
    _check_float(xv, api)
    if wv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"weight dtype {wv.dtype} differs from the input's {xv.dtype}")
    n = 1
    for d in wv.shape:
        n = n * d
    channels = xv.shape[1] if xv.rank >= 2 else 1
    if _dim_eq(n, 1) is not True and (_dim_eq(n, channels) is not True):
        _fail(PyptoValueError, api, f"weight has {n} elements; expected 1 or the {channels} "
              "channels of axis 1")
    with _Composite(api):
        shape = [1] * xv.rank
        if _dim_eq(n, 1) is not True:
            shape[1] = channels
        w = reshape(weight, shape, inplace=True) if list(wv.shape) != shape else weight
        return where(gt(input, 0.0), input, mul(input, w))


def rms_norm(input: Tensor, gamma: Optional[Tensor] = None,  # noqa: A002
             epsilon: float = 1e-6) -> Tensor:
    """PyPTO's rms_norm over the last axis: ``x / sqrt(mean(x * x) + epsilon)``, times
    ``gamma`` (``[C]``) when given, computed in fp32 and cast back to the input's dtype."""
    api = "rms_norm"
    xv = _val(input, api)
    _check_float(xv, api)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        _fail(PyptoTypeError, api, f"epsilon must be a number, got {epsilon!r}")
    c = xv.shape[-1]
    if gamma is not None:
        gv = _val(gamma, api, "gamma")
        if gv.rank != 1 or _dim_eq(gv.shape[0], c) is False:
            _fail(PyptoValueError, api, f"gamma must be [{c}], got {_fmt(gv.shape)}")
    with _Composite(api):
        xf = _to_fp32(input)
        ms = div(sum(mul(xf, xf), -1, keepdim=True), float(c) if isinstance(c, int) else c)
        y = mul(xf, rsqrt(add(ms, float(epsilon))))
        if gamma is not None:
            y = mul(y, _to_fp32(gamma))
        return _from_fp32(y, xv.dtype)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002
        value: float = 0.0) -> Tensor:
    """Constant padding (torch.nn.functional.pad): ``pad`` lists (before, after) pairs from
    the last axis backwards, each >= 0. PyPTO pads only after (right/bottom); before-padding
    works here too. Other modes raise PyptoNotImplementedError."""
    api = "pad"
    tr = _tr(api)
    xv = _val(input, api)
    if mode != "constant":
        _fail(PyptoNotImplementedError, api, f"mode {mode!r} is not supported (only "
              "'constant', as in PyPTO)")
    if not isinstance(pad, (list, tuple)) or len(pad) % 2 or not pad or len(pad) > 2 * xv.rank:
        _fail(PyptoValueError, api, f"pad must list (before, after) pairs for up to {xv.rank} "
              f"axes, got {pad!r}")
    for p in pad:
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 0:
            _fail(PyptoValueError, api, f"pad sizes must be non-negative ints, got {pad!r}")
    shape, offsets = list(xv.shape), [0] * xv.rank
    for i in range(len(pad) // 2):
        axis = xv.rank - 1 - i
        shape[axis] = shape[axis] + pad[2 * i] + pad[2 * i + 1]
        offsets[axis] = pad[2 * i]
    with _Composite(api):
        out = full(shape, value if xv.dtype.is_float else int(value), xv.dtype)
        _write(tr, xv, offsets, out._value, api)
    return out


def expand_exp_dif(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """PyPTO's ``exp(input - other)`` with ``other`` broadcast (size 1 on its last or
    second-to-last axis); each step rounded to the dtype."""
    api = "expand_exp_dif"
    xv, ov = _val(input, api), _val(other, api, "other")
    _check_float(xv, api)
    if ov.rank != xv.rank or not (_dim_eq(ov.shape[-1], 1) or
                                  (ov.rank >= 2 and _dim_eq(ov.shape[-2], 1))):
        _fail(PyptoValueError, api, f"other {_fmt(ov.shape)} must have the input's rank and "
              "size 1 on its last or second-to-last axis")
    with _Composite(api):
        return exp(sub(input, other))


def fillpad(input: Tensor, mode: str = "constant", value: Any = 0.0) -> Tensor:  # noqa: A002
    """PyPTO's fillpad: the input's shape, its valid region copied and the rest (beyond its
    valid_shape) set to ``value`` (a number, or "inf"/"-inf")."""
    api = "fillpad"
    tr = _tr(api)
    xv = _val(input, api)
    if mode != "constant":
        _fail(PyptoNotImplementedError, api, f"mode {mode!r} is not supported (only "
              "'constant', as in PyPTO)")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            _fail(PyptoValueError, api, f"value must be a number, got {value!r}")
    with _Composite(api):
        out = full(list(xv.shape), value if xv.dtype.is_float else int(value), xv.dtype)
        _write(tr, xv, [0] * xv.rank, out._value, api)
    return out


_GATHERMASK = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3)}


def gathermask(self: Tensor, pattern_mode: int) -> Tensor:
    """PyPTO's gathermask along the last axis: modes 1/2 keep element 0/1 of every pair, 3..6
    element 0..3 of every four, 7 all of them. Computed as a gather."""
    api = "gathermask"
    xv = _val(self, api)
    _check_numeric(xv, api)
    if pattern_mode == 7:
        return clone(self)
    if pattern_mode not in _GATHERMASK:
        _fail(PyptoValueError, api, f"pattern_mode must be 1..7, got {pattern_mode!r}")
    step, first = _GATHERMASK[pattern_mode]
    n = xv.shape[-1]
    if not isinstance(n, int) or n % step:
        _fail(PyptoValueError, api, f"the last axis ({n}) must be a multiple of {step} for "
              f"pattern_mode {pattern_mode}")
    with _Composite(api):
        return index_select(self, -1, arange(first, n, step))


def quantize(input: Tensor, scale: Tensor, otype: DataType, axis: int = -1,  # noqa: A002
             zero_points: Optional[Tensor] = None) -> Tensor:
    """PyPTO's quantize, symmetric: ``round(input * scale)`` to DT_INT8 (half to even,
    saturated to [-128, 127]), ``scale`` one per row (``axis=-1``, shape ``input.shape[:-1]``)
    or per column (``axis=-2``, ``input.shape[:-2] + [col]``). DT_UINT8 (asymmetric, with
    zero_points) is not supported: pypto-sim has no unsigned dtypes."""
    api = "quantize"
    xv, sv = _val(input, api), _val(scale, api, "scale")
    if otype is not DataType.DT_INT8 or zero_points is not None:
        _fail(PyptoNotImplementedError, api, f"only symmetric quantization to DT_INT8 is "
              f"supported (got otype {otype}{', zero_points' if zero_points is not None else ''}"
              "); pypto-sim has no DT_UINT8")
    if xv.dtype is not DataType.DT_FP32 or sv.dtype is not DataType.DT_FP32:
        _fail(PyptoTypeError, api, f"input and scale must be DT_FP32, got {xv.dtype} and "
              f"{sv.dtype}")
    with _Composite(api):
        y = mul(input, _per_axis(api, xv, scale, axis))
        return cast(y, DataType.DT_INT8, CastMode.CAST_RINT, SaturationMode.ON)


def _per_axis(api: str, xv: ir.Value, scale: Tensor, axis: int) -> Tensor:
    """``scale`` (rank one less than the input) broadcast along ``axis`` (-1 or -2)."""
    sv = scale._value
    a = axis - xv.rank if isinstance(axis, int) and axis >= 0 else axis
    if a not in (-1, -2) or sv.rank != xv.rank - 1:
        _fail(PyptoValueError, api, f"axis must be -1 or -2 and scale of rank {xv.rank - 1}, "
              f"got axis {axis!r} and {_fmt(sv.shape)}")
    return unsqueeze(scale, a)


def dequantize(input: Tensor, scale: Tensor, otype: DataType = DataType.DT_FP32,  # noqa: A002
               axis: int = -1, zero_points: Optional[Tensor] = None) -> Tensor:
    """PyPTO's dequantize: ``(float(input) + zero_points) * scale`` in DT_FP32 for DT_INT8 /
    DT_INT16 input; ``scale`` and ``zero_points`` per row (``axis=-1``) or column (-2)."""
    api = "dequantize"
    xv, sv = _val(input, api), _val(scale, api, "scale")
    if xv.dtype not in (DataType.DT_INT8, DataType.DT_INT16):
        _fail(PyptoTypeError, api, f"input must be DT_INT8 or DT_INT16, got {xv.dtype}")
    if otype is not DataType.DT_FP32 or sv.dtype is not DataType.DT_FP32:
        _fail(PyptoTypeError, api, f"otype and scale must be DT_FP32, got {otype} and "
              f"{sv.dtype}")
    with _Composite(api):
        y = cast(input, DataType.DT_FP32)
        if zero_points is not None:
            y = add(y, _per_axis(api, xv, zero_points, axis))
        return mul(y, _per_axis(api, xv, scale, axis))


def indexput_(input: Tensor, indices: Sequence[Tensor], values: Tensor,  # noqa: A002
              accumulate: bool = False) -> None:
    """PyPTO's index_put_ (in place, returns None): ``input[indices[0][i], indices[1][i], ...]
    = values[i]`` (``+=`` with ``accumulate``) for 1-D index tensors of equal length ``t`` over
    the first ``len(indices)`` axes; ``values`` is ``[t] + input.shape[len(indices):]``. As
    in PyPTO, duplicate positions without accumulate keep one of the updates (here the last);
    with accumulate they add up in index order. Computed as a scatter along a flattened
    leading axis."""
    api = "indexput_"
    xv, vv = _val(input, api), _val(values, api, "values")
    if not isinstance(indices, (list, tuple)) or not indices or len(indices) > xv.rank:
        _fail(PyptoValueError, api, f"indices must be a tuple of 1 to {xv.rank} 1-D tensors, "
              f"got {indices!r}")
    if vv.dtype is not xv.dtype:
        _fail(PyptoTypeError, api, f"values dtype {vv.dtype} differs from the input's "
              f"{xv.dtype}")
    if not isinstance(accumulate, bool):
        _fail(PyptoTypeError, api, f"accumulate must be a bool, got {accumulate!r}")
    m = len(indices)
    ivs = [_val(i, api, "index") for i in indices]
    t = ivs[0].shape[0] if ivs[0].rank == 1 else None
    for iv in ivs:
        if iv.rank != 1 or iv.dtype.is_float or iv.dtype is DataType.DT_BOOL or                 _dim_eq(iv.shape[0], t) is not True:
            _fail(PyptoValueError, api, "every index must be a 1-D integer tensor of one length")
    rest = list(xv.shape[m:])
    if vv.rank != 1 + len(rest) or _dim_eq(vv.shape[0], t) is not True or             any(_dim_eq(a, b) is not True for a, b in zip(vv.shape[1:], rest)):
        _fail(PyptoValueError, api, f"values must be {_fmt([t] + rest)}, got {_fmt(vv.shape)}")
    lead: Any = 1
    for d in xv.shape[:m]:
        lead = lead * d
    with _Composite(api):
        flat = None
        common = DataType.DT_INT64 if any(iv.dtype is DataType.DT_INT64 for iv in ivs) else \
            DataType.DT_INT32
        for k, ix in enumerate(indices):
            ix = ix if ix._value.dtype is common else cast(ix, common)
            flat = ix if flat is None else add(mul(flat, xv.shape[k]), ix)
        x2 = reshape(input, [lead] + rest, inplace=True)
        v2 = values
        idx = _row_index(api, x2._value, 0, flat, vv.shape)
        out = scatter(x2, 0, idx, v2, reduce="add" if accumulate else None)
        _write(_tr(api), reshape(out, list(xv.shape), inplace=True)._value, [0] * xv.rank, xv,
               api)
    return None


def atomic_add(src: Tensor, offsets: Sequence[Any], dst: Tensor) -> None:
    """PyPTO's atomic_add: ``dst[offsets : offsets + src.shape] += src`` (each sum rounded to
    the dtype). SIM orders the read-modify-writes by their memory dependencies, so concurrent
    adds to one region give the sequential result."""
    api = "atomic_add"
    tr = _tr(api)
    sv, dv = _val(src, api, "src"), _val(dst, api, "dst")
    if not isinstance(offsets, (list, tuple)) or len(offsets) != dv.rank:
        _fail(PyptoValueError, api, f"needs {dv.rank} offsets, got {offsets!r}")
    if sv.dtype is not dv.dtype:
        _fail(PyptoTypeError, api, f"src dtype {sv.dtype} differs from dst's {dv.dtype}")
    with _Composite(api):
        region = view(dst, list(sv.shape), list(offsets))
        _write(tr, add(region, src)._value, list(offsets), dv, api)


def _reduce_dims(api: str, xv: ir.Value, dim: Any) -> Tuple[List[int], Any]:
    dims = list(range(xv.rank)) if dim is None else (
        list(dim) if isinstance(dim, (list, tuple)) else [dim])
    axes = sorted({_norm_axis(d, xv.rank, api) for d in dims})
    n: Any = 1
    for a in axes:
        n = n * xv.shape[a]
    return axes, n


def var(input: Tensor, dim: Any = None, unbiased: Optional[bool] = None,  # noqa: A002
        keepdim: bool = False, *, correction: Optional[int] = None) -> Tensor:
    """torch.var over ``dim`` (an int, a list, or None for all axes): the mean square
    deviation divided by ``n - correction`` (default 1; ``unbiased=False`` is 0), in fp32,
    cast back to the input's float dtype."""
    api = "var"
    xv = _val(input, api)
    _check_float(xv, api)
    if correction is None:
        correction = 0 if unbiased is False else 1
    axes, n = _reduce_dims(api, xv, dim)
    with _Composite(api):
        xf = _to_fp32(input)
        mean = div(sum(xf, axes, keepdim=True), n)
        d = sub(xf, mean)
        v = div(sum(mul(d, d), axes, keepdim=keepdim), smax(n - correction, 0)
                if isinstance(n, SymbolicScalar) else float(builtins.max(n - correction, 0)))
        return _from_fp32(v, xv.dtype)


def std(input: Tensor, dim: Any = None, unbiased: Optional[bool] = None,  # noqa: A002
        keepdim: bool = False, *, correction: Optional[int] = None) -> Tensor:
    """torch.std: ``sqrt(var(...))``, in fp32, cast back to the input's dtype."""
    xv = _val(input, "std")
    _check_float(xv, "std")
    with _Composite("std"):
        v = var(_to_fp32(input), dim, unbiased, keepdim, correction=correction)
        return _from_fp32(sqrt(v), xv.dtype)


_MATMUL_IN = {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32, DataType.DT_INT8,
              DataType.DT_FP8, DataType.DT_HF8, DataType.DT_FP8E4M3, DataType.DT_FP8E5M2}
_MATMUL_FLOAT_OUT = {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32}


def matmul(a: Tensor, b: Tensor, out_dtype: DataType, *, a_trans: bool = False,
           b_trans: bool = False, c_matrix_nz: bool = False, extend_params: Any = None) -> Tensor:
    """``a @ b`` on the cube unit: 2-D ``[M, K] x [K, N]`` or batched (3-D/4-D, batch sizes
    broadcast when 1). ``a_trans``/``b_trans`` read the operand transposed. int8 inputs need
    ``out_dtype=DT_INT32``. Needs ``pypto.set_cube_tile_shapes`` first."""
    tr = _tr("matmul")
    av = _val(a, "matmul", "a")
    bv = _val(b, "matmul", "b")
    odt = _dtype_arg(out_dtype, "matmul")
    for flag, name in ((a_trans, "a_trans"), (b_trans, "b_trans"), (c_matrix_nz, "c_matrix_nz")):
        if not isinstance(flag, bool):
            _fail(PyptoTypeError, "matmul", f"{name} must be a bool, got {short_repr(flag)}")
    ext_inputs, ext_attrs = _matmul_extend(extend_params, av, bv, odt)
    if not 2 <= av.rank <= 4 or av.rank != bv.rank:
        _fail(PyptoValueError, "matmul", f"operands must both be 2-D, 3-D or 4-D, got "
              f"{_fmt(av.shape)} and {_fmt(bv.shape)}")
    if av.dtype is not bv.dtype:
        _fail(PyptoTypeError, "matmul", f"operand dtypes differ: {av.dtype} and {bv.dtype}")
    if av.dtype not in _MATMUL_IN:
        _fail(PyptoTypeError, "matmul", f"unsupported operand dtype {av.dtype}")
    dequant = "scale" in ext_attrs or "scale_tensor" in ext_attrs
    if av.dtype is DataType.DT_INT8 and not dequant and odt is not DataType.DT_INT32:
        _fail(PyptoTypeError, "matmul", f"int8 operands need out_dtype DT_INT32, got {odt} "
              "(fp16/bf16 need a dequant scale in extend_params)")
    if av.dtype is DataType.DT_INT8 and dequant and odt not in _MATMUL_FLOAT_OUT:
        _fail(PyptoTypeError, "matmul", f"a dequantized int8 matmul needs out_dtype DT_FP16, "
              f"DT_BF16 or DT_FP32, got {odt}")
    if av.dtype is not DataType.DT_INT8 and odt not in _MATMUL_FLOAT_OUT:
        _fail(PyptoTypeError, "matmul", f"out_dtype must be DT_FP16, DT_BF16 or DT_FP32 for "
              f"{av.dtype} operands, got {odt}")

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
    attrs = {"a_trans": a_trans, "b_trans": b_trans, "c_matrix_nz": c_matrix_nz, **ext_attrs}
    return _wrap(_emit(tr, "matmul", [av, bv] + ext_inputs, attrs, batch + [m, n], odt, fmt,
                       valid))


_MATMUL_EXTEND_KEYS = ("bias_tensor", "scale", "scale_tensor", "relu_type", "trans_mode")
_BIAS_DTYPES = {
    DataType.DT_FP16: (DataType.DT_FP16, DataType.DT_FP32),
    DataType.DT_BF16: (DataType.DT_BF16, DataType.DT_FP32),
    DataType.DT_FP32: (DataType.DT_FP32,),
    DataType.DT_INT8: (DataType.DT_INT32,),
}


def _matmul_extend(ep: Any, av: ir.Value, bv: ir.Value, odt: DataType):
    """PyPTO's matmul extend_params as extra inputs (bias, then scale tensor) and attrs. The
    epilogue runs on the accumulator: + bias, ReLU, * scale (dequant), then the cast to
    out_dtype."""
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
    if "scale" in attrs or "scale_tensor" in attrs:
        if av.dtype is not DataType.DT_INT8:
            _fail(PyptoValueError, api, f"scale/scale_tensor dequantize int8 matmuls; the "
                  f"operands are {av.dtype}")
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
