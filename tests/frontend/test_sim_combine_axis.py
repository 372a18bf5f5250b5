# SPDX-License-Identifier: Apache-2.0
"""pypto.experimental.set_operation_options(combine_axis=...): PyPTO's code generator either
expands a trailing size-1 operand to the tile with a vector pass before a binary op (the
default) or broadcasts it inline (combine_axis=True). The numbers are the same; the expand's
vector pass is the time between them."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}


@pytest.fixture(autouse=True)
def _out(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("PYPTO_SIM_REPORTS", "wait")


def row_sub(combine):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 512], pypto.DT_FP32), m: pypto.Tensor([16, 1], pypto.DT_FP32),
          y: pypto.Tensor([16, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 512)
        if combine is not None:
            pypto.experimental.set_operation_options(combine_axis=combine)
        y[:] = x - m

    return k


def run(kernel):
    x, m, y = torch.randn(16, 512), torch.randn(16, 1), torch.empty(16, 512)
    kernel(x, m, y)
    assert torch.equal(y, x - m)
    return kernel.last_report.aicore_end_to_end_ns


def test_the_trailing_broadcast_expand_pass_is_the_difference():
    # One [16, 512] fp32 tile. Without combine_axis the [16, 1] operand is expanded first:
    # expand_clone over 32 KiB, PyPTO's fitted EXPAND row (cost_model.cpp): ceil(0.014 us *
    # 1850) = 26 fixed + ceil(0.58 * 2 * 32768 / 1e6 * 1850) = 71 = 97 cycles at the A2's
    # 1.85 GHz = 52.4 ns on the path.
    default, off, on = run(row_sub(None)), run(row_sub(False)), run(row_sub(True))
    assert default == off
    assert off - on == pytest.approx(97 / 1.85, abs=0.01)


def test_a_leading_axis_broadcast_needs_no_expand():
    # [1, 512] against [16, 512]: the vector unit repeats the row with stride 0, no pass.
    def k_of(combine):
        @pypto.frontend.jit(runtime_options=SIM)
        def k(x: pypto.Tensor([16, 512], pypto.DT_FP32), b: pypto.Tensor([1, 512], pypto.DT_FP32),
              y: pypto.Tensor([16, 512], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 512)
            pypto.experimental.set_operation_options(combine_axis=combine)
            y[:] = x + b
        return k

    times = []
    for combine in (False, True):
        k = k_of(combine)
        x, b, y = torch.randn(16, 512), torch.randn(1, 512), torch.empty(16, 512)
        k(x, b, y)
        assert torch.equal(y, x + b)
        times.append(k.last_report.aicore_end_to_end_ns)
    assert times[0] == times[1]
