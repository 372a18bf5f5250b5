# SPDX-License-Identifier: Apache-2.0
"""``@pypto.frontend.jit``: turns a Python kernel into a traced, cached, executable kernel.

Example::

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def add_kernel(a: pypto.Tensor([3], pypto.DT_FP32),
                   b: pypto.Tensor([3], pypto.DT_FP32),
                   out: pypto.Tensor([3], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = a + b

    add_kernel(x, y, z)          # writes z in place, returns None
    z = add_kernel(x, y)         # trailing outputs with a full static annotation are allocated
    add_kernel.warmup(x, y, z)   # trace + compile only
    add_kernel.cache.clear()     # forget every specialization

Returned values (PyPTO's functional form)::

    @pypto.frontend.jit
    def abs_kernel(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)
                   ) -> pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32):
        return pypto.abs(x)

    y = abs_kernel(x)            # a new torch tensor on x's device

Each returned tensor (``return t`` or ``return a, b``) is written to a virtual output
parameter appended after the signature's tensor parameters (named ``ret``, or ``ret0``,
``ret1``...), so the compiler and the backends only ever see output parameters. The call
allocates those outputs (zero-filled, on the inputs' device) and returns them; together with
omitted trailing outputs (allocated as above, listed first) one output is returned bare and
several as a tuple. The return annotation (a ``pypto.Tensor`` or a tuple of them) gives each
output's dtype, format and shape; DYNAMIC, STATIC or ``...`` axes, a bare ``pypto.Tensor`` and
a missing (or non-pypto) annotation take the traced value's dtype and shape, whose dynamic
axes must be dynamic dimensions of the parameters (the call's bindings size them). A returned
input parameter is copied into a new output (as PyPTO moves it into its output), so the
result never aliases the argument.

The wrapper follows Triton's ``@jit``: ``fn=None`` plus keyword-only option dicts, a lazy
cache keyed by specialization (kept in ``kernel.cache``, resettable), explicit ``warmup``,
and compile hooks (``pypto.frontend.hooks``). A specialization is the tuple of tensor dtypes,
formats, devices and static sizes (DYNAMIC axes excluded), the non-tensor argument values,
the plain-constant globals and closure values the kernel reads, the option dicts (without
the accepted-only options, see ``_options``) and the run mode.

Formats: a CPU tensor has no NZ storage, so a CPU tensor passed for a ``TILEOP_NZ``
parameter is accepted as the logical (ND) data and the parameter keeps format NZ in the IR
(the simulator models the NZ layout). For NPU tensors the storage format reported by
torch_npu must match the annotation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import inspect
import os
import threading
import types
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import _backend, _functions, _mx, _ops, _options, _source, _tracer, ir
from ._dtypes import DataType, accepts_torch_dtype, from_torch_dtype, to_torch_dtype
from ._enums import CompStage, RunMode, StatusType, TileOpFormat
from ._errors import (PyptoNotImplementedError, PyptoError, PyptoRuntimeError, PyptoTypeError,
                      PyptoValueError, user_location)
from .error import ParserError, short_repr
from ._options import (OPTION_GROUPS, default_run_mode, key_options, resolve_options,
                       validate_group)
from ._source import scan_kernel
from ._symbolic import SymbolicScalar
from ._tensor import HostTensor, Tensor, TensorAnnotation

__all__ = ["jit", "JitKernel", "KernelCache", "CompiledKernel", "CompileEvent", "hooks",
           "dynamic", "function"]

#: Callables invoked with a :class:`CompileEvent` each time any kernel compiles a new
#: specialization (Triton-style hook; tests count compiles with it).
hooks: List[Callable[["CompileEvent"], None]] = []


@dataclass(frozen=True)
class CompileEvent:
    """What a compile hook receives."""

    kernel: "JitKernel"
    key: tuple
    ir: ir.Kernel
    compiled: Any
    warmup: bool


@dataclass(eq=False)
class CompiledKernel:
    """One cached specialization: the traced IR and what the backend compiler made of it."""

    key: tuple
    ir: ir.Kernel
    compiled: Any
    options: Dict[str, Dict[str, Any]]


def _fits(a: TensorAnnotation, shape: Sequence[int]) -> bool:
    """Whether ``shape`` has the rank and the fixed sizes annotation ``a`` names."""
    want = len(a.spec)
    if (a.has_ellipsis and len(shape) < want) or (not a.has_ellipsis and len(shape) != want):
        return False
    return all(not isinstance(e, int) or isinstance(e, bool) or shape[k] == e
               for k, e in enumerate(a.spec))


def _fractal_nz_of(a: TensorAnnotation, t: torch.Tensor) -> Optional[List[int]]:
    """The logical shape [..., M, N] of NZ parameter ``a`` when ``t`` holds it in the fractal
    layout a host builds for an NZ tensor ([..., N1, M1, 16, C0] with C0 = 32 bytes of the
    dtype, M and N padded up: PyPTO binds the argument's bytes to the annotated NZ tensor);
    None otherwise."""
    if (a.format is not TileOpFormat.TILEOP_NZ or a.spec is None or a.has_ellipsis
            or len(a.spec) < 2 or t.dim() != len(a.spec) + 2
            or not all(isinstance(e, int) and not isinstance(e, bool) for e in a.spec)):
        return None
    logical = [int(e) for e in a.spec]
    m, n = logical[-2:]
    c0 = 32 // t.element_size()
    want = logical[:-2] + [-(-n // c0), -(-m // 16), 16, c0]
    return logical if list(t.shape) == want else None


def _from_fractal_nz(t: torch.Tensor, logical: Sequence[int]) -> torch.Tensor:
    """The logical (ND) tensor of a fractal NZ one (:func:`_fractal_nz_of`)."""
    lead = t.dim() - 4
    order = list(range(lead)) + [lead + 1, lead + 2, lead, lead + 3]  # [.., M1, 16, N1, C0]
    nd = t.permute(*order).reshape(*t.shape[:lead], t.shape[-3] * 16, t.shape[-4] * t.shape[-1])
    return nd[..., :logical[-2], :logical[-1]].contiguous()


def _to_fractal_nz(nd: torch.Tensor, out: torch.Tensor) -> None:
    """Writes logical ``nd`` into fractal NZ ``out`` (the inverse of _from_fractal_nz)."""
    lead = out.dim() - 4
    n1, m1, m0, c0 = out.shape[-4:]
    pad = torch.zeros(*out.shape[:lead], m1 * m0, n1 * c0, dtype=out.dtype)
    pad[..., :nd.shape[-2], :nd.shape[-1]] = nd
    tiles = pad.reshape(*out.shape[:lead], m1, m0, n1, c0)
    out.copy_(tiles.permute(*range(lead), lead + 2, lead, lead + 1, lead + 3))


def _markers_only(a: TensorAnnotation) -> bool:
    """Whether annotation ``a`` names no size: only pypto.STATIC/DYNAMIC markers."""
    return bool(a.spec) and all(isinstance(e, StatusType) for e in a.spec)


class KernelCache:
    """Specialization cache of one jit kernel. ``clear()`` resets it (tests use that)."""

    def __init__(self) -> None:
        self._entries: Dict[tuple, CompiledKernel] = {}
        self._lock = threading.RLock()
        #: Number of specializations traced and compiled since creation or the last clear().
        self.compile_count = 0

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.compile_count = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: tuple) -> bool:
        return key in self._entries

    def get(self, key: tuple) -> Optional[CompiledKernel]:
        return self._entries.get(key)

    def keys(self) -> List[tuple]:
        return list(self._entries)

    def entries(self) -> List[CompiledKernel]:
        return list(self._entries.values())


def dynamic(name: str) -> SymbolicScalar:
    """A named dynamic axis for annotations: ``pypto.Tensor([pypto.frontend.dynamic("N"), 64],
    ...)``. Axes sharing a name must have the same size in a call."""
    if not isinstance(name, str) or not name.isidentifier():
        raise PyptoValueError(f"pypto.frontend.dynamic: name must be an identifier, got {short_repr(name)}")
    return SymbolicScalar(name)


def function(fn: Callable) -> Callable:
    """Legacy marker for kernel helpers. Helpers are plain Python here, so this returns
    ``fn`` unchanged."""
    return fn


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass
class _Param:
    name: str
    is_tensor: bool
    annotation: Optional[TensorAnnotation] = None
    positional: bool = True
    has_default: bool = False
    default: Any = None

    @property
    def allocatable(self) -> bool:
        """An omitted output can be allocated: full static shape and a torch-storable dtype."""
        a = self.annotation
        return (a is not None and a.is_fully_static and a.dtype is not None
                and to_torch_dtype(a.dtype) is not None)


@dataclass(frozen=True)
class _TensorSpec:
    dtype: DataType
    format: TileOpFormat
    dims: Tuple[Any, ...]  # int for static axes, symbol name (str) for dynamic ones
    device: str


_MISSING = object()


def _snapshot(d: Optional[dict]) -> Optional[dict]:
    """A copy to compare the caller's runtime_options with (lists copied, so an in-place
    change of ready_on_host_tensors counts as a change)."""
    if d is None:
        return None
    return {k: (list(v) if isinstance(v, list) else v) for k, v in d.items()}


def _freeze(v: Any) -> Any:
    """A hashable stand-in for a non-tensor argument or global in the cache key."""
    if v is None or isinstance(v, (bool, int, float, str, bytes, complex)):
        return (type(v).__name__, v)
    if isinstance(v, enum.Enum):
        return ("enum", type(v).__qualname__, v.name)
    if isinstance(v, SymbolicScalar):
        return ("sym", v.key)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_freeze(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted(((_freeze(k), _freeze(x)) for k, x in v.items()), key=repr)))
    if isinstance(v, (set, frozenset)):
        return ("set", tuple(sorted((_freeze(x) for x in v), key=repr)))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return ("dataclass", type(v).__qualname__,
                tuple((f.name, _freeze(getattr(v, f.name))) for f in dataclasses.fields(v)))
    if isinstance(v, torch.dtype):
        return ("torch.dtype", str(v))
    try:
        hash(v)
        return ("object", type(v).__qualname__, v)  # identity-hashed objects stay alive in the key
    except TypeError:
        return ("repr", type(v).__qualname__, repr(v))


def _global_names(code: types.CodeType) -> List[str]:
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.extend(_global_names(c))
    return names


def _actual_format(t: torch.Tensor, device_type: str) -> Optional[TileOpFormat]:
    """Storage format of an NPU tensor (torch_npu format 29 is NZ); None for CPU tensors, which
    have no NZ storage."""
    if device_type != "npu":
        return None
    try:
        import torch_npu  # noqa: F401

        code = torch_npu.get_npu_format(t)
    except Exception:  # torch_npu missing or too old: nothing to check against
        return None
    return TileOpFormat.TILEOP_NZ if code == 29 else TileOpFormat.TILEOP_ND


class JitKernel:
    """The callable a ``@pypto.frontend.jit`` decoration returns.

    Attributes: ``cache`` (:class:`KernelCache`), ``compile_count``, ``last_report`` (what the
    backend returned for the last call, None before), ``function`` (IR of the most recent
    compile, None before), ``run_mode``, ``options`` (resolved option dicts).
    """

    def __init__(self, fn: Callable, *, host_options=None, runtime_options=None,
                 codegen_options=None, pass_options=None, verify_options=None,
                 debug_options=None, new_ir: bool = True,
                 create_new_logical_tensor: bool = False, use_cache: bool = True,
                 untyped_tensors: "bool | int" = False):
        #: PyPTO's older ``@pypto.jit``: its kernels take un-annotated tensor parameters
        #: (``def add(a, b, c)``), so a leading un-annotated parameter without a default is a
        #: tensor of any shape and dtype (taken from the argument).
        self._untyped_tensors = bool(untyped_tensors)
        #: How many un-annotated leading parameters are tensors (None: all of them); a call
        #: whose trailing ones get non-tensors (``k(a, b, out, m, n)``) uses a kernel of its
        #: own with the lower count (``_legacy_split``).
        self._untyped_limit = None if isinstance(untyped_tensors, bool) else untyped_tensors
        self._splits: Dict[int, "JitKernel"] = {}
        # `@pypto.frontend.jit` over `@pypto.options(...)`: every call runs in that scope
        # (the kernel's own dicts still win), and the function itself is the kernel.
        self._scope_opts: Optional[_options.Options] = None
        if isinstance(fn, _options._Scoped):
            self._scope_opts = fn._pypto_options
            fn = fn.__wrapped__
        if not inspect.isfunction(fn):
            hint = ""
            if isinstance(fn, dict):
                hint = "; options are keyword-only: @pypto.frontend.jit(runtime_options={...})"
            raise PyptoTypeError(
                f"jit decorator can only be used on functions, got {type(fn).__name__}{hint}")
        for flag, fname in ((new_ir, "new_ir"),
                            (create_new_logical_tensor, "create_new_logical_tensor"),
                            (use_cache, "use_cache")):
            if not isinstance(flag, bool):
                raise PyptoTypeError(f"jit: {fname} must be a bool, got {short_repr(flag)}")
        #: PyPTO's choice of tracer (new PIL IR or legacy parser) and an assemble-lowering
        #: flag: accepted, recorded, and without effect (pypto-sim has one tracer).
        self.new_ir = new_ir
        self.create_new_logical_tensor = create_new_logical_tensor
        #: PyPTO's use_cache: False traces and compiles on every call (and warmup), replacing
        #: the cached entry, instead of reusing a cached specialization.
        self.use_cache = use_cache
        self.fn = fn
        functools.update_wrapper(self, fn)
        #: PyPTO's older ``@pypto.jit`` form (a tensor parameter without annotation) looks its
        #: compiled kernels up by the tensors alone, as its KernelModule matches dtype, format
        #: and shape only: a call with other non-tensor values reuses the kernel traced first.
        self._old_form = False
        self._params = self._classify(fn)
        self._return_anns = self._return_annotations(fn)
        #: the last call's inputs traced at a shape other than their annotation's, named in a
        #: return-shape mismatch as its likely cause
        self._unfit_inputs: List[str] = []
        self._tensor_params = [p for p in self._params if p.is_tensor]
        self._nontensor_params = [p for p in self._params if not p.is_tensor]
        self._pos_nontensor = [p for p in self._nontensor_params if p.positional]
        given = {"host_options": host_options, "runtime_options": runtime_options,
                 "codegen_options": codegen_options, "pass_options": pass_options,
                 "verify_options": verify_options, "debug_options": debug_options}
        self._given = given
        self._tensor_names = [p.name for p in self._tensor_params]
        # Everything is checked now, so a typo fails at the decoration.
        resolve_options(given, tensor_names=self._tensor_names)
        # As in PyPTO, the other dicts are copied, but runtime_options is held by reference:
        # a script may change it (typically run_mode) after decorating; the next call sees
        # the change (re-validated then). The run mode defaults from the environment at
        # decoration, as PyPTO decides it there.
        self._jit_groups = {g: validate_group(g, given[g]) for g in OPTION_GROUPS}
        self._runtime_ref = runtime_options if isinstance(runtime_options, dict) else None
        self._runtime_snapshot = _snapshot(self._runtime_ref)
        self._default_run_mode = int(default_run_mode())
        self._config_version = -1
        self._resolve_call_options()
        self._source_problems = scan_kernel(fn)
        # The body's loops are read from its bytecode now, not in the first trace.
        _source.analyze_loops(fn.__code__)
        if self.run_mode == RunMode.SIM or os.environ.get("CAMODEL_LOG_PATH"):
            _backend.prepare_sim()
        #: Tensor parameters the body assigns somewhere (checked when it runs).
        self._rebound_params = frozenset() if untyped_tensors else (
            _source.stored_names(fn.__code__) & {p.name for p in self._tensor_params})
        self._global_names = self._referenced_globals(fn)
        self.cache = KernelCache()
        self.last_report: Any = None
        self.function: Optional[ir.Kernel] = None

    # -- decoration-time analysis -----------------------------------------------------------

    def _annotation(self, fn: Callable, raw: Any) -> Any:
        if isinstance(raw, str):
            # `from __future__ import annotations`: evaluate like typing.get_type_hints would.
            try:
                return eval(raw, fn.__globals__)  # noqa: S307 - the user's own annotation text
            except Exception:
                return raw
        return raw

    def _classify(self, fn: Callable) -> List[_Param]:
        params: List[_Param] = []
        seen_nontensor: List[str] = []
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise PyptoTypeError(
                    f"kernel '{fn.__name__}': *args/**kwargs parameters are not supported "
                    f"('{p.name}')")
            ann = self._annotation(fn, p.annotation)
            is_tensor = isinstance(ann, TensorAnnotation) or ann is Tensor
            if (self._untyped_tensors and p.annotation is p.empty and p.default is p.empty
                    and not seen_nontensor and p.kind in (p.POSITIONAL_ONLY,
                                                          p.POSITIONAL_OR_KEYWORD)
                    and (self._untyped_limit is None
                         or sum(q.is_tensor for q in params) < self._untyped_limit)):
                ann, is_tensor = Tensor, True
                self._old_form = True
            if ann is Tensor:
                ann = TensorAnnotation()  # bare class: any shape, dtype from torch
            positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            if is_tensor:
                if not positional:
                    raise PyptoValueError(
                        f"kernel '{fn.__name__}': tensor parameter '{p.name}' is keyword-only; "
                        "tensor parameters must be positional and come first")
                if seen_nontensor:
                    raise PyptoValueError(
                        "Non-tensor parameters must come after all tensor parameters. Found "
                        f"tensor parameter '{p.name}' after non-tensor parameter(s) "
                        f"{', '.join(repr(n) for n in seen_nontensor)} in kernel "
                        f"'{fn.__name__}'.")
                params.append(_Param(p.name, True, ann))
            else:
                seen_nontensor.append(p.name)
                has_default = p.default is not p.empty
                params.append(_Param(p.name, False, None, positional, has_default,
                                     p.default if has_default else None))
        return params

    def _return_annotations(self, fn: Callable) -> Optional[List[TensorAnnotation]]:
        """The outputs the return annotation declares, or None when it declares none (no
        annotation, ``-> None``, or a non-pypto type such as ``torch.Tensor`` or ``tuple``:
        then the returned values alone decide)."""
        raw = self._annotation(fn, inspect.signature(fn).return_annotation)
        items = list(raw) if isinstance(raw, (tuple, list)) else [raw]
        if not items or not all(isinstance(a, TensorAnnotation) or a is Tensor for a in items):
            return None
        return [TensorAnnotation() if a is Tensor else a for a in items]

    def _referenced_globals(self, fn: Callable) -> List[str]:
        # Names the kernel reads that are bound to data (not modules, functions or classes) at
        # decoration; attribute names (x.shape) also land in co_names but are not globals.
        out = []
        for name in dict.fromkeys(_global_names(fn.__code__)):
            v = fn.__globals__.get(name, _MISSING)
            if v is _MISSING or isinstance(v, (types.ModuleType, types.FunctionType, type,
                                               JitKernel, types.BuiltinFunctionType)):
                continue
            out.append(name)
        return out

    # -- public API -------------------------------------------------------------------------

    @property
    def compile_count(self) -> int:
        return self.cache.compile_count

    def __repr__(self) -> str:
        return f"<pypto jit kernel {self.__name__} run_mode={self.run_mode.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._not_while_tracing()
        with self._scope():
            return self._call(args, kwargs)

    def _not_while_tracing(self) -> None:
        """A kernel called from the body of a kernel being traced (itself: recursion, or
        another one) is refused before its arguments are looked at: they are the traced
        kernel's pypto.Tensor values, not tensors with data."""
        tracer = _tracer.current()
        if tracer is None:
            return
        outer = tracer.kernel.name
        what = ("calls itself (recursion)" if outer == self.__name__
                else f"is called from kernel '{outer}'")
        raise PyptoRuntimeError(
            f"kernel '{self.__name__}' {what} while '{outer}' is being traced "
            f"({user_location()}); a kernel cannot call a @pypto.frontend.jit kernel in its "
            "body: call a plain Python helper (or a pypto.frontend.function) instead")

    def _scope(self):
        return self._scope_opts if self._scope_opts is not None else contextlib.nullcontext()

    def _legacy_split(self, args: Tuple[Any, ...]) -> Optional["JitKernel"]:
        """For ``@pypto.jit``'s un-annotated kernels: the kernel whose inferred tensor
        parameters are exactly the leading tensor arguments of this call, when that is fewer
        than this one infers (PyPTO's older kernels pass sizes positionally after the
        tensors); None when this kernel fits."""
        if not self._untyped_tensors or self._untyped_limit is not None:
            return None
        n = 0
        while n < len(args) and isinstance(args[n], (torch.Tensor, TensorAnnotation)):
            n += 1
        if n >= len(self._tensor_params) or n >= len(args):
            return None
        split = self._splits.get(n)
        if split is None:
            split = JitKernel(self.fn, untyped_tensors=n, new_ir=self.new_ir,
                              use_cache=self.use_cache,
                              create_new_logical_tensor=self.create_new_logical_tensor,
                              **{g: self._given[g] for g in self._given})
            split._scope_opts = self._scope_opts
            self._splits[n] = split
        return split

    def _call(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        split = self._legacy_split(args)
        if split is not None:
            out = split._call(args, kwargs)
            self.function, self.last_report = split.function, split.last_report
            return out
        self._refresh_options()
        tensors, allocated, values = self._bind(args, kwargs)
        specs, bindings = self._validate(tensors)
        run_mode = self._run_mode()
        entry = self._get_or_compile(specs, values, run_mode, warmup=False)
        self._check_omitted(entry, allocated)
        outputs = allocated + self._allocate_returns(entry, tensors, bindings)
        if self.options["host_options"].get("compile_stage", 0) != CompStage.ALL_COMPLETE:
            return self._outputs(tensors, outputs)
        backend = _backend.get_backend(run_mode)
        run, written = _mx.to_carriers(entry.ir.params, tensors)
        fractal = [(i, _fractal_nz_of(p.annotation, t)) for i, (p, t)
                   in enumerate(zip(self._tensor_params, tensors)) if isinstance(t, torch.Tensor)]
        fractal = [(i, shape) for i, shape in fractal if shape is not None]
        for i, shape in fractal:
            run[i] = _from_fractal_nz(tensors[i], shape)
        self.last_report = backend.run(entry.compiled, run, bindings, entry.options)
        _mx.write_back(tensors, run, written)
        for i, _ in fractal:
            if entry.ir.params[i].is_output_written:
                _to_fractal_nz(run[i], tensors[i])
        return self._outputs(tensors, outputs)

    def warmup(self, *args: Any, **kwargs: Any) -> CompiledKernel:
        """Validates the arguments and traces/compiles their specialization without running.
        Returns the cache entry (``.ir`` is the traced :class:`pypto.ir.Kernel`)."""
        self._not_while_tracing()
        with self._scope():
            self._refresh_options()
            tensors, allocated, values = self._bind(args, kwargs)
            specs, _ = self._validate(tensors)
            entry = self._get_or_compile(specs, values, self._run_mode(), warmup=True)
            self._check_omitted(entry, allocated)
            return entry

    def dump_trace(self, path: str, *args: Any, **kwargs: Any) -> str:
        """Compiles the kernel for these arguments and writes the launch as a native trace
        (traces/FORMAT.md) that ``pypto-sim run PATH`` replays; nothing is executed.

        Example::

            add_kernel.dump_trace("add.ndjson", x, y)   # then: pypto-sim run add.ndjson
        """
        self._not_while_tracing()
        with self._scope():
            self._refresh_options()
            tensors, _, values = self._bind(args, kwargs)
            specs, bindings = self._validate(tensors)
            entry = self._get_or_compile(specs, values, RunMode.SIM, warmup=True)
            self._allocate_returns(entry, tensors, bindings)
        native = _backend._native()
        if native is None or not hasattr(native, "dump_trace"):
            raise PyptoNotImplementedError(
                "dump_trace needs the compiled pypto._C module; build it with tools/setup.sh")
        native.dump_trace(entry.compiled, list(tensors), bindings, entry.options, str(path))
        return str(path)

    # -- options ----------------------------------------------------------------------------

    def _refresh_options(self) -> None:
        """Re-resolves the options when the held runtime_options dict or the pypto.options
        scopes changed since the last call (two comparisons when nothing did)."""
        rt = self._runtime_ref
        changed = rt is not None and rt != self._runtime_snapshot
        if not changed and self._config_version == _options.config_version():
            return
        if changed:
            try:
                clean = validate_group("runtime_options", rt)
            except PyptoError as e:
                raise type(e)(f"{e} (runtime_options of kernel '{self.__name__}' changed after "
                              "decoration)") from None
            self._jit_groups["runtime_options"] = clean
            self._resolve_call_options()
            self._runtime_snapshot = _snapshot(rt)
        else:
            self._resolve_call_options()

    def _resolve_call_options(self) -> None:
        """The options of a call: per group, the pypto.options scopes in force overlaid by the
        kernel's own dicts (which win, as PyPTO applies them last), plus the scope's tile
        shapes (the trace starts with them)."""
        version = _options.config_version()
        scope_groups, tiles = _options.effective_config()
        merged = {}
        for g in OPTION_GROUPS:
            d = dict(scope_groups.get(g, {}))
            d.update(self._jit_groups[g])
            merged[g] = d
        # PyPTO fixes the run mode at decoration (explicit or from the environment); a scope
        # cannot change it.
        merged["runtime_options"]["run_mode"] = self._jit_groups["runtime_options"].get(
            "run_mode", self._default_run_mode)
        self.options = resolve_options(merged, tensor_names=self._tensor_names)
        self.run_mode = RunMode(self.options["runtime_options"]["run_mode"])
        self._tiles = {k: tiles[k] for k in ("vec_tile_shapes", "cube_tile_shapes") if k in tiles}
        # Accepted-only options (validated, never acted on) stay out of the key.
        # Operation options set around the call are traced into the ops (combine_axis).
        self._options_key = (_freeze(key_options(self.options)),
                             tuple(sorted((k, repr(v)) for k, v in self._tiles.items())),
                             _freeze(scope_groups.get("operation_options", {})))
        self._config_version = version

    # -- call steps -------------------------------------------------------------------------

    def _run_mode(self) -> RunMode:
        # PyPTO: CAMODEL_LOG_PATH in the environment forces the simulator.
        return RunMode.SIM if os.environ.get("CAMODEL_LOG_PATH") else self.run_mode

    def _bind(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        n = len(self._tensor_params)
        tensors = [a.data if isinstance(a, HostTensor) else a for a in args[:n]]
        allocated: List[int] = []
        if len(args) < n:
            missing = self._tensor_params[len(args):]
            if not all(p.allocatable for p in missing):
                bad = [p.name for p in missing if not p.allocatable]
                raise PyptoValueError(
                    f"Expected at least {n} tensor argument(s), got {len(args)}. Missing tensor "
                    f"parameter(s): {', '.join(repr(p.name) for p in missing)}; an omitted "
                    "trailing output is allocated only when its annotation gives a full static "
                    f"shape and a dtype, which {', '.join(repr(b) for b in bad)} does not.")
            device = next((t.device for t in tensors if isinstance(t, torch.Tensor)),
                          torch.device("cpu"))
            for p in missing:
                a = p.annotation
                allocated.append(len(tensors))
                tensors.append(torch.zeros(list(a.spec), dtype=to_torch_dtype(a.dtype),
                                           device=device))
        rest = args[n:]
        if len(rest) > len(self._pos_nontensor):
            raise PyptoTypeError(
                f"Too many positional arguments: expected {n} tensor(s) and up to "
                f"{len(self._pos_nontensor)} non-tensor(s), got {len(args)} total.")
        values: Dict[str, Any] = {}
        for p, v in zip(self._pos_nontensor, rest):
            values[p.name] = v
        valid = [p.name for p in self._nontensor_params]
        unknown = [k for k in kwargs if k not in valid]
        if unknown:
            hint = ""
            tensor_kw = [k for k in unknown if k in {p.name for p in self._tensor_params}]
            if tensor_kw:
                hint = f" Tensor parameters ({', '.join(tensor_kw)}) must be passed positionally."
            raise PyptoTypeError(
                f"Unknown keyword argument(s): {unknown}. Valid non-tensor parameters: "
                f"{valid}.{hint}")
        for k, v in kwargs.items():
            if k in values:
                raise PyptoTypeError(f"Non-tensor argument '{k}' was given both positionally "
                                     "and by keyword.")
            values[k] = v
        for p in self._nontensor_params:
            if p.name not in values:
                if not p.has_default:
                    raise PyptoTypeError(f"Missing required non-tensor argument '{p.name}'.")
                values[p.name] = p.default
            if isinstance(values[p.name], torch.Tensor):
                raise PyptoTypeError(
                    f"Non-tensor parameter '{p.name}' must not be a torch.Tensor. Use positional "
                    "arguments for tensors.")
        return tensors, allocated, values

    def _validate(self, tensors: Sequence[Any]):
        """Checks the tensor arguments against their annotations; returns their specs (dtype,
        format, dims: ints and dynamic-axis names) and the dynamic axes' bindings."""
        specs: List[_TensorSpec] = []
        bindings: Dict[str, int] = {}
        sources: Dict[str, Tuple[int, str, int]] = {}
        device = None
        self._unfit_inputs = []
        for i, (p, t) in enumerate(zip(self._tensor_params, tensors)):
            ordinal = _ordinal(i + 1)
            who = f"(parameter '{p.name}')"
            if isinstance(t, TensorAnnotation):
                raise PyptoTypeError(
                    f"Input {i + 1} (index {i}, parameter '{p.name}') is {short_repr(t)}, a "
                    "pypto.Tensor built outside a kernel: a description (a PyPTO graph tensor) "
                    "with no data; pass a torch.Tensor (or pypto.from_torch(t)) instead")
            if not isinstance(t, torch.Tensor):
                raise PyptoTypeError(
                    f"Input {i + 1} (index {i}, parameter '{p.name}') must be a torch.Tensor, got "
                    f"{type(t).__name__}")
            kind = ("a nested tensor" if getattr(t, "is_nested", False)
                    else f"a tensor of layout {t.layout}" if t.layout != torch.strided
                    else "a quantized tensor" if t.is_quantized else None)
            if kind is not None:
                raise PyptoValueError(
                    f"The {ordinal} input tensor {who} is {kind}; kernels read dense strided "
                    "tensors: pass t.to_dense() (t.dequantize() for a quantized one, "
                    "t.to_padded_tensor(0) for a nested one)")
            if not t.is_contiguous():
                raise PyptoValueError(
                    f"The {ordinal} input tensor {who} is not contiguous; pass "
                    "tensor.contiguous() (kernels read tensors as dense row-major memory)")
            # One device object and type string per tensor (torch makes a new one per access).
            t_device = t.device
            t_type = t_device.type
            if t_type == "meta":
                raise PyptoValueError(
                    f"The {ordinal} input tensor {who} is on the meta device and has no data; "
                    "pass a tensor with storage (e.g. created on cpu)")
            if device is None:
                device = t_device
            elif t_device != device:
                raise PyptoValueError(
                    f"All input tensors must be on the same device: the {ordinal} input tensor "
                    f"{who} is on {t_device}, the 1st on {device}")
            a = p.annotation
            if a.dtype is not None:
                if not accepts_torch_dtype(a.dtype, t.dtype):
                    # Name a torch that lacks the type (1.13 has no uint16/32/64) as the cause.
                    none = to_torch_dtype(a.dtype) is None and \
                        not accepts_torch_dtype(a.dtype, torch.uint8)
                    raise PyptoValueError(
                        f"The dtype of {ordinal} input tensor {t.dtype} does not match the dtype "
                        f"of input tensor definition {a.dtype} {who}." +
                        (f" torch {torch.__version__} has no dtype for {a.dtype}, so no tensor "
                         "can be passed for it." if none else ""))
                dtype = a.dtype
            else:
                dtype = from_torch_dtype(t.dtype)
                if dtype is None:
                    raise PyptoValueError(
                        f"The dtype of {ordinal} input tensor {t.dtype} is not supported {who}.")
            shape = list(t.shape) or [1]
            if dtype.is_fp4 and t.dtype == torch.uint8:
                shape[-1] *= 2  # two FP4 elements per byte
            shape = _fractal_nz_of(a, t) or shape
            dims: List[Any] = list(shape)
            if a.spec is not None and (self._return_anns is not None or _markers_only(a)) \
                    and not _fits(a, shape):
                # As PyPTO's entry: a kernel that returns its outputs checks its inputs against
                # their annotations only in a debug mode; otherwise the argument's own shape is
                # traced (every axis static). Its results still meet the return annotation.
                # So does a parameter annotated with markers alone (pypto.STATIC/DYNAMIC, no
                # sizes): PyPTO's parser then traces the call's own tensors, of any rank.
                if not _markers_only(a):
                    self._unfit_inputs.append(f"'{p.name}' {list(shape)} (annotated "
                                              f"{short_repr(a)})")
            elif a.spec is not None:
                want = len(a.spec)
                if (a.has_ellipsis and len(shape) < want) or (not a.has_ellipsis
                                                              and len(shape) != want):
                    at_least = "at least " if a.has_ellipsis else ""
                    raise PyptoValueError(
                        f"The number of dimensions of {ordinal} input tensor {len(shape)} does "
                        f"not match the number of dimensions of input tensor definition "
                        f"{at_least}{want} {who}.")
                for axis, e in enumerate(a.spec):
                    if isinstance(e, int):
                        if shape[axis] != e:
                            raise PyptoValueError(
                                f"The shape of {ordinal} input tensor {short_repr(shape)} does not match the "
                                f"shape of input tensor definition {short_repr(a)} at axis {axis} "
                                f"(expected {e}, got {shape[axis]}) {who}.")
                    elif e is StatusType.DYNAMIC or isinstance(e, SymbolicScalar):
                        sym = e.name if isinstance(e, SymbolicScalar) else f"{p.name}.shape[{axis}]"
                        prev = sources.get(sym)
                        if prev is not None and bindings[sym] != shape[axis]:
                            raise PyptoValueError(
                                f"Dynamic dimension '{sym}' is {bindings[sym]} in the "
                                f"{_ordinal(prev[0] + 1)} input tensor (parameter '{prev[1]}', "
                                f"axis {prev[2]}) but {shape[axis]} in the {ordinal} input tensor "
                                f"{who}, axis {axis}.")
                        sources.setdefault(sym, (i, p.name, axis))
                        bindings[sym] = shape[axis]
                        dims[axis] = sym
            fmt = a.format or TileOpFormat.TILEOP_ND
            actual = _actual_format(t, t_type)
            if actual is not None and t.dtype != torch.uint8 and actual is not fmt:
                raise PyptoValueError(
                    f"The format of {ordinal} input tensor {actual} does not match the format of "
                    f"input tensor definition {fmt} {who}.")
            specs.append(_TensorSpec(dtype, fmt, tuple(dims), t_type))
        return specs, bindings

    def _key(self, specs: Sequence[_TensorSpec], values: Dict[str, Any],
             run_mode: RunMode) -> tuple:
        g = self.fn.__globals__
        globals_key = tuple((n, _freeze(g.get(n))) for n in self._global_names)
        closure_key = ()
        if self.fn.__closure__:
            closure_key = tuple(
                (n, _freeze(c.cell_contents) if not isinstance(
                    c.cell_contents, (types.ModuleType, types.FunctionType, type)) else None)
                for n, c in zip(self.fn.__code__.co_freevars, self.fn.__closure__))
        return (
            tuple((s.dtype.name, s.format.name, s.dims, s.device) for s in specs),
            () if self._old_form else tuple(
                (p.name, _freeze(values[p.name])) for p in self._nontensor_params),
            globals_key,
            closure_key,
            self._options_key,
            int(run_mode),
        )

    def _get_or_compile(self, specs, values, run_mode: RunMode, warmup: bool) -> CompiledKernel:
        key = self._key(specs, values, run_mode)
        entry = self.cache.get(key) if self.use_cache else None
        if entry is not None:
            return entry
        with self.cache._lock:
            entry = self.cache.get(key) if self.use_cache else None
            if entry is not None:
                return entry
            kernel_ir = self._trace(specs, values)
            options = {g: dict(v) for g, v in self.options.items()}
            # The partition's options the body set apply to this kernel's launches.
            options["pass_options"].update(self._body_groups.get("pass_options", {}))
            options["runtime_options"]["run_mode"] = int(run_mode)
            compiled = _backend.compile(kernel_ir, options)
            entry = CompiledKernel(key=key, ir=kernel_ir, compiled=compiled, options=options)
            self.cache._entries[key] = entry
            self.cache.compile_count += 1
            self.function = kernel_ir
            _functions.record_compiled(kernel_ir)
        event = CompileEvent(kernel=self, key=key, ir=kernel_ir, compiled=compiled, warmup=warmup)
        for hook in list(hooks):
            hook(event)
        return entry

    def _trace(self, specs: Sequence[_TensorSpec], values: Dict[str, Any]) -> ir.Kernel:
        if self._source_problems:
            raise PyptoValueError(self._source_problems[0])
        name = self.__name__
        tracer = _tracer.Tracer(name)
        tracer.root.vec_tile = self._tiles.get("vec_tile_shapes")
        tracer.root.cube_tile = self._tiles.get("cube_tile_shapes")
        tracer.sg_scope = self.options["pass_options"].get("sg_set_scope")
        pos = [values[p.name] for p in self._pos_nontensor]
        kw = {p.name: values[p.name] for p in self._nontensor_params if not p.positional}
        where = f"kernel '{name}'"
        # Options the body sets (pypto.set_pass_options(...) inside the kernel) belong to this
        # kernel, as in PyPTO: a scope of their own, read back for the launch, not leaked.
        body_options = _options.Options(name=f"kernel {name}")
        self._body_groups = {}
        try:
            with tracer, body_options:
                handles = []
                for p, s in zip(self._tensor_params, specs):
                    shape = [SymbolicScalar(d) if isinstance(d, str) else d for d in s.dims]
                    handles.append(Tensor._wrap(tracer.add_param(p.name, shape, s.dtype, s.format)))
                explorer = _tracer.PathExplorer(where)
                returns: Optional[List[ir.Value]] = None
                while explorer.start_path():
                    scope = tracer.push_variant(None, explorer)
                    ret = self._call_body(tracer, handles, pos, kw)
                    tracer.check_top(scope, where)
                    returns = self._write_returns(tracer, ret, returns)
                    tracer.pop_variant(scope, where)
                    explorer.end_path()
                self._body_groups = {g: dict(v) for g, v in _options.innermost_groups().items()}
        except PyptoError:
            raise
        except Exception as e:  # the kernel's own Python failed: say where we were
            e.add_note(f"(while tracing pypto kernel '{name}')")
            raise
        return tracer.finish()

    def _call_body(self, tracer: _tracer.Tracer, handles: List[Tensor], pos: List[Any],
                   kw: Dict[str, Any]) -> Any:
        """Runs the kernel body once. As PyPTO's parser, an annotated kernel that returns
        nothing (it writes its results in place) may not rebind a tensor parameter to another
        tensor (``c = a + b`` writes nothing into ``c``; the kernel writes with ``c[:] = ...``
        or ``c.move(...)``); a view or in-place reshape of the parameter itself
        (``x = pypto.reshape(x, s, inplace=True)``) is the same buffer. A kernel that returns
        its results may use a parameter's name for an intermediate, as PyPTO's examples do."""
        rebound = self._rebound_params
        if not rebound:
            return self.fn(*handles, *pos, **kw)
        ret, final = _source.call_with_final_locals(self.fn, [*handles, *pos], kw)
        if ret is not None:
            return ret
        for p, h in zip(self._tensor_params, handles):
            now = final.get(p.name, h)
            if (p.name in rebound and isinstance(now, Tensor) and now is not h
                    and not tracer.aliases(now._value, h._value)):
                raise ParserError(None, f"Input tensor '{p.name}' cannot be reassigned in "
                                  f"kernel '{self.__name__}'; write its result with "
                                  f"{p.name}[:] = ... or {p.name}.move(...)")
        return ret

    def _write_returns(self, tracer: _tracer.Tracer, ret: Any,
                       outs: Optional[List[ir.Value]]) -> List[ir.Value]:
        """Writes what one path of the kernel body returned to the virtual output parameters
        (created on the first path; later branch paths must return the same kind of tensors).
        Returns those parameters' values."""
        where = f"kernel '{self.__name__}'"
        if ret is None:
            vals: List[Tensor] = []
        elif isinstance(ret, Tensor):
            vals = [ret]
        elif (isinstance(ret, (tuple, list)) and ret
              and all(isinstance(v, Tensor) for v in ret)):
            vals = list(ret)
        else:
            what = type(ret).__name__
            if isinstance(ret, (tuple, list)):
                what += " of " + ", ".join(type(v).__name__ for v in ret) if ret else " (empty)"
            raise PyptoTypeError(
                f"{where} returned {what}: a kernel may return a pypto tensor, a tuple of "
                "tensors, or nothing (results that are not tensors cannot leave the device)")
        anns = self._return_anns
        if outs is None:
            # A kernel that returns nothing wrote its results in place, the form PyPTO's jit
            # documents; its return annotation then has nothing to describe.
            if anns is not None and vals and len(anns) != len(vals):
                raise PyptoValueError(
                    f"{where}: the return annotation declares {len(anns)} output tensor(s) but "
                    f"the kernel returned {len(vals)}")
            outs = [self._return_param(tracer, i, len(vals), v._value,
                                       anns[i] if anns is not None else None)
                    for i, v in enumerate(vals)]
        elif len(outs) != len(vals):
            raise PyptoValueError(
                f"{where}: one branch path returns {len(outs)} tensor(s), another {len(vals)}; "
                "every path of the kernel body must return the same outputs")
        for i, (out, v) in enumerate(zip(outs, vals)):
            got = v._value
            if tuple(got.shape) != tuple(out.shape) or got.dtype is not out.dtype:
                raise PyptoValueError(
                    f"{where}: returned tensor {i} is {got.dtype.name}{list(got.shape)} on one "
                    f"branch path but {out.dtype.name}{list(out.shape)} on another")
            _ops._setitem(Tensor._wrap(out), slice(None), v)
        return outs

    def _return_param(self, tracer: _tracer.Tracer, i: int, count: int, v: ir.Value,
                      ann: Optional[TensorAnnotation]) -> ir.Value:
        """The virtual output parameter for returned value ``v`` (i-th of ``count``): dtype,
        format and fixed axes from the annotation, the rest from ``v``."""
        where = f"kernel '{self.__name__}'"
        taken = {p.name for p in self._params}
        base = "ret" if count == 1 else f"ret{i}"
        pname = base
        while pname in taken:
            pname += "_"
        dtype = v.dtype if ann is None or ann.dtype is None else ann.dtype
        if dtype is not v.dtype:
            raise PyptoValueError(
                f"{where}: returned tensor {i} has dtype {v.dtype.name} but the return "
                f"annotation says {dtype.name}; convert it with pypto.cast(t, pypto.{dtype.name})")
        shape = list(v.shape)
        fixed = () if ann is None or ann.spec is None else ann.spec
        if ann is not None and ann.spec is not None and (
                len(shape) < len(fixed) if ann.has_ellipsis else len(shape) != len(fixed)):
            raise PyptoValueError(
                f"{where}: returned tensor {i} has {len(shape)} dimension(s) {list(shape)} but "
                f"the return annotation {short_repr(ann)} has {len(fixed)}")
        for axis, e in enumerate(fixed):
            d = shape[axis]
            same = (d == e if isinstance(e, int) and isinstance(d, int) else
                    isinstance(e, SymbolicScalar) and isinstance(d, SymbolicScalar)
                    and d.key == e.key)
            if isinstance(e, (int, SymbolicScalar)) and not same:
                unfit = self._unfit_inputs
                raise PyptoValueError(
                    f"{where}: returned tensor {i} has shape {list(shape)}, which does not match "
                    f"the return annotation {short_repr(ann)} at axis {axis}" +
                    (f"; the inputs are traced at their own shapes and these differ from their "
                     f"annotations: {', '.join(unfit)}" if unfit else ""))
        for axis, d in enumerate(shape):
            if isinstance(d, SymbolicScalar) and not (d.op == "sym"
                                                      and d.name in tracer.dim_symbols):
                raise PyptoValueError(
                    f"{where}: axis {axis} of returned tensor {i} is `{d}`, which cannot size an "
                    "output allocated at call time (only ints and dynamic dimensions of the "
                    "parameters can); write the result into an output parameter instead "
                    "(out[:] = result)")
        fmt = ann.format if ann is not None and ann.format is not None else TileOpFormat.TILEOP_ND
        return tracer.add_param(pname, shape, dtype, fmt)

    def _allocate_returns(self, entry: CompiledKernel, tensors: List[Any],
                          bindings: Dict[str, int]) -> List[int]:
        """Appends to ``tensors`` a zero-filled torch tensor for each virtual output parameter
        of ``entry`` (sized with the call's ``bindings``); returns their indices."""
        first = len(self._tensor_params)
        device = next((t.device for t in tensors if isinstance(t, torch.Tensor)),
                      torch.device("cpu"))
        indices = []
        for p in entry.ir.params[first:]:
            dtype = to_torch_dtype(p.dtype)
            if dtype is None or p.dtype.is_fp4:
                raise PyptoValueError(
                    f"kernel '{self.__name__}' returns a {p.dtype.name} tensor, which torch "
                    "cannot hold here; write the result into an output parameter instead")
            shape = [d if isinstance(d, int) else bindings[d.name] for d in p.shape]
            indices.append(len(tensors))
            tensors.append(torch.zeros(shape, dtype=dtype, device=device))
        return indices

    def _check_omitted(self, entry: CompiledKernel, allocated: Sequence[int]) -> None:
        for i in allocated:
            p = entry.ir.params[i]
            if not p.is_output_written:
                raise PyptoValueError(
                    f"Tensor parameter '{p.name}' was omitted from the call, but kernel "
                    f"'{self.__name__}' never writes it, so it is an input: pass it explicitly.")

    @staticmethod
    def _outputs(tensors: Sequence[Any], allocated: Sequence[int]) -> Any:
        if not allocated:
            return None
        if len(allocated) == 1:
            return tensors[allocated[0]]
        return tuple(tensors[i] for i in allocated)


def jit(fn: Optional[Callable] = None, *, host_options: Optional[dict] = None,
        runtime_options: Optional[dict] = None, codegen_options: Optional[dict] = None,
        pass_options: Optional[dict] = None, verify_options: Optional[dict] = None,
        debug_options: Optional[dict] = None, new_ir: bool = True,
        create_new_logical_tensor: bool = False, use_cache: bool = True) -> Any:
    """Decorator: ``@pypto.frontend.jit`` or ``@pypto.frontend.jit(runtime_options={...})``.

    Options are validated at decoration (unknown keys, types and ranges raise at once). As
    in PyPTO, ``runtime_options`` is held by reference: changing the dict after decorating
    (e.g. its run_mode) takes effect, re-validated, at the next call. ``new_ir`` and
    ``create_new_logical_tensor`` (PyPTO's tracer choice and an assemble-lowering flag) are
    accepted and have no effect. ``use_cache=False`` (as in PyPTO) compiles on every call
    instead of reusing a cached specialization. See the module docstring for call semantics.
    """
    opts = dict(host_options=host_options, runtime_options=runtime_options,
                codegen_options=codegen_options, pass_options=pass_options,
                verify_options=verify_options, debug_options=debug_options, new_ir=new_ir,
                create_new_logical_tensor=create_new_logical_tensor, use_cache=use_cache)

    def decorate(f: Callable) -> JitKernel:
        return JitKernel(f, **opts)

    if fn is None:
        return decorate
    return decorate(fn)


def legacy_jit(fn: Optional[Callable] = None, **options: Any) -> Any:
    """``@pypto.jit``: :func:`jit` with PyPTO's older kernel form as well, whose tensor
    parameters carry no annotation (``def add(a, b, c)``, called with torch tensors or
    :func:`pypto.from_torch` handles): a leading un-annotated parameter without a default is
    a tensor of any shape and dtype. As PyPTO's kernel module of that form does, such a
    kernel is looked up by its tensors' dtype, format and shape alone: a later call with the
    same tensors and other non-tensor values (or none, taking the defaults) runs the kernel
    traced with the first values. Annotated kernels behave exactly as under
    ``@pypto.frontend.jit``. ``infer_controlflow_shape`` (PyPTO's callable naming the input
    shapes whose control-flow caches to build ahead on the board) is accepted and kept as the
    kernel's attribute of that name; the simulator has no such cache to fill."""
    infer = options.pop("infer_controlflow_shape", None)
    if infer is not None and not callable(infer):
        raise PyptoTypeError(
            f"jit: infer_controlflow_shape must be callable, got {short_repr(infer)}")

    def decorate(f: Callable) -> Any:
        jit(**options)  # the same keyword checks as @pypto.frontend.jit
        if inspect.isfunction(f) and any(p.kind is p.VAR_POSITIONAL for p in
                                         inspect.signature(f).parameters.values()):
            return _VarArgsKernel(f, infer, options)
        kernel = JitKernel(f, untyped_tensors=True, **options)
        kernel.infer_controlflow_shape = infer
        return kernel

    if fn is None:
        return decorate
    return decorate(fn)


class _VarArgsKernel:
    """``@pypto.jit`` over ``def k(*args)`` (PyPTO's older ``_JIT`` calls its function with
    whatever it is given): each call's count of positional arguments gets a kernel of its own
    whose ``*args`` is spelled as that many un-annotated parameters (``args_0``, ...), so
    the leading tensors are its tensors and trailing non-tensors its other values.

    Example::

        @pypto.jit
        def add(*args):
            args[2][:] = args[0] + args[1]
        add(a, b, c)   # traced as add(args_0, args_1, args_2)
    """

    def __init__(self, fn: Callable, infer: Optional[Callable], options: Dict[str, Any]):
        self.fn = fn
        self.infer_controlflow_shape = infer
        self._options = options
        self._by_arity: Dict[int, JitKernel] = {}
        self._last: Optional[JitKernel] = None
        functools.update_wrapper(self, fn)

    def kernel_for(self, n: int) -> JitKernel:
        """The kernel of n positional arguments (made on first use)."""
        kernel = self._by_arity.get(n)
        if kernel is None:
            sig = inspect.signature(self.fn)
            fixed = [p for p in sig.parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            var = next(p for p in sig.parameters.values() if p.kind is p.VAR_POSITIONAL)
            if n < len(fixed):
                raise PyptoTypeError(
                    f"kernel '{self.fn.__name__}' takes at least {len(fixed)} positional "
                    f"argument(s) before *{var.name}, got {n}")
            extra = [inspect.Parameter(f"{var.name}_{i}", inspect.Parameter.POSITIONAL_ONLY
                                       if all(p.kind is p.POSITIONAL_ONLY for p in fixed)
                                       else inspect.Parameter.POSITIONAL_OR_KEYWORD)
                     for i in range(n - len(fixed))]
            rest = [p for p in sig.parameters.values()
                    if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
            # The same code and globals: only the signature the jit reads is fixed.
            f = types.FunctionType(self.fn.__code__, self.fn.__globals__, self.fn.__name__,
                                   self.fn.__defaults__, self.fn.__closure__)
            f.__kwdefaults__ = self.fn.__kwdefaults__
            f.__qualname__, f.__module__ = self.fn.__qualname__, self.fn.__module__
            f.__signature__ = sig.replace(parameters=fixed + extra + rest)
            kernel = JitKernel(f, untyped_tensors=True, **self._options)
            kernel.infer_controlflow_shape = self.infer_controlflow_shape
            self._by_arity[n] = kernel
        return kernel

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._last = self.kernel_for(len(args))
        return self._last(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # compile_count, last_report, function, cache ...: those of the last call's kernel.
        last = self.__dict__.get("_last")
        if last is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(last, name)
