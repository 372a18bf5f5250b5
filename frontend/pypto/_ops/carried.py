# SPDX-License-Identifier: Apache-2.0
"""The variables a pypto.loop body carries from one iteration to the next (names it reads
before it assigns them, from the bytecode): tensors through loop buffers, ints that change by
a loop-invariant amount as functions of the loop index, and the errors for anything else. The
kernel function's locals are rebound through ``frame_locals.write_locals``."""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict, List, Optional, Tuple

from .. import _tracer
from .._errors import PyptoValueError
from ..error import short_repr
from .._source import assignment_lines, loop_carried_names, loop_live_out_names
from .._symbolic import SymbolicScalar, as_expr, const_value, floordiv, smax
from .._tensor import Tensor
from .common import _fmt
from .creation import alloc
from .frame_locals import write_locals
from .movement import reshape
from .not_carried import _NotCarried
from .subscript import _setitem


def _watched_locals(frame, carried) -> dict:
    return {k: v for k, v in frame.f_locals.items()
            if k in carried or isinstance(v, (Tensor, SymbolicScalar))}


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
        #: Carried tensors the body reshapes (same dtype and element count): the shape the
        #: variable has after the loop, a view of its buffer (PyPTO's reshape doc, example 2:
        #: a loop's inplace reshape of its input is its output).
        self.views: Dict[str, List[int]] = {}

    def assigned_at(self, name: str) -> str:
        file = self.code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
        lines = assignment_lines(self.code, self.lasti, name)
        return ", ".join(f"{file}:{n}" for n in lines) or self.where

    def start_path(self) -> None:
        write_locals(self.frame, {**self.moving, **self.buffers})

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
            if tuple(new.shape) != tuple(buf.shape) and self._reshaped(name, buf, new):
                _setitem(reshape(buf, list(new.shape), inplace=True), slice(None), new)
                continue
            if tuple(new.shape) != tuple(buf.shape) or new.dtype != buf.dtype:
                raise PyptoValueError(
                    f"{self.where}: variable '{name}' is carried from one iteration to the "
                    f"next (read in the body, then reassigned), but the body changes it from "
                    f"shape {_fmt(buf.shape)} {buf.dtype} to shape {_fmt(new.shape)} "
                    f"{new.dtype}; a carried tensor keeps its shape and dtype")
            _setitem(buf, slice(None), new)

    def _reshaped(self, name: str, buf: Tensor, new: Tensor) -> bool:
        """Whether the body's new value of carried ``name`` is its buffer's elements in
        another static shape, the same on every path."""
        shape = list(new.shape)
        if new.dtype != buf.dtype or not all(isinstance(d, int) for d in shape + list(buf.shape)):
            return False
        if math.prod(shape) != math.prod(buf.shape):
            return False
        if self.views.setdefault(name, shape) != shape:
            raise PyptoValueError(
                f"{self.where}: variable '{name}' is carried from one iteration to the next "
                f"(read in the body, then reassigned), and the body's paths reshape it "
                f"differently ({_fmt(self.views[name])} and {_fmt(shape)}); after the loop "
                f"it must have one shape")
        return True

    def finish_tensors(self) -> None:
        out = dict(self.buffers)
        for name, shape in self.views.items():
            out[name] = reshape(self.buffers[name], shape, inplace=True)
        write_locals(self.frame, out)

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
        write_locals(self.frame, after)


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
        if not isinstance(old, (numbers.Number, SymbolicScalar)) and \
                not isinstance(new, (numbers.Number, SymbolicScalar)):
            # Another object (a dataclass of loop state: PyPTO's IFA) keeps Python's value,
            # as PyPTO's tracing of the body leaves it.
            continue
        raise lv.error(name, f"it changes from {type(old).__name__} {short_repr(old)} to "
                       f"{type(new).__name__} {short_repr(new)}", old if not _carriable(old) else new)
    return moved, tensors
