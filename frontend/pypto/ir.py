# SPDX-License-Identifier: Apache-2.0
"""The traced kernel IR: what ``@pypto.frontend.jit`` hands to the compiler.

The IR is documented for compiler authors in ``IR.md`` beside this file; ``Kernel.to_dict()``
is its JSON form. In short: a :class:`Kernel` has parameters and a list of guarded
:class:`Variant` bodies; a body is a list of statements, each an :class:`Op` (one tensor
operation with a fresh output :class:`Value`), a :class:`Write` (assemble a value into a
buffer at symbolic offsets) or a :class:`Loop` (a ``pypto.loop``, whose body is again a list of
guarded variants, one per explored path through symbolic ``if`` conditions).

Example::

    kernel = my_kernel.warmup(x, y).ir
    print(kernel)                       # readable listing
    json.dumps(kernel.to_dict())        # what the C++ compiler reads
"""

from __future__ import annotations

import enum
import json
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ._dtypes import DataType
from ._enums import TileOpFormat
from ._mx import carrier
from ._symbolic import SymbolicScalar, conjunction, expr_to_dict, logical_not

__all__ = [
    "IR_FORMAT",
    "IR_VERSION",
    "Value",
    "Scalar",
    "Op",
    "Write",
    "Loop",
    "Variant",
    "Param",
    "Symbol",
    "Kernel",
    "CubeTile",
]

IR_FORMAT = "pypto-kernel-ir"
IR_VERSION = 1

Expr = Union[int, SymbolicScalar]


def _fmt_expr(e: Any) -> str:
    return str(e)


def _fmt_shape(shape: Sequence[Expr]) -> str:
    return "[" + ", ".join(_fmt_expr(d) for d in shape) + "]"


@dataclass(eq=False)
class Value:
    """A tensor buffer: a kernel parameter or the output of one Op.

    ``shape`` holds ints or SymbolicScalar expressions. ``valid_shape`` (or None) is the live
    extent inside ``shape`` for tail tiles; elements outside it are undefined.
    """

    id: int
    shape: Tuple[Expr, ...]
    dtype: DataType
    format: TileOpFormat = TileOpFormat.TILEOP_ND
    valid_shape: Optional[Tuple[Expr, ...]] = None
    name: Optional[str] = None  # parameter name, None for op outputs
    # Tensor.set_cache_policy(CachePolicy.NONE_CACHEABLE, True): its memory traffic bypasses L2.
    no_l2_cache: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    def ref(self) -> str:
        return self.name if self.name is not None else f"%{self.id}"

    def type_str(self) -> str:
        text = f"{self.dtype}{_fmt_shape(self.shape)}"
        if self.format is TileOpFormat.TILEOP_NZ:
            text += " NZ"
        if self.valid_shape is not None:
            text += f" valid={_fmt_shape(self.valid_shape)}"
        if self.no_l2_cache:
            text += " no-L2"
        return text

    def to_dict(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "shape": [expr_to_dict(d) for d in self.shape],
            "dtype": carrier(self.dtype).name,  # MX types: the dtype that holds them
            "format": self.format.name,
            "valid_shape": None if self.valid_shape is None
            else [expr_to_dict(d) for d in self.valid_shape],
            **({"no_l2_cache": True} if self.no_l2_cache else {}),
        }


