# SPDX-License-Identifier: Apache-2.0
"""A SIM kernel's one-time setup happens when it is declared, not in its first call: the
bytecode reading of its loops (loop-carried and live-out names) and the native setup (report
worker, chip config). So a first call costs what a later compile does (PyPTO's
test_kernel_recompile compares the two), and a bad $PYPTO_SIM_CHIP still fails the call."""

import dis
import importlib

import pytest
import torch

import pypto
from pypto import _backend, _source

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


def test_declaring_a_kernel_reads_its_loops_so_tracing_does_not(monkeypatch, recorder):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        off = 0
        for _ in pypto.loop(4):
            out[off:off + 2, :] = a[off:off + 2, :] + 1.0
            off += 2

    def no_bytecode_reading(*_a, **_k):
        raise AssertionError("the first trace read the kernel's bytecode again")

    monkeypatch.setattr(dis, "get_instructions", no_bytecode_reading)
    k(torch.randn(8, 8), torch.zeros(8, 8))
    assert len(recorder.calls) == 1
    assert k.function is not None  # traced


def test_one_reading_gives_the_same_loop_names_for_each_loop():
    def body(x, n):
        acc = 0
        for i in range(n):
            acc = acc + i
            tmp = x
        first = acc
        for j in range(n):
            x = x + j
        return first + x + tmp

    code = body.__code__
    heads = [ins.offset for ins in dis.get_instructions(code) if ins.opname == "FOR_ITER"]
    assert len(heads) == 2
    assert _source.loop_carried_names(code, heads[0]) == {"acc"}
    assert _source.loop_live_out_names(code, heads[0]) == {"acc", "tmp"}
    assert _source.loop_carried_names(code, heads[1]) == {"x"}
    assert _source.loop_live_out_names(code, heads[1]) == {"x"}  # carried.py drops carried ones
    assert _source.loop_carried_names(code, heads[1] + 2) == set()  # not a FOR_ITER


def test_a_bad_sim_chip_fails_the_call_not_the_declaration(monkeypatch):
    monkeypatch.setattr(_backend, "_native", lambda: importlib.import_module("pypto._C"))
    monkeypatch.setattr(_backend, "_sim_prepared", False)
    monkeypatch.setenv("PYPTO_SIM_CHIP", "no_such_chip")

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:, :] = a + 1.0

    assert _backend._sim_prepared
    with pytest.raises(pypto.PyptoValueError, match="no_such_chip"):
        k(torch.randn(8, 8), torch.zeros(8, 8))
