# SPDX-License-Identifier: Apache-2.0
"""Which devices the ATen executor tests run on (shared by test_device_backend.py and
test_device_aten.py): the cpu always, cuda and npu only where torch sees such a device, each
marked so that a run can select them (-m cuda, -m npu)."""

import pytest
import torch


def has_aten() -> bool:
    import pypto._C as native
    return "aten" in native.device_executors()


def aten_devices():
    devs = ["cpu"]
    if torch.cuda.is_available():
        devs.append(pytest.param("cuda", marks=pytest.mark.cuda))
    try:
        import torch_npu  # noqa: F401
        if torch.npu.is_available():
            devs.append(pytest.param("npu", marks=pytest.mark.npu))
    except Exception:  # no torch_npu, or a driver that fails: no npu cases
        pass
    return devs