@dataclass(eq=False)
class Scalar:
    """A scalar operand of an Op: a Python number (``value`` is int/float/bool) or a run-time
    integer expression (``value`` is a SymbolicScalar, e.g. a loop index). ``dtype`` is the
    type the op computes the scalar in (the tensor operand's dtype)."""

    value: Union[int, float, bool, SymbolicScalar]
    dtype: DataType

    def to_dict(self) -> Dict[str, Any]:
        if isinstance(self.value, SymbolicScalar):
            return {"expr": expr_to_dict(self.value), "dtype": carrier(self.dtype).name}
        v = self.value
        if isinstance(v, float) and not math.isfinite(v):  # JSON has no inf/NaN numbers
            v = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return {"const": v, "dtype": carrier(self.dtype).name}

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class CubeTile:
    """Tile shapes of ``pypto.set_cube_tile_shapes``: m and n are ``[L0, L1]``, k is
    ``[L0, L1a, L1b]`` (L1 tile of the left and of the right operand)."""

    m: Tuple[int, int]
    k: Tuple[int, int, int]
    n: Tuple[int, int]
    enable_split_k: bool = False

    def to_dict(self) -> Dict[str, Any]:
        return {"m": list(self.m), "k": list(self.k), "n": list(self.n),
                "enable_split_k": self.enable_split_k}

    def __str__(self) -> str:
        return f"m={list(self.m)} k={list(self.k)} n={list(self.n)}" + (
            " split_k" if self.enable_split_k else "")


def _attr_to_json(v: Any) -> Any:
    if isinstance(v, SymbolicScalar):
        return expr_to_dict(v)
    if isinstance(v, DataType):
        return carrier(v).name
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, (list, tuple)):
        return [_attr_to_json(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _attr_to_json(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, numbers.Number, str)):
        return v
    raise TypeError(f"attribute value of type {type(v).__name__} is not serializable")


def _attr_str(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_attr_str(x) for x in v) + "]"
    if isinstance(v, enum.Enum):
        return v.name
    return str(v)


@dataclass(eq=False)
class Op:
    """One tensor operation. ``inputs`` are Values or Scalars; ``out`` is a fresh Value.

    ``vec_tile`` / ``cube_tile`` are the tile shapes in force where the op was traced (None when
    never set); ``label`` the semantic label; ``sg_scope`` the ``sg_set_scope`` id in force
    (None: none; the partition merges an id's connected ops into one leaf) and ``sg_flags`` its
    (allow_parallel_merge, allow_cross_scope_merge) when either is set; ``combine_axis``
    PyPTO's operation option in force (a trailing size-1 axis is broadcast inline, not expanded
    by a vector pass first); ``loc`` the kernel source line."""

    op: str
    inputs: List[Union[Value, Scalar]]
    attrs: Dict[str, Any]
    out: Value
    vec_tile: Optional[Tuple[int, ...]] = None
    cube_tile: Optional[CubeTile] = None
    label: Optional[str] = None
    loc: str = ""
    sg_scope: Optional[int] = None
    sg_flags: Optional[Tuple[bool, bool]] = None
    combine_axis: bool = False

    kind = "op"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "kind": "op",
            "op": self.op,
            "inputs": [{"value": i.id} if isinstance(i, Value) else i.to_dict()
                       for i in self.inputs],
            "attrs": {k: _attr_to_json(v) for k, v in self.attrs.items()},
            "out": self.out.to_dict(),
            "vec_tile": None if self.vec_tile is None else list(self.vec_tile),
            "cube_tile": None if self.cube_tile is None else self.cube_tile.to_dict(),
            "label": self.label,
            "loc": self.loc,
            **({"sg_scope": self.sg_scope} if self.sg_scope is not None else {}),
            **({"sg_scope_flags": list(self.sg_flags)} if self.sg_flags else {}),
            **({"combine_axis": True} if self.combine_axis else {}),
        }

    def lines(self, indent: str) -> List[str]:
        args = [i.ref() if isinstance(i, Value) else str(i) for i in self.inputs]
        args += [f"{k}={_attr_str(v)}" for k, v in self.attrs.items()]
        text = f"{indent}{self.out.ref()}: {self.out.type_str()} = {self.op}({', '.join(args)})"
        extras = []
        if self.vec_tile is not None:
            extras.append(f"vec={list(self.vec_tile)}")
        if self.op == "matmul" and self.cube_tile is not None:
            extras.append(f"cube=({self.cube_tile})")
        if self.label:
            extras.append(f"label={self.label!r}")
        if self.sg_scope is not None:
            flags = f"{self.sg_flags}" if self.sg_flags else ""
            extras.append(f"sg_scope={self.sg_scope}{flags}")
        if self.combine_axis:
            extras.append("combine_axis")
        if extras:
            text += "  " + " ".join(extras)
        if self.loc:
            text += f"  # {self.loc}"
        return [text]


