# SPDX-License-Identifier: Apache-2.0
"""Records a kernel's tensor operations into an :mod:`pypto.ir` Kernel while it runs as Python.

How tracing works (no AST rewriting):

* The kernel function is called with in-kernel ``Tensor`` handles. Every pypto op appends a
  statement to the innermost open *scope* (a :class:`ir.Variant` being built).
* Python ``if``/``for`` on static values simply run.
* ``for i in pypto.loop(...)`` opens a Loop node; its iterator yields the symbolic index and
  records the body as a nested scope.
* A Python ``if`` on a *symbolic* condition calls ``SymbolicScalar.__bool__``, which lands in
  :func:`decide`: the innermost scope's :class:`PathExplorer` records the decision and answers
  True the first time. When the body ends and an unexplored combination remains, the body is
  run again under it. Each path becomes one guarded Variant of the loop (or of the kernel body,
  for conditions outside any loop; the kernel function is then called once per path).
* Values are scoped: a value made inside a loop body may be used only inside that body path.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from . import ir
from ._dtypes import DataType
from ._enums import TileOpFormat
from ._errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError, user_location
from ._limits import MAX_RANK, RANK_LIMIT_TEXT
from ._symbolic import SymbolicScalar, as_expr, logical_not

__all__ = ["Tracer", "PathExplorer", "current", "require", "decide", "MAX_PATHS"]

#: Upper bound of explored paths per body (kernel body or one pypto.loop body).
MAX_PATHS = 64

_state = threading.local()


def current() -> Optional["Tracer"]:
    """The tracer of the kernel being traced on this thread, or None."""
    return getattr(_state, "tracer", None)


def require(api: str) -> "Tracer":
    """The active tracer; raises a clear error when ``api`` is used outside a kernel trace."""
    tracer = current()
    if tracer is None:
        raise PyptoRuntimeError(
            f"{api} can only be used inside a @pypto.frontend.jit kernel while it is being "
            f"traced ({user_location()})")
    return tracer


def decide(cond: SymbolicScalar) -> bool:
    """Outcome of a Python ``if`` on a symbolic condition (called from ``__bool__``)."""
    tracer = current()
    if tracer is None:
        raise PyptoTypeError(
            f"the truth value of symbolic condition `{cond}` is only known at run time; "
            f"conditions on symbolic values are allowed only inside a @pypto.frontend.jit kernel "
            f"being traced ({user_location()})")
    return tracer.decide(cond)


class PathExplorer:
    """Enumerates the outcome combinations of the symbolic conditions met in one body.

    Depth-first: a new decision answers True; after a path ends, the last True decision is
    flipped to False and everything after it is forgotten. Re-deciding a condition already
    decided on the current path (or its negation) reuses the outcome, so ``if c: ... if c:``
    yields two paths, not four.
    """

    def __init__(self, where: str, limit: int = MAX_PATHS):
        self.where = where
        self.limit = limit
        self.paths = 0
        self._prefix: List[bool] = []
        self._done = False
        self._fresh: List[bool] = []
        self.conds: List[Tuple[SymbolicScalar, bool]] = []
        self._known: Dict[tuple, bool] = {}
        self._equal: Dict[str, SymbolicScalar] = {}  # symbol -> value, from taken equalities

    def start_path(self) -> bool:
        """Begins the next path; False when every combination has been explored."""
        if self._done:
            return False
        self.paths += 1
        if self.paths > self.limit:
            raise PyptoValueError(
                f"{self.where}: more than {self.limit} branch paths (combinations of outcomes of "
                "`if` on symbolic conditions); every path becomes a separate root variant. "
                "Reduce the number of symbolic conditions in this body or move them into "
                "separate pypto.loop bodies")
        self._fresh = []
        self.conds = []
        self._known = {}
        self._equal = {}
        return True

    def decide(self, cond: SymbolicScalar) -> bool:
        if cond.key in self._known:
            return self._known[cond.key]
        neg = logical_not(cond).key
        if neg in self._known:
            return not self._known[neg]
        if self._equal:
            # Under a taken `i == 0`, a later `i == 1` is simply false: no new path.
            reduced = cond.subs(self._equal)
            if reduced.is_const():
                return bool(reduced.args[0])
        i = len(self._fresh)
        outcome = self._prefix[i] if i < len(self._prefix) else True
        self._fresh.append(outcome)
        self.conds.append((cond, outcome))
        self._known[cond.key] = outcome
        if cond.op in ("eq", "ne") and outcome == (cond.op == "eq"):
            for a, b in (cond.args, cond.args[::-1]):
                if a.op == "sym" and a.name not in b.free_symbols():
                    self._equal[a.name] = b
                    break
        return outcome

    def end_path(self) -> None:
        fresh = list(self._fresh)
        while fresh and not fresh[-1]:
            fresh.pop()
        if not fresh:
            self._done = True
        else:
            fresh[-1] = False
            self._prefix = fresh


@dataclass(eq=False)
class Scope:
    """A body being traced: the kernel root (parameters only), a path of the kernel body, or a
    path of a pypto.loop body. Holds the tile configuration in force (scoped like PyPTO's
    config scopes: changes inside a loop body do not leak out)."""

    parent: Optional["Scope"]
    variant: Optional[ir.Variant]
    explorer: Optional[PathExplorer]
    loop: Optional[ir.Loop] = None
    vec_tile: Optional[Tuple[int, ...]] = None
    cube_tile: Optional[ir.CubeTile] = None
    conv_tile: Optional[Tuple[Any, ...]] = None  # set_conv_tile_shapes: (L1 info, L0 info)
    convbp_tile: Optional[Tuple[Any, ...]] = None  # set_convbp_input_tile_shapes: likewise
    label: Optional[str] = None
    consumed: Set[int] = field(default_factory=set)
    depth: int = 0

    def is_within(self, other: "Scope") -> bool:
        s: Optional[Scope] = self
        while s is not None:
            if s is other:
                return True
            s = s.parent
        return False


@dataclass(eq=False)
class OpenLoop:
    node: ir.Loop
    index: SymbolicScalar
    start: SymbolicScalar
    stop: SymbolicScalar
    step: SymbolicScalar


class Tracer:
    """Builds one :class:`ir.Kernel`. Not thread-safe; one per trace, activated with ``with``."""

    def __init__(self, kernel_name: str):
        self.kernel = ir.Kernel(name=kernel_name, params=[], variants=[])
        #: The jit's own sg_set_scope (pass_options), for ops no options scope sets one for.
        self.sg_scope: Any = None
        self._scope_flags: Dict[int, Tuple[bool, bool]] = {}  # sg_set_scope id -> its flags
        self.root = Scope(parent=None, variant=None, explorer=None)
        self.stack: List[Scope] = [self.root]
        self._next_id = 0
        self._value_scope: Dict[int, Scope] = {}
        self._value_loc: Dict[int, str] = {}
        self.dim_symbols: Dict[str, ir.Symbol] = {}
        self.open_loops: List[OpenLoop] = []
        self._index_names: Set[str] = set()
        self._retired_indices: Dict[str, str] = {}
        #: Placeholder symbol -> "variable 'off' of the pypto.loop at k.py:7", while that loop
        #: is traced (see loop-carried ints in ``_ops.loop``); retired ones for error messages.
        self.carried: Dict[str, str] = {}
        self._retired_carried: Dict[str, str] = {}
        self._next_carried = 0
        #: Name of the composite op (e.g. "softmax") whose parts are being emitted, or None.
        self.composite: Optional[str] = None
        #: Value id -> the id of the value it is a view or in-place reshape of.
        self.alias_of: Dict[int, int] = {}
        #: view output id -> (its source value, its offsets): where a view's window starts
        self.view_of: Dict[int, Tuple[ir.Value, list]] = {}

    # -- activation -----------------------------------------------------------------------

    def __enter__(self) -> "Tracer":
        if current() is not None:
            raise PyptoRuntimeError(
                "a @pypto.frontend.jit kernel cannot be called while another kernel is being "
                "traced; call plain Python helper functions instead")
        _state.tracer = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.tracer = None

    @property
    def top(self) -> Scope:
        return self.stack[-1]

    # -- values ---------------------------------------------------------------------------

    def new_value(self, shape: Sequence[Any], dtype: DataType,
                  fmt: TileOpFormat = TileOpFormat.TILEOP_ND,
                  valid_shape: Optional[Sequence[Any]] = None,
                  name: Optional[str] = None, scope: Optional[Scope] = None) -> ir.Value:
        if len(shape) > MAX_RANK:
            dims = ", ".join(str(d) for d in shape)
            raise PyptoValueError(f"a {len(shape)}-D tensor [{dims}]: pypto-sim's compiler "
                                  f"holds tensors of {RANK_LIMIT_TEXT} ({user_location()})")
        value = ir.Value(
            id=self._next_id,
            shape=tuple(_norm_dim(d) for d in shape),
            dtype=dtype,
            format=fmt,
            valid_shape=None if valid_shape is None else tuple(_norm_dim(d) for d in valid_shape),
            name=name,
        )
        self._next_id += 1
        self._value_scope[value.id] = scope or self.top
        self._value_loc[value.id] = user_location()
        return value

    def add_param(self, name: str, shape: Sequence[Any], dtype: DataType,
                  fmt: TileOpFormat) -> ir.Value:
        value = self.new_value(shape, dtype, fmt, name=name, scope=self.root)
        self.kernel.params.append(ir.Param(name=name, value=value))
        for axis, d in enumerate(value.shape):
            if isinstance(d, SymbolicScalar):
                sym = self.dim_symbols.get(d.name)
                if sym is None:
                    sym = ir.Symbol(name=d.name, sources=[])
                    self.dim_symbols[d.name] = sym
                    self.kernel.symbols.append(sym)
                sym.sources.append((name, axis))
        return value

    def value_scope(self, value: ir.Value) -> Optional[Scope]:
        """The body path that made ``value`` (None for a value of another trace)."""
        return self._value_scope.get(value.id)

    def use(self, value: ir.Value, api: str) -> None:
        """Checks that ``value`` is visible here and records that the current body reads it."""
        scope = self._value_scope.get(value.id)
        if scope is None or not self.top.is_within(scope):
            raise PyptoValueError(
                f"{api}: tensor {value.ref()} (created at {self._value_loc.get(value.id)}) is "
                f"used at {user_location()}, outside the pypto.loop body path that created it. "
                "Values do not flow out of a pypto.loop body or between its branch paths: "
                "allocate the tensor before the loop (e.g. acc = pypto.zeros(...)) and update "
                "it in place with acc[:] = ... or pypto.assemble(...)")
        self.top.consumed.add(value.id)

    def check_expr(self, e: Any, api: str) -> None:
        """Checks that every symbol of ``e`` is a dynamic dim or an open loop's index."""
        if not isinstance(e, SymbolicScalar):
            return
        open_names = {ol.index.name for ol in self.open_loops}
        for name in e.free_symbols():
            if name in self.dim_symbols or name in open_names or name in self.carried:
                continue
            if name in self._retired_carried:
                raise PyptoValueError(
                    f"{api}: `{e}` was computed inside a pypto.loop body from the loop-carried "
                    f"{self._retired_carried[name]} and is used after that loop "
                    f"({user_location()}); only the carried variable itself leaves the loop "
                    "(with its value after the last iteration)")
            if name in self._retired_indices:
                raise PyptoValueError(
                    f"{api}: loop index '{name}' of the pypto.loop at "
                    f"{self._retired_indices[name]} is used outside that loop "
                    f"({user_location()})")
            raise PyptoValueError(
                f"{api}: symbol '{name}' in `{e}` is not a dynamic dimension of a kernel "
                f"parameter nor an open pypto.loop index ({user_location()})")

    # -- statements -----------------------------------------------------------------------

    def _append(self, stmt: Any) -> None:
        variant = self.top.variant
        if variant is None:  # only the root has no variant; ops never run there
            raise PyptoRuntimeError("internal: no open kernel body to record into")
        variant.body.append(stmt)

    def aliases(self, value: ir.Value, base: ir.Value) -> bool:
        """Whether ``value`` is ``base`` or a chain of views / in-place reshapes of it."""
        vid = value.id
        while vid != base.id and vid in self.alias_of:
            vid = self.alias_of[vid]
        return vid == base.id

    def emit_op(self, op: str, inputs: Sequence[Any], attrs: Dict[str, Any],
                shape: Sequence[Any], dtype: DataType,
                fmt: TileOpFormat = TileOpFormat.TILEOP_ND,
                valid_shape: Optional[Sequence[Any]] = None) -> ir.Value:
        for i in inputs:
            if isinstance(i, ir.Value):
                self.use(i, op)
            elif isinstance(i, ir.Scalar):
                self.check_expr(i.value, op)
        for d in shape:
            self.check_expr(d, op)
        for d in valid_shape or ():
            self.check_expr(d, op)
        for a in attrs.values():
            for e in (a if isinstance(a, (list, tuple)) else (a,)):
                self.check_expr(e, op)
        out = self.new_value(shape, dtype, fmt, valid_shape)
        if op == "view" or (op == "reshape" and attrs.get("inplace")):
            self.alias_of[out.id] = inputs[0].id  # the same buffer under another shape
            if op == "view" and "dtype" not in attrs:
                self.view_of[out.id] = (inputs[0], list(attrs["offsets"]))
        scope = self.top
        attrs = dict(attrs)
        if self.composite is not None:
            attrs["composite"] = self.composite
        from . import _options  # _options reaches the open trace through this module
        combine = bool(_options.scoped_option("operation_options", "combine_axis", False))
        self._append(ir.Op(op=op, inputs=list(inputs), attrs=attrs, out=out,
                           vec_tile=scope.vec_tile, cube_tile=scope.cube_tile,
                           label=scope.label, loc=user_location(), combine_axis=combine,
                           **self._sg_scope()))
        return out

    def _sg_scope(self) -> Dict[str, Any]:
        """The sg_set_scope in force for the statement being traced, as Op/Write fields: its id
        (None: none) and its merge flags. PyPTO refuses one id with two sets of flags."""
        from . import _options  # _options reaches the open trace through this module
        sg = _options.scoped_option("pass_options", "sg_set_scope", self.sg_scope)
        sg_id, flags = (sg[0], (sg[1], sg[2])) if isinstance(sg, tuple) else (sg, (False, False))
        if sg_id is None or sg_id < 0:
            return {"sg_scope": None}
        seen = self._scope_flags.setdefault(int(sg_id), flags)
        if seen != flags:
            raise PyptoValueError(
                f"sg_set_scope: scope {sg_id} is set with (allow_parallel_merge, "
                f"allow_cross_scope_merge) = {flags} at {user_location()} and {seen} before; "
                "every op of one scope id must use the same flags")
        return {"sg_scope": int(sg_id), "sg_flags": flags if any(flags) else None}

    def emit_write(self, dst: ir.Value, src: ir.Value, offsets: Sequence[Any],
                   attrs: Optional[Dict[str, Any]] = None, api: str = "assemble") -> None:
        self.use(src, api)
        self.use(dst, api)
        offs = tuple(_norm_dim(o) for o in offsets)
        for o in offs:
            self.check_expr(o, api)
        scope = self.top
        self._append(ir.Write(dst=dst, src=src, offsets=offs, attrs=dict(attrs or {}),
                              vec_tile=scope.vec_tile, cube_tile=scope.cube_tile,
                              label=scope.label, loc=user_location(), **self._sg_scope()))

    # -- control flow ---------------------------------------------------------------------

    def decide(self, cond: SymbolicScalar) -> bool:
        self.check_expr(cond, "if")
        explorer = self.top.explorer
        if explorer is None:
            raise PyptoRuntimeError("internal: symbolic condition outside a traced body")
        return explorer.decide(cond)

    def push_variant(self, loop: Optional[ir.Loop], explorer: PathExplorer) -> Scope:
        parent = self.top
        variant = ir.Variant(conds=[])
        scope = Scope(parent=parent, variant=variant, explorer=explorer, loop=loop,
                      vec_tile=parent.vec_tile, cube_tile=parent.cube_tile,
                      conv_tile=parent.conv_tile, convbp_tile=parent.convbp_tile,
                      label=parent.label, depth=parent.depth + 1)
        (loop.variants if loop is not None else self.kernel.variants).append(variant)
        self.stack.append(scope)
        return scope

    def pop_variant(self, scope: Scope, where: str) -> None:
        self.check_top(scope, where)
        scope.variant.conds = list(scope.explorer.conds)
        self.stack.pop()
        self.top.consumed |= scope.consumed

    def check_top(self, scope: Scope, where: str) -> None:
        """Detects a pypto.loop body that was left early (break/return inside it)."""
        if self.top is not scope:
            inner = self.top
            inner_where = inner.loop.loc if inner.loop is not None else "?"
            raise PyptoValueError(
                f"{where}: the body of the pypto.loop at {inner_where} was left early "
                "(break or return inside a pypto.loop body is not supported; use `continue` "
                "or a condition instead)")

    def begin_loop(self, start: Any, stop: Any, step: Any, *, idx_name: Optional[str],
                   name: Optional[str], parallel: bool, unroll_list: Tuple[int, ...],
                   submit_before_loop: bool, loc: str) -> OpenLoop:
        base = idx_name or f"i{len(self._index_names)}"
        index_name = base
        n = 1
        while (index_name in self._index_names or index_name in self.dim_symbols):
            index_name = f"{base}_{n}"
            n += 1
        self._index_names.add(index_name)
        start_e, stop_e, step_e = as_expr(start), as_expr(stop), as_expr(step)
        for e in (start_e, stop_e, step_e):
            self.check_expr(e, "pypto.loop")
        node = ir.Loop(index=index_name, start=_norm_dim(start_e), stop=_norm_dim(stop_e),
                       step=_norm_dim(step_e), parallel=parallel, unroll_list=unroll_list,
                       name=name, submit_before_loop=submit_before_loop, loc=loc)
        self._append(node)
        ol = OpenLoop(node=node, index=SymbolicScalar(index_name), start=start_e, stop=stop_e,
                      step=step_e)
        self.open_loops.append(ol)
        return ol

    def end_loop(self, ol: OpenLoop) -> None:
        if not self.open_loops or self.open_loops[-1] is not ol:
            raise PyptoValueError(
                f"pypto.loop at {ol.node.loc}: loops ended out of order (break or return inside "
                "a pypto.loop body is not supported)")
        self.open_loops.pop()
        self._retired_indices[ol.index.name] = ol.node.loc

    # -- loop-carried scalars -------------------------------------------------------------

    def new_carried(self, name: str, what: str) -> SymbolicScalar:
        """A fresh placeholder symbol standing for loop-carried variable ``name`` while its
        loop body is traced; ``what`` describes it for error messages."""
        self._next_carried += 1
        sym = f"{name}@{self._next_carried}"
        self.carried[sym] = what
        return SymbolicScalar(sym)

    def retire_carried(self, sym: SymbolicScalar) -> None:
        self._retired_carried[sym.name] = self.carried.pop(sym.name)

    def mark(self) -> Tuple[Set[str], Dict[str, str], Set[int]]:
        """Tracer state that tracing one loop body changes, for :meth:`rewind`."""
        return set(self._index_names), dict(self._retired_indices), set(self.top.consumed)

    def rewind(self, mark: Tuple[Set[str], Dict[str, str], Set[int]], loop: ir.Loop) -> None:
        """Forgets the variants traced so far for ``loop`` (its body is about to be traced
        again). Value ids are not reused, so a handle kept from the forgotten trace stays
        distinct (and out of scope)."""
        names, retired, consumed = mark
        loop.variants.clear()
        self._index_names = set(names)
        self._retired_indices = dict(retired)
        self.top.consumed = set(consumed)

    def find_loop(self, index: Any, api: str) -> OpenLoop:
        if isinstance(index, SymbolicScalar) and index.op == "sym":
            for ol in reversed(self.open_loops):
                if ol.index.name == index.name:
                    return ol
            if index.name in self._retired_indices:
                raise PyptoValueError(
                    f"{api}: loop index '{index.name}' belongs to the pypto.loop at "
                    f"{self._retired_indices[index.name]}, which has ended ({user_location()})")
        # a ValueError, as PyPTO's is_loop_begin/is_loop_end pages give it
        raise PyptoValueError(
            f"{api} expects the index of an enclosing pypto.loop, got {index!r} "
            f"({user_location()})")

    def finish(self) -> ir.Kernel:
        written = {w.dst.id for w in self.kernel.writes()}
        for p in self.kernel.params:
            p.is_output_written = p.value.id in written
        return self.kernel


