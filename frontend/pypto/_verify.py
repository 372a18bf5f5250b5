# SPDX-License-Identifier: Apache-2.0
"""``pass_verify_print`` / ``pass_verify_save``: PyPTO's dumps of intermediate tensors while
its pass verification (verify_options enable_pass_verify) runs. pypto-sim does not run that
verification (it computes the real numbers; compare them with torch): the calls are checked
where the kernel makes them and record nothing."""

from __future__ import annotations

import numbers
from typing import Any

from ._errors import PyptoTypeError
from ._symbolic import SymbolicScalar
from ._tensor import Tensor
from . import _tracer


def _cond(api: str, cond: Any) -> None:
    if isinstance(cond, bool) or not isinstance(cond, (numbers.Integral, SymbolicScalar)):
        raise PyptoTypeError(f"pypto.{api}: cond must be an int or a SymbolicScalar, got "
                             f"{cond!r}")


def _in_kernel(api: str) -> None:
    if _tracer.current() is None:
        raise PyptoTypeError(f"pypto.{api}: call it inside a @pypto.frontend.jit kernel")


def pass_verify_print(*values: Any, cond: Any = 1) -> None:
    """Prints ``values`` (tensors, ints, symbolic scalars, other objects) during PyPTO's pass
    verification when ``cond`` is 1. Checked; pypto-sim runs no pass verification."""
    _in_kernel("pass_verify_print")
    _cond("pass_verify_print", cond)


def pass_verify_save(tensor: Tensor, fname: Any, cond: Any = 1, **kwargs: Any) -> None:
    """Saves ``tensor`` to ``{fname}.data`` during PyPTO's pass verification when ``cond``
    is 1 (``$NAME`` in fname replaced by kwargs[NAME]). Checked; pypto-sim runs no pass
    verification."""
    api = "pass_verify_save"
    _in_kernel(api)
    if not isinstance(tensor, Tensor):
        raise PyptoTypeError(f"pypto.{api}: tensor must be a pypto.Tensor, got "
                             f"{type(tensor).__name__}")
    if isinstance(fname, bool) or not isinstance(fname, (str, numbers.Integral, SymbolicScalar)):
        raise PyptoTypeError(f"pypto.{api}: fname must be a str, int or SymbolicScalar, got "
                             f"{fname!r}")
    _cond(api, cond)
    for k, v in kwargs.items():
        if isinstance(v, bool) or not isinstance(v, (numbers.Integral, SymbolicScalar)):
            raise PyptoTypeError(f"pypto.{api}: {k}= must be an int or a SymbolicScalar, got "
                                 f"{v!r}")
