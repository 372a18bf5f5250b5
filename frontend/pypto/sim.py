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
from typing import Any, Dict, Iterator, List, Optional

from ._backend import _native, wait_reports
from ._errors import PyptoNotImplementedError, PyptoValueError

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
    for r in rows:
        if r["name"] == name:
            return r
    _c().policy_params(name)  # raises with the known names and a suggestion
    raise AssertionError(name)


def set_policy_params(name: str, **params: Any) -> None:
    """Sets the parameters that later SIM calls under policy ``name`` use (replacing earlier
    ones; none: the defaults). Unknown names, parameters and values out of range raise
    ValueError with a suggestion, as ``pypto-sim --policy-param`` does."""
    _c().set_policy_params(name, params)


def get_policy_params(name: str) -> Dict[str, Any]:
    """Every declared parameter of policy ``name`` with the value SIM calls use now."""
    return dict(_c().policy_params(name))


@contextlib.contextmanager
def policy_params(name: str, **params: Any) -> Iterator[None]:
    """``with pypto.sim.policy_params("random", seed=3):`` sets the parameters for the block
    and restores the previous ones after it."""
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
    the instance finds their values in ``self.params`` (set with set_policy_params)."""
    rows = [dict(p, name=k) for k, p in (params or {}).items()]
    _native_module.register_policy(name, cls, description or (cls.__doc__ or "").strip()
                                   .split("\n")[0], rows)


def unregister_policy(name: str) -> bool:
    """Removes a policy registered with register_policy; False if there is none."""
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
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise PyptoValueError(f"pypto.sim.set_report_queue_limits: {name} must be an "
                                  f"integer >= 1; got {v!r}")
    _c().set_report_queue_limits(new["runs"], new["tasks"])


def report_queue_limits() -> Dict[str, int]:
    """The bounds of set_report_queue_limits(): ``{"runs": ..., "tasks": ...}``."""
    runs, tasks = _c().report_queue_limits()
    return {"runs": int(runs), "tasks": int(tasks)}
