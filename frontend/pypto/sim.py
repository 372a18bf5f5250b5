# SPDX-License-Identifier: Apache-2.0
"""What the simulator behind ``run_mode=SIM`` offers.

Example::

    import pypto.sim
    pypto.sim.policies()   # ['fifo', 'l2_affinity', 'fair', 'l2_fair'] (device_sched_mode 0..3)
    pypto.sim.chips()      # ['950dt', '950pr', 'a2', 'a3']; choose one with PYPTO_SIM_CHIP
    pypto.sim.reset_l2()   # the next SIM call starts with a cold L2
    pypto.sim.set_l2_warm(False)   # every SIM call cold (also: PYPTO_SIM_L2=cold)

L2 across calls: as consecutive kernels on a device share the L2, a SIM call starts from the
L2 contents the previous SIM call of this process left on the same chip. Lines are keyed by
address, and SIM tensors sit at their host addresses: a tensor passed again (same storage)
hits where it is still resident; a new tensor the allocator placed where an old one was is
taken as the same data. Output a call leaves dirty in L2 is written back (and charged) when
a later call evicts it; each call's stats.json reports it as ``hbm.pending_writeback_bytes``
and says whether it started warm (``l2.warm_start``).
"""

from typing import List

from ._backend import _native
from ._errors import PyptoNotImplementedError

__all__ = ["policies", "chips", "reset_l2", "set_l2_warm", "l2_warm"]


def _c():
    native = _native()
    if native is None:
        raise PyptoNotImplementedError(
            "pypto.sim needs the compiled pypto._C module; build it with tools/setup.sh")
    return native


def policies() -> List[str]:
    """Registered scheduling policies, the built-ins first in device_sched_mode order."""
    return list(_c().policies())


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
