# SPDX-License-Identifier: Apache-2.0
"""What the simulator behind ``run_mode=SIM`` offers.

Example::

    import pypto.sim
    pypto.sim.policies()   # ['fifo', 'l2_affinity', 'fair', 'l2_fair', ...] (modes 0..3 first)
    pypto.sim.policy_info("random")   # description and declared parameters
    pypto.sim.set_policy_params("random", seed=3)   # SIM calls under "random" use seed 3
    with pypto.sim.policy_params("critical_path", unit_cost=True): kernel(x, y)
    pypto.sim.chips()      # ['950dt', '950pr', 'a2', 'a3']; choose one with PYPTO_SIM_CHIP
    pypto.sim.reset_l2()   # the next SIM call starts with a cold L2
    pypto.sim.set_l2_warm(False)   # every SIM call cold (also: PYPTO_SIM_L2=cold)
    pypto.sim.wait_reports()       # every pending report folder written (also done at exit)

L2 across calls: as consecutive kernels on a device share the L2, a SIM call starts from the
L2 contents the previous SIM call of this process left on the same chip. Lines are keyed by
address, and SIM tensors sit at their host addresses: a tensor passed again (same storage)
hits where it is still resident; a new tensor the allocator placed where an old one was is
taken as the same data. Output a call leaves dirty in L2 is written back (and charged) when
a later call evicts it; each call's stats.json reports it as ``hbm.pending_writeback_bytes``
and says whether it started warm (``l2.warm_start``).

Reports in the background: a kernel's first SIM call returns with its report folder
written; a later call of the same compiled kernel (a compile-cache hit) returns once its
outputs are computed, and its timing run and report folder follow on one background thread,
in call order, so the results are those every call waiting would give. ``kernel.last_report``
waits where it needs them; ``wait_reports()`` waits for all (the interpreter does at exit);
``PYPTO_SIM_REPORTS=wait`` makes every call wait. A pending call keeps its instantiated
launch in memory until it is timed, so the queue is bounded (``set_report_queue_limits``):
a call that finds it full waits for room.
"""

import contextlib
import math
import numbers
import os
from typing import Any, Dict, Iterator, List, Optional

from ._backend import _native, wait_reports
from ._errors import PyptoNotImplementedError, PyptoTypeError, PyptoValueError
from .error import short_repr

from . import _C as _native_module

__all__ = ["policies", "policy_info", "set_policy_params", "get_policy_params", "policy_params",
           "Policy", "CoreType", "AicpuOp", "PublishPoint", "NO_CORE", "NO_THREAD",
           "register_policy", "unregister_policy", "registered_policy", "replay",
           "chips", "reset_l2", "set_l2_warm", "l2_warm", "wait_reports",
           "set_report_queue_limits", "report_queue_limits"]

# Scheduling policies in Python (the C++ interface sched/include/pypto/sched/policy.h, one
# method per hook; a subclass overrides any of them, the rest stay C++'s fifo defaults).
Policy = _native_module.Policy
CoreType = _native_module.CoreType
AicpuOp = _native_module.AicpuOp
PublishPoint = _native_module.PublishPoint
NO_CORE = _native_module.NO_CORE
NO_THREAD = _native_module.NO_THREAD


def _c():
    native = _native()
    if native is None:
        raise PyptoNotImplementedError(
            "pypto.sim needs the compiled pypto._C module; build it with tools/setup.sh")
    return native


def _need(func: str, arg: str, value: Any, types: Any, what: str) -> None:
    """A TypeError naming the function, the argument and what it takes, instead of the
    native layer's listing of signatures."""
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        raise PyptoTypeError(f"pypto.sim.{func}: {arg} must be {what}, got "
                             f"{type(value).__name__} {short_repr(value)}")


def _need_name(func: str, name: Any) -> None:
    _need(func, "the policy name", name, str, "a str (pypto.sim.policies() lists them)")


def _need_params(func: str, params: Any) -> None:
    _need(func, "params", params, dict, "a dict of parameter name: value")


def policies() -> List[str]:
    """Registered scheduling policies, the built-ins first in device_sched_mode order.

    Choose one for a kernel with ``runtime_options={"device_sched_mode": NAME}`` (or PyPTO's
    mode numbers 0..3)."""
    return list(_c().policies())


def policy_info(name: Optional[str] = None) -> Any:
    """A policy's description and declared parameters (name, type, default, min, max, doc),
    as a dict; without a name, the list of every policy's."""
    rows = list(_c().policy_info())
    if name is None:
        return rows
    _need_name("policy_info", name)
    for r in rows:
        if r["name"] == name:
            return r
    _c().policy_params(name)  # raises with the known names and a suggestion
    raise AssertionError(name)