def mentions(loop: ir.Loop, names: Set[str]) -> Set[str]:
    """Which of the symbols ``names`` occur anywhere in ``loop``'s body (the places
    :func:`substitute` rewrites)."""
    found: Set[str] = set()

    def expr(e: Any) -> None:
        if isinstance(e, SymbolicScalar):
            found.update(names & e.free_symbols())
        elif isinstance(e, (list, tuple)):
            for x in e:
                expr(x)
        elif isinstance(e, dict):
            for x in e.values():
                expr(x)

    def body(stmts: List[Any]) -> None:
        for st in stmts:
            if isinstance(st, ir.Op):
                for x in st.inputs:
                    if isinstance(x, ir.Scalar):
                        expr(x.value)
                expr(st.attrs)
                expr(st.out.shape)
                expr(st.out.valid_shape)
            elif isinstance(st, ir.Write):
                expr(st.offsets)
                expr(st.attrs)
            elif isinstance(st, ir.Loop):
                expr([st.start, st.stop, st.step])
                variants(st.variants)

    def variants(vs: List[ir.Variant]) -> None:
        for v in vs:
            expr([c for c, _ in v.conds])
            body(v.body)

    variants(loop.variants)
    return found


def substitute(loop: ir.Loop, mapping: Dict[str, Any]) -> None:
    """Replaces symbols (by name) in every expression of ``loop``'s body, in place: guards,
    op scalars and attributes, output shapes, write offsets and nested loop bounds."""

    def expr(e: Any) -> Any:
        if isinstance(e, SymbolicScalar):
            r = e.subs(mapping)
            return r.args[0] if r.op == "const" else r
        if isinstance(e, list):
            return [expr(x) for x in e]
        if isinstance(e, tuple):
            return tuple(expr(x) for x in e)
        if isinstance(e, dict):
            return {k: expr(x) for k, x in e.items()}
        return e

    def value(v: ir.Value) -> None:
        v.shape = tuple(expr(d) for d in v.shape)
        if v.valid_shape is not None:
            v.valid_shape = tuple(expr(d) for d in v.valid_shape)

    def body(stmts: List[Any]) -> None:
        for s in stmts:
            if isinstance(s, ir.Op):
                for x in s.inputs:
                    if isinstance(x, ir.Scalar) and isinstance(x.value, SymbolicScalar):
                        x.value = expr(x.value)
                s.attrs = expr(s.attrs)
                value(s.out)
            elif isinstance(s, ir.Write):
                s.offsets = expr(s.offsets)
                s.attrs = expr(s.attrs)
            elif isinstance(s, ir.Loop):
                s.start, s.stop, s.step = expr(s.start), expr(s.stop), expr(s.step)
                variants(s.variants)

    def variants(vs: List[ir.Variant]) -> None:
        for v in vs:
            v.conds = [(c.subs(mapping), taken) for c, taken in v.conds]
            body(v.body)

    variants(loop.variants)


def _norm_dim(d: Any) -> Any:
    """Stores constant expressions as plain ints."""
    if isinstance(d, SymbolicScalar) and d.op == "const":
        return d.args[0]
    if isinstance(d, bool):
        return d
    if isinstance(d, int):
        return d
    if isinstance(d, SymbolicScalar):
        return d
    try:
        return int(d)
    except (TypeError, ValueError):
        raise PyptoTypeError(f"expected an int or symbolic dimension, got {d!r}") from None
