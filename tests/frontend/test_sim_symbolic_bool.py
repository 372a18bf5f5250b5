# SPDX-License-Identifier: Apache-2.0
"""A comparison used in arithmetic (PyPTO's C semantics: 0 or 1) evaluated end to end: the
expression reaches the compiler as an ``int`` node (IR.md section 2) and the SIM run matches
torch (issue 8)."""

import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


def test_comparison_times_int_selects_the_row_offset():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([6, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            row = pypto.view(x, [1, 8], [i, 0])
            # Rows 0, 1 stay; rows 2, 3 move down by 2. Rows 1 and 2 are scaled by 2.
            dst = i + (i >= 2) * 2
            scale = (i >= 1) * (i < 3) + 1
            pypto.assemble(row * scale, [dst, 0], out)

    x = torch.randn(4, 8)
    out = torch.zeros(6, 8)
    k(x, out)
    want = torch.zeros(6, 8)
    for i in range(4):
        want[i + (i >= 2) * 2] = x[i] * (int(1 <= i < 3) + 1)
    assert torch.allclose(out, want, rtol=1e-6, atol=1e-6)


def test_the_ir_carries_the_conversion_as_an_int_node():
    i = pypto.SymbolicScalar("i")
    e = (i >= 2) * 3
    assert pypto._symbolic.expr_to_dict(e) == {
        "op": "mul", "args": [{"op": "int", "args": [{"op": "ge", "args": [{"sym": "i"}, 2]}]}, 3]}
    assert [e.eval({"i": v}) for v in range(4)] == [0, 0, 3, 3]
