# SPDX-License-Identifier: Apache-2.0
"""``pypto.runtime``: the device entry points of PyPTO's older eager form (:mod:`pypto._eager`).

In pypto-sim there is no device to open or close: ``_device_init`` and ``_device_fini`` only
mark the session (PyPTO's ``DeviceInit``/``DeviceFini``), and a run goes to the backend of the
run mode in force (the simulator without CANN), synchronously.

Example::

    pypto.runtime._device_init()
    with pypto.function("MAIN", a, b):
        b.move(pypto.add(a, a))
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x), pypto.from_torch(y))
    pypto.runtime._device_fini()
"""

from __future__ import annotations

from typing import Any

from . import _eager
from ._verify import verify

__all__ = ["_device_init", "_device_fini", "_device_run_once_data_from_host",
           "_device_synchronize", "verify"]

#: True between ``_device_init()`` and ``_device_fini()`` (PyPTO's device session).
initialized = False


def _device_init() -> None:
    """Opens the device session (nothing to open in pypto-sim)."""
    global initialized
    initialized = True


def _device_fini() -> None:
    """Closes the device session."""
    global initialized
    initialized = False


def _device_run_once_data_from_host(*tensors: Any) -> Any:
    """Runs the function the last ``pypto.function`` block recorded on ``tensors``
    (``pypto.from_torch`` results, one per parameter in the block's order), in place, and
    returns the backend's report (pypto-sim's run report under the simulator)."""
    return _eager.run_once(tensors)


def _device_synchronize() -> None:
    """Waits for the device's queued work: runs are synchronous here, so nothing waits."""
