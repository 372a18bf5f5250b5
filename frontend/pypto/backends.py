# SPDX-License-Identifier: Apache-2.0
"""The backends a kernel call can run on, for explicit selection.

``SimBackend`` (run_mode=SIM, the simulator), ``NpuBackend`` (run_mode=NPU's default: an
Ascend device through CANN and torch_npu) and ``DeviceBackend(device)`` (the hardware
backend on an explicitly chosen torch device). Select one for a run mode with
:func:`use_backend`::

    with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu")):
        kernel(x, y)
"""

from ._backend import (Backend, DeviceBackend, NpuBackend, SimBackend, get_backend,
                       register_backend, registered_backends, use_backend)

__all__ = ["Backend", "DeviceBackend", "NpuBackend", "SimBackend", "get_backend",
           "register_backend", "registered_backends", "use_backend"]
