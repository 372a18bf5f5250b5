# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of the ops added for PyPTO compatibility (rounding, erf/erfc, trigonometric,
lrelu, triu/tril, prod, argmax/argmin, cumsum/cumprod, loop_unroll) against torch in each
dtype PyPTO takes for them; fp16/bf16 references are computed in fp32 and rounded once (what
torch's opmath does where it has the kernel; torch 1.13's CPU lacks many half kernels)."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16, I32 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32
FLOATS = [(F32, torch.float32), (F16, torch.float16), (BF16, torch.bfloat16)]


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, dtype, lo=-3.0, hi=3.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


def run_unary(fn, pt, tt, a, shape=(40, 72), tile=(16, 32)):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(list(shape), pt), out: pypto.Tensor(list(shape), pt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = fn(x)

    out = torch.zeros(shape, dtype=tt)
    k(a, out)
    return out


# Exact ops: the result is the reference rounded once, bit for bit.
EXACT = {
    "ceil": (pypto.ceil, torch.ceil), "trunc": (pypto.trunc, torch.trunc),
    "round": (pypto.round, torch.round), "sign": (pypto.sign, torch.sign),
    "round_2": (lambda x: pypto.round(x, 2), lambda x: torch.round(x, decimals=2)),
    "round_-1": (lambda x: pypto.round(x, -1), lambda x: torch.round(x * 4, decimals=-1) / 4),
    "lrelu": (pypto.lrelu, torch.nn.functional.leaky_relu),
    "lrelu_0.2": (lambda x: pypto.lrelu(x, 0.2),
                  lambda x: torch.nn.functional.leaky_relu(x, 0.2)),
    "triu": (pypto.triu, torch.triu), "tril": (pypto.tril, torch.tril),
    "triu_3": (lambda x: pypto.triu(x, 3), lambda x: torch.triu(x, 3)),
    "tril_-17": (lambda x: pypto.tril(x, -17), lambda x: torch.tril(x, -17)),
}
# Transcendental ops: torch's SLEEF-style approximations vs our correctly rounded ones.
APPROX = {
    "erf": (pypto.erf, torch.erf), "erfc": (pypto.erfc, torch.erfc),
    "sin": (pypto.sin, torch.sin), "cos": (pypto.cos, torch.cos),
    "log1p": (lambda x: pypto.log1p(pypto.abs(x)), lambda x: torch.log1p(x.abs())),
    "expm1": (pypto.expm1, torch.expm1),
    "exp2": (pypto.exp2, torch.exp2),
    "log2": (lambda x: pypto.log2(pypto.abs(x)), lambda x: torch.log2(x.abs())),
    "log10": (lambda x: pypto.log10(pypto.abs(x)), lambda x: torch.log10(x.abs())),
    "cbrt": (pypto.cbrt, lambda x: torch.sign(x) * x.abs().pow(1.0 / 3.0)),
    "cosh": (pypto.cosh, torch.cosh), "sinh": (pypto.sinh, torch.sinh),
}
TOL = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.mark.parametrize("name", sorted(EXACT))
@pytest.mark.parametrize("pt,tt", FLOATS)
def test_exact_elementwise(name, pt, tt):
    pop, top = EXACT[name]
    a = rand((40, 72), tt, seed=1)
    if name == "round_-1":  # values spread over tens, so the -1 decimal matters
        a = rand((40, 72), tt, -200, 200, seed=1)
        top = lambda x: torch.round(x, decimals=-1)  # noqa: E731
    out = run_unary(pop, pt, tt, a)
    want = top(a.float()).to(tt)
    assert torch.equal(out, want), (out - want).abs().max()


@pytest.mark.parametrize("name", sorted(APPROX))
@pytest.mark.parametrize("pt,tt", FLOATS)
def test_transcendental(name, pt, tt):
    pop, top = APPROX[name]
    a = rand((40, 72), tt, seed=2)
    out = run_unary(pop, pt, tt, a)
    torch.testing.assert_close(out.float(), top(a.float()).to(tt).float(), rtol=TOL[tt],
                               atol=TOL[tt])


def test_rounding_ops_keep_integer_tensors_and_rint_ties():
    a = torch.tensor([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 7.0]] * 8)
    out = run_unary(pypto.round, F32, torch.float32, a, (8, 8), (8, 8))
    assert torch.equal(out, torch.round(a))
    seen = []

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], I32), y: pypto.Tensor([4, 8], I32)):
        pypto.set_vec_tile_shapes(4, 8)
        for f in (pypto.ceil, pypto.trunc, pypto.round):
            seen.append(f(x) is x)
        y[:] = pypto.sign(x)

    x = torch.randint(-5, 5, (4, 8), dtype=torch.int32)
    y = torch.zeros(4, 8, dtype=torch.int32)
    k(x, y)
    assert all(seen) and torch.equal(y, torch.sign(x))


