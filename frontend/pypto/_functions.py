# SPDX-License-Identifier: Apache-2.0
"""``pypto.Function``, ``get_last_function``, ``get_current_function`` and ``function``:
PyPTO's handles on the functions (computation graphs) it builds. In pypto-sim a function is a
traced jit kernel (:class:`pypto.ir.Kernel`): the last one compiled, or the one being traced.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from typing import Any, Iterator, List, Optional

from . import _tracer, ir
from ._errors import PyptoTypeError
from ._tensor import Tensor

__all__ = ["Function", "function", "get_current_function", "get_last_function"]

_magic = itertools.count(1)
_lock = threading.Lock()
_last: List[Optional["Function"]] = [None]


class Function:
    """A traced kernel (PyPTO: a compiled function): its name, type, input and output
    tensors (``incast``/``outcast``: the parameters it only reads / writes) and its IR dumps.
    ``func_magic`` numbers the functions of this process in the order they were traced."""

    def __init__(self, kernel: Optional[ir.Kernel] = None, magic: int = 0):
        self._kernel = kernel
        self._magic = magic

    @property
    def base(self) -> ir.Kernel:
        """The traced kernel (:class:`pypto.ir.Kernel`)."""
        if self._kernel is None:
            raise RuntimeError("Function base is None")
        return self._kernel

    def __repr__(self) -> str:
        if self._kernel is None:
            return "<Function (uninitialized)>"
        return (f"<Function '{self.raw_name}' (magic: {self.func_magic}, type: "
                f"{self.function_type_str})>")

    def __str__(self) -> str:
        return "Function(uninitialized)" if self._kernel is None else f"Function('{self.raw_name}')"

    raw_name = property(lambda self: self.base.name, doc="The kernel's name.")
    func_magic = property(lambda self: self._magic, doc="The function's number in this process.")
    magic_name = property(lambda self: f"{self.raw_name}_{self._magic}",
                          doc="The name made unique by func_magic.")
    is_static = property(lambda self: not self.base.symbols,
                         doc="True when no axis of a parameter is dynamic.")
    function_type_str = property(lambda self: "STATIC" if self.is_static else "DYNAMIC")
    is_eager = property(lambda self: False, doc="Always False: kernels are traced, then run.")
    is_explicit = property(lambda self: True, doc="Always True: a kernel is a function of its own.")
    has_parent = property(lambda self: False, doc="Always False: kernels do not nest.")
    root_function = property(lambda self: self, doc="The function itself (kernels do not nest).")

    @property
    def incast(self) -> List[ir.Param]:
        """The parameters the kernel only reads."""
        return [p for p in self.base.params if not p.is_output_written]

    @property
    def outcast(self) -> List[ir.Param]:
        """The parameters the kernel writes."""
        return [p for p in self.base.params if p.is_output_written]

    origin_incast = incast
    origin_outcast = outcast

    def dump(self) -> str:
        """The kernel's IR as text (``str(pypto.ir.Kernel)``)."""
        return str(self.base)

    dump_ssa = dump

    def dump_file(self, file_path: str) -> None:
        """Writes :meth:`dump` to ``file_path``."""
        with open(file_path, "w", encoding="utf-8") as f:
            f.write(self.dump() + "\n")

    def dump_json_file(self, file_name: str = "") -> None:
        """Writes the kernel's IR as JSON (pypto.ir's format) to ``file_name``, or to
        ``{magic_name}.json`` when it is empty."""
        with open(file_name or f"{self.magic_name}.json", "w", encoding="utf-8") as f:
            json.dump(self.base.to_dict(), f, indent=1)


def record_compiled(kernel: ir.Kernel) -> None:
    """Called by the jit wrapper for each kernel it traces and compiles."""
    with _lock:
        _last[0] = Function(kernel, next(_magic))


def get_last_function() -> Optional[Function]:
    """The kernel compiled last in this process, or None before the first one."""
    return _last[0]


def get_current_function() -> Optional[Function]:
    """The kernel being traced (called from a kernel's body), or None outside one."""
    tr = _tracer.current()
    return None if tr is None else Function(tr.kernel, 0)


@contextlib.contextmanager
def function(name: str, *args: Any, **kwargs: Any) -> Iterator[Iterator[int]]:
    """``with pypto.function(name, *tensors):`` PyPTO's scope of a computation graph. In a
    kernel body it names a part of the kernel being traced (the ops record into the kernel as
    usual; the tensors must be the kernel's). Outside a kernel it records the block as a
    function of the graph tensors ``tensors`` (PyPTO's older eager form, :mod:`pypto._eager`),
    compiled when the block ends and run by ``pypto.runtime._device_run_once_data_from_host``.
    The value bound by ``as`` iterates once, as PyPTO's does (``for _ in f: ...``).

    Example::

        with pypto.function("MAIN", a, b):
            b.move(pypto.add(a, a))
    """
    if not isinstance(name, str):
        raise PyptoTypeError(f"pypto.function: name must be a str, got {type(name).__name__}")
    tr = _tracer.current()
    if tr is None:
        from . import _eager  # noqa: PLC0415 - _eager imports this module

        with _eager.record(name, args) as once:
            yield once
        return
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            raise PyptoTypeError(f"pypto.function({name!r}): argument {i} must be a pypto.Tensor "
                                 f"of the kernel, got {type(a).__name__}")
    yield iter(range(1))
