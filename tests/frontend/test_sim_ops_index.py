# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of PyPTO's creation and index ops added for compatibility: arange (inside a
kernel), one_hot, index_select, index_add / index_add_, against torch in each dtype PyPTO
takes for them."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
I8, I16, I32, I64 = pypto.DT_INT8, pypto.DT_INT16, pypto.DT_INT32, pypto.DT_INT64
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I8: torch.int8,
         I16: torch.int16, I32: torch.int32, I64: torch.int64}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def values(pt, shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    tt = TORCH[pt]
    if tt.is_floating_point:
        return (torch.rand(shape, generator=g) * 6 - 3).to(tt)
    return torch.randint(-50, 50, shape, generator=g).to(tt)


@pytest.mark.parametrize("args,n", [((40,), 40), ((-5, 35), 40), ((3, 123, 3), 40),
                                    ((10, -30, -1), 40), ((1.0, 21.0, 0.5), 40),
                                    ((0.0, 4.0, 0.1), 40)])
def test_arange_in_a_kernel_as_pypto_types_it(args, n):
    floats = any(isinstance(a, float) for a in args)
    pt, tt = (F32, torch.float32) if floats else (I32, torch.int32)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(y: pypto.Tensor([n], pt)):
        pypto.set_vec_tile_shapes(16)  # three tiles, the last one partial
        r = pypto.arange(*args)
        assert r.dtype == pt and list(r.shape) == [n]
        y[:] = r

    y = torch.zeros(n, dtype=tt)
    k(y)
    if args[-1] == 0.1:
        # start + i * step rounded once; torch's CPU kernel adds in fp32 across its vector
        # lanes, so an inexact step may differ in the last bit.
        want = torch.tensor([args[0] + i * args[2] for i in range(n)], dtype=torch.float64)
        assert torch.equal(y, want.float())
        torch.testing.assert_close(y, torch.arange(*args, dtype=tt), rtol=2.4e-7, atol=0)
    else:
        assert torch.equal(y, torch.arange(*args, dtype=tt))


@pytest.mark.parametrize("pt", [F16, BF16, I16])
def test_arange_dtype_and_use_in_arithmetic(pt):
    tt = TORCH[pt]
    step = 0.75 if tt.is_floating_point else 3

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 48], pt), y: pypto.Tensor([4, 48], pt)):
        pypto.set_vec_tile_shapes(2, 16)
        y[:] = x + pypto.arange(-7, -7 + 48 * step, step, dtype=pt)

    x = values(pt, (4, 48), seed=1)
    y = torch.zeros_like(x)
    k(x, y)
    r = torch.arange(-7, -7 + 48 * step, step, dtype=torch.float64)
    want = (x.double() + r.to(tt).double()).to(tt) if tt.is_floating_point else x + r.to(tt)
    assert torch.equal(y, want)


def test_arange_errors_name_the_problem():
    def trace(*args):
        @pypto.frontend.jit(runtime_options=SIM)
        def k(y: pypto.Tensor([4], I32)):
            pypto.set_vec_tile_shapes(4)
            pypto.arange(*args)

        k(torch.zeros(4, dtype=torch.int32))

    with pytest.raises(pypto.PyptoError, match="step must not be 0"):
        trace(0, 4, 0)
    with pytest.raises(pypto.PyptoError, match=r"\(end - start\) / step must be > 0"):
        trace(4, 0)
    with pytest.raises(pypto.PyptoError, match="takes 1 to 3 arguments"):
        trace()


@pytest.mark.parametrize("pt", [I8, I16, I32, I64])
@pytest.mark.parametrize("shape,tile", [((37,), (16, 10)), ((6, 20), (4, 8, 10)),
                                        ((3, 5, 7), (1, 2, 4, 10))])
def test_one_hot(pt, shape, tile):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(list(shape), pt), y: pypto.Tensor(list(shape) + [10], I64)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = pypto.one_hot(x, 10)

    g = torch.Generator().manual_seed(2)
    x = torch.randint(0, 10, shape, generator=g).to(TORCH[pt])
    y = torch.zeros(list(shape) + [10], dtype=torch.int64)
    k(x, y)
    assert torch.equal(y, torch.nn.functional.one_hot(x.long(), 10))


@pytest.mark.parametrize("pt", [F32, F16, BF16, I8, I16, I32])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(pt, dim):
    x = values(pt, (12, 5, 24), seed=3)
    size = x.shape[dim]
    i = torch.tensor([size - 1, 0, 2, 2, 1, size - 2, 3], dtype=torch.int64)
    want = torch.index_select(x, dim, i)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([12, 5, 24], pt), i: pypto.Tensor([7], I64),
          y: pypto.Tensor(list(want.shape), pt)):
        pypto.set_vec_tile_shapes(4, 5, 8)
        y[:] = pypto.index_select(x, dim, i)

    y = torch.zeros_like(want)
    k(x, i, y)
    assert torch.equal(y, want)


