# SPDX-License-Identifier: Apache-2.0
"""Tensors of 5 axes in SIM kernels against torch: PyPTO's repeat_kv recipe (unsqueeze,
expand_clone to 5-D, reshape back to 4-D), element-wise ops, permute/transpose, reductions,
index_select's 5-D result; a tensor past the rank limit is refused naming both."""

import pytest
import torch

import pypto
from pypto._limits import MAX_RANK

SIM = {"run_mode": pypto.RunMode.SIM}
F32 = pypto.DT_FP32
I32 = pypto.DT_INT32


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, seed):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) - 0.5


def test_limit_is_five_axes():
    assert MAX_RANK == 5


def test_repeat_kv_through_a_five_d_tensor():
    B, NKV, G, S, D = 2, 2, 3, 4, 16

    @pypto.frontend.jit(runtime_options=SIM)
    def k(kv: pypto.Tensor([B, NKV, S, D], F32), y: pypto.Tensor([B, NKV * G, S, D], F32)):
        pypto.set_vec_tile_shapes(1, 2, 3, 4, 16)
        e = pypto.expand_clone(pypto.unsqueeze(kv, 2), [B, NKV, G, S, D])
        y[:] = pypto.reshape(e, [B, NKV * G, S, D])

    kv = rand((B, NKV, S, D), 1)
    y = torch.zeros(B, NKV * G, S, D)
    k(kv, y)
    want = kv[:, :, None].expand(B, NKV, G, S, D).reshape(B, NKV * G, S, D)
    assert torch.equal(y, want)


def test_five_d_elementwise():
    shape = [2, 3, 2, 4, 16]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor(shape, F32), b: pypto.Tensor(shape, F32),
          c: pypto.Tensor([1, 3, 1, 1, 16], F32), y: pypto.Tensor(shape, F32)):
        pypto.set_vec_tile_shapes(1, 2, 2, 4, 16)
        y[:] = (a * b + c) / (pypto.abs(c) + 1.0)

    a, b, c = rand(shape, 2), rand(shape, 3), rand((1, 3, 1, 1, 16), 4)
    y = torch.zeros(shape)
    k(a, b, c, y)
    assert torch.equal(y, (a * b + c) / (torch.abs(c) + 1.0))


def test_five_d_permute_and_transpose():
    shape = [2, 3, 4, 5, 8]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(shape, F32), p: pypto.Tensor([8, 2, 5, 3, 4], F32),
          t: pypto.Tensor([2, 5, 4, 3, 8], F32)):
        pypto.set_vec_tile_shapes(2, 3, 4, 4, 8)
        p[:] = pypto.permute(x, [4, 0, 3, 1, 2])
        t[:] = pypto.transpose(x, 1, 3)

    x = rand(shape, 5)
    p, t = torch.zeros(8, 2, 5, 3, 4), torch.zeros(2, 5, 4, 3, 8)
    k(x, p, t)
    assert torch.equal(p, x.permute(4, 0, 3, 1, 2))
    assert torch.equal(t, x.transpose(1, 3))


@pytest.mark.parametrize("dim", [0, 2, 4])
def test_five_d_reduction(dim):
    shape = [2, 3, 4, 2, 16]
    out = list(shape)
    out[dim] = 1

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(shape, F32), s: pypto.Tensor(out, F32), m: pypto.Tensor(out, F32)):
        pypto.set_vec_tile_shapes(2, 3, 4, 2, 16)
        s[:] = pypto.sum(x, dim, keepdim=True)
        m[:] = pypto.amax(x, dim, keepdim=True)

    # Integers in fp32: the sum is exact in any order.
    x = torch.randint(-50, 50, shape, generator=torch.Generator().manual_seed(6)).float()
    s, m = torch.zeros(out), torch.zeros(out)
    k(x, s, m)
    assert torch.equal(s, x.sum(dim, keepdim=True))
    assert torch.equal(m, x.amax(dim, keepdim=True))


def test_index_select_2d_index_gives_five_d():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 3, 4, 16], F32), i: pypto.Tensor([2, 2], I32),
          y: pypto.Tensor([2, 3, 2, 2, 16], F32)):
        pypto.set_vec_tile_shapes(2, 3, 2, 2, 16)
        y[:] = pypto.index_select(x, 2, i)

    x = rand((2, 3, 4, 16), 7)
    i = torch.tensor([[3, 0], [1, 1]], dtype=torch.int32)
    y = torch.zeros(2, 3, 2, 2, 16)
    k(x, i, y)
    assert torch.equal(y, x[:, :, i.long()])


def test_six_d_tensor_is_refused_naming_rank_and_limit():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 1, 2, 1, 2, 8], F32), y: pypto.Tensor([2, 1, 2, 1, 2, 8], F32)):
        pypto.set_vec_tile_shapes(2, 2, 2, 8)
        y[:] = x + 1.0

    with pytest.raises(pypto.PyptoValueError, match=r"6-D tensor \[2, 1, 2, 1, 2, 8\].*1 to 5 axes"):
        k(torch.zeros(2, 1, 2, 1, 2, 8), torch.zeros(2, 1, 2, 1, 2, 8))


def test_six_d_intermediate_is_refused():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 2, 2, 2, 8], F32), y: pypto.Tensor([2, 2, 2, 2, 8], F32)):
        pypto.set_vec_tile_shapes(2, 2, 2, 2, 8)
        y[:] = pypto.reshape(pypto.unsqueeze(x, 0), [2, 2, 2, 2, 8])

    with pytest.raises(pypto.PyptoValueError, match=r"6-D tensor.*1 to 5 axes"):
        k(torch.zeros(2, 2, 2, 2, 8), torch.zeros(2, 2, 2, 2, 8))


def test_vec_tile_takes_one_size_per_axis_up_to_the_limit():
    with pytest.raises(pypto.PyptoValueError, match="1 to 5 sizes"):
        @pypto.frontend.jit(runtime_options=SIM)
        def k(x: pypto.Tensor([2, 8], F32), y: pypto.Tensor([2, 8], F32)):
            pypto.set_vec_tile_shapes(1, 1, 1, 1, 2, 8)
            y[:] = x + 1.0

        k(torch.zeros(2, 8), torch.zeros(2, 8))