@dataclass(eq=False)
class Write:
    """``dst[offsets : offsets + src.shape] = src`` (assemble). ``dst`` is a parameter or any
    earlier Value; writes are visible to every later read of ``dst`` in program order.
    ``sg_scope`` as for :class:`Op` (PyPTO's assemble is an op of the scope it is traced in)."""

    dst: Value
    src: Value
    offsets: Tuple[Expr, ...]
    attrs: Dict[str, Any] = field(default_factory=dict)
    vec_tile: Optional[Tuple[int, ...]] = None
    cube_tile: Optional[CubeTile] = None
    label: Optional[str] = None
    loc: str = ""
    sg_scope: Optional[int] = None
    sg_flags: Optional[Tuple[bool, bool]] = None

    kind = "write"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "kind": "write",
            "dst": self.dst.id,
            "src": self.src.id,
            "offsets": [expr_to_dict(o) for o in self.offsets],
            "attrs": {k: _attr_to_json(v) for k, v in self.attrs.items()},
            "vec_tile": None if self.vec_tile is None else list(self.vec_tile),
            "cube_tile": None if self.cube_tile is None else self.cube_tile.to_dict(),
            "label": self.label,
            "loc": self.loc,
            **({"sg_scope": self.sg_scope} if self.sg_scope is not None else {}),
            **({"sg_scope_flags": list(self.sg_flags)} if self.sg_flags else {}),
        }

    def lines(self, indent: str) -> List[str]:
        text = f"{indent}{self.dst.ref()}{_fmt_shape(self.offsets)} <- {self.src.ref()}"
        if self.attrs:
            text += " " + " ".join(f"{k}={_attr_str(v)}" for k, v in self.attrs.items())
        if self.vec_tile is not None:
            text += f"  vec={list(self.vec_tile)}"
        if self.sg_scope is not None:
            text += f"  sg_scope={self.sg_scope}" + (f"{self.sg_flags}" if self.sg_flags else "")
        if self.loc:
            text += f"  # {self.loc}"
        return [text]


@dataclass(eq=False)
class Variant:
    """One explored path through the symbolic ``if`` conditions of a body.

    ``conds`` lists ``(condition, outcome)`` in the order they were decided; ``guard`` is their
    conjunction. The variants of one body are mutually exclusive and cover every case, so
    exactly one runs per iteration (or once, for the kernel body)."""

    conds: List[Tuple[SymbolicScalar, bool]]
    body: List[Any] = field(default_factory=list)

    @property
    def guard(self) -> SymbolicScalar:
        return conjunction(c if taken else logical_not(c) for c, taken in self.conds)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "guard": expr_to_dict(self.guard),
            "conds": [{"expr": expr_to_dict(c), "value": taken} for c, taken in self.conds],
            "body": [s.to_dict() for s in self.body],
        }


def _variants_lines(variants: List[Variant], indent: str) -> List[str]:
    if len(variants) == 1 and not variants[0].conds:
        out = []
        for s in variants[0].body:
            out.extend(s.lines(indent))
        return out
    out = []
    for v in variants:
        out.append(f"{indent}when {v.guard}:")
        for s in v.body:
            out.extend(s.lines(indent + "  "))
        if not v.body:
            out.append(f"{indent}  (empty)")
    return out