def test_triu_tril_batched_symbolic_diagonal_and_tiles():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 20, 36], F16), u: pypto.Tensor([3, 20, 36], F16),
          lo: pypto.Tensor([3, 20, 36], F16)):
        pypto.set_vec_tile_shapes(1, 8, 16)
        u[:] = pypto.triu(x, 5)
        lo[:] = pypto.tril(x * 2.0, -2)

    x = rand((3, 20, 36), torch.float16, seed=4)
    u, lo = torch.zeros_like(x), torch.zeros_like(x)
    k(x, u, lo)
    assert torch.equal(u, torch.triu(x, 5))
    assert torch.equal(lo, torch.tril((x.float() * 2).half(), -2))


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_prod_argmax_argmin(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([24, 80], pt), p: pypto.Tensor([24], pt),
          am: pypto.Tensor([24, 1], I32), an: pypto.Tensor([80], I32)):
        pypto.set_vec_tile_shapes(8, 80)
        p[:] = pypto.prod(a, -1)
        am[:] = pypto.argmax(a, 1, keepdim=True)
        pypto.set_vec_tile_shapes(16)
        an[:] = pypto.argmin(a, 0)

    a = rand((24, 80), tt, 0.8, 1.2, seed=5)
    p = torch.zeros(24, dtype=tt)
    am = torch.zeros(24, 1, dtype=torch.int32)
    an = torch.zeros(80, dtype=torch.int32)
    k(a, p, am, an)
    # The vector unit multiplies in fp32 for half types (torch's CPU prod multiplies in the
    # half type itself): compare with the fp32 product, rounded once.
    torch.testing.assert_close(p.float(), a.float().prod(-1).to(tt).float(),
                               rtol=TOL[tt] * 4, atol=0)
    assert torch.equal(am, a.float().argmax(1, keepdim=True).int())
    assert torch.equal(an, a.float().argmin(0).int())


def test_argmax_nan_and_ties_integer_prod():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 6], F32), am: pypto.Tensor([4], I32),
          i: pypto.Tensor([4, 6], I32), ip: pypto.Tensor([4], I32)):
        pypto.set_vec_tile_shapes(4, 8)  # a reduction's last-axis tile is 32-byte aligned
        am[:] = pypto.argmax(a, -1)
        ip[:] = pypto.prod(i, -1)

    a = torch.tensor([[1.0, 3.0, 3.0, 2.0, 0.0, 3.0], [0.0, float("nan"), 5.0, float("nan"), 1.0, 2.0],
                      [-1.0] * 6, [0.0, 0.0, 0.0, 0.0, 0.0, 9.0]])
    i = torch.randint(-40, 40, (4, 6), dtype=torch.int32)
    am = torch.zeros(4, dtype=torch.int32)
    ip = torch.zeros(4, dtype=torch.int32)
    k(a, am, i, ip)
    assert am.tolist() == [1, 1, 0, 5] and torch.equal(am, a.argmax(-1).int())
    assert torch.equal(ip, i.prod(-1).int())  # int64 product wrapped to int32, as torch's .int()


@pytest.mark.parametrize("pt,tt", FLOATS + [(I32, torch.int32)])
def test_cumsum_cumprod(pt, tt):
    spt = pypto.DT_INT64 if pt is I32 else pt  # PyPTO's integer cumsum gives DT_INT64

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([30, 50], pt), s: pypto.Tensor([30, 50], spt),
          p: pypto.Tensor([30, 50], pt)):
        pypto.set_vec_tile_shapes(8, 16)
        s[:] = pypto.cumsum(a, 0)
        p[:] = pypto.cumprod(a, 1)

    if tt is torch.int32:
        a = torch.randint(-3, 4, (30, 50), dtype=tt)
    else:
        a = rand((30, 50), tt, 0.9, 1.1, seed=6)
    s = torch.zeros(30, 50, dtype=torch.int64 if tt is torch.int32 else tt)
    p = torch.zeros_like(a)
    k(a, s, p)
    if tt is torch.int32:
        assert torch.equal(s, a.cumsum(0)) and torch.equal(p, a.long().cumprod(1).int())
    elif tt is torch.float32:
        assert torch.equal(s, a.cumsum(0)) and torch.equal(p, a.cumprod(1))
    else:  # torch's CPU acc_type for half types is fp32: running value in fp32, each output rounded
        assert torch.equal(s, a.float().cumsum(0).to(tt))
        torch.testing.assert_close(p.float(), a.float().cumprod(1).to(tt).float(),
                                   rtol=TOL[tt], atol=0)


