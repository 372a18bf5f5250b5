# SPDX-License-Identifier: Apache-2.0
"""PyPTO's older eager form: a function recorded outside any kernel, then run on host data.

    a = pypto.tensor((8, 8), pypto.DT_FP32, "a")       # graph tensors: no data
    b = pypto.tensor((8, 8), pypto.DT_FP32, "b")
    pypto.set_vec_tile_shapes(8, 8)
    with pypto.function("MAIN", a, b):                 # recorded as a kernel of (a, b)
        b.move(pypto.add(a, a))
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x), pypto.from_torch(y))

As PyPTO's ``RecordFunc``/``DeviceRunOnceDataFromHost``: the block's ops are traced into a
kernel whose parameters are the block's tensors in the order given; the kernel is compiled when
the block ends (it becomes ``pypto.get_last_function()``), and the run takes one tensor per
parameter, in that order, reading and writing them in place. The tracing, compiling and running
are the jit kernel's own (pypto._tracer, pypto._backend); only the parameter binding differs:
the block's graph tensors become :class:`pypto._tensor.GraphTensor` objects that stand for the
parameters while the block runs.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence

import torch

from . import _backend, _functions, _mx, _options, _tracer, ir
from ._dtypes import accepts_torch_dtype
from ._enums import RunMode, TileOpFormat
from ._errors import (PyptoNotImplementedError, PyptoRuntimeError, PyptoTypeError,
                      PyptoValueError, user_location)
from ._options import OPTION_GROUPS, default_run_mode, resolve_options
from ._tensor import GraphTensor, HostTensor, Tensor, TensorAnnotation, bind_graph_tensors

__all__ = ["EagerFunction", "record", "last", "run_once"]


@dataclass
class EagerFunction:
    """A function recorded by a ``pypto.function`` block: its IR, compiled form and options."""

    name: str
    kernel: ir.Kernel
    compiled: Any
    options: Dict[str, Dict[str, Any]]
    run_mode: RunMode


_lock = threading.Lock()
_last: List[Optional[EagerFunction]] = [None]


def last() -> Optional[EagerFunction]:
    """The function the last ``pypto.function`` block outside a kernel recorded, or None."""
    return _last[0]


def _param_names(name: str, tensors: Sequence[TensorAnnotation]) -> List[str]:
    out: List[str] = []
    for i, t in enumerate(tensors):
        base = t.name if t.name and t.name.isidentifier() else f"arg{i}"
        n, k = base, 1
        while n in out:
            n, k = f"{base}_{k}", k + 1
        out.append(n)
    return out


def _check_args(name: str, args: Sequence[Any]) -> List[TensorAnnotation]:
    where = f"pypto.function({name!r})"
    tensors = []
    for i, a in enumerate(args):
        if not isinstance(a, TensorAnnotation) or isinstance(a, HostTensor):
            raise PyptoTypeError(
                f"{where}: argument {i} must be a graph tensor built with pypto.tensor(shape, "
                f"dtype, name) outside a kernel, got {type(a).__name__} ({user_location()})")
        if a.dtype is None or not a.is_fully_static:
            raise PyptoValueError(
                f"{where}: argument {i} is {a!r}; a function recorded outside a kernel takes "
                "graph tensors with a dtype and a shape of ints (pypto-sim records no dynamic "
                f"axis here; use a @pypto.frontend.jit kernel for those) ({user_location()})")
        tensors.append(a)
    return tensors


@contextlib.contextmanager
def record(name: str, args: Sequence[Any],
           run_mode: Optional[RunMode] = None) -> Iterator[Iterator[int]]:
    """The ``with pypto.function(name, *tensors):`` block outside a kernel: traces the block
    into a kernel of ``tensors`` and compiles it at the end of the block (see the module
    docstring). The value bound by ``as`` iterates once, as PyPTO's does. ``run_mode``: the
    backend its runs go to (default: NPU with CANN, else SIM)."""
    tensors = _check_args(name, args)
    names = _param_names(name, tensors)
    scope_groups, tiles = _options.effective_config()
    merged = {g: dict(scope_groups.get(g, {})) for g in OPTION_GROUPS}
    merged["runtime_options"]["run_mode"] = int(default_run_mode() if run_mode is None
                                                else run_mode)
    options = resolve_options(merged, tensor_names=names)
    where = f"pypto.function({name!r})"
    tracer = _tracer.Tracer(name)
    tracer.root.vec_tile = tiles.get("vec_tile_shapes")
    tracer.root.cube_tile = tiles.get("cube_tile_shapes")
    tracer.sg_scope = options["pass_options"].get("sg_set_scope")
    body_options = _options.Options(name=f"function {name}")
    with tracer, body_options:
        binds: Dict[int, Tensor] = {}
        for t, n in zip(tensors, names):
            fmt = t.format or TileOpFormat.TILEOP_ND
            handle = Tensor._wrap(tracer.add_param(n, list(t.spec), t.dtype, fmt))
            binds.setdefault(id(t), handle)
            t.__class__ = GraphTensor
        explorer = _tracer.PathExplorer(where)
        explorer.start_path()
        scope = tracer.push_variant(None, explorer)
        prev = bind_graph_tensors(binds)
        try:
            yield iter(range(1))
        finally:
            bind_graph_tensors(prev)
        tracer.check_top(scope, where)
        tracer.pop_variant(scope, where)
        explorer.end_path()
        if explorer.start_path():
            # A with-block runs once; a jit kernel's body is run again per branch path.
            raise PyptoNotImplementedError(
                f"{where}: the block branches on a symbolic value outside any pypto.loop; put "
                "the condition inside a pypto.loop body (which pypto-sim runs once per path)")
        body_groups = {g: dict(v) for g, v in _options.innermost_groups().items()}
    kernel_ir = tracer.finish()
    options["pass_options"].update(body_groups.get("pass_options", {}))
    compiled = _backend.compile(kernel_ir, options)
    fn = EagerFunction(name, kernel_ir, compiled, options, RunMode(options["runtime_options"]
                                                                    ["run_mode"]))
    with _lock:
        _last[0] = fn
    _functions.record_compiled(kernel_ir)


def run_once(args: Sequence[Any]) -> Any:
    """``pypto.runtime._device_run_once_data_from_host(*tensors)``: runs the last recorded
    function on ``tensors`` (``pypto.from_torch`` results, one per parameter in the order of
    the ``pypto.function`` call), in place. Returns the backend's report."""
    fn = last()
    if fn is None:
        raise PyptoRuntimeError(
            "pypto.runtime._device_run_once_data_from_host: no function has been recorded; "
            "record one first with `with pypto.function(name, *tensors): ...` outside a kernel")
    params = fn.kernel.params
    if len(args) != len(params):
        raise PyptoValueError(
            f"pypto.runtime._device_run_once_data_from_host: function '{fn.name}' takes "
            f"{len(params)} tensors ({', '.join(p.name for p in params)}), got {len(args)}")
    data: List[torch.Tensor] = []
    for i, (a, p) in enumerate(zip(args, params)):
        if not isinstance(a, HostTensor):
            raise PyptoTypeError(
                f"pypto.runtime._device_run_once_data_from_host: expected a pypto.Tensor made by "
                f"pypto.from_torch at inputs[{i}], got {type(a).__name__}")
        t = a.data
        shape = list(t.shape) or [1]
        want = [int(d) for d in p.value.shape]
        if shape != want or not accepts_torch_dtype(p.dtype, t.dtype):
            raise PyptoValueError(
                f"pypto.runtime._device_run_once_data_from_host: inputs[{i}] is a {t.dtype} "
                f"tensor of shape {shape}; parameter '{p.name}' of function '{fn.name}' is "
                f"{p.dtype.name} {want}")
        data.append(t)
    backend = _backend.get_backend(fn.run_mode)
    run, written = _mx.to_carriers(params, data)
    report = backend.run(fn.compiled, run, {}, fn.options)
    _mx.write_back(data, run, written)
    return report
