# SPDX-License-Identifier: Apache-2.0
"""Kernels written from PyPTO's API pages by a third author: the documented defaults and call
forms of view, clip and pad, the errors those pages promise, control flow over symbolic
bounds, cumprod, and a scatter_update into a cache whose first axis is dynamic, each compared
with torch within PyPTO's tolerances (or an exact error message for a misuse)."""

import pytest
import torch

import pypto
from ml_kernels import (BF16, F32, I8, I32, SIM, check, rand,
                        native_and_output)  # noqa: F401 (an autouse fixture)


# -- view: the call forms of its page ----------------------------------------------------------


def test_view_takes_valid_shape_as_its_fourth_positional_argument():
    # PyPTO's view page calls pypto.view(x, shape, offsets, valid_shape)
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((4, 8), F32), out: pypto.Tensor((2, 4), F32)):
        pypto.set_vec_tile_shapes(4, 4)
        y = pypto.view(x, [4, 4], [2, 4], [2, 4])
        pypto.assemble(y * 2.0, [0, 0], out)

    x, out = rand((4, 8), seed=9), torch.zeros(2, 4)
    k(x, out)
    check(out, x[2:, 4:].double() * 2)


def test_view_with_only_a_dtype_reinterprets_the_whole_tensor():
    # PyPTO's view page calls pypto.view(x, dtype=pypto.DT_INT8): shape and offsets default
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 2), F32)) -> pypto.Tensor((2, 8), I8):
        pypto.set_vec_tile_shapes(2, 8)
        return pypto.view(x, dtype=pypto.DT_INT8)

    x = rand((2, 2), seed=10)
    assert torch.equal(k(x), x.view(torch.int8))


def test_tensor_view_method_with_a_dtype_only():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 8), pypto.DT_FP16)) -> pypto.Tensor((2, 4), F32):
        pypto.set_vec_tile_shapes(2, 8)
        return x.view(dtype=F32) * 1.0

    x = rand((2, 8), torch.float16, 4)
    check(k(x), x.view(torch.float32).double())


# -- clip and pad: defaults and the errors their pages promise ---------------------------------


def test_clip_with_either_bound_or_neither_and_nx1_tensor_bounds():
    # clip's page: min and max may both be left out (the input comes back unchanged)
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((8, 32), F32), lo: pypto.Tensor((8, 1), F32),
          hi: pypto.Tensor((8, 1), F32), a: pypto.Tensor((8, 32), F32),
          b: pypto.Tensor((8, 32), F32), c: pypto.Tensor((8, 32), F32),
          d: pypto.Tensor((8, 32), F32)):
        pypto.set_vec_tile_shapes(8, 32)
        a[:] = pypto.clip(x, min=-0.5)
        b[:] = pypto.clip(x, max=0.25)
        c[:] = pypto.clip(x)
        d[:] = pypto.clip(x, lo, hi)

    x, lo, hi = rand((8, 32), seed=2), -rand((8, 1), seed=3).abs(), rand((8, 1), seed=4).abs()
    a, b, c, d = (torch.zeros(8, 32) for _ in range(4))
    k(x, lo, hi, a, b, c, d)
    check(a, x.double().clamp(min=-0.5))
    check(b, x.double().clamp(max=0.25))
    check(c, x.double())
    check(d, torch.minimum(torch.maximum(x, lo), hi).double())


def test_pad_of_an_integer_tensor_with_a_float_value_says_to_pass_an_int():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 6), I32)) -> pypto.Tensor((2, 8), I32):
        pypto.set_vec_tile_shapes(2, 8)
        return pypto.pad(x, (0, 2), value=float("-inf"))

    with pytest.raises(ValueError, match=r"pypto\.pad: value -inf is not an int; a DT_INT32 "
                       r"input pads with an int \(for its lowest or highest value pass that int, "
                       r"e\.g\. -2147483648 for DT_INT32\)"):
        k(torch.zeros(2, 6, dtype=torch.int32))


def test_pad_of_an_integer_tensor_with_the_int_minimum_and_fp32_right_bottom():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 6), I32), y: pypto.Tensor((1, 2, 3, 5), F32),
          a: pypto.Tensor((2, 8), I32), b: pypto.Tensor((1, 2, 4, 8), F32)):
        pypto.set_vec_tile_shapes(2, 8)
        a[:] = pypto.pad(x, (0, 2), value=-2147483648)
        pypto.set_vec_tile_shapes(1, 2, 4, 8)
        b[:] = pypto.pad(y, (0, 3, 0, 1), mode="constant", value=-1)

    x = torch.arange(12, dtype=torch.int32).reshape(2, 6)
    y = rand((1, 2, 3, 5), seed=4)
    a, b = torch.zeros(2, 8, dtype=torch.int32), torch.zeros(1, 2, 4, 8)
    k(x, y, a, b)
    assert torch.equal(a, torch.nn.functional.pad(x, (0, 2), value=-2147483648))
    check(b, torch.nn.functional.pad(y.double(), (0, 3, 0, 1), value=-1.0))


