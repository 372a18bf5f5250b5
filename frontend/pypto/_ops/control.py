# SPDX-License-Identifier: Apache-2.0
"""Control flow: ``pypto.loop`` (and ``loop_unroll``), ``is_loop_begin``/``is_loop_end``,
``cond`` and the scalar helpers ``min``, ``max``, ``ceildiv``. The variables a loop body
carries from one iteration to the next are handled in ``carried``."""

from __future__ import annotations

import builtins
import numbers
import sys
import warnings
from typing import Any, Dict, List, Optional, Sequence

from .. import _options, _tracer
from .._errors import PyptoTypeError, PyptoValueError, user_location
from ..error import short_repr
from .._symbolic import SymbolicScalar, as_expr, compare, floordiv, smax, smin
from .carried import _LoopVars, _check_rebinding, _watched_locals
from .common import _dim, _fail, _simplify, _tr

_bmin, _bmax = builtins.min, builtins.max


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
                 submit_before_loop: bool = False, **other: Any):
        _ignore_other("loop", other)
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
            if not isinstance(unroll_list, _UNROLL_LISTS):
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
        options_at_entry = _options.operation_options_mark()
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
                _options.restore_operation_options(options_at_entry)
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
        _options.restore_operation_options(options_at_entry)
        if lv.moving:
            lv.finish(tr, ol, updates)
        lv.finish_tensors()


#: PyPTO's loop records its unroll list as a std::set<int> (record_loop_func), so a set
#: (DeepSeek-V3.2's sparse attention passes {1}) is taken like a list.
_UNROLL_LISTS = (list, tuple, set, frozenset)


def loop_unroll(*args: Any, unroll_list: Sequence[int] = (1,), name: Optional[str] = None,
                idx_name: Optional[str] = None, parallel: bool = False,
                submit_before_loop: bool = False, **other: Any):
    """``for i, n in pypto.loop_unroll(start, stop, step=1, *, unroll_list=[...])``: like
    pypto.loop, but a separate device loop per unroll factor f (descending, 1 always added,
    as PyPTO's default ``[1]``), each stepping by ``step * f`` over as many iterations as fit
    in multiples of f (the rest goes to the next smaller factor). The body is traced once per
    factor and gets the index and ``n = step * f``, the number of (unit-step) iterations it
    covers."""
    outer = sys._getframe(1)  # the frame running the `for` statement
    _ignore_other("loop_unroll", other)
    if not isinstance(unroll_list, _UNROLL_LISTS) or not unroll_list:
        _fail(PyptoValueError, "loop_unroll", f"unroll_list must be a non-empty list of ints, "
              f"got {short_repr(unroll_list)}")
    spec = loop(*args, name=name, idx_name=idx_name, unroll_list=unroll_list, parallel=parallel,
                submit_before_loop=submit_before_loop)
    return _unrolled(spec, outer)


_LOOP_KEYS = "name, idx_name, unroll_list, parallel, submit_before_loop"


def _ignore_other(what: str, other: Dict[str, Any]) -> None:
    """PyPTO's loop reads its keywords with kwargs.get, so any other keyword is ignored there
    (models/kimi passes ``idx=``); it is here too, with a warning naming it."""
    for key in other:
        warnings.warn(f"pypto.{what} at {user_location()}: keyword '{key}' is not one of "
                      f"{_LOOP_KEYS}; ignored, as PyPTO ignores it", stacklevel=3)


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


def _scalar_pair(api: str, reduction: str, elementwise: str, args: tuple) -> None:
    """PyPTO's min/max take two ints or symbolic scalars; a tensor or a third argument (a
    reduction's dim and keepdim) gets a message naming the tensor ops that do that."""
    from .._tensor import Tensor
    if len(args) != 2 or any(isinstance(x, Tensor) for x in args):
        got = ", ".join(short_repr(x) for x in args)
        _fail(PyptoTypeError, api, f"takes two ints or symbolic scalars (PyPTO's {api} of loop "
              f"bounds and valid shapes), got ({got}); for a tensor use "
              f"pypto.{reduction}(x, dim, keepdim) to reduce it or pypto.{elementwise}(a, b) "
              f"element by element")


def min(*args: Any) -> Any:  # noqa: A001 - PyPTO's name
    """Minimum of two ints or symbolic scalars (an int when both are ints)."""
    _scalar_pair("min", "amin", "minimum", args)
    a, b = args
    if isinstance(a, SymbolicScalar) or isinstance(b, SymbolicScalar):
        r = smin(a, b)
        return r.args[0] if r.op == "const" else r
    return _bmin(a, b)


def max(*args: Any) -> Any:  # noqa: A001
    """Maximum of two ints or symbolic scalars."""
    _scalar_pair("max", "amax", "maximum", args)
    a, b = args
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
