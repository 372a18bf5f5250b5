# SPDX-License-Identifier: Apache-2.0
"""The seam between the frontend and whatever compiles and executes a traced kernel.

Flow of one jit call (see ``_jit``)::

    kernel_ir = trace(...)                               # pypto.ir.Kernel, cached
    compiled  = compile(kernel_ir, options)              # cached with it
    report    = get_backend(run_mode).run(compiled, tensors, bindings, options)

* :func:`compile` is backend-independent: it calls the C++ compiler,
  ``pypto._C.compile(kernel_ir.to_dict(), options)`` (see IR.md); only when the native module
  is hidden (frontend-only tests) does it return the IR itself.
* A :class:`Backend` executes a compiled kernel on the caller's torch tensors in place.
  Backends live in a registry keyed by run mode: :func:`register_backend`,
  :func:`get_backend`, and :func:`use_backend` (a context manager that temporarily replaces
  one, e.g. in tests or to plug in an experimental executor).
* :class:`DeviceBackend` is the hardware path on an explicitly chosen torch device: the same
  compiled tasks, the same runtime (``pypto._C.run_device``: real schedule threads and core
  streams driving the scheduler in wall-clock time), and a board-format recording. It is
  never chosen silently: ``with pypto.use_backend(pypto.RunMode.NPU,
  pypto.backends.DeviceBackend("cpu")):`` selects it.
"""

from __future__ import annotations

import abc
import atexit
import contextlib
import importlib
import logging
import os
import sys
from typing import Any, Dict, Iterator, List, Mapping, Optional

from . import ir
from ._enums import RunMode
from ._errors import PyptoNotImplementedError, PyptoRuntimeError, PyptoValueError
from ._report import Report

__all__ = ["Backend", "SimBackend", "NpuBackend", "DeviceBackend", "compile", "register_backend", "get_backend",
           "use_backend", "registered_backends"]


class Backend(abc.ABC):
    """Executes compiled kernels for one run mode.

    Contract: the jit wrapper calls :meth:`run` once per kernel call, after validation, with
    the object :func:`compile` returned for this specialization (shared by every call of
    it: do not mutate it). ``tensors`` are the torch tensors in kernel-parameter order
    (inputs and outputs alike; outputs are written in place). ``bindings`` maps each dynamic
    dimension symbol of the IR (``Kernel.symbols``) to its size in this call. ``options``
    holds the resolved option dicts (``{"runtime_options": {...}, "host_options": {...},
    ...}``, defaults filled). The return value (a report object or None) becomes the
    wrapper's ``last_report``.
    """

    #: Registry name, also used in messages.
    name: str = ""

    @abc.abstractmethod
    def run(self, compiled: Any, tensors: List[Any], bindings: Mapping[str, int],
            options: Mapping[str, Mapping[str, Any]]) -> Any:
        """Runs one kernel call; see the class contract."""


_native_module: List[Any] = []  # pypto._C once imported: a call looks it up in a list


def _native() -> Optional[Any]:
    """The compiled extension ``pypto._C``, or None when it is not built."""
    if _native_module:
        return _native_module[0]
    try:
        module = importlib.import_module("pypto._C")
    except ImportError:
        return None
    _native_module.append(module)
    return module


def _native_entry(module: Any, entry: str, what: str) -> Any:
    fn = getattr(module, entry, None)
    if fn is None:
        raise PyptoNotImplementedError(
            f"{what} needs pypto._C.{entry}, which this build of pypto._C does not provide; "
            "rebuild it with tools/setup.sh")
    return fn


