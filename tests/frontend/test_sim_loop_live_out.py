# SPDX-License-Identifier: Apache-2.0
"""A tensor made in a pypto.loop body and used after the loop holds the last iteration's value,
as in PyPTO (issue 8): per branch path, in nested loops, and returned."""

import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


def test_last_iteration_value_leaves_nested_loops_and_branches():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([6, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        for i in pypto.loop(2):
            for j in pypto.loop(3):
                if i < 1:
                    r = a * 2.0
                else:
                    r = a * 3.0
                t = a + 1.0
        return t, r

    a = torch.randn(6, 8)
    t, r = k(a)
    assert torch.equal(t, a + 1.0)
    assert torch.equal(r, a * 3.0)  # the last outer iteration took the else path


def test_last_row_of_a_loop_over_rows():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            row = a[i:i + 1, :] * 2.0
        out[:] = row

    a, out = torch.randn(4, 8), torch.zeros(1, 8)
    k(a, out)
    assert torch.equal(out, a[3:4] * 2.0)