def test_is_loop_begin_of_a_value_that_is_no_loop_index_raises_value_error():
    # is_loop_begin's page: a scalar that is no loop index raises ValueError
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        if pypto.is_loop_begin(x.shape[0]):
            out[:] = x

    with pytest.raises(ValueError, match=r"pypto\.is_loop_begin expects the index of an "
                       r"enclosing pypto\.loop, got SymbolicScalar\(x\.shape\[0\]\)"):
        k(rand((8, 8)), torch.zeros(8, 8))


# -- control flow, cumprod and a dynamic cache -------------------------------------------------


def test_loop_forms_single_stop_step_two_and_a_symbolic_start():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F32), a: pypto.Tensor([pypto.DYNAMIC, 32], F32),
          b: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(1, 32)
        for i in pypto.loop(n):
            a[i:i + 1, :] = pypto.exp(x[i:i + 1, :])
        for j in pypto.loop(0, n - 1, 2, name="STEP2", idx_name="j"):
            b[j:j + 1, :] = pypto.neg(x[j:j + 1, :])
        for h in pypto.loop(n // 2, n, 1, name="TAIL", idx_name="h", submit_before_loop=True):
            b[h:h + 1, :] = x[h:h + 1, :] * 2.0

    for n in (6, 5):
        x = rand((n, 32), seed=n)
        a, b = torch.zeros(n, 32), torch.zeros(n, 32)
        k(x, a, b)
        want = torch.zeros(n, 32)
        want[0:n - 1:2] = -x[0:n - 1:2]
        want[n // 2:] = x[n // 2:] * 2
        check(a, x.double().exp())
        check(b, want.double())


def test_cumprod_on_dim_0_and_minus_1_of_3d_and_a_bf16_method():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3, 4, 16), F32), h: pypto.Tensor((4, 16), BF16),
          a: pypto.Tensor((3, 4, 16), F32), b: pypto.Tensor((3, 4, 16), F32),
          c: pypto.Tensor((4, 16), BF16)):
        pypto.set_vec_tile_shapes(3, 4, 16)
        a[:] = pypto.cumprod(x, 0)
        b[:] = pypto.cumprod(x, dim=-1)
        pypto.set_vec_tile_shapes(4, 16)
        c[:] = h.cumprod(-1)

    x = 1 + 0.1 * rand((3, 4, 16), seed=1)
    h = (1 + 0.05 * rand((4, 16), seed=2)).bfloat16()
    a, b, c = torch.zeros(3, 4, 16), torch.zeros(3, 4, 16), torch.zeros(4, 16, dtype=torch.bfloat16)
    k(x, h, a, b, c)
    check(a, x.double().cumprod(0))
    check(b, x.double().cumprod(-1))
    check(c, h.double().cumprod(-1))


def test_scatter_update_into_a_4d_paged_cache_of_a_dynamic_block_count():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(cache: pypto.Tensor([pypto.DYNAMIC, 4, 1, 16], pypto.DT_FP16),
          idx: pypto.Tensor((2, 3), I32), src: pypto.Tensor((2, 3, 1, 16), pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(1, 3, 1, 16)
        cache[:] = pypto.scatter_update(cache, -2, idx, src)

    for blocks in (3, 5):
        cache = rand((blocks, 4, 1, 16), torch.float16, blocks)
        idx = torch.tensor([[0, 5, 9], [blocks * 4 - 1, 2, 6]], dtype=torch.int32)
        src = rand((2, 3, 1, 16), torch.float16, 11)
        want = cache.clone().reshape(blocks * 4, 16)
        want[idx.flatten().long()] = src.reshape(6, 16)
        k(cache, idx, src)
        check(cache, want.reshape(blocks, 4, 1, 16).double())


def test_a_return_shape_mismatch_names_the_input_that_differs_from_its_annotation():
    # a returning kernel traces its inputs at their own shapes, so a wrong input shows up first
    # as a wrong result shape
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((4, 8), F32)) -> pypto.Tensor((4, 8), F32):
        pypto.set_vec_tile_shapes(4, 8)
        return x * 2.0

    with pytest.raises(ValueError, match=r"kernel 'k': returned tensor 0 has shape \[4, 16\], "
                       r"which does not match the return annotation pypto\.Tensor\(\[4, 8\], "
                       r"DT_FP32\) at axis 1; the inputs are traced at their own shapes and these "
                       r"differ from their annotations: 'x' \[4, 16\] \(annotated "
                       r"pypto\.Tensor\(\[4, 8\], DT_FP32\)\)"):
        k(rand((4, 16)))