class SimBackend(Backend):
    """run_mode=SIM: executes on the simulator in ``pypto._C`` (numbers and a timing report).

    A kernel's first SIM call (the one that compiled it) returns when its report folder is
    written, so that tools reading ``./output`` right after it (PyPTO's cost-model example)
    find it. Later calls of the same compiled kernel return once their outputs are computed;
    the timing run and the report folder follow on the report worker, one call at a time in
    call order (the L2 kept across calls evolves as if every call waited), and the returned
    report is pending (see :class:`pypto.Report`). ``PYPTO_SIM_REPORTS=wait`` in the
    environment (read at each call) makes every call wait; ``pypto.sim.wait_reports()``
    waits for all pending reports, as the interpreter does at exit.
    """

    name = "sim"

    def run(self, compiled, tensors, bindings, options):
        check_environment()
        native = _native()
        if native is None:
            raise PyptoNotImplementedError(
                "SIM execution needs the compiled pypto._C module; build it with tools/setup.sh")
        run_sim = _native_entry(native, "run_sim", "SIM execution")
        submit = getattr(native, "submit_sim", None)
        # The launch's runtime lines ("Recommended: set max_workspace_kb ...", "[workspaceSize]
        # ...") are PyPTO's encode-time log: it prints them once per compiled kernel, so they
        # go to the "pypto" logger on a kernel's first call only (every report keeps its own).
        first = getattr(compiled, "sim_calls", 0) == 0
        if submit is None or first or _reports_wait():
            raw = run_sim(compiled, tensors, dict(bindings), _plain(options))
            if first:
                _log(raw["log"])
            return Report(path=raw["path"], stats=raw["stats"], log=list(raw["log"]),
                          tasks=int(raw["tasks"]), tile_ops=int(raw["tile_ops"]))
        pending = submit(compiled, tensors, dict(bindings), _plain(options))
        return Report(path=pending.path, log=list(pending.log), tasks=int(pending.tasks),
                      tile_ops=int(pending.tile_ops), pending=pending)


_sim_prepared = False


def prepare_sim() -> None:
    """Does a SIM call's one-time native setup (the report worker's thread, the chip config)
    when the first SIM kernel is declared, so that its first call costs what a later compile
    does. A bad $PYPTO_SIM_CHIP is left for the call to raise."""
    global _sim_prepared
    native = _native()
    prepare = getattr(native, "prepare_sim", None)
    if _sim_prepared or prepare is None:
        return
    _sim_prepared = True
    try:
        prepare()
    except PyptoValueError:
        pass  # every SIM call loads the chip again and raises this, naming the variable


_REPORTS_ENV = "PYPTO_SIM_REPORTS"
_REPORTS_VALUES = ("background", "wait")

#: The environment variables of the simulator (with their values' rule where there is one).
#: A variable of its prefixes that is none of them is a typo, refused with the nearest name
#: rather than silently ignored.
_ENV_VALUES = {"PYPTO_SIM_L2": ("cold", "warm"), _REPORTS_ENV: _REPORTS_VALUES}
_ENV_NAMES = ("PYPTO_SIM_CHIP", "PYPTO_SIM_L2", _REPORTS_ENV, "PYPTO_SIM_PYTHON", "PYPTO_SIM_CLI",
              "PYPTO_SIM_PROGRESS_DELAY_MS", "PYPTO_OUTPUT_DIR", "PYPTO_CONFIG_DIR")
_ENV_PREFIXES = ("PYPTO_SIM", "PYPTO_OUTPUT", "PYPTO_CONFIG")


#: The environment last found valid, as os.environ's encoded mapping (CPython's
#: ``os.environ._data``): a call in the same environment compares it (one dict compare in C)
#: instead of decoding and checking every variable again.
_env_checked: List[Optional[dict]] = [None]