@dataclass(eq=False)
class Loop:
    """A ``pypto.loop``: ``for index in range(start, stop, step)`` on the device, where every
    iteration runs the one variant whose guard holds. ``index`` names the loop's symbol."""

    index: str
    start: Expr
    stop: Expr
    step: Expr
    variants: List[Variant] = field(default_factory=list)
    parallel: bool = False
    unroll_list: Tuple[int, ...] = (1,)
    name: Optional[str] = None
    submit_before_loop: bool = False
    loc: str = ""

    kind = "loop"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "kind": "loop",
            "index": self.index,
            "start": expr_to_dict(self.start),
            "stop": expr_to_dict(self.stop),
            "step": expr_to_dict(self.step),
            "parallel": self.parallel,
            "unroll_list": list(self.unroll_list),
            "name": self.name,
            "submit_before_loop": self.submit_before_loop,
            "loc": self.loc,
            "variants": [v.to_dict() for v in self.variants],
        }

    def lines(self, indent: str) -> List[str]:
        head = f"{indent}loop {self.index} in range({self.start}, {self.stop}, {self.step})"
        flags = []
        if self.name:
            flags.append(f"name={self.name!r}")
        if self.parallel:
            flags.append("parallel")
        if tuple(self.unroll_list) != (1,):
            flags.append(f"unroll={list(self.unroll_list)}")
        if self.submit_before_loop:
            flags.append("submit_before_loop")
        if flags:
            head += " " + " ".join(flags)
        head += ":"
        if self.loc:
            head += f"  # {self.loc}"
        return [head] + _variants_lines(self.variants, indent + "  ")


@dataclass(eq=False)
class Param:
    """A tensor parameter of the kernel, in signature order (the order of the run-time tensor
    list). Its ``value.shape`` holds ints for static axes and a symbol for dynamic axes."""

    name: str
    value: Value
    is_output_written: bool = False

    @property
    def dtype(self) -> DataType:
        return self.value.dtype

    @property
    def format(self) -> TileOpFormat:
        return self.value.format

    @property
    def shape(self) -> Tuple[Expr, ...]:
        return self.value.shape

    @property
    def dynamic_axes(self) -> List[int]:
        return [i for i, d in enumerate(self.value.shape) if isinstance(d, SymbolicScalar)]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value.id,
            "shape": [expr_to_dict(d) for d in self.value.shape],
            "dtype": carrier(self.value.dtype).name,
            "format": self.value.format.name,
            "dynamic_axes": self.dynamic_axes,
            "is_output_written": self.is_output_written,
            **({"no_l2_cache": True} if self.value.no_l2_cache else {}),
        }


@dataclass(eq=False)
class Symbol:
    """A dynamic dimension symbol and the parameter axes it is read from at launch (several
    sources for a shared ``pypto.frontend.dynamic("N")``; they must agree)."""

    name: str
    sources: List[Tuple[str, int]]

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name,
                "sources": [{"param": p, "axis": a} for p, a in self.sources]}


@dataclass(eq=False)
class Kernel:
    """A traced kernel: one specialization of a jit function."""

    name: str
    params: List[Param]
    variants: List[Variant]
    symbols: List[Symbol] = field(default_factory=list)

    def statements(self) -> Iterator[Any]:
        """Every Op, Write and Loop, depth first in program order."""
        def walk(variants):
            for v in variants:
                for s in v.body:
                    yield s
                    if isinstance(s, Loop):
                        yield from walk(s.variants)
        return walk(self.variants)

    def ops(self) -> List[Op]:
        return [s for s in self.statements() if isinstance(s, Op)]

    def writes(self) -> List[Write]:
        return [s for s in self.statements() if isinstance(s, Write)]

    def loops(self) -> List[Loop]:
        return [s for s in self.statements() if isinstance(s, Loop)]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "format": IR_FORMAT,
            "version": IR_VERSION,
            "name": self.name,
            "params": [p.to_dict() for p in self.params],
            "symbols": [s.to_dict() for s in self.symbols],
            "variants": [v.to_dict() for v in self.variants],
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        params = []
        for p in self.params:
            text = f"{p.name}: {p.value.type_str()}"
            if p.is_output_written:
                text += " (written)"
            params.append(text)
        lines = [f"kernel {self.name}({', '.join(params)}):"]
        body = _variants_lines(self.variants, "  ")
        return "\n".join(lines + (body or ["  (empty)"]))
