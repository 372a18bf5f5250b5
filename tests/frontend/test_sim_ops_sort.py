# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of PyPTO's topk and argsort (and torch's sort, an extension) against torch:
values bit for bit, DT_INT32 indices, stable order for ties, NaN as the largest value."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16, I32 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I32: torch.int32}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def distinct(shape, tt, seed=0):
    """Values without ties along any axis (a permutation of 0..n-1, scaled)."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for d in shape:
        n *= d
    v = torch.randperm(n, generator=g).reshape(shape).double() - n / 2
    return (v * 0.5).to(tt) if tt.is_floating_point else v.to(tt)


@pytest.mark.parametrize("pt", [F32, F16, BF16, I32])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 6, 48])
def test_topk_last_axis(pt, largest, k):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([10, 48], pt), v: pypto.Tensor([10, k], pt),
             i: pypto.Tensor([10, k], I32)):
        pypto.set_vec_tile_shapes(4, 48)
        vals, idx = pypto.topk(x, k, -1, largest)
        v[:] = vals
        i[:] = idx

    x = distinct((10, 48), tt, seed=1)
    v, i = torch.zeros(10, k, dtype=tt), torch.zeros(10, k, dtype=torch.int32)
    kern(x, v, i)
    wv, wi = torch.topk(x.float(), k, -1, largest)  # torch 1.13 has no CPU fp16 topk
    assert torch.equal(v, wv.to(tt))
    assert torch.equal(i, wi.int())


def test_topk_other_axes_and_tensor_method():
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([2, 30, 3, 8], F32), v: pypto.Tensor([2, 4, 3, 8], F32),
             i: pypto.Tensor([2, 4, 3, 8], I32), w: pypto.Tensor([2, 30, 3, 2], F32)):
        pypto.set_vec_tile_shapes(1, 30, 2, 8)
        vals, idx = pypto.topk(x, 4, 1)
        v[:] = vals
        i[:] = idx
        w[:] = x.topk(2, dim=-1, largest=False)[0]

    x = distinct((2, 30, 3, 8), torch.float32, seed=2)
    v, i = torch.zeros(2, 4, 3, 8), torch.zeros(2, 4, 3, 8, dtype=torch.int32)
    w = torch.zeros(2, 30, 3, 2)
    kern(x, v, i, w)
    wv, wi = torch.topk(x, 4, 1)
    assert torch.equal(v, wv) and torch.equal(i, wi.int())
    assert torch.equal(w, torch.topk(x, 2, -1, largest=False)[0])


@pytest.mark.parametrize("pt", [F32, F16])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [True, False])
def test_argsort_is_stable(pt, dim, descending):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([12, 6, 40], pt), i: pypto.Tensor([12, 6, 40], I32)):
        pypto.set_vec_tile_shapes(4, 3, 40)
        i[:] = pypto.argsort(x, dim, descending)

    g = torch.Generator().manual_seed(3)
    x = torch.randint(-4, 4, (12, 6, 40), generator=g).to(tt)  # many ties
    x[0, 0, :3] = float("nan")
    i = torch.zeros(12, 6, 40, dtype=torch.int32)
    kern(x, i)
    want = torch.sort(x, dim=dim, descending=descending, stable=True)[1]
    assert torch.equal(i, want.int())


def test_argsort_default_is_descending_and_sort_returns_values():
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([8, 32], BF16), i: pypto.Tensor([8, 32], I32),
             v: pypto.Tensor([8, 32], BF16), j: pypto.Tensor([8, 32], I32)):
        pypto.set_vec_tile_shapes(8, 32)
        i[:] = pypto.argsort(x)
        vals, idx = pypto.sort(x)
        v[:] = vals
        j[:] = idx

    x = distinct((8, 32), torch.bfloat16, seed=4)
    i, j = torch.zeros(8, 32, dtype=torch.int32), torch.zeros(8, 32, dtype=torch.int32)
    v = torch.zeros(8, 32, dtype=torch.bfloat16)
    kern(x, i, v, j)
    assert torch.equal(i, torch.argsort(x, -1, descending=True).int())
    sv, si = torch.sort(x)
    assert torch.equal(v, sv) and torch.equal(j, si.int())


def test_topk_k_out_of_range_is_an_error():
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([4, 8], F32), v: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        v[:] = pypto.topk(x, 9)[0]

    with pytest.raises(pypto.PyptoError, match=r"pypto.topk: k must satisfy 1 <= k <= 8"):
        kern(torch.zeros(4, 8), torch.zeros(4, 8))
