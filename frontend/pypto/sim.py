# SPDX-License-Identifier: Apache-2.0
"""What the simulator behind ``run_mode=SIM`` offers.

Example::

    import pypto.sim
    pypto.sim.policies()   # ['fifo', 'l2_affinity', 'fair', 'l2_fair'] (device_sched_mode 0..3)
    pypto.sim.chips()      # ['950dt', '950pr', 'a2', 'a3']; choose one with PYPTO_SIM_CHIP
"""

from typing import List

from ._backend import _native
from ._errors import PyptoNotImplementedError

__all__ = ["policies", "chips"]


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