def test_loop_unroll_covers_every_iteration_once():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F32), y: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        n = x.shape[0]
        for i, f in pypto.loop_unroll(0, pypto.ceildiv(n, 8), 1, unroll_list=[4, 2]):
            t = pypto.view(x, [8 * f, 32], [i * 8, 0],
                           valid_shape=[pypto.min(n - i * 8, 8 * f), 32])
            y[i * 8:, :] = t * 2.0 + 1.0

    for n in (3, 8, 40, 100):
        x = rand((n, 32), torch.float32, seed=n)
        y = torch.zeros(n, 32)
        k(x, y)
        assert torch.equal(y, x * 2.0 + 1.0), n
    loops = [s for s in k.warmup(torch.zeros(40, 32), torch.zeros(40, 32)).ir.variants[0].body
             if isinstance(s, pypto.ir.Loop)]
    assert [s.step for s in loops] == [4, 2, 1]


def test_loop_unroll_defaults_and_ignores_other_keywords_as_pypto():
    # PyPTO's loop reads its keywords with kwargs.get (models/kimi passes `idx=`), and
    # loop_unroll's unroll_list defaults to [1].
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 32], F32), y: pypto.Tensor([16, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        for i, f in pypto.loop_unroll(0, 2, 1, idx="i"):
            t = pypto.view(x, [8, 32], [i * 8, 0])
            pypto.assemble(t - 1.0, [i * 8, 0], y)

    x, y = rand((16, 32), torch.float32, seed=3), torch.zeros(16, 32)
    with pytest.warns(UserWarning, match="keyword 'idx' is not one of name, idx_name"):
        k(x, y)
    assert torch.equal(y, x - 1.0)


def test_logical_ops_take_numbers_as_pypto_documents():
    # docs/api/operation/pypto-logical_not.md: a number is True when it is not 0, the result
    # is DT_BOOL (models/glm_v4_5's select_experts negates an fp32 mask).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], F32), y: pypto.Tensor([8, 32], F32),
          n: pypto.Tensor([8, 32], pypto.DT_BOOL), a: pypto.Tensor([8, 32], pypto.DT_BOOL),
          w: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        n[:] = pypto.logical_not(x)
        a[:] = pypto.logical_and(x, y)
        w[:] = pypto.where(pypto.logical_not(x), 0.0, y)

    x, y = rand((8, 32), torch.float32, seed=5), rand((8, 32), torch.float32, seed=6)
    x[x.abs() < 1.0] = 0.0
    y[:, ::3] = 0.0
    n, a = torch.zeros(8, 32, dtype=torch.bool), torch.zeros(8, 32, dtype=torch.bool)
    w = torch.zeros(8, 32)
    k(x, y, n, a, w)
    assert torch.equal(n, torch.logical_not(x)) and torch.equal(a, torch.logical_and(x, y))
    assert torch.equal(w, torch.where(x == 0, torch.zeros(()), y))


def test_symbolic_scalar_of_a_bool_is_its_int():
    # PyPTO's int64 constructor takes True as 1 (glm_v4_5: `if pypto.symbolic_scalar(flag):`).
    assert pypto.symbolic_scalar(True).is_const() and int(pypto.symbolic_scalar(True)) == 1
    assert not pypto.symbolic_scalar(False)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 8], F32), y: pypto.Tensor([8, 8], F32), flag: bool):
        pypto.set_vec_tile_shapes(8, 8)
        if pypto.symbolic_scalar(flag):
            y[:] = x * 2.0
        else:
            y[:] = x + 1.0

    x, y = rand((8, 8), torch.float32, seed=7), torch.zeros(8, 8)
    k(x, y, True)
    assert torch.equal(y, x * 2.0)
    k(x, y, False)
    assert torch.equal(y, x + 1.0)


def test_loop_unroll_takes_a_set():
    # PyPTO records the unroll list as a std::set<int>; DeepSeek-V3.2's sparse attention
    # passes unroll_list={1}, and {4, 2} unrolls as [4, 2] does.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F32), y: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        n = x.shape[0]
        for i, f in pypto.loop_unroll(0, pypto.ceildiv(n, 8), 1, unroll_list={4, 2}):
            t = pypto.view(x, [8 * f, 32], [i * 8, 0],
                           valid_shape=[pypto.min(n - i * 8, 8 * f), 32])
            y[i * 8:, :] = t * 3.0 - 1.0
        for i in pypto.loop(0, n, 8, unroll_list={1}):
            y[i:, :] = pypto.view(y, [8, 32], [i, 0], valid_shape=[pypto.min(n - i, 8), 32]) + 1.0

    x = rand((40, 32), torch.float32, seed=7)
    y = torch.zeros(40, 32)
    k(x, y)
    assert torch.equal(y, x * 3.0 - 1.0 + 1.0)
    loops = [s for s in k.warmup(torch.zeros(40, 32), torch.zeros(40, 32)).ir.variants[0].body
             if isinstance(s, pypto.ir.Loop)]
    assert [s.step for s in loops] == [4, 2, 1, 8]
