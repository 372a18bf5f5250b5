# SPDX-License-Identifier: Apache-2.0
"""PyPTO's ``pypto.operation`` module: the structural ops it defines (``assemble``, ``reshape``,
``clone``, ``unsqueeze``, ``view``, ``atomic_add`` and the symbolic ``min``/``max``, the same
functions as ``pypto.<name>``) and ``op_wrapper``, the decorator model kernels put on their own
ops written over ``pypto.pypto_impl`` calls.

Example::

    from pypto import pypto_impl
    from pypto.operation import op_wrapper

    @op_wrapper
    def scalar_div(tensor, other, is_reserve=False):
        return pypto_impl.ScalarDivS(tensor, pypto_impl.Element(tensor.dtype, other), is_reserve)
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ._ops import assemble, atomic_add, clone, max, min, reshape, unsqueeze, view  # noqa: A004

__all__ = ["op_wrapper", "assemble", "atomic_add", "clone", "max", "min", "reshape",
           "unsqueeze", "view"]


def _as_list(out: Any) -> Any:
    if isinstance(out, (list, tuple)):
        return [_as_list(o) for o in out]
    if isinstance(out, dict):
        return {k: _as_list(v) for k, v in out.items()}
    return out


def op_wrapper(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a function written over ``pypto.pypto_impl`` calls as a pypto op.

    PyPTO's wrapper hands the arguments' native handles to ``func`` and wraps its results
    back as ``pypto.Tensor``s; here ``pypto_impl`` takes and returns ``pypto.Tensor``s, so the
    call goes through and only the result's shape of containers changes as PyPTO's does: a
    tuple (also inside a list or dict) comes back as a list, None as None.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _as_list(func(*args, **kwargs))

    return wrapper
