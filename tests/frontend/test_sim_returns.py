# SPDX-License-Identifier: Apache-2.0
"""Kernels that return their results (PyPTO's functional form, ``return out``): each returned
tensor is written to a virtual output parameter, the call allocates it and returns the torch
tensor(s). End to end in SIM against torch; tracing-only checks (IR form, errors) are in
test_jit_validation.py."""

import pytest
import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}
N = pypto.frontend.dynamic("N")


def test_single_return_with_an_annotation():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32)) -> pypto.Tensor([4, 8], F32):
        pypto.set_vec_tile_shapes(2, 8)
        out = pypto.abs(x)
        return out

    x = torch.randn(4, 8)
    y = k(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == (4, 8)
    assert torch.equal(y, x.abs())
    assert [p.name for p in k.function.params] == ["x", "ret"]
    assert k.function.params[1].is_output_written
    y2 = k(x * 2.0)  # cached: a fresh output each call
    assert k.compile_count == 1 and y2 is not y and torch.equal(y2, (x * 2.0).abs())
    assert torch.equal(y, x.abs())


def test_tuple_return():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 8], F32), b: pypto.Tensor([4, 8], F32)
          ) -> (pypto.Tensor([4, 8], F32), pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        return a + b, a * b

    a, b = torch.randn(4, 8), torch.randn(4, 8)
    s, p = k(a, b)
    assert torch.equal(s, a + b) and torch.equal(p, a * b)
    assert [q.name for q in k.function.params] == ["a", "b", "ret0", "ret1"]


def test_return_without_annotation_takes_the_traced_dtype_and_shape():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        return pypto.sum(x, dim=-1, keepdim=True)

    x = torch.randn(4, 8)
    y = k(x)
    assert y.shape == (4, 1)
    assert torch.allclose(y, x.sum(-1, keepdim=True), atol=1e-5)


def test_return_with_dynamic_dims_sized_from_the_bindings():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([N, 8], F32), y: pypto.Tensor([N, 8], F32)
          ) -> pypto.Tensor([pypto.DYNAMIC, 8], F32):
        # As in PyPTO, ops compute on static tiles: loop over the dynamic axis.
        pypto.set_vec_tile_shapes(2, 8)
        out = pypto.tensor([x.shape[0], 8], F32)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = x[i:i + 1, :] - y[i:i + 1, :]
        return out

    for rows in (6, 10):
        x, y = torch.randn(rows, 8), torch.randn(rows, 8)
        assert torch.equal(k(x, y), x - y)
    assert k.compile_count == 1
    assert k.function.params[2].shape[0].name == "N"


def test_named_dynamic_return_annotation():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([N, 8], F32)) -> pypto.Tensor([N, 8], F32):
        pypto.set_vec_tile_shapes(2, 8)
        out = pypto.tensor([x.shape[0], 8], F32)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = pypto.exp(x[i:i + 1, :])
        return out

    x = torch.randn(6, 8)
    assert torch.allclose(k(x), torch.exp(x), rtol=1e-5, atol=1e-6)


def test_returning_an_input_copies_it():
    # PyPTO moves a returned value into a freshly allocated output: the result never aliases
    # the argument.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32)) -> pypto.Tensor([4, 8], F32):
        pypto.set_vec_tile_shapes(2, 8)
        return x

    x = torch.randn(4, 8)
    y = k(x)
    assert y is not x and y.data_ptr() != x.data_ptr() and torch.equal(y, x)


def test_return_together_with_an_out_parameter_and_an_omitted_output():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32),
          extra: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        out[:] = x + 1.0
        extra[:] = x + 2.0
        return x + 3.0

    x, out = torch.randn(4, 8), torch.zeros(4, 8)
    extra, ret = k(x, out)  # omitted trailing outputs first, then the returned ones
    assert torch.equal(out, x + 1.0) and torch.equal(extra, x + 2.0)
    assert torch.equal(ret, x + 3.0)


def test_return_on_every_branch_path():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([N, 8], F32)) -> pypto.Tensor([N, 8], F32):
        pypto.set_vec_tile_shapes(2, 8)
        out = pypto.tensor([x.shape[0], 8], F32)
        if x.shape[0] > 4:
            for i in pypto.loop(x.shape[0]):
                out[i:i + 1, :] = x[i:i + 1, :] * 2.0
            return out
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = x[i:i + 1, :] * 3.0
        return out

    big, small = torch.randn(6, 8), torch.randn(4, 8)
    assert torch.equal(k(big), big * 2.0)
    assert torch.equal(k(small), small * 3.0)


def test_add_and_sub_with_alpha():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 8], F32), b: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        return (pypto.add(a, b, alpha=2.0), pypto.sub(a, b, alpha=0.5),
                pypto.add(a, 1.0, alpha=3), pypto.sub(a, b))

    a, b = torch.randn(4, 8), torch.randn(4, 8)
    p, m, c, d = k(a, b)
    assert torch.allclose(p, torch.add(a, b, alpha=2.0))
    assert torch.allclose(m, torch.sub(a, b, alpha=0.5))
    assert torch.allclose(c, a + 3.0)
    assert torch.equal(d, a - b)
    with pytest.raises(pypto.PyptoTypeError, match="alpha must be a number"):
        @pypto.frontend.jit(runtime_options=SIM)
        def bad(a: pypto.Tensor([4, 8], F32)):
            return pypto.add(a, a, alpha="2")

        bad(a)
