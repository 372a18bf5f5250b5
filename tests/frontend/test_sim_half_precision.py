# SPDX-License-Identifier: Apache-2.0
"""How SIM computes chains of bf16 element-wise ops, as PyPTO's AutoCast pass does
(framework/src/passes/tensor_graph_pass/auto_cast.cpp with the UNSUPPORT_BF16_OPS lists of
framework/src/interface/operation/opcode.h): an op the vector unit cannot run on bf16 gets
fp32 operands and an fp32 result, and the fp32 -> bf16 -> fp32 casts between two such ops are
dropped, so a chain of them rounds once, where the value is stored or read by an op that runs
on bf16. The rule per op is the Bf16Compute column of
frontend/compiler/include/pypto/compiler/op_table.h. fp16 ops round after each op.

The references are torch in float64 with a rounding exactly where PyPTO rounds (SIM computes
each tile op in double and rounds to the tile's dtype, so +, -, *, / agree bit for bit)."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
BF16, F16 = pypto.DT_BF16, pypto.DT_FP16


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def values(tt, shape, seed, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(tt)


def fp32(t):
    """Rounds a float64 tensor to fp32 (one IEEE fp32 op's result) and back."""
    return t.to(torch.float32).to(torch.float64)


def test_sim_bf16_chain_rounds_once():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 64], BF16), y: pypto.Tensor([16, 64], BF16),
          out: pypto.Tensor([16, 64], BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        num = pypto.add(pypto.mul(x, 1.702), y)
        den = pypto.add(pypto.mul(x, x), 1.0)
        out[:] = pypto.div(num, den)

    x, y = values(torch.bfloat16, (16, 64), 1), values(torch.bfloat16, (16, 64), 2)
    out = torch.zeros_like(x)
    k(x, y, out)
    xd, yd = x.double(), y.double()
    num = fp32(fp32(xd * fp32(torch.tensor(1.702, dtype=torch.float64))) + yd)
    den = fp32(fp32(xd * xd) + 1.0)
    want = (num / den).to(torch.bfloat16)  # one rounding to bf16, at the store
    assert torch.equal(out, want)
    # Rounding to bf16 after every op (the per-op reading) gives other numbers here.
    b = torch.bfloat16
    per_op = ((x * 1.702).to(b) + y).to(b) / ((x * x).to(b) + 1).to(b)
    assert not torch.equal(out, per_op.to(b))


def test_sim_fp16_chain_rounds_after_each_op():
    # fp16 runs on fp16 tiles: every op's result is rounded (what PyPTO's own
    # st/interface/test_verify_frontend_jit.py expects of fp16 add/mul chains).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 64], F16), b: pypto.Tensor([8, 64], F16),
          c: pypto.Tensor([8, 64], F16), out: pypto.Tensor([8, 64], F16)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.div(pypto.sub(pypto.mul(a, b), c), c)

    a, b = values(torch.float16, (8, 64), 3), values(torch.float16, (8, 64), 4)
    c = values(torch.float16, (8, 64), 5, lo=0.5, hi=2.0)
    out = torch.zeros_like(a)
    k(a, b, c, out)
    h = torch.float16
    prod = (a.double() * b.double()).to(h).double()
    diff = (prod - c.double()).to(h).double()
    assert torch.equal(out, (diff / c.double()).to(h))


@pytest.mark.parametrize("chip", ["a2", "950dt"])
def test_sim_bf16_maximum_is_fp32_on_a2_native_on_950(chip, monkeypatch):
    # maximum is in PyPTO's A2/A3 list only: on the 950 the product is rounded to bf16 where
    # maximum reads it, on A2 the chain stays fp32 up to the store.
    monkeypatch.setenv("PYPTO_SIM_CHIP", chip)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], BF16), y: pypto.Tensor([8, 32], BF16),
          out: pypto.Tensor([8, 32], BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.add(pypto.maximum(pypto.mul(x, 1.3), y), 0.01)

    x, y = values(torch.bfloat16, (8, 32), 6), values(torch.bfloat16, (8, 32), 7)
    out = torch.zeros_like(x)
    k(x, y, out)
    prod = fp32(x.double() * fp32(torch.tensor(1.3, dtype=torch.float64)))
    if chip == "950dt":
        prod = prod.to(torch.bfloat16).double()
    want = fp32(torch.maximum(prod, y.double()) + fp32(torch.tensor(0.01, dtype=torch.float64)))
    assert torch.equal(out, want.to(torch.bfloat16))


def test_sim_half_chain_stores_intermediate_rounded():
    # A value both stored and read by the next fp32 op: the store rounds it to bf16, the next
    # op reads the fp32 value (PyPTO's consumers of the dropped cast read the fp32 tensor).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], BF16), mid: pypto.Tensor([8, 32], BF16),
          out: pypto.Tensor([8, 32], BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        t = pypto.mul(x, 1.1)
        mid[:] = t
        out[:] = pypto.mul(t, 3.0)

    x = values(torch.bfloat16, (8, 32), 8)
    mid, out = torch.zeros_like(x), torch.zeros_like(x)
    k(x, mid, out)
    t = fp32(x.double() * fp32(torch.tensor(1.1, dtype=torch.float64)))
    assert torch.equal(mid, t.to(torch.bfloat16))
    assert torch.equal(out, fp32(t * 3.0).to(torch.bfloat16))


def test_sim_bf16_chain_stays_fp32_across_fusion_groups():
    # PyPTO's AutoCast runs on the whole function's tensor graph, before ExpandFunction splits
    # it into subgraphs: an fp32 op reading what another fp32 op made reads its fp32 tensor
    # even where the two land in different fusion groups (here: another vec tile). The
    # kernel result is rounded to bf16 once, at its store.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 64], BF16), y: pypto.Tensor([16, 64], BF16),
          out: pypto.Tensor([16, 64], BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        t = pypto.div(pypto.mul(x, 1.1), pypto.add(y, 4.0))
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.sub(pypto.mul(t, 1.3), y)

    x, y = values(torch.bfloat16, (16, 64), 9), values(torch.bfloat16, (16, 64), 10)
    out = torch.zeros_like(x)
    k(x, y, out)
    xd, yd = x.double(), y.double()
    c = lambda v: fp32(torch.tensor(v, dtype=torch.float64))  # noqa: E731
    t = fp32(fp32(xd * c(1.1)) / fp32(yd + 4.0))
    want = fp32(fp32(t * c(1.3)) - yd).to(torch.bfloat16)
    assert torch.equal(out, want)
    # Rounding t to bf16 at the group boundary gives other numbers here.
    t16 = t.to(torch.bfloat16).double()
    assert not torch.equal(out, fp32(fp32(t16 * c(1.3)) - yd).to(torch.bfloat16))


def test_sim_bf16_value_read_fp32_and_bf16_across_groups():
    # t is read by an fp32 op of another group (the fp32 tensor) and by a bf16 op that runs on
    # bf16 there (pow has no fp32 row: it reads t rounded), and is a kernel output (rounded).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 64], BF16), mid: pypto.Tensor([8, 64], BF16),
          a: pypto.Tensor([8, 64], BF16), b: pypto.Tensor([8, 64], BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        t = pypto.mul(x, 1.1)
        mid[:] = t
        pypto.set_vec_tile_shapes(8, 64)
        a[:] = pypto.mul(t, 3.0)
        b[:] = pypto.pow(t, 2.0)

    x = values(torch.bfloat16, (8, 64), 11)
    mid, a, b = torch.zeros_like(x), torch.zeros_like(x), torch.zeros_like(x)
    k(x, mid, a, b)
    t = fp32(x.double() * fp32(torch.tensor(1.1, dtype=torch.float64)))
    t16 = t.to(torch.bfloat16)
    assert torch.equal(mid, t16)
    assert torch.equal(a, fp32(t * 3.0).to(torch.bfloat16))
    assert torch.equal(b, (t16.double() ** 2).to(torch.bfloat16))


def test_sim_bf16_chain_rounds_where_a_loop_body_or_a_view_reads_it():
    # A loop body is a function of its own in PyPTO (RecordLoopFunc; its inputs keep their
    # declared dtype), and a view reads the bf16 tensor: a bf16 value made before the loop is
    # read rounded inside it, directly or through a view.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 64], BF16), out: pypto.Tensor([16, 64], BF16),
          out2: pypto.Tensor([16, 64], BF16)):
        pypto.set_vec_tile_shapes(8, 64)
        t = pypto.mul(x, 1.1)
        for i in pypto.loop(0, 2, 1, name="L", idx_name="i"):
            v = pypto.view(t, [8, 64], [i * 8, 0])
            pypto.assemble(pypto.mul(v, 3.0), [i * 8, 0], out)
        for _ in pypto.loop(0, 1, 1, name="M", idx_name="j"):
            pypto.assemble(pypto.mul(t, 3.0), [0, 0], out2)

    x = values(torch.bfloat16, (16, 64), 12)
    out, out2 = torch.zeros_like(x), torch.zeros_like(x)
    k(x, out, out2)
    t16 = fp32(x.double() * fp32(torch.tensor(1.1, dtype=torch.float64))).to(torch.bfloat16)
    want = fp32(t16.double() * 3.0).to(torch.bfloat16)
    assert torch.equal(out, want)
    assert torch.equal(out2, want)


def test_sim_bf16_chain_stays_fp32_through_a_reduction():
    # ROWSUM/ROWMAX are in PyPTO's bf16 lists too: a row sum of what an fp32 op made reads its
    # fp32 tensor and makes an fp32 sum, which the next fp32 op reads unrounded; only the
    # stored sum (a kernel output) is rounded to bf16.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 64], BF16), s_out: pypto.Tensor([8, 1], BF16),
          out: pypto.Tensor([8, 64], BF16)):
        pypto.set_vec_tile_shapes(8, 64)
        t = pypto.sub(pypto.mul(x, 1.1), pypto.amax(x, -1, keepdim=True))
        s = pypto.sum(t, -1, keepdim=True)
        s_out[:] = s
        out[:] = pypto.div(t, s)

    x = values(torch.bfloat16, (8, 64), 13, lo=0.5, hi=3.0)
    s_out, out = torch.zeros(8, 1, dtype=torch.bfloat16), torch.zeros_like(x)
    k(x, s_out, out)
    xd = x.double()
    t = fp32(fp32(xd * fp32(torch.tensor(1.1, dtype=torch.float64))) - xd.amax(-1, keepdim=True))
    s = fp32(t.sum(-1, keepdim=True))
    assert torch.equal(s_out, s.to(torch.bfloat16))
    assert torch.equal(out, fp32(t / s).to(torch.bfloat16))
    # Rounding t and the sum to bf16 at the reduction gives other numbers here.
    t16 = t.to(torch.bfloat16).double()
    s16 = t16.sum(-1, keepdim=True).to(torch.bfloat16).double()
    assert not torch.equal(out, fp32(t16 / s16).to(torch.bfloat16))
