# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of the ops pypto-sim composes from others (each recorded op carries
``composite=<name>``): PyPTO's LReLU, axpy, rms_norm and pad, and torch's prelu, var and std
(PyPTO Tensor methods), against torch in each float dtype. Half types compute in fp32 and
round once at the end, as torch's opmath does."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
FLOATS = [(F32, torch.float32), (F16, torch.float16), (BF16, torch.bfloat16)]
TOL = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, tt, lo=-3.0, hi=3.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(tt)


def close(got, want, tt):
    torch.testing.assert_close(got.float(), want.float(), rtol=TOL[tt], atol=TOL[tt])


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_lrelu_alias_and_prelu(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 6, 20], pt), w: pypto.Tensor([6], pt), w1: pypto.Tensor([1], pt),
          a: pypto.Tensor([4, 6, 20], pt), b: pypto.Tensor([4, 6, 20], pt),
          c: pypto.Tensor([4, 6, 20], pt)):
        pypto.set_vec_tile_shapes(2, 3, 16)
        a[:] = pypto.LReLU(x, 0.2)
        b[:] = pypto.prelu(x, w)
        c[:] = x.prelu(w1)

    x, w = rand((4, 6, 20), tt, seed=1), rand((6,), tt, 0, 1, seed=2)
    w1 = torch.tensor([0.25]).to(tt)
    a, b, c = (torch.zeros_like(x) for _ in range(3))
    k(x, w, w1, a, b, c)
    assert torch.equal(a, torch.nn.functional.leaky_relu(x.float(), 0.2).to(tt))
    assert torch.equal(b, torch.prelu(x.float(), w.float()).to(tt))
    assert torch.equal(c, torch.prelu(x.float(), w1.float()).to(tt))


@pytest.mark.parametrize("pt,tt,xpt,xtt", [(F32, torch.float32, F32, torch.float32),
                                           (F16, torch.float16, F16, torch.float16),
                                           (BF16, torch.bfloat16, BF16, torch.bfloat16),
                                           (F32, torch.float32, F16, torch.float16)])
def test_axpy_in_place(pt, tt, xpt, xtt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(y: pypto.Tensor([16, 32], pt), x: pypto.Tensor([16, 32], xpt),
          xb: pypto.Tensor([16, 1], xpt), out: pypto.Tensor([16, 32], pt)):
        pypto.set_vec_tile_shapes(8, 16)
        r = pypto.axpy(y, x, alpha=2.0)
        out[:] = r * 1.0
        y.axpy_(xb)  # broadcast x, alpha 1

    y, x, xb = rand((16, 32), tt, seed=3), rand((16, 32), xtt, seed=4), rand((16, 1), xtt, seed=5)
    y0 = y.clone()
    out = torch.zeros_like(y)
    k(y, x, xb, out)
    first = (y0.float() + 2.0 * x.float()).to(tt)  # one rounding: 2 * x is exact
    assert torch.equal(out, first)
    assert torch.equal(y, (first.float() + xb.float()).to(tt))


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_rms_norm(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([12, 64], pt), g: pypto.Tensor([64], pt), a: pypto.Tensor([12, 64], pt),
          b: pypto.Tensor([12, 64], pt)):
        pypto.set_vec_tile_shapes(4, 64)
        a[:] = pypto.rms_norm(x, g)
        b[:] = pypto.rms_norm(x, epsilon=1e-3)

    x, g = rand((12, 64), tt, seed=6), rand((64,), tt, 0.5, 1.5, seed=7)
    a, b = torch.zeros_like(x), torch.zeros_like(x)
    k(x, g, a, b)
    xf = x.float()
    ms = (xf * xf).mean(-1, keepdim=True)
    close(a, (xf * torch.rsqrt(ms + 1e-6) * g.float()).to(tt), tt)
    close(b, (xf * torch.rsqrt(ms + 1e-3)).to(tt), tt)


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_pad_constant(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 10, 30], pt), a: pypto.Tensor([2, 13, 34], pt),
          b: pypto.Tensor([2, 10, 33], pt)):
        pypto.set_vec_tile_shapes(1, 8, 16)
        a[:] = pypto.pad(x, (0, 4, 0, 3), value=-1.5)  # PyPTO's right/bottom padding
        b[:] = pypto.pad(x, [2, 1])                   # before-padding: an extension

    x = rand((2, 10, 30), tt, seed=8)
    a, b = torch.zeros(2, 13, 34, dtype=tt), torch.zeros(2, 10, 33, dtype=tt)
    k(x, a, b)
    assert torch.equal(a, torch.nn.functional.pad(x, (0, 4, 0, 3), value=-1.5))
    assert torch.equal(b, torch.nn.functional.pad(x, (2, 1)))


def test_pad_other_modes_are_not_supported():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), y: pypto.Tensor([4, 9], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.pad(x, [0, 1], mode="reflect")

    with pytest.raises(pypto.PyptoError, match="pypto.pad: mode 'reflect' is not supported"):
        k(torch.zeros(4, 8), torch.zeros(4, 9))


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_var_std(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([6, 8, 40], pt), v: pypto.Tensor([6, 8], pt),
          s: pypto.Tensor([1, 8, 1], pt), va: pypto.Tensor([1], pt)):
        pypto.set_vec_tile_shapes(2, 8, 40)
        v[:] = pypto.var(x, -1)
        s[:] = pypto.std(x, [0, 2], keepdim=True, correction=0)
        va[:] = x.var()

    x = rand((6, 8, 40), tt, seed=9) + 5  # an offset a one-pass formula would lose bits to
    v, s, va = torch.zeros(6, 8, dtype=tt), torch.zeros(1, 8, 1, dtype=tt), torch.zeros(1, dtype=tt)
    k(x, v, s, va)
    xf = x.float()
    close(v, xf.var(-1).to(tt), tt)
    close(s, xf.std([0, 2], keepdim=True, unbiased=False).to(tt), tt)
    close(va, xf.var().reshape(1).to(tt), tt)
