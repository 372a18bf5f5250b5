# SPDX-License-Identifier: Apache-2.0
"""Tiling and labels: ``set_vec_tile_shapes``, ``set_cube_tile_shapes`` (and their getters)
and ``set_semantic_label``, scoped to the kernel being traced or, outside one, to the
current pypto.options scope."""

from __future__ import annotations

import numbers
from typing import Any, List, Sequence, Tuple

from .. import _options, _tracer, ir
from .._errors import PyptoTypeError, PyptoValueError
from .._limits import MAX_RANK
from ..error import short_repr
from .._symbolic import const_value
from .common import _fail, _tr


def set_vec_tile_shapes(*dims: Any) -> None:
    """Vector tile size per axis (a positive int per axis, as many as a tensor's axes at
    most: ``pypto._limits.MAX_RANK``) for the ops that follow in this scope.

    Example: ``pypto.set_vec_tile_shapes(64, 128)``. Scoped like PyPTO's config: a value set
    inside a pypto.loop body is in force until the end of that body only.
    """
    tr = _tracer.current()  # outside a kernel: the current pypto.options scope
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    if not 1 <= len(dims) <= MAX_RANK:
        _fail(PyptoValueError, "set_vec_tile_shapes", f"expects 1 to {MAX_RANK} sizes (one per "
              f"axis), got {len(dims)}")
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
    # PyPTO's rules between the sizes (L1 a multiple of L0, alignment, buffer space) depend on
    # the operands' dtype: the compiler checks them at each matmul.
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
