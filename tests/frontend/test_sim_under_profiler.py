# SPDX-License-Identifier: Apache-2.0
"""A kernel traced while a profiler runs: for a kernel that rebinds a tensor parameter the trace
reads the kernel's final locals through a profile hook of its own, so it must coexist with cProfile (a C profiler whose
``sys.getprofile()`` object is not callable) and with a Python profile function, compute the
right numbers, and leave the profiler installed and counting."""

import cProfile
import pstats
import sys

import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


def _kernel():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 1], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        a = pypto.reshape(a, [1, 8], inplace=True)  # a rebound parameter: final locals read
        out[:] = a * 2.0

    return k


def _after_the_kernel():
    return 1


def test_kernel_traced_under_cprofile():
    k = _kernel()
    a, out = torch.randn(8, 1), torch.zeros(1, 8)
    prof = cProfile.Profile()
    prof.enable()
    try:
        k(a, out)
        still_installed = sys.getprofile() is prof
        _after_the_kernel()
    finally:
        prof.disable()
    torch.testing.assert_close(out, a.reshape(1, 8) * 2.0, rtol=0, atol=0)
    assert still_installed
    names = {fn for (_, _, fn) in pstats.Stats(prof).stats}
    assert "_after_the_kernel" in names  # counted after the trace gave the profiler back


def test_kernel_traced_under_a_python_profile_function():
    k = _kernel()
    a, out = torch.randn(8, 1), torch.zeros(1, 8)
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        k(a, out)
        still_installed = sys.getprofile() is profile
        _after_the_kernel()
    finally:
        sys.setprofile(None)
    torch.testing.assert_close(out, a.reshape(1, 8) * 2.0, rtol=0, atol=0)
    assert still_installed
    assert "k" in seen  # the kernel body's frame, seen through the chained hook
    assert "_after_the_kernel" in seen
