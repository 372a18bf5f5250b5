# SPDX-License-Identifier: Apache-2.0
"""Symbolic integer (and boolean) scalar expressions.

A :class:`SymbolicScalar` stands for an integer known only at run time: a loop index of
``pypto.loop``, the size of a DYNAMIC axis, or arithmetic on those. Expressions are immutable
and kept in a canonical form while they are built, so that equal linear expressions compare
equal structurally (``(i*64 + 64) - i*64`` is the constant 64) and slice sizes can be checked.

Example::

    n = pypto.SymbolicScalar("n")
    tail = pypto.min(n - 64, 64)           # RUNTIME_Min((n-64), 64)
    tail.eval({"n": 100})                  # -> 36

Division is floor division with Python semantics (``-7 // 2 == -4``, ``-7 % 2 == 1``); ``/``
is rejected. A comparison yields a boolean expression; using it in a Python ``if`` inside a
traced kernel makes the tracer explore both outcomes (see ``_tracer``). As in PyPTO (C
semantics), a comparison is also an integer 0 or 1: ``(b >= 2) * (b < 8)`` is an integer
expression. :func:`to_int` is the one place that turns a boolean into that integer (an
``int`` node, IR.md section 2); every arithmetic builder goes through it.

Printing: ``str(e)`` is PyPTO's form (``SymbolicScalar::Dump``): every binary operation in
parentheses without spaces (``((b>=2)*(b<8))``, ``((i*64)+64)``, ``(n/64)`` for floor division),
``RUNTIME_Min(a, b)``/``RUNTIME_Max(a, b)``, ``RUNTIME_Eq(a, b)``/``RUNTIME_Ne(a, b)``, ``(-a)``,
``(!a)``, constants as plain integers (a folded comparison prints ``1`` or ``0``) and
pypto-sim's own ``(a&&b)``/``(a||b)`` and ``x[i,j]`` (a tensor element read). ``repr(e)`` is
``SymbolicScalar(<that form>)``, as in PyPTO. There is no second form: every pypto-sim message,
listing and IR dump that shows an expression shows this one (:func:`_dump` is the only
formatter).
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from ._errors import PyptoTypeError, PyptoValueError

__all__ = ["SymbolicScalar", "as_expr", "is_symbolic", "const_value", "expr_to_dict",
           "expr_from_dict", "to_int", "ExprLike"]

ExprLike = Union[int, bool, "SymbolicScalar"]

_ARITH = ("add", "sub", "mul", "floordiv", "mod", "min", "max")
_CMP = ("eq", "ne", "lt", "le", "gt", "ge")
_LOGIC = ("and", "or", "not")
_NEGATED_CMP = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}
_CMP_FN = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
_CMP_TEXT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ORDERING = ("lt", "le", "gt", "ge")


def _operator(op: str, reflected: bool = False) -> Callable[[Any, Any], Any]:
    """A binary operator method of SymbolicScalar building node ``op`` (``reflected``: the
    ``__r*__`` form, with the other operand on the left). Ints and bools on the other side
    become constants; any other type gets NotImplemented so that Python can try its operator."""

    def method(self, o):
        o = _coerce(o)
        if o is None:
            return NotImplemented
        # _BUILD is looked up per call: the builders are defined below the class.
        return _BUILD[op](o, self) if reflected else _BUILD[op](self, o)

    method.__name__ = f"__{'r' if reflected else ''}{op}__"
    return method


class SymbolicScalar:
    """A run-time integer or boolean expression.

    ``SymbolicScalar("n")`` is a named symbol, ``SymbolicScalar(3)`` the constant 3. Every other
    expression comes from operators (``+ - * // %``, comparisons, ``&``/``|``/``~`` on booleans)
    and from ``pypto.min``/``pypto.max``/``pypto.ceildiv`` or the ``.min()``/``.max()`` methods.
    """

    __slots__ = ("_op", "_args", "_key", "_hash", "_is_bool")

    def __init__(self, *args: Any):
        # PyPTO's constructor forms (pypto.symbolic_scalar / pypto.SymbolicScalar): (int),
        # (name), (SymbolicScalar) for a copy, and (name, int) for a named concrete value,
        # which is that value (the name only labels it in PyPTO's IR dumps).
        if len(args) == 2 and isinstance(args[0], str):
            name, value = args
            if not isinstance(value, numbers.Integral):
                raise PyptoTypeError(
                    f"SymbolicScalar({name!r}, value): the value must be an int, got "
                    f"{type(value).__name__} {value!r}")
            args = (value,)
        if len(args) != 1:
            raise PyptoTypeError(
                f"SymbolicScalar() takes a symbol name (str), an int, a SymbolicScalar or "
                f"(name, int), got {len(args)} arguments")
        value = args[0]
        if isinstance(value, SymbolicScalar):
            self._set(value._op, value._args, value._is_bool)
            return
        # A bool is the int 1 or 0, as PyPTO's int64 constructor takes it (models/glm_v4_5's
        # `if pypto.symbolic_scalar(renormalize):`).
        if not isinstance(value, (str, numbers.Integral)):
            raise PyptoTypeError(
                f"SymbolicScalar() takes a symbol name (str) or an int, got "
                f"{type(value).__name__} {value!r}")
        if isinstance(value, str):
            if not value:
                raise PyptoValueError("SymbolicScalar(): the symbol name must not be empty")
            self._set("sym", (value,), False)
        else:
            self._set("const", (int(value),), False)

    # -- construction ---------------------------------------------------------------------

    def _set(self, op: str, args: tuple, is_bool: bool) -> None:
        self._op = op
        self._args = args
        self._is_bool = is_bool
        if op in ("const", "bool", "sym"):
            key = ({"const": "c", "bool": "b", "sym": "s"}[op], args[0])
        elif op == "load":
            key = ("load", args[0], tuple(a._key for a in args[1]))
        else:
            key = (op,) + tuple(a._key for a in args)
        self._key = key
        self._hash = hash(key)

    @classmethod
    def _node(cls, op: str, args: tuple, is_bool: bool = False) -> "SymbolicScalar":
        obj = object.__new__(cls)
        obj._set(op, args, is_bool)
        return obj

    # -- introspection --------------------------------------------------------------------

    @property
    def op(self) -> str:
        """Node kind: const, bool, sym, load, add, sub, mul, floordiv, mod, min, max, eq, ne, lt,
        le, gt, ge, and, or, not, int (the 0/1 value of a boolean)."""
        return self._op

    @property
    def args(self) -> tuple:
        return self._args

    @property
    def key(self) -> tuple:
        """A hashable structural key; equal keys mean the same expression."""
        return self._key

    @property
    def is_bool(self) -> bool:
        return self._is_bool

    def is_const(self) -> bool:
        return self._op in ("const", "bool")

    # PyPTO's SymbolicScalar introspection: a symbol is a bare name, an immediate (also
    # "concrete") a known value, an expression anything built from operators.

    def is_symbol(self) -> bool:
        return self._op == "sym"

    def is_immediate(self) -> bool:
        return self._op in ("const", "bool")

    def is_concrete(self) -> bool:
        return self._op in ("const", "bool")

    def is_expression(self) -> bool:
        return self._op not in ("const", "bool", "sym")

    def as_variable(self) -> None:
        """PyPTO: marks the expression as an intermediate variable of its generated code (a
        hint; the value is the same). Accepted and ignored."""

    def concrete(self) -> int:
        """The value of an immediate (a comparison that folded gives 0 or 1)."""
        if self._op not in ("const", "bool"):
            raise PyptoValueError(f"{self} is not concrete: its value is known only at run time")
        return int(self._args[0])

    @property
    def name(self) -> str:
        """The name of a symbol (``op == "sym"``)."""
        if self._op != "sym":
            raise PyptoTypeError(f"{self} is not a plain symbol")
        return self._args[0]

    def free_symbols(self) -> frozenset:
        """Names of the symbols the expression depends on."""
        if self._op == "sym":
            return frozenset((self._args[0],))
        if self._op in ("const", "bool"):
            return frozenset()
        if self._op == "load":
            out = frozenset()
            for a in self._args[1]:
                out |= a.free_symbols()
            return out
        out = frozenset()
        for a in self._args:
            out |= a.free_symbols()
        return out

    def contains(self, other: "SymbolicScalar") -> bool:
        """Whether ``other`` occurs as a sub-expression (structurally)."""
        if self._key == other._key:
            return True
        if self._op in ("const", "bool", "sym"):
            return False
        children = self._args[1] if self._op == "load" else self._args
        return any(c.contains(other) for c in children)

    # -- evaluation -----------------------------------------------------------------------

    def eval(self, bindings: Optional[Mapping[str, int]] = None,
             load: Optional[Callable[[str, Tuple[int, ...]], int]] = None) -> Union[int, bool]:
        """Evaluates with ``bindings`` (symbol name -> int). ``load(param, indices)`` supplies
        tensor element reads (``x[i, j]`` of an input tensor inside a kernel)."""
        op, args = self._op, self._args
        if op in ("const", "bool"):
            return args[0]
        if op == "sym":
            if bindings is None or args[0] not in bindings:
                raise PyptoValueError(f"symbol '{args[0]}' has no value (unbound symbol)")
            return int(bindings[args[0]])
        if op == "load":
            if load is None:
                raise PyptoValueError(f"{self} reads tensor '{args[0]}': no loader given")
            return int(load(args[0], tuple(int(a.eval(bindings, load)) for a in args[1])))
        if op == "int":
            return int(bool(args[0].eval(bindings, load)))
        if op == "not":
            return not args[0].eval(bindings, load)
        if op == "and":
            return bool(args[0].eval(bindings, load)) and bool(args[1].eval(bindings, load))
        if op == "or":
            return bool(args[0].eval(bindings, load)) or bool(args[1].eval(bindings, load))
        a = args[0].eval(bindings, load)
        b = args[1].eval(bindings, load)
        if op in _CMP_FN:
            return _CMP_FN[op](a, b)
        return _fold(op, a, b)

    def subs(self, mapping: Mapping[str, ExprLike]) -> "SymbolicScalar":
        """Replaces symbols by expressions or ints, simplifying on the way."""
        op, args = self._op, self._args
        if op in ("const", "bool"):
            return self
        if op == "sym":
            return as_expr(mapping[args[0]]) if args[0] in mapping else self
        if op == "load":
            return _load(args[0], [a.subs(mapping) for a in args[1]])
        new_args = [a.subs(mapping) for a in args]
        return _BUILD[op](*new_args)

    # -- conversion -----------------------------------------------------------------------

    def __bool__(self) -> bool:
        if self._op in ("const", "bool"):
            return bool(self._args[0])
        if self._op == "int":
            return bool(self._args[0])
        cond = self if self._is_bool else ne(self, _const(0))
        if cond.is_const():
            return bool(cond._args[0])
        from . import _tracer  # late import: the tracer imports this module

        return _tracer.decide(cond)

    def __index__(self) -> int:
        if self._op in ("const", "bool"):
            return int(self._args[0])  # a folded comparison is 0 or 1, as in PyPTO
        raise PyptoTypeError(
            f"symbolic value {self} is only known at run time and cannot be used as a Python "
            "int (e.g. in range() or as a list index); use pypto.loop for loops over symbolic "
            "bounds")

    __int__ = __index__

    def __float__(self) -> float:
        raise PyptoTypeError(f"symbolic value {self} cannot be converted to float")

    def __hash__(self) -> int:
        return self._hash

    # -- operators ------------------------------------------------------------------------

    __add__ = _operator("add")
    __radd__ = _operator("add", reflected=True)
    __sub__ = _operator("sub")
    __rsub__ = _operator("sub", reflected=True)
    __mul__ = _operator("mul")
    __rmul__ = _operator("mul", reflected=True)
    __floordiv__ = _operator("floordiv")
    __rfloordiv__ = _operator("floordiv", reflected=True)
    __mod__ = _operator("mod")
    __rmod__ = _operator("mod", reflected=True)

    def __truediv__(self, o):
        raise PyptoTypeError(
            f"symbolic scalars are integers: use // (floor division) instead of / in {self} / {o}")

    __rtruediv__ = __truediv__

    def __neg__(self):
        return mul(self, _const(-1))

    def __pos__(self):
        return self

    __eq__ = _operator("eq")  # type: ignore[assignment]
    __ne__ = _operator("ne")  # type: ignore[assignment]
    __lt__ = _operator("lt")
    __le__ = _operator("le")
    __gt__ = _operator("gt")
    __ge__ = _operator("ge")
    # & and | are symmetric, so the reflected forms keep the operands in place.
    __and__ = __rand__ = _operator("and")
    __or__ = __ror__ = _operator("or")

    def __invert__(self):
        return logical_not(self)

    def min(self, other: ExprLike) -> "SymbolicScalar":
        """``min(self, other)`` as an expression (tails: ``(n - off).min(tile)``)."""
        return smin(self, as_expr(other))

    def max(self, other: ExprLike) -> "SymbolicScalar":
        return smax(self, as_expr(other))

    # -- printing -------------------------------------------------------------------------

    def __str__(self) -> str:
        return _dump(self)

    def __repr__(self) -> str:
        return f"SymbolicScalar({_dump(self)})"


# --- helpers -------------------------------------------------------------------------------


def is_symbolic(x: Any) -> bool:
    """True for a non-constant SymbolicScalar."""
    return isinstance(x, SymbolicScalar) and not x.is_const()


def const_value(x: Any) -> Optional[Union[int, bool]]:
    """The Python value of an int, bool or constant expression; None when symbolic."""
    if isinstance(x, SymbolicScalar):
        return x._args[0] if x.is_const() else None
    if isinstance(x, (bool, numbers.Integral)):
        return x if isinstance(x, bool) else int(x)
    return None


def as_expr(x: Any) -> SymbolicScalar:
    """Converts an int, bool or SymbolicScalar into a SymbolicScalar."""
    e = _coerce(x)
    if e is None:
        raise PyptoTypeError(
            f"expected an int or a symbolic scalar, got {type(x).__name__} {x!r}")
    return e


def _coerce(x: Any) -> Optional[SymbolicScalar]:
    """as_expr, but None for a type that is not an expression."""
    if isinstance(x, SymbolicScalar):
        return x
    if isinstance(x, bool):
        return _bool(x)
    if isinstance(x, numbers.Integral):
        return _const(int(x))
    return None


_CONST_CACHE: Dict[int, SymbolicScalar] = {}


def _const(v: int) -> SymbolicScalar:
    c = _CONST_CACHE.get(v)
    if c is None:
        c = SymbolicScalar._node("const", (v,))
        if -256 <= v <= 256:
            _CONST_CACHE[v] = c
    return c


_TRUE = SymbolicScalar._node("bool", (True,), True)
_FALSE = SymbolicScalar._node("bool", (False,), True)


def _bool(v: bool) -> SymbolicScalar:
    return _TRUE if v else _FALSE


def _fold(op: str, a: int, b: int) -> int:
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op in ("floordiv", "mod"):
        if b == 0:
            raise PyptoValueError(f"symbolic {op}: division by zero ({a} {op} 0)")
        return a // b if op == "floordiv" else a % b
    if op == "min":
        return a if a <= b else b
    if op == "max":
        return a if a >= b else b
    raise AssertionError(op)  # unreachable: callers pass arithmetic ops only


def to_int(e: SymbolicScalar) -> SymbolicScalar:
    """The integer value of ``e``: a boolean becomes 0 or 1 (PyPTO's comparisons are C
    integers), an integer is returned as is. The only bool-to-int rule: arithmetic, ordering,
    loads and the tensor ops' sizes and scalars all convert through here, and the IR carries
    the conversion as an explicit ``int`` node."""
    if not e._is_bool:
        return e
    if e._op == "bool":
        return _const(int(e._args[0]))
    return SymbolicScalar._node("int", (e,))


def _check_bool(e: SymbolicScalar, what: str, truthy: bool = False) -> SymbolicScalar:
    """``e`` as a boolean: comparisons as they are, a constant by its truth, the ``int`` of a
    boolean as that boolean, and (``truthy``: for ``~``, PyPTO's C ``!``) an integer as
    ``e != 0``."""
    if e._is_bool:
        return e
    if e._op == "const":
        return _bool(e._args[0] != 0)
    if e._op == "int":
        return e._args[0]
    if truthy:
        return ne(e, _const(0))
    raise PyptoTypeError(f"{what}: expected a boolean expression (a comparison), got {e}")


# Linear normal form: sum of coeff*atom plus a constant. Atoms are the non-linear leaves.
def _lin(e: SymbolicScalar):
    op = e._op
    if op == "const":
        return {}, e._args[0]
    if op in ("add", "sub"):
        return _lin_combine(e._args[0], e._args[1], 1 if op == "add" else -1)
    if op == "mul":
        a, b = e._args
        if b._op == "const":
            return _lin_scale(*_lin(a), b._args[0])
    return {e._key: (e, 1)}, 0


def _lin_scale(terms, c: int, s: int):
    """The linear form times the constant ``s``."""
    return {k: (atom, co * s) for k, (atom, co) in terms.items()}, c * s


def _from_lin(terms, c: int) -> SymbolicScalar:
    items = sorted(((k, a, co) for k, (a, co) in terms.items() if co != 0),
                   key=lambda t: repr(t[0]))
    pos = [(a, co) for _, a, co in items if co > 0]
    neg = [(a, -co) for _, a, co in items if co < 0]

    def term(atom, co):
        return atom if co == 1 else SymbolicScalar._node("mul", (atom, _const(co)))

    acc = None
    for atom, co in pos:
        t = term(atom, co)
        acc = t if acc is None else SymbolicScalar._node("add", (acc, t))
    if acc is None and neg:
        if c != 0:
            acc, c = _const(c), 0
        else:
            atom, co = neg.pop(0)
            acc = SymbolicScalar._node("mul", (atom, _const(-co)))
    for atom, co in neg:
        acc = SymbolicScalar._node("sub", (acc, term(atom, co)))
    if acc is None:
        return _const(c)
    if c > 0:
        acc = SymbolicScalar._node("add", (acc, _const(c)))
    elif c < 0:
        acc = SymbolicScalar._node("sub", (acc, _const(-c)))
    return acc


def _lin_combine(a: SymbolicScalar, b: SymbolicScalar, sign: int):
    ta, ca = _lin(a)
    tb, cb = _lin(b)
    terms = dict(ta)
    for k, (atom, co) in tb.items():
        prev = terms.get(k)
        terms[k] = (atom, (prev[1] if prev else 0) + sign * co)
    return terms, ca + sign * cb


def _difference_const(a: SymbolicScalar, b: SymbolicScalar) -> Optional[int]:
    """a - b when it simplifies to a constant, else None."""
    terms, c = _lin_combine(a, b, -1)
    if any(co != 0 for _, co in terms.values()):
        return None
    return c


def add(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a, b = to_int(a), to_int(b)
    return _from_lin(*_lin_combine(a, b, 1))


def sub(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a, b = to_int(a), to_int(b)
    return _from_lin(*_lin_combine(a, b, -1))


def mul(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a, b = to_int(a), to_int(b)
    if a._op == "const" and b._op == "const":
        return _const(a._args[0] * b._args[0])
    if a._op == "const":
        a, b = b, a
    if b._op == "const":
        return _from_lin(*_lin_scale(*_lin(a), b._args[0]))
    if repr(a._key) > repr(b._key):
        a, b = b, a
    return SymbolicScalar._node("mul", (a, b))


def floordiv(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a, b = to_int(a), to_int(b)
    if b._op == "const":
        d = b._args[0]
        if d == 0:
            raise PyptoValueError(f"symbolic floor division by zero: {a} // 0")
        if d == 1:
            return a
        if a._op == "const":
            return _const(a._args[0] // d)
        terms, c = _lin(a)
        if all(co % d == 0 for _, co in terms.values()):
            # (d*N + c) // d == N + c // d for integer N.
            return _from_lin({k: (atom, co // d) for k, (atom, co) in terms.items()}, c // d)
    return SymbolicScalar._node("floordiv", (a, b))


def mod(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a, b = to_int(a), to_int(b)
    if b._op == "const":
        d = b._args[0]
        if d == 0:
            raise PyptoValueError(f"symbolic modulo by zero: {a} % 0")
        if d in (1, -1):
            return _const(0)
        if a._op == "const":
            return _const(a._args[0] % d)
        terms, c = _lin(a)
        if all(co % d == 0 for _, co in terms.values()):
            return _const(c % d)
    return SymbolicScalar._node("mod", (a, b))


def _minmax(op: str, a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a, b = to_int(a), to_int(b)
    diff = _difference_const(a, b)
    if diff is not None:
        if op == "min":
            return a if diff <= 0 else b
        return a if diff >= 0 else b
    # min(a, min(a, b)) == min(a, b) (same for max).
    for x, y in ((a, b), (b, a)):
        if y._op == op and any(x._key == arg._key for arg in y._args):
            return y
    if repr(a._key) > repr(b._key):
        a, b = b, a
    return SymbolicScalar._node(op, (a, b))


def smin(a: ExprLike, b: ExprLike) -> SymbolicScalar:
    return _minmax("min", as_expr(a), as_expr(b))


def smax(a: ExprLike, b: ExprLike) -> SymbolicScalar:
    return _minmax("max", as_expr(a), as_expr(b))


def compare(op: str, a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    if a._is_bool != b._is_bool or (a._is_bool and op in _ORDERING):
        # A boolean against an integer, or ordered: both as integers 0/1 (C semantics).
        a, b = to_int(a), to_int(b)
    if a._is_bool:
        if a.is_const() and b.is_const():
            return _bool(_CMP_FN[op](bool(a._args[0]), bool(b._args[0])))
        if a._key == b._key:
            return _bool(op == "eq")
        return SymbolicScalar._node(op, (a, b), True)
    diff = _difference_const(a, b)
    if diff is not None:
        return _bool(_CMP_FN[op](diff, 0))
    return SymbolicScalar._node(op, (a, b), True)


def ne(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    return compare("ne", a, b)


def logical_not(a: SymbolicScalar) -> SymbolicScalar:
    a = _check_bool(a, "not", truthy=True)
    if a._op == "bool":
        return _bool(not a._args[0])
    if a._op in _NEGATED_CMP:
        return SymbolicScalar._node(_NEGATED_CMP[a._op], a._args, True)
    if a._op == "not":
        return a._args[0]
    return SymbolicScalar._node("not", (a,), True)


def _logic(op: str, a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    a = _check_bool(a, op)
    b = _check_bool(b, op)
    absorbing = op == "or"  # True absorbs in "or", False in "and"
    for x, y in ((a, b), (b, a)):
        if x._op == "bool":
            return _bool(absorbing) if x._args[0] == absorbing else y
    if a._key == b._key:
        return a
    if repr(a._key) > repr(b._key):
        a, b = b, a
    return SymbolicScalar._node(op, (a, b), True)


def logical_and(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    return _logic("and", a, b)


def logical_or(a: SymbolicScalar, b: SymbolicScalar) -> SymbolicScalar:
    return _logic("or", a, b)


def conjunction(conds) -> SymbolicScalar:
    """AND of a sequence of boolean expressions (True for an empty sequence)."""
    acc = _TRUE
    for c in conds:
        acc = logical_and(acc, c)
    return acc


def _load(param: str, indices) -> SymbolicScalar:
    idx = tuple(to_int(as_expr(i)) for i in indices)
    return SymbolicScalar._node("load", (param, idx))


def load(param: str, indices) -> SymbolicScalar:
    """The run-time value of element ``indices`` of kernel input tensor ``param``."""
    return _load(param, indices)


_BUILD = {
    "add": add, "sub": sub, "mul": mul, "floordiv": floordiv, "mod": mod,
    "min": smin, "max": smax,
    "and": logical_and, "or": logical_or, "not": logical_not, "int": to_int,
    **{op: functools.partial(compare, op) for op in _CMP},
}


# --- printing ------------------------------------------------------------------------------

_DUMP_BINARY = {"add": "+", "sub": "-", "mul": "*", "floordiv": "/", "mod": "%", "lt": "<",
                "le": "<=", "gt": ">", "ge": ">=", "and": "&&", "or": "||"}
_DUMP_CALL = {"min": "RUNTIME_Min", "max": "RUNTIME_Max", "eq": "RUNTIME_Eq", "ne": "RUNTIME_Ne"}


def _dump(e: SymbolicScalar) -> str:
    """PyPTO's printed form of ``e`` (see the module docstring); the only formatter."""
    op, args = e._op, e._args
    if op in ("const", "bool"):
        return str(int(args[0]))
    if op == "sym":
        return args[0]
    if op == "int":
        return _dump(args[0])  # PyPTO has no booleans, so nothing to show
    if op == "load":
        return f"{args[0]}[{','.join(_dump(a) for a in args[1])}]"
    if op == "not":
        return f"(!{_dump(args[0])})"
    if op in _DUMP_CALL:
        return f"{_DUMP_CALL[op]}({_dump(args[0])}, {_dump(args[1])})"
    if op == "mul" and args[1]._op == "const" and args[1]._args[0] == -1:
        return f"(-{_dump(args[0])})"
    return f"({_dump(args[0])}{_DUMP_BINARY[op]}{_dump(args[1])})"


# --- serialization ------------------------------------------------------------------------


def expr_to_dict(e: ExprLike) -> Any:
    """JSON form: an int, a bool, ``{"sym": name}``, ``{"op": o, "args": [...]}`` or
    ``{"op": "load", "param": p, "args": [...]}``."""
    if isinstance(e, bool):
        return e
    if isinstance(e, numbers.Integral):
        return int(e)
    if not isinstance(e, SymbolicScalar):
        raise PyptoTypeError(f"not an expression: {type(e).__name__} {e!r}")
    op, args = e._op, e._args
    if op in ("const", "bool"):
        return args[0]
    if op == "sym":
        return {"sym": args[0]}
    if op == "load":
        return {"op": "load", "param": args[0], "args": [expr_to_dict(a) for a in args[1]]}
    return {"op": op, "args": [expr_to_dict(a) for a in args]}


def expr_from_dict(d: Any) -> SymbolicScalar:
    """Inverse of :func:`expr_to_dict` (re-simplifies while rebuilding)."""
    if isinstance(d, bool):
        return _bool(d)
    if isinstance(d, numbers.Integral):
        return _const(int(d))
    if isinstance(d, dict):
        if "sym" in d:
            return SymbolicScalar(d["sym"])
        op = d.get("op")
        if op == "load":
            return _load(d["param"], [expr_from_dict(a) for a in d["args"]])
        if op in _BUILD:
            return _BUILD[op](*[expr_from_dict(a) for a in d["args"]])
    raise PyptoValueError(f"not a serialized expression: {d!r}")