def set_policy_params(name: str, **params: Any) -> None:
    """Sets the parameters that later SIM calls under policy ``name`` use (replacing earlier
    ones; none: the defaults). Unknown names, parameters and values out of range raise
    ValueError with a suggestion, as ``pypto-sim --policy-param`` does; a value of another
    type than the parameter's (a str, a bool for an int) raises TypeError."""
    _need_name("set_policy_params", name)
    _c().set_policy_params(name, params)


def get_policy_params(name: str) -> Dict[str, Any]:
    """Every declared parameter of policy ``name`` with the value SIM calls use now."""
    _need_name("get_policy_params", name)
    return dict(_c().policy_params(name))


@contextlib.contextmanager
def policy_params(name: str, **params: Any) -> Iterator[None]:
    """``with pypto.sim.policy_params("random", seed=3):`` sets the parameters for the block
    and restores the previous ones after it."""
    _need_name("policy_params", name)
    c = _c()
    before = dict(c.policy_params(name))
    defaults = {p["name"]: p["default"] for p in policy_info(name)["params"]}
    c.set_policy_params(name, params)
    try:
        yield
    finally:
        c.set_policy_params(name, {k: v for k, v in before.items() if defaults.get(k) != v})


def register_policy(name: str, cls: type, description: str = "",
                    params: Optional[Dict[str, Dict[str, Any]]] = None) -> None:
    """Registers ``cls`` (a ``pypto.sim.Policy`` subclass) as policy ``name``: every SIM call
    or replay under that name makes one instance. ``params`` declares its parameters,
    ``{"alpha": {"type": "float", "default": 0.5, "min": 0.0, "max": 1.0, "doc": "..."}}``;
    the instance finds their values in ``self.params`` (set with set_policy_params).
    Names are identifiers (a policy's may also hold '.' and '-'); each declaration is checked
    (type, a finite default within [min, max], ints within +-2**53) before anything is
    registered."""
    _need_name("register_policy", name)
    _need("register_policy", "description", description, str, "a str")
    if not isinstance(cls, type):
        raise PyptoTypeError(f"pypto.sim.register_policy('{name}'): cls must be a subclass of "
                             f"pypto.sim.Policy, got {type(cls).__name__} {short_repr(cls)}")
    if params is not None:
        _need(f"register_policy('{name}')", "params", params, dict,
              "a dict of parameter name: {type, default, min, max, doc}")
    rows = [_declaration(name, k, p) for k, p in (params or {}).items()]
    _native_module.register_policy(name, cls, description or (cls.__doc__ or "").strip()
                                   .split("\n")[0], rows)


_DECL_KEYS = ("type", "default", "min", "max", "doc")
_MAX_EXACT_INT = 2 ** 53  # every int up to it is a double, as the registry keeps values


