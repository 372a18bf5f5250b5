# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of reshape with a partial valid extent against torch.

A tail window (view with valid_shape) reshaped with valid_shape keeps its valid elements: the
output's valid box, row-major, holds the input's valid box, row-major; the window's padding is
not data. Before the fix the compiler reshaped the padded layout, so a [T, Lmax, D] window
with L < Lmax valid rows became Lmax-strided rows and the [T*L, D] valid box of the 2-D
result held only the first window's rows: the rest of the output stayed zero.
"""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g) * 4 - 2


@pytest.mark.parametrize("unroll", [False, True])
def test_sim_reshape_valid_round_trip(unroll):
    """3-D padded window -> 2-D (valid rows compacted) -> square -> 3-D window -> assemble."""
    t, l, lmax, d = 4, 3, 8, 16

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, d], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, d], pypto.DT_FP32)):
        nt, nl, _ = x.shape
        loop = (pypto.loop_unroll(0, nt, 1, unroll_list=[2]) if unroll
                else ((i, 2) for i in pypto.loop(0, nt, 2)))
        for i, step in loop:
            w = pypto.view(x, [step, lmax, d], [i, 0, 0], valid_shape=[step, nl, d])
            pypto.set_vec_tile_shapes(4, 8, 16)
            w2 = pypto.reshape(w, [step * lmax, d], valid_shape=[step * nl, d])
            pypto.set_vec_tile_shapes(8, 16)
            sq = pypto.mul(w2, w2)
            pypto.set_vec_tile_shapes(4, 8, 16)
            w3 = pypto.reshape(sq, [step, lmax, d], valid_shape=[step, nl, d])
            pypto.assemble(w3, [i, 0, 0], y)

    x = rand((t, l, d))
    y = torch.zeros(t, l, d)
    k(x, y)
    torch.testing.assert_close(y, x * x, rtol=0, atol=0)


def test_sim_reshape_valid_tail_rows():
    """A [6, 4] window with 3 valid rows of a [3, 4] tensor, flattened to [24] with 12 valid:
    the 12 elements are the 3 rows in order (full-width rows: the padded layout and the compact
    one agree here, so this guards the common case rather than the bug)."""

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 4], pypto.DT_FP32), y: pypto.Tensor([12], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        w = pypto.view(x, [6, 4], [0, 0], valid_shape=[3, 4])
        f = pypto.reshape(w, [24], valid_shape=[12])
        pypto.set_vec_tile_shapes(32)
        pypto.assemble(pypto.add(f, 1.0), [0], y)

    x = rand((3, 4), seed=1)
    y = torch.zeros(12)
    k(x, y)
    torch.testing.assert_close(y, x.reshape(12) + 1.0, rtol=0, atol=0)


def test_sim_reshape_valid_column_window():
    """A column window (non-contiguous rows) with a partial valid extent on both axes:
    [4, 8] window at column 2 of a [3, 6] tensor, valid [3, 4], reshaped to [32] valid [12]."""

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 6], pypto.DT_FP32), y: pypto.Tensor([2, 6], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        w = pypto.view(x, [4, 8], [0, 2], valid_shape=[3, 4])
        f = pypto.reshape(w, [32], valid_shape=[12])
        pypto.set_vec_tile_shapes(32)
        g = pypto.reshape(pypto.mul(f, 2.0), [4, 8], valid_shape=[2, 6])
        pypto.set_vec_tile_shapes(8, 8)
        pypto.assemble(g, [0, 0], y)

    x = rand((3, 6), seed=2)
    y = torch.zeros(2, 6)
    k(x, y)
    torch.testing.assert_close(y, (x[:, 2:6] * 2.0).reshape(2, 6), rtol=0, atol=0)
