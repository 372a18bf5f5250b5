# SPDX-License-Identifier: Apache-2.0
"""``pypto.platform``: the NPU architecture kernels branch on (``pypto.platform.npuarch``,
e.g. ``== 'DAV_3510'`` for the Ascend 950). Here it is the architecture of the chip SIM
models (PYPTO_SIM_CHIP: the 950 presets are DAV_3510, A2 and A3 DAV_2201)."""

from __future__ import annotations

import os
from typing import Optional

from ._errors import PyptoTypeError

#: PyPTO's architecture names of the chips pypto-sim models.
ARCH_950 = "DAV_3510"
ARCH_A2_A3 = "DAV_2201"


class _Platform:
    """The platform query; ``npuarch`` may be set (as PyPTO's tests do) to make kernels take
    another architecture's branches: that changes what it returns, not the chip SIM models."""

    def __init__(self) -> None:
        self._override: Optional[str] = None

    @property
    def npuarch(self) -> str:
        """The NPU architecture: the one set, else that of the chip SIM models."""
        if self._override is not None:
            return self._override
        from . import _backend

        native = _backend._native()
        if native is not None and hasattr(native, "sim_chip_name"):
            name = native.sim_chip_name()
        else:  # without the extension: the preset's name as PYPTO_SIM_CHIP gives it
            name = os.path.basename(os.environ.get("PYPTO_SIM_CHIP") or "a2")
        return ARCH_950 if name.startswith("950") else ARCH_A2_A3

    @npuarch.setter
    def npuarch(self, value: Optional[str]) -> None:
        if value is not None and not isinstance(value, str):
            raise PyptoTypeError(f"pypto.platform.npuarch must be a str, got {value!r}")
        self._override = value

    def __repr__(self) -> str:
        return f"pypto.platform(npuarch={self.npuarch!r})"


platform = _Platform()