def check_environment() -> None:
    """Checks the simulator's environment variables at each SIM call: an unknown name of
    their prefixes (PYPTO_SIM_L22) or a value outside its set (PYPTO_SIM_L2=colt) raises
    PyptoValueError naming the variable, the value and what is expected."""
    data = getattr(os.environ, "_data", None)
    if data is not None and data == _env_checked[0]:
        return
    import difflib
    for name, value in os.environ.items():
        if name.startswith(_ENV_PREFIXES) and name not in _ENV_NAMES:
            near = difflib.get_close_matches(name, _ENV_NAMES, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise PyptoValueError(f"environment variable {name}={value!r} is not one pypto-sim "
                                  f"reads{hint} (it reads {', '.join(_ENV_NAMES)})")
        if name == "PYPTO_SIM_PROGRESS_DELAY_MS" and value and not (
                value.isdigit() and len(value) <= 7 and int(value) <= 3_600_000):
            raise PyptoValueError(f"environment variable {name}={value[:60]!r}: expected a "
                                  "whole number of milliseconds in [0, 3600000] (or unset)")
        allowed = _ENV_VALUES.get(name)
        if allowed is not None and value and value not in allowed:
            raise PyptoValueError(f"environment variable {name}={value!r}: expected one of "
                                  f"{', '.join(allowed)} (or unset)")
    if isinstance(data, dict):
        _env_checked[0] = dict(data)


def _reports_wait() -> bool:
    value = os.environ.get(_REPORTS_ENV, "") or "background"
    if value not in _REPORTS_VALUES:
        raise PyptoValueError(
            f"environment variable {_REPORTS_ENV}={value!r}: expected one of "
            f"{', '.join(_REPORTS_VALUES)} (background: a cached SIM call's report is "
            "written in the background; wait: every SIM call waits for its report)")
    return value == "wait"


def wait_reports() -> None:
    """Waits until every pending SIM report is written (Ctrl-C while waiting cancels them);
    raises PyptoRuntimeError naming each report that failed and that no one waited for."""
    native = _native()
    if native is None or getattr(native, "wait_sims", None) is None:
        return
    native.wait_sims()
    failures = list(native.sim_failures())
    if failures:
        raise PyptoRuntimeError("SIM report(s) not written: " + "; ".join(failures))


def _wait_reports_at_exit() -> None:
    try:
        wait_reports()
    except KeyboardInterrupt:
        sys.stderr.write("pypto: interrupted at exit; pending SIM reports were not written\n")
    except PyptoRuntimeError as e:
        sys.stderr.write(f"pypto: {e}\n")


atexit.register(_wait_reports_at_exit)


def _log(lines) -> None:
    log = logging.getLogger("pypto")
    for line in lines:
        # The compiler marks what breaks a documented PyPTO limit but still runs.
        if line.startswith("warning: "):
            log.warning("%s", line[len("warning: "):])
        else:
            log.info("%s", line)


class DeviceBackend(Backend):
    """run_mode=NPU on an explicit torch device: the hardware backend.

    The kernel's tasks are instantiated and stitched as in SIM and dispatched by the same
    device runtime and policy, through its wall-clock implementation: the control-flow and
    schedule AICPU threads are host threads, each core a device stream executing its tasks
    in order with running and pending slots. ``kernel.last_report`` holds what was measured
    (``makespan_ns`` on the host's steady clock) and the recording in PyPTO's board format
    (``topo_path``, ``prof_path``; ``pypto-sim run topo.json --prof
    tilefwk_L1_prof_data.json`` replays it).

    ``device``: a torch device type. ``executor``: ``"tile"`` (the default on ``"cpu"``)
    executes each task's tile ops with the tile executor SIM uses, on the caller's tensors in
    host memory, so results equal SIM's bit for bit; ``"aten"`` (the default elsewhere; needs
    a build with libtorch) runs each tile instruction as one ATen op on views of the caller's
    tensors and of a workspace allocated on their device, so numbers are torch's. Tensors on
    another device than the backend's are rejected, naming both.

    Example::

        with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu")):
            kernel(x, y)                      # run_mode=NPU kernels run on the host
        print(kernel.last_report.makespan_ns, kernel.last_report.topo_path)
    """

    name = "device"

    def __init__(self, device: str = "cpu", executor: Optional[str] = None):
        kind = str(device).split(":")[0]
        if kind not in ("cpu", "cuda", "npu"):
            raise PyptoValueError(f"DeviceBackend: device {device!r} is not a torch device this "
                                  "backend knows; expected 'cpu', 'cuda' or 'npu'")
        if executor is not None and executor not in ("tile", "aten"):
            raise PyptoValueError(f"DeviceBackend: executor {executor!r}; expected 'tile' or "
                                  "'aten'")
        self.device = kind
        self.executor = executor or ("tile" if kind == "cpu" else "aten")

    def __repr__(self) -> str:
        return f"DeviceBackend({self.device!r}, executor={self.executor!r})"

    def run(self, compiled, tensors, bindings, options):
        for i, t in enumerate(tensors):
            dev = getattr(t, "device", None)
            if dev is not None and getattr(dev, "type", None) != self.device:
                raise PyptoValueError(
                    f"DeviceBackend({self.device!r}): tensor argument {i} is on device '{dev}', "
                    f"which this backend cannot use; pass tensors on '{self.device}'")
        native = _native()
        if native is None:
            raise PyptoNotImplementedError(
                "device execution needs the compiled pypto._C module; build it with "
                "tools/setup.sh")
        run_device = _native_entry(native, "run_device", "device execution")
        supported = getattr(native, "device_supported", lambda d: d == "cpu")
        executors = getattr(native, "device_executors", lambda: ["tile"])()
        if self.executor not in executors:
            raise PyptoNotImplementedError(
                f"{self!r}: this build of pypto._C has no {self.executor} executor (it has "
                f"{', '.join(executors)}); the ATen executor needs libtorch (Debian's "
                "libtorch-dev) when building: rebuild with tools/setup.sh")
        if not supported(self.device):
            raise PyptoNotImplementedError(
                f"{self!r}: executing tasks as {self.device} operations needs the ATen "
                f"executor on a torch that has the {self.device} device, which this process "
                f"lacks (ATen here cannot allocate a tensor on '{self.device}'"
                + ("; import torch_npu first, with pypto._C built against the torch it "
                   "extends" if self.device == "npu" else
                   "; that needs a CUDA build of torch" if self.device == "cuda" else "")
                + "); use runtime_options={'run_mode': pypto.RunMode.SIM} to run on the "
                "simulator")
        raw = run_device(compiled, tensors, dict(bindings), _plain(options), self.device,
                         self.executor)
        log = logging.getLogger("pypto")
        for line in raw["log"]:
            log.info("%s", line)
        return Report(path=raw["path"], stats=raw["stats"], log=list(raw["log"]),
                      tasks=int(raw["tasks"]), tile_ops=int(raw["tile_ops"]),
                      backend=f"device:{self.device}:{self.executor}", prof_path=raw["prof_path"],
                      topo_path=raw["topo_path"], dyn_topo_path=raw["dyn_topo_path"])


# How to build the ATen executor against a torch other than Debian's (docs/hardware.md); the
# NPU messages say it.
_REBUILD_AGAINST_TORCH = ("tools/setup.sh builds against Debian's libtorch; for another torch "
                          "configure with cmake -S . -B build -DCMAKE_PREFIX_PATH=<that torch's "
                          "folder> and build, see README 'Running on hardware'")


class NpuBackend(Backend):
    """run_mode=NPU by default: an Ascend device through CANN and torch_npu.

    With them, the call runs as ``DeviceBackend("npu")``: the ATen executor runs each task's
    tile ops on torch_npu's device. Without CANN (``ASCEND_HOME_PATH``), ``torch_npu``, a
    visible NPU, or an ATen in this process that has the ``npu`` device, the first call fails
    with one message naming what is missing and suggesting SIM; it never falls back to
    another device (select :class:`DeviceBackend` explicitly for that).
    """

    name = "npu"

    def run(self, compiled, tensors, bindings, options):
        has_cann = bool(os.environ.get("ASCEND_HOME_PATH"))
        try:
            torch_npu = importlib.import_module("torch_npu")
        except ImportError:
            torch_npu = None
        if not has_cann or torch_npu is None:
            missing = " and ".join(m for m, ok in (("CANN (ASCEND_HOME_PATH)", has_cann),
                                                   ("torch_npu", torch_npu is not None))
                                   if not ok)
            raise PyptoRuntimeError(
                "run_mode=NPU needs CANN (ASCEND_HOME_PATH) and torch_npu; missing: "
                f"{missing}; use runtime_options={{'run_mode': pypto.RunMode.SIM}}, or select "
                "a device explicitly: pypto.use_backend(pypto.RunMode.NPU, "
                "pypto.backends.DeviceBackend('cpu'))")
        npu = getattr(torch_npu, "npu", None)
        try:
            count = int(npu.device_count()) if npu is not None else 0
        except Exception:  # a driver error is "no device" to the user
            count = 0
        if count == 0:
            raise PyptoRuntimeError(
                "run_mode=NPU: CANN and torch_npu are present but no NPU device is visible "
                "(torch_npu.npu.device_count() == 0); use "
                "runtime_options={'run_mode': pypto.RunMode.SIM}")
        native = _native()
        if native is None:
            raise PyptoNotImplementedError(
                "NPU execution needs the compiled pypto._C module; build it with tools/setup.sh")
        supported = getattr(native, "device_supported", None)
        executors = getattr(native, "device_executors", lambda: ["tile"])()
        if getattr(native, "run_device", None) is None or supported is None or \
                "aten" not in executors:
            raise PyptoNotImplementedError(
                "run_mode=NPU: this build of pypto._C has no ATen executor (it was built "
                "without libtorch), which is what runs tile ops on the NPU; rebuild it "
                f"against the torch that torch_npu extends ({_REBUILD_AGAINST_TORCH}), or use "
                "runtime_options={'run_mode': pypto.RunMode.SIM} to run on the simulator")
        if not supported("npu"):
            raise PyptoNotImplementedError(
                "run_mode=NPU: ATen in this process has no 'npu' device: torch_npu is "
                "imported, but the libtorch pypto._C was built against does not have the "
                "device torch_npu registered (pypto._C links a different torch than the one "
                "torch_npu extends); rebuild pypto._C against that torch "
                f"({_REBUILD_AGAINST_TORCH}), or use "
                "runtime_options={'run_mode': pypto.RunMode.SIM} to run on the simulator")
        return DeviceBackend("npu").run(compiled, tensors, bindings, options)


def _plain(options: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {g: dict(v) for g, v in options.items()}


def compile(kernel_ir: ir.Kernel, options: Mapping[str, Mapping[str, Any]]) -> Any:  # noqa: A001
    """Compiles a traced kernel; the result is cached per specialization and passed to
    :meth:`Backend.run`.

    Contract: called once per new specialization (never per call), from the jit wrapper, on
    the calling thread. When ``pypto._C`` provides ``compile``, it receives
    ``kernel_ir.to_dict()`` and the option dicts and its result is returned. Otherwise the IR
    itself is returned, so a backend can still inspect what it would run.
    """
    native = _native()
    fn = getattr(native, "compile", None) if native is not None else None
    if fn is None:
        return kernel_ir
    return fn(kernel_ir.to_dict(), _plain(options))


_REGISTRY: Dict[RunMode, Backend] = {}


def register_backend(run_mode: RunMode, backend: Backend, *, replace: bool = False) -> None:
    """Registers ``backend`` for ``run_mode``. A second registration for the same mode raises
    unless ``replace=True``."""
    if not isinstance(backend, Backend):
        raise PyptoValueError(f"register_backend: {backend!r} is not a pypto Backend")
    mode = RunMode(run_mode)
    if mode in _REGISTRY and not replace:
        raise PyptoValueError(
            f"register_backend: run mode {mode.name} already has backend "
            f"'{_REGISTRY[mode].name}'; pass replace=True to replace it")
    _REGISTRY[mode] = backend


def get_backend(run_mode: RunMode) -> Backend:
    """The backend registered for ``run_mode``."""
    try:
        mode = RunMode(run_mode)
    except ValueError:
        raise PyptoValueError(f"invalid run mode {run_mode!r}; expected RunMode.NPU or "
                              "RunMode.SIM") from None
    backend = _REGISTRY.get(mode)
    if backend is None:
        raise PyptoRuntimeError(f"no backend registered for run mode {mode.name}")
    return backend


def registered_backends() -> Dict[str, str]:
    """Run mode name -> backend name."""
    return {m.name: b.name for m, b in sorted(_REGISTRY.items())}


@contextlib.contextmanager
def use_backend(run_mode: RunMode, backend: Backend) -> Iterator[Backend]:
    """Temporarily replaces the backend of ``run_mode`` (restored on exit).

    Example: ``with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu")):``
    """
    mode = RunMode(run_mode)
    previous = _REGISTRY.get(mode)
    register_backend(mode, backend, replace=True)
    try:
        yield backend
    finally:
        if previous is None:
            _REGISTRY.pop(mode, None)
        else:
            _REGISTRY[mode] = previous


def _register_builtin() -> None:
    register_backend(RunMode.SIM, SimBackend())
    register_backend(RunMode.NPU, NpuBackend())


_register_builtin()