def _declaration(policy: str, name: Any, decl: Any) -> Dict[str, Any]:
    """One parameter declaration of register_policy, checked: a row for the native layer."""
    where = f"pypto.sim.register_policy('{policy}'): params[{short_repr(name)}]"
    if not isinstance(name, str) or not name.isidentifier():
        raise PyptoValueError(f"{where}: a parameter name is an identifier (letters, digits "
                              "and '_', not starting with a digit), as --policy-param KEY=VALUE "
                              "and the sweep's params need")
    if not isinstance(decl, dict):
        raise PyptoTypeError(f"{where}: expected a dict with the keys {', '.join(_DECL_KEYS)}, "
                             f"got {type(decl).__name__} {short_repr(decl)}")
    for k in decl:
        if k not in _DECL_KEYS:
            import difflib
            near = difflib.get_close_matches(str(k), _DECL_KEYS, n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise PyptoValueError(f"{where}: unknown key {short_repr(k)}{hint} (keys: "
                                  f"{', '.join(_DECL_KEYS)})")
    kind = decl.get("type", "float")
    if kind not in ("int", "float", "bool"):
        raise PyptoValueError(f"{where}['type']: {short_repr(kind)}; expected 'int', 'float' or "
                              "'bool'")
    if "default" not in decl:
        raise PyptoValueError(f"{where}: no 'default'; every parameter declares its default")
    row: Dict[str, Any] = {"name": name, "type": kind}
    for k in ("default", "min", "max"):
        if k not in decl:
            continue
        v = decl[k]
        at = f"{where}[{k!r}]"
        if kind == "bool":
            if k != "default":
                raise PyptoValueError(f"{at}: a bool parameter has no {k}")
            if not isinstance(v, bool):
                raise PyptoTypeError(f"{at}: expected a bool, got {type(v).__name__} "
                                     f"{short_repr(v)}")
            row[k] = float(v)
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise PyptoTypeError(f"{at}: expected {'an int' if kind == 'int' else 'a number'}, "
                                 f"got {type(v).__name__} {short_repr(v)}")
        if kind == "int" and not isinstance(v, numbers.Integral):
            raise PyptoTypeError(f"{at}: expected an int, got {type(v).__name__} {short_repr(v)}")
        if kind == "int" and abs(int(v)) > _MAX_EXACT_INT:
            raise PyptoValueError(f"{at}: {v} is outside +-2**53, where an int parameter's "
                                  "values must lie")
        if math.isnan(float(v)) or (k == "default" and not math.isfinite(float(v))):
            raise PyptoValueError(f"{at}: {v!r}; expected a finite number")
        row[k] = float(v)
    if "doc" in decl:
        if not isinstance(decl["doc"], str):
            raise PyptoTypeError(f"{where}['doc']: expected a str, got "
                                 f"{type(decl['doc']).__name__}")
        row["doc"] = decl["doc"]
    lo, hi = row.get("min", -math.inf), row.get("max", math.inf)
    if lo > hi:
        raise PyptoValueError(f"{where}: min {decl['min']!r} is above max {decl['max']!r}")
    if not lo <= row["default"] <= hi:
        raise PyptoValueError(f"{where}: default {decl['default']!r} is outside [min, max] = "
                              f"[{decl.get('min', '-inf')}, {decl.get('max', 'inf')}]")
    return row


def unregister_policy(name: str) -> bool:
    """Removes a policy registered with register_policy; False if there is none."""
    _need_name("unregister_policy", name)
    return bool(_native_module.unregister_policy(name))


@contextlib.contextmanager
def registered_policy(name: str, cls: type, description: str = "",
                      params: Optional[Dict[str, Dict[str, Any]]] = None) -> Iterator[None]:
    """``with pypto.sim.registered_policy("mine", Mine):`` registers for the block only."""
    register_policy(name, cls, description, params)
    try:
        yield
    finally:
        unregister_policy(name)


def replay(path: str, policy: Any = "fifo", chip: str = "a2", params: Optional[Dict[str, Any]] =
           None, **runtime_options: Any) -> Dict[str, Any]:
    """Replays a trace file on the chip model under ``policy`` (a name or mode 0..3) with the
    policy's ``params`` (default: those of set_policy_params) and further runtime options
    (as ``pypto-sim run --no-trace``); returns the stats.json dict."""
    _need("replay", "path", path, (str, os.PathLike), "a trace file path (str)")
    _need("replay", "policy", policy, (str, int), "a policy name or a mode number 0..3")
    _need("replay", "chip", chip, str, "a chip preset name (pypto.sim.chips())")
    if params is not None:
        _need_params("replay", params)
    path = os.fspath(path)
    rt = dict(runtime_options, device_sched_mode=policy)
    if params is None:  # those set with set_policy_params, as for SIM calls
        params = get_policy_params(policy) if isinstance(policy, str) else {}
    return _native_module.replay(path, chip, rt, params)


def chips() -> List[str]:
    """Chip presets the simulator can model (set ``PYPTO_SIM_CHIP`` to pick one)."""
    return list(_c().chips())


def reset_l2() -> None:
    """Forgets the L2 contents kept from earlier SIM calls: the next call starts cold."""
    _c().reset_l2()


def set_l2_warm(warm: bool) -> None:
    """Whether each SIM call starts from the L2 the previous call left (default True).

    ``False`` also forgets what is kept. ``PYPTO_SIM_L2=cold`` in the environment makes every
    call cold whatever this says."""
    if not isinstance(warm, bool):
        raise TypeError(f"pypto.sim.set_l2_warm: warm must be a bool; got {type(warm).__name__}")
    _c().set_l2_warm(warm)


def l2_warm() -> bool:
    """The setting of set_l2_warm() (PYPTO_SIM_L2=cold is not reflected)."""
    return bool(_c().l2_warm())


def set_report_queue_limits(runs: Optional[int] = None, tasks: Optional[int] = None) -> None:
    """Bounds the background reports: a cache-hit SIM call waits (Ctrl-C cancels, as in
    ``wait_reports``) while the calls whose timing runs are still pending number ``runs``, or
    hold ``tasks`` tasks together (defaults 4096 and 65,536, about 200 MiB: a pending call
    keeps ~3 KiB a task); a single larger call is taken when nothing is pending. ``None``
    keeps a bound as it is.

    Example: ``pypto.sim.set_report_queue_limits(runs=1)`` lets at most one report lag behind.
    """
    cur_runs, cur_tasks = _c().report_queue_limits()
    new = {"runs": cur_runs if runs is None else runs,
           "tasks": cur_tasks if tasks is None else tasks}
    for name, v in new.items():
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 2**63 - 1:
            raise PyptoValueError(f"pypto.sim.set_report_queue_limits: {name} must be an "
                                  f"integer in [1, 2**63 - 1]; got {v!r:.80}")
    _c().set_report_queue_limits(new["runs"], new["tasks"])


def report_queue_limits() -> Dict[str, int]:
    """The bounds of set_report_queue_limits(): ``{"runs": ..., "tasks": ...}``."""
    runs, tasks = _c().report_queue_limits()
    return {"runs": int(runs), "tasks": int(tasks)}