@pytest.mark.parametrize("pt", [F32, BF16, I32])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_with_a_2d_index(pt, dim):
    # PyPTO's index is 1-2 D (pypto-index_select.md): a [2, 3] index puts two axes where
    # dim was, result[.., i, j, ..] = x[.., index[i, j], ..] (torch's advanced indexing)
    x = values(pt, (7, 9, 16), seed=5)
    size = x.shape[dim]
    i = torch.tensor([[size - 1, 0, 2], [2, 1, size - 2]], dtype=torch.int32)
    want = x[(slice(None),) * (dim % 3) + (i.long(),)]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([7, 9, 16], pt), i: pypto.Tensor([2, 3], I32),
          y: pypto.Tensor(list(want.shape), pt)):
        pypto.set_vec_tile_shapes(4, 4, 4, 16)
        y[:] = pypto.index_select(x, dim, i)

    y = torch.zeros_like(want)
    k(x, i, y)
    assert list(want.shape) == [7, 9, 16][:dim % 3] + [2, 3] + [7, 9, 16][dim % 3 + 1:]
    assert torch.equal(y, want)


def test_index_select_2d_index_past_five_axes_is_refused():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 3, 4, 2, 16], F32), i: pypto.Tensor([2, 2], I32),
          y: pypto.Tensor([6, 2, 2, 2, 16], F32)):
        y[:] = pypto.reshape(pypto.index_select(x, 2, i), [6, 2, 2, 2, 16])

    with pytest.raises(pypto.error.PyptoError, match=r"index_select.*6-D result.*1 to 5 axes"):
        k(torch.zeros(2, 3, 4, 2, 16), torch.zeros(2, 2, dtype=torch.int32),
          torch.zeros(6, 2, 2, 2, 16))


def test_index_select_2d_index_of_floats_or_a_dynamic_axis_is_refused():
    @pypto.frontend.jit(runtime_options=SIM)
    def floats(x: pypto.Tensor([6, 32], F32), i: pypto.Tensor([2, 3], F32),
               y: pypto.Tensor([2, 3, 32], F32)):
        y[:] = pypto.index_select(x, 0, i)

    @pypto.frontend.jit(runtime_options=SIM)
    def dynamic(x: pypto.Tensor([6, 32], F32), i: pypto.Tensor([pypto.DYN, 3], I32),
                y: pypto.Tensor([2, 3, 32], F32)):
        y[:] = pypto.index_select(x, 0, i)

    with pytest.raises(pypto.error.PyptoError,
                       match=r"index_select: index must be a DT_INT32 or DT_INT64 tensor, got DT_FP32"):
        floats(torch.zeros(6, 32), torch.zeros(2, 3), torch.zeros(2, 3, 32))
    with pytest.raises(pypto.error.PyptoError,
                       match=r"index_select: a 2-D index must have a static shape, got \[i\.shape\[0\], 3\]"):
        dynamic(torch.zeros(6, 32), torch.zeros(2, 3, dtype=torch.int32), torch.zeros(2, 3, 32))


@pytest.mark.parametrize("pt", [F32, F16, BF16, I16, I32])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_add_out_of_place_and_in_place(pt, dim):
    src_shape = [6, 16] if dim == 0 else [10, 6]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([10, 16], pt), i: pypto.Tensor([6], I32),
          s: pypto.Tensor(src_shape, pt), y: pypto.Tensor([10, 16], pt),
          z: pypto.Tensor([10, 16], pt)):
        pypto.set_vec_tile_shapes(10, 16)
        y[:] = pypto.index_add(x, dim, i, s)
        z[:] = x.clone()
        z.index_add_(dim, i, s)  # PyPTO's Tensor method, in place

    x = values(pt, (10, 16), seed=4)
    s = values(pt, src_shape, seed=5)
    i = torch.tensor([3, 0, 3, 9, 1, 3], dtype=torch.int32)  # duplicates accumulate in order
    y, z = torch.zeros_like(x), torch.zeros_like(x)
    k(x, i, s, y, z)
    want = x.index_add(dim, i.long(), s)
    assert torch.equal(y, want)
    assert torch.equal(z, want)


def test_index_add_ub_variants_the_doc_example():
    # PyPTO's reference example of index_add__ub: rows 0, 1, 0 of [2, 3] zeros plus ones.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 3], I32), i: pypto.Tensor([3], I32), s: pypto.Tensor([3, 3], I32),
          y: pypto.Tensor([2, 3], I32)):
        pypto.set_vec_tile_shapes(2, 3)
        y[:] = pypto.index_add_ub(x, 0, i, s, alpha=2)
        pypto.index_add__ub(x, 0, i, s)

    x = torch.zeros(2, 3, dtype=torch.int32)
    y = torch.zeros(2, 3, dtype=torch.int32)
    k(x, torch.tensor([0, 1, 0], dtype=torch.int32), torch.ones(3, 3, dtype=torch.int32), y)
    assert x.tolist() == [[2, 2, 2], [1, 1, 1]]
    assert y.tolist() == [[4, 4, 4], [2, 2, 2]]


def test_index_add_alpha():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 16], F32), i: pypto.Tensor([4], I32), s: pypto.Tensor([4, 16], F32),
          y: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        y[:] = pypto.index_add(x, 0, i, s, alpha=-2)

    x, s = values(F32, (8, 16), seed=6), values(F32, (4, 16), seed=7)
    i = torch.tensor([7, 2, 2, 0], dtype=torch.int32)
    y = torch.zeros_like(x)
    k(x, i, s, y)
    assert torch.equal(y, x.index_add(0, i.long(), s, alpha=-2))  # alpha * s is exact here
