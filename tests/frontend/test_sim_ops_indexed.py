# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of the indexed ops (gather, scatter, scatter_, scatter_update) and of matmul's
extend_params (bias, relu, dequant scale, scale tensor, trans_mode) against torch, in each
dtype PyPTO takes for them. Indexed ops move values: they match torch bit for bit. Matmul
references accumulate in fp32 (fp64 here, then rounded: what the cube's fp32 L0C gives to
well under the tolerances) and apply the epilogue on the accumulator before the one cast."""

import pytest
import torch

import pypto
from ml_kernels import run_mm

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16, I32, I64, I8 = (pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32,
                                pypto.DT_INT64, pypto.DT_INT8)
DTYPES = [(F32, torch.float32), (F16, torch.float16), (BF16, torch.bfloat16),
          (I32, torch.int32)]
INDEX = [(I32, torch.int32), (I64, torch.int64)]


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, dtype, lo=-3.0, hi=3.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


def rand_index(shape, n, dtype, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n, shape, generator=g).to(dtype)


def perm_index(shape, n, dim, dtype, seed=2):
    """Indices without duplicates along `dim` (scatter without reduce is then deterministic)."""
    g = torch.Generator().manual_seed(seed)
    out = torch.empty(shape, dtype=torch.int64)
    moved = out.movedim(dim, -1)
    for idx in torch.cartesian_prod(*[torch.arange(s) for s in moved.shape[:-1]]).reshape(
            -1, moved.dim() - 1).tolist() if moved.dim() > 1 else [[]]:
        moved[tuple(idx)] = torch.randperm(n, generator=g)[:moved.shape[-1]]
    return out.to(dtype)


@pytest.mark.parametrize("pt,tt", DTYPES)
@pytest.mark.parametrize("it,itt", INDEX)
@pytest.mark.parametrize("dim", [0, 1])
def test_gather(pt, tt, it, itt, dim):
    xs, ishape = (24, 40), (20, 36)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(list(xs), pt), i: pypto.Tensor(list(ishape), it),
          out: pypto.Tensor(list(ishape), pt)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.gather(x, dim, i)

    x = rand(xs, tt, -100, 100)
    i = rand_index(ishape, xs[dim], itt)
    out = torch.zeros(ishape, dtype=tt)
    k(x, i, out)
    assert torch.equal(out, torch.gather(x, dim, i.long()))


def test_gather_3d_last_axis():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 6, 10], F32), i: pypto.Tensor([4, 5, 3], I32),
          out: pypto.Tensor([4, 5, 3], F32)):
        pypto.set_vec_tile_shapes(2, 2, 3)
        out[:] = pypto.gather(x, -1, i)

    x = rand((4, 6, 10), torch.float32)
    i = rand_index((4, 5, 3), 10, torch.int32)
    out = torch.zeros(4, 5, 3)
    k(x, i, out)
    assert torch.equal(out, torch.gather(x, 2, i.long()))


def test_gather_pypto_doc_example():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 5], I32), i: pypto.Tensor([3, 4], I32),
          out: pypto.Tensor([3, 4], I32)):
        pypto.set_vec_tile_shapes(3, 4)
        out[:] = pypto.gather(x, 0, i)

    x = torch.arange(15, dtype=torch.int32).reshape(3, 5)
    i = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]], dtype=torch.int32)
    out = torch.zeros(3, 4, dtype=torch.int32)
    k(x, i, out)
    assert out.tolist() == [[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]]


@pytest.mark.parametrize("pt,tt", DTYPES)
@pytest.mark.parametrize("it,itt", INDEX)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_tensor(pt, tt, it, itt, dim):
    xs, ishape = (24, 40), (12, 20)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(list(xs), pt), i: pypto.Tensor(list(ishape), it),
          s: pypto.Tensor(list(ishape), pt), out: pypto.Tensor(list(xs), pt)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.scatter(x, dim, i, s)

    x = rand(xs, tt, -100, 100)
    i = perm_index(ishape, xs[dim], dim, itt)
    s = rand(ishape, tt, -100, 100, seed=5)
    out = torch.zeros(xs, dtype=tt)
    k(x, i, s, out)
    assert torch.equal(out, torch.scatter(x, dim, i.long(), s))


@pytest.mark.parametrize("pt,tt", DTYPES)
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce(pt, tt, reduce):
    xs, ishape = (16, 24), (10, 24)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(list(xs), pt), i: pypto.Tensor(list(ishape), I64),
          s: pypto.Tensor(list(ishape), pt), out: pypto.Tensor(list(xs), pt)):
        pypto.set_vec_tile_shapes(16, 8)
        out[:] = pypto.scatter(x, 0, i, s, reduce=reduce)

    x = rand(xs, tt, -4, 4)
    i = rand_index(ishape, xs[0], torch.int64)  # duplicates: updates combine
    s = rand(ishape, tt, -2, 2, seed=5)
    out = torch.zeros(xs, dtype=tt)
    k(x, i, s, out)
    # torch CPU applies the updates in index order, rounding each to the dtype (as SIM does);
    # torch 1.13 has no half scatter_reduce kernel on CPU, so the reference loops.
    ref = x.clone()
    for r in range(ishape[0]):
        for c in range(ishape[1]):
            t = int(i[r, c])
            ref[t, c] = ref[t, c] + s[r, c] if reduce == "add" else ref[t, c] * s[r, c]
    assert torch.equal(out, ref)


@pytest.mark.parametrize("pt,tt", DTYPES[:3])
def test_scatter_scalar_and_inplace(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 5], pt), i: pypto.Tensor([2, 2], I64)):
        pypto.set_vec_tile_shapes(3, 5)
        pypto.scatter_(x, 0, i, 2.1)

    x = torch.zeros(3, 5, dtype=tt)
    i = torch.tensor([[1, 2], [0, 1]])
    ref = torch.scatter(x.clone(), 0, i, torch.full((2, 2), 2.1, dtype=tt))
    k(x, i)
    assert torch.equal(x, ref)


@pytest.mark.parametrize("pt,tt", [(F32, torch.float32), (F16, torch.float16),
                                   (BF16, torch.bfloat16), (I32, torch.int32),
                                   (pypto.DT_INT16, torch.int16)])
@pytest.mark.parametrize("it,itt", INDEX + [(pypto.DT_INT16, torch.int16)])
def test_scatter_update_2d(pt, tt, it, itt):
    rows, d, b, s = 64, 48, 3, 8

    @pypto.frontend.jit(runtime_options=SIM)
    def k(cache: pypto.Tensor([rows, d], pt), idx: pypto.Tensor([b, s], it),
          src: pypto.Tensor([b * s, d], pt), out: pypto.Tensor([rows, d], pt)):
        pypto.set_vec_tile_shapes(4, d)
        out[:] = pypto.scatter_update(cache, -2, idx, src)

    cache = rand((rows, d), tt, -50, 50)
    idx = torch.randperm(rows, generator=torch.Generator().manual_seed(3))[:b * s]
    idx = idx.reshape(b, s).to(itt)
    src = rand((b * s, d), tt, -50, 50, seed=4)
    out = torch.zeros(rows, d, dtype=tt)
    k(cache, idx, src, out)
    ref = cache.clone()
    ref[idx.long().flatten()] = src
    assert torch.equal(out, ref)


def test_scatter_update_4d_doc_example():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 6, 1, 3], I32), y: pypto.Tensor([2, 2], I64),
          z: pypto.Tensor([2, 2, 1, 3], I32), o: pypto.Tensor([2, 6, 1, 3], I32)):
        pypto.set_vec_tile_shapes(1, 2, 1, 3)
        o[:] = pypto.scatter_update(x, -2, y, z)

    x = torch.zeros(2, 6, 1, 3, dtype=torch.int32)
    y = torch.tensor([[1, 8], [4, 10]])
    z = torch.arange(1, 13, dtype=torch.int32).reshape(2, 2, 1, 3)
    o = torch.zeros_like(x)
    k(x, y, z, o)
    ref = torch.zeros(12, 3, dtype=torch.int32)
    ref[[1, 8, 4, 10]] = z.reshape(4, 3)
    assert torch.equal(o, ref.reshape(2, 6, 1, 3))


def test_scatter_update_in_place_cache():
    """The KV-cache pattern: the cache is both the input and the destination."""
    @pypto.frontend.jit(runtime_options=SIM)
    def k(cache: pypto.Tensor([32, 16], F16), idx: pypto.Tensor([1, 8], I64),
          src: pypto.Tensor([8, 16], F16)):
        pypto.set_vec_tile_shapes(8, 16)
        cache[:] = pypto.scatter_update(cache, -2, idx, src)

    cache = rand((32, 16), torch.float16)
    idx = torch.tensor([[3, 9, 0, 31, 17, 5, 6, 22]])
    src = rand((8, 16), torch.float16, seed=8)
    ref = cache.clone()
    ref[idx.flatten()] = src
    k(cache, idx, src)
    assert torch.equal(cache, ref)


def test_index_out_of_range_raises():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), i: pypto.Tensor([4, 8], I32),
          out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.gather(x, 0, i)

    i = torch.full((4, 8), 4, dtype=torch.int32)
    with pytest.raises(Exception, match="outside"):
        k(torch.zeros(4, 8), i, torch.zeros(4, 8))


def test_indexed_errors():
    def trace(fn, *annots):
        @pypto.frontend.jit(runtime_options=SIM)
        def k(x: pypto.Tensor([4, 8], F32), i: pypto.Tensor([4, 8], F32),
              out: pypto.Tensor([4, 8], F32)):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = fn(x, i)
        k(torch.zeros(4, 8), torch.zeros(4, 8), torch.zeros(4, 8))

    with pytest.raises(pypto.PyptoTypeError, match="index must be"):
        trace(lambda x, i: pypto.gather(x, 0, i))
    with pytest.raises(pypto.PyptoValueError, match="reduce"):
        trace(lambda x, i: pypto.scatter(x, 0, pypto.cast(i, I32), 1.0, reduce="max"))


# --- matmul extend_params -----------------------------------------------------------------


def mm_ref(a, b, out_t, bias=None, relu=False, scale=None):
    acc = a.double() @ b.double()
    acc = acc.float() if a.dtype != torch.int8 else acc.to(torch.int32)
    if bias is not None:
        acc = acc + (bias.float() if acc.dtype == torch.float32 else bias)
    if relu:
        acc = torch.relu(acc)
    if scale is not None:
        acc = acc.float() * scale
    return acc.to(out_t)


@pytest.mark.parametrize("pt,tt,bt,bpt,out_pt,out_t", [
    (F16, torch.float16, torch.float16, F16, F16, torch.float16),
    (F16, torch.float16, torch.float32, F32, F32, torch.float32),
    (BF16, torch.bfloat16, torch.float32, F32, BF16, torch.bfloat16),
    (BF16, torch.bfloat16, torch.bfloat16, BF16, F32, torch.float32),
    (F32, torch.float32, torch.float32, F32, F32, torch.float32),
])
@pytest.mark.parametrize("relu", [False, True])
def test_matmul_bias_relu(pt, tt, bt, bpt, out_pt, out_t, relu):
    a, b = rand((40, 64), tt, -1, 1, seed=1), rand((64, 48), tt, -1, 1, seed=2)
    bias = rand((1, 48), bt, -2, 2, seed=3)
    ep = (lambda bias_: {"bias_tensor": bias_, "relu_type": pypto.ReLuType.RELU}) if relu \
        else (lambda bias_: {"bias_tensor": bias_})
    out = run_mm(a, b, pt, out_pt, out_t, ep, [bias], [pypto.Tensor([1, 48], bpt)])
    ref = mm_ref(a, b, out_t, bias=bias, relu=relu)
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}[out_t]
    torch.testing.assert_close(out, ref, rtol=tol, atol=tol)


def fp19(x: float) -> float:
    """The dequant scale as the fixpipe reads it: fp32 with 10 mantissa bits (truncated)."""
    bits = torch.tensor([x], dtype=torch.float32).view(torch.int32) & ~((1 << 13) - 1)
    return float(bits.view(torch.float32))


@pytest.mark.parametrize("out_pt,out_t", [(F16, torch.float16), (BF16, torch.bfloat16)])
@pytest.mark.parametrize("relu", [False, True])
def test_matmul_int8_dequant_scale(out_pt, out_t, relu):
    a = torch.randint(-128, 128, (40, 64), generator=torch.Generator().manual_seed(1)).to(torch.int8)
    b = torch.randint(-128, 128, (64, 48), generator=torch.Generator().manual_seed(2)).to(torch.int8)
    ep = {"scale": 0.0123}
    if relu:
        ep["relu_type"] = pypto.ReLuType.RELU
    out = run_mm(a, b, I8, out_pt, out_t, lambda: dict(ep), [], [])
    ref = mm_ref(a, b, out_t, relu=relu, scale=fp19(0.0123))
    assert torch.equal(out, ref)


def test_matmul_int8_bias_scale_tensor():
    a = torch.randint(-128, 128, (40, 64), generator=torch.Generator().manual_seed(1)).to(torch.int8)
    b = torch.randint(-128, 128, (64, 48), generator=torch.Generator().manual_seed(2)).to(torch.int8)
    bias = torch.randint(-5000, 5000, (1, 48), generator=torch.Generator().manual_seed(3)).to(
        torch.int32)
    scales = rand((1, 48), torch.float32, 0.001, 0.02, seed=4)
    # DT_UINT64 on the NPU: the low 32 bits hold the fp32 scale; torch 1.13 has no uint64.
    st = scales.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    out = run_mm(a, b, I8, F16, torch.float16,
                 lambda bias_, st_: {"bias_tensor": bias_, "scale_tensor": st_},
                 [bias, st], [pypto.Tensor([1, 48], I32), pypto.Tensor([1, 48], I64)])
    s19 = (scales.view(torch.int32) & ~((1 << 13) - 1)).view(torch.float32)
    acc = (a.long() @ b.long()).to(torch.int32) + bias
    ref = (acc.float() * s19).to(torch.float16)
    assert torch.equal(out, ref)


@pytest.mark.parametrize("mode", [pypto.TransMode.CAST_RINT, pypto.TransMode.CAST_ROUND])
def test_matmul_tf32_trans_mode(mode):
    a, b = rand((40, 64), torch.float32, -1, 1, seed=1), rand((64, 48), torch.float32, -1, 1,
                                                               seed=2)
    out = run_mm(a, b, F32, F32, torch.float32, lambda: {"trans_mode": mode}, [], [])

    def tf32(x):
        u = x.view(torch.int32).long() & 0xFFFFFFFF
        rem = u & 0x1FFF
        u = u & ~0x1FFF
        half = 0x1000
        if mode is pypto.TransMode.CAST_RINT:
            up = (rem > half) | ((rem == half) & (((u >> 13) & 1) == 1))
        else:
            up = rem >= half
        u = u + up.long() * 0x2000
        return u.to(torch.int64).apply_(lambda v: v - (1 << 32) if v >= (1 << 31) else v).to(
            torch.int32).view(torch.float32)

    ref = (tf32(a).double() @ tf32(b).double()).float()
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    plain = (a.double() @ b.double()).float()
    assert not torch.equal(out, plain)  # the rounding took effect


def test_matmul_extend_params_errors():
    a, b = torch.zeros(40, 64, dtype=torch.float16), torch.zeros(64, 48, dtype=torch.float16)
    with pytest.raises(pypto.PyptoValueError, match="unknown extend_params key"):
        run_mm(a, b, F16, F16, torch.float16, lambda: {"bias": 1}, [], [])
    with pytest.raises(pypto.PyptoValueError, match="dequantize int8"):
        run_mm(a, b, F16, F16, torch.float16, lambda: {"scale": 0.5}, [], [])
