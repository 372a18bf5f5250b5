# SPDX-License-Identifier: Apache-2.0
"""More ML operator kernels written from PyPTO's API pages the way a kernel author new to this
suite writes them: activations, norms and losses from primitives on fp16/bf16 inputs cast to
fp32, reductions over the first and middle axes of 3-D tensors with keepdim True and False,
odd shapes (1x1, 7x33, 3x5x129), dynamic axes walked with pypto.loop and valid_shape views,
gather/scatter/index ops (and the x[dim:index] subscripts), Tensor methods, integer ops, and
matmuls with transposes, epilogues and fp16 inputs, each compared with torch within PyPTO's
tolerances (or an exact error message for a misuse of the documented API)."""

import math

import pytest
import torch

import pypto
from ml_kernels import (BF16, F16, F32, I8, I32, SIM, check, log_softmax_core, rand,
                        softmax_core, native_and_output)  # noqa: F401 (an autouse fixture)

I64 = pypto.DT_INT64


def _ints(shape, lo, hi, seed, dtype=torch.int32):
    return torch.randint(lo, hi, shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# -- activations -------------------------------------------------------------------------------


def test_gelu_erf_fp16_odd_shape_computed_in_fp32():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((7, 33), F16)) -> pypto.Tensor((7, 33), F16):
        pypto.set_vec_tile_shapes(8, 16)
        xf = pypto.cast(x, F32)
        return pypto.cast(xf * 0.5 * (1.0 + pypto.erf(xf * (1.0 / math.sqrt(2.0)))), F16)

    x = rand((7, 33), torch.float16, 1, 2.0)
    check(k(x), torch.nn.functional.gelu(x.double()))


def test_silu_1x1():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((1, 1), F32), out: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(1, 8)
        out[:] = pypto.mul(x, pypto.sigmoid(x))

    x, out = torch.tensor([[0.7]]), torch.zeros(1, 1)
    k(x, out)
    check(out, torch.nn.functional.silu(x.double()))


def test_swiglu_from_the_packed_halves_of_one_bf16_input():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((24, 192), BF16)) -> pypto.Tensor((24, 96), BF16):
        pypto.set_vec_tile_shapes(8, 96)
        gate = pypto.cast(pypto.view(x, [24, 96], [0, 0]), F32)
        up = pypto.cast(pypto.view(x, [24, 96], [0, 96]), F32)
        return pypto.cast(gate / (1.0 + pypto.exp(pypto.neg(gate))) * up, BF16)

    x = rand((24, 192), torch.bfloat16, 2).double()
    check(k(x.bfloat16()), torch.nn.functional.silu(x[:, :96]) * x[:, 96:])


def test_dropout_mask_and_scale_from_a_uniform_input_bf16():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((8, 64), BF16),
          u: pypto.Tensor((8, 64), F32)) -> pypto.Tensor((8, 64), BF16):
        pypto.set_vec_tile_shapes(8, 64)
        return pypto.cast(pypto.where(u >= 0.1, pypto.cast(x, F32) / 0.9, 0.0), BF16)

    x = rand((8, 64), torch.bfloat16, 25)
    u = torch.rand(8, 64, generator=torch.Generator().manual_seed(26))
    check(k(x, u), torch.where(u >= 0.1, x.double() / 0.9, 0.0))


def test_prelu_per_channel_and_lrelu_fp16():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 4, 24), F32), w: pypto.Tensor((4,), F32),
          h: pypto.Tensor((6, 20), F16), o1: pypto.Tensor((2, 4, 24), F32),
          o2: pypto.Tensor((6, 20), F16)):
        pypto.set_vec_tile_shapes(1, 4, 24)
        o1[:] = pypto.prelu(x, w)
        pypto.set_vec_tile_shapes(6, 32)
        o2[:] = pypto.lrelu(h, 0.2)

    x, w = rand((2, 4, 24), seed=30), torch.tensor([0.1, 0.2, 0.25, 0.5])
    h = rand((6, 20), torch.float16, 16)
    o1, o2 = torch.zeros(2, 4, 24), torch.zeros(6, 20, dtype=torch.float16)
    k(x, w, h, o1, o2)
    check(o1, torch.nn.functional.prelu(x.double(), w.double()))
    check(o2, torch.nn.functional.leaky_relu(h.double(), 0.2))


def test_tensor_methods_softmax_where_and_operators():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor[[16, 32], pypto.DT_FP32], y: pypto.Tensor[[16, 32], pypto.DT_FP32],
          sm: pypto.Tensor((16, 32), F32), relu: pypto.Tensor((16, 32), F32),
          ops: pypto.Tensor((16, 32), F32)):
        pypto.set_vec_tile_shapes(16, 32)
        e = (x - x.amax(-1, True)).exp()
        sm[:] = e.div(e.sum(-1, True))
        relu[:] = x.where(x > 0, 0.0)  # PyPTO's Tensor.where(condition, y): self where it holds
        ops[:] = (x // 0.5) + (x % 0.75) + x ** 2 + 2.0 / (pypto.abs(y) + 1.0) - (-x)

    x, y = rand((16, 32), seed=1, scale=2.0), rand((16, 32), seed=2)
    sm, relu, ops = torch.zeros(16, 32), torch.zeros(16, 32), torch.zeros(16, 32)
    k(x, y, sm, relu, ops)
    xd, yd = x.double(), y.double()
    check(sm, torch.softmax(xd, -1))
    check(relu, torch.relu(xd))
    check(ops, torch.floor(xd / 0.5) + torch.remainder(xd, 0.75) + xd ** 2 + 2 / (yd.abs() + 1)
          + xd)


# -- norms -------------------------------------------------------------------------------------


def test_layer_norm_fp16_in_fp32_with_1xn_affine_and_a_tail():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((10, 200), F16), g: pypto.Tensor((1, 200), F16),
          b: pypto.Tensor((1, 200), F16)) -> pypto.Tensor((10, 200), F16):
        pypto.set_vec_tile_shapes(4, 64)
        xf = pypto.cast(x, F32)
        d = xf - pypto.sum(xf, -1, keepdim=True) / 200.0
        var = pypto.sum(d * d, -1, keepdim=True) / 200.0
        y = d * pypto.rsqrt(var + 1e-5) * pypto.cast(g, F32) + pypto.cast(b, F32)
        return pypto.cast(y, F16)

    x = rand((10, 200), torch.float16, 3)
    g, b = rand((1, 200), torch.float16, 4), rand((1, 200), torch.float16, 5)
    want = torch.nn.functional.layer_norm(x.double(), (200,), g.double()[0], b.double()[0], 1e-5)
    check(k(x, g, b), want)


def test_rms_norm_bf16_3d_reduced_on_dim_2():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 5, 96), BF16),
          w: pypto.Tensor((96,), BF16)) -> pypto.Tensor((2, 5, 96), BF16):
        pypto.set_vec_tile_shapes(1, 5, 96)
        xf = pypto.cast(x, F32)
        ms = pypto.sum(pypto.mul(xf, xf), dim=2, keepdim=True) * (1.0 / 96)
        return pypto.cast(xf * pypto.rsqrt(ms + 1e-6) * pypto.cast(w, F32), BF16)

    x, w = rand((2, 5, 96), torch.bfloat16, 6), rand((96,), torch.bfloat16, 7)
    xd = x.double()
    check(k(x, w), xd / torch.sqrt((xd * xd).mean(-1, keepdim=True) + 1e-6) * w.double())


def test_group_norm_by_reshaping_channels_into_groups():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 8, 16), F32)) -> pypto.Tensor((2, 8, 16), F32):
        pypto.set_vec_tile_shapes(1, 4, 32)
        g = pypto.reshape(x, [2, 4, 32])
        c = g - pypto.sum(g, -1, True) / 32
        y = c * pypto.rsqrt(pypto.sum(c * c, -1, True) / 32 + 1e-5)
        pypto.set_vec_tile_shapes(1, 8, 16)
        return pypto.reshape(y, [2, 8, 16])

    x = rand((2, 8, 16), seed=23)
    check(k(x), torch.nn.functional.group_norm(x.double(), 4, eps=1e-5))


def test_unbiased_var_and_std_over_the_first_axis():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((50, 12), F32), v: pypto.Tensor((1, 12), F32),
          s: pypto.Tensor((12,), F32), b: pypto.Tensor((50, 1), F32)):
        pypto.set_vec_tile_shapes(16, 12)
        v[:] = pypto.var(x, 0, keepdim=True)
        s[:] = pypto.std(x, 0)
        pypto.set_vec_tile_shapes(16, 16)  # a last-axis reduction's tile is 32-byte aligned
        b[:] = pypto.var(x, -1, False, True)

    x = rand((50, 12), seed=7, scale=2.0)
    v, s, b = torch.zeros(1, 12), torch.zeros(12), torch.zeros(50, 1)
    k(x, v, s, b)
    check(v, x.double().var(0, keepdim=True))
    check(s, x.double().std(0))
    check(b, x.double().var(-1, unbiased=False, keepdim=True))


def test_layer_norm_rows_unrolled_with_a_tail_block():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((24, 64), F32), out: pypto.Tensor((24, 64), F32)):
        pypto.set_vec_tile_shapes(4, 64)
        for i, n in pypto.loop_unroll(0, 6, 1, unroll_list=[4, 1]):
            rows = x[i * 4:(i + n) * 4, :]
            c = rows - pypto.sum(rows, -1, True) / 64
            out[i * 4:(i + n) * 4, :] = c * pypto.rsqrt(pypto.sum(c * c, -1, True) / 64 + 1e-5)

    x, out = rand((24, 64), seed=4), torch.zeros(24, 64)
    k(x, out)
    check(out, torch.nn.functional.layer_norm(x.double(), (64,), eps=1e-5))


# -- softmax and reductions --------------------------------------------------------------------


def test_log_softmax_and_logsumexp_over_the_middle_axis_3x5x129():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3, 5, 129), F32), lsm: pypto.Tensor((3, 5, 129), F32),
          lse: pypto.Tensor((3, 129), F32)):
        pypto.set_vec_tile_shapes(1, 5, 64)
        m = pypto.amax(x, 1, True)
        s = x - m
        lsm[:] = s - pypto.log(pypto.sum(pypto.exp(s), 1, True))
        lse[:] = pypto.log(pypto.sum(pypto.exp(s), 1)) + pypto.amax(x, 1)

    x = rand((3, 5, 129), seed=8, scale=3.0)
    lsm, lse = torch.zeros(3, 5, 129), torch.zeros(3, 129)
    k(x, lsm, lse)
    check(lsm, torch.log_softmax(x.double(), 1))
    check(lse, torch.logsumexp(x.double(), 1))


def test_softmax_20000_wide_rows_with_a_512_tile():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 20000), F32)) -> pypto.Tensor((2, 20000), F32):
        pypto.set_vec_tile_shapes(1, 512)
        return softmax_core(x)

    x = rand((2, 20000), seed=28, scale=4.0)
    check(k(x), torch.softmax(x.double(), -1))


def test_softmax_1d_and_a_1d_sum_keepdim():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((129,), F32), sm: pypto.Tensor((129,), F32), s: pypto.Tensor((1,), F32)):
        pypto.set_vec_tile_shapes(64)
        sm[:] = softmax_core(x, 0)
        s[:] = pypto.sum(x, 0, keepdim=True)

    x, sm, s = rand((129,), seed=2), torch.zeros(129), torch.zeros(1)
    k(x, sm, s)
    check(sm, torch.softmax(x.double(), 0))
    check(s, x.double().sum(0, keepdim=True))


def test_softmax_builtin_method_over_dim_1_of_a_3d_tensor():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((2, 24, 8), F32)) -> pypto.Tensor((2, 24, 8), F32):
        pypto.set_vec_tile_shapes(1, 24, 8)
        return x.softmax(1)

    x = rand((2, 24, 8), seed=15)
    check(k(x), torch.softmax(x.double(), 1))


def test_causal_softmax_with_a_mask_built_from_arange():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(s: pypto.Tensor((16, 16), F32)) -> pypto.Tensor((16, 16), F32):
        pypto.set_vec_tile_shapes(16, 16)
        rows = pypto.reshape(pypto.arange(16), [16, 1])
        cols = pypto.reshape(pypto.arange(16), [1, 16])
        return softmax_core(pypto.where(cols <= rows, s, float("-inf")))

    s = rand((16, 16), seed=6)
    mask = torch.ones(16, 16, dtype=torch.bool).tril()
    check(k(s), torch.softmax(s.double().masked_fill(~mask, float("-inf")), -1))


def test_sums_over_the_first_axis_and_two_axes_of_3d_tensors():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((9, 6, 40), F32), s0: pypto.Tensor((6, 40), F32),
          s12: pypto.Tensor((9, 1, 1), F32)):
        pypto.set_vec_tile_shapes(4, 6, 40)
        s0[:] = pypto.sum(x, 0)
        s12[:] = pypto.sum(x, [1, 2], True) / 240

    x = rand((9, 6, 40), seed=24)
    s0, s12 = torch.zeros(6, 40), torch.zeros(9, 1, 1)
    k(x, s0, s12)
    check(s0, x.double().sum(0))
    check(s12, x.double().mean((1, 2), keepdim=True))


def test_cumsum_middle_axis_and_exclusive_cumsum_fp16():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3, 5, 129), F32), h: pypto.Tensor((4, 100), F16),
          c: pypto.Tensor((3, 5, 129), F32), e: pypto.Tensor((4, 100), F16)):
        pypto.set_vec_tile_shapes(1, 5, 64)
        c[:] = pypto.cumsum(x, 1)
        pypto.set_vec_tile_shapes(4, 128)
        hf = pypto.cast(h, F32)
        e[:] = pypto.cast(pypto.cumsum(hf, -1) - hf, F16)

    x, h = rand((3, 5, 129), seed=20), rand((4, 100), torch.float16, 16, 0.2)
    c, e = torch.zeros(3, 5, 129), torch.zeros(4, 100, dtype=torch.float16)
    k(x, h, c, e)
    check(c, x.double().cumsum(1))
    check(e, h.double().cumsum(-1) - h.double())


def test_arg_and_min_reductions_over_first_and_middle_axes():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((37, 20), F32), y: pypto.Tensor((3, 17, 40), BF16),
          z: pypto.Tensor((20, 48), pypto.DT_INT16), ax: pypto.Tensor((20,), I32),
          ay: pypto.Tensor((3, 1, 40), I32), mz: pypto.Tensor((48,), pypto.DT_INT16)):
        pypto.set_vec_tile_shapes(37, 16)
        ax[:] = pypto.argmax(x, 0)
        pypto.set_vec_tile_shapes(1, 17, 40)
        ay[:] = pypto.argmax(y, 1, keepdim=True)
        pypto.set_vec_tile_shapes(8, 48)
        mz[:] = pypto.amin(z, 0)

    x = rand((37, 20), seed=21)
    # distinct small integers: exact in bf16, so the arg max has no ties
    y = torch.randperm(3 * 17 * 40, generator=torch.Generator().manual_seed(17))
    y = (y % 256).reshape(3, 17, 40).to(torch.bfloat16)
    z = _ints((20, 48), -3000, 3000, 20, torch.int16)
    ax, ay = torch.zeros(20, dtype=torch.int32), torch.zeros(3, 1, 40, dtype=torch.int32)
    mz = torch.zeros(48, dtype=torch.int16)
    k(x, y, z, ax, ay, mz)
    assert torch.equal(ax, x.argmax(0).int())
    assert torch.equal(ay, y.float().argmax(1, keepdim=True).int())
    assert torch.equal(mz, z.amin(0))


def test_amax_of_a_1x1_fp16_without_keepdim():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((1, 1), F16)) -> pypto.Tensor((1,), F16):
        pypto.set_vec_tile_shapes(1, 16)
        return pypto.amax(x, -1)

    check(k(torch.tensor([[0.25]], dtype=torch.float16)), torch.tensor([0.25], dtype=torch.float64))


def test_topk_smallest_sort_and_argsort():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((7, 33), F32), y: pypto.Tensor((4, 64), F32),
          v: pypto.Tensor((7, 3), F32), i: pypto.Tensor((7, 3), I32),
          sv: pypto.Tensor((4, 64), F32), si: pypto.Tensor((4, 64), I32),
          ai: pypto.Tensor((4, 64), I32)):
        pypto.set_vec_tile_shapes(7, 64)
        v[:], i[:] = pypto.topk(x, 3, -1, False)
        pypto.set_vec_tile_shapes(4, 64)
        sv[:], si[:] = pypto.sort(y, -1, False)
        ai[:] = pypto.argsort(y, -1, True)

    x, y = rand((7, 33), seed=22), rand((4, 64), seed=31)
    v, i = torch.zeros(7, 3), torch.zeros(7, 3, dtype=torch.int32)
    sv = torch.zeros(4, 64)
    si, ai = torch.zeros(4, 64, dtype=torch.int32), torch.zeros(4, 64, dtype=torch.int32)
    k(x, y, v, i, sv, si, ai)
    top = torch.topk(x, 3, -1, largest=False)
    check(v, top.values.double())
    assert torch.equal(i, top.indices.int())
    asc = torch.sort(y, -1)
    check(sv, asc.values.double())
    assert torch.equal(si, asc.indices.int())
    assert torch.equal(ai, torch.sort(y, dim=-1, descending=True, stable=True).indices.int())


def test_column_sum_carried_across_a_loop():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((64, 48), F32), out: pypto.Tensor((1, 48), F32)):
        pypto.set_vec_tile_shapes(16, 48)
        acc = pypto.zeros([1, 48], dtype=F32)
        for i in pypto.loop(0, 4, 1, name="LOOP", idx_name="i"):
            acc = acc + pypto.sum(x[i * 16:(i + 1) * 16, :], 0, True)
        out[:] = acc

    x, out = rand((64, 48), seed=4), torch.zeros(1, 48)
    k(x, out)
    check(out, x.double().sum(0, keepdim=True))


# -- dynamic axes ------------------------------------------------------------------------------


def test_softmax_argmax_and_cumsum_over_a_dynamic_valid_width():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, pypto.DYNAMIC], F32), sm: pypto.Tensor([4, pypto.DYNAMIC], F32),
          am: pypto.Tensor([4, 1], I32), cs: pypto.Tensor([4, pypto.DYNAMIC], F32)):
        pypto.set_vec_tile_shapes(4, 128)
        n = x.shape[1]
        t = pypto.view(x, [4, 128], [0, 0], valid_shape=[4, n])
        pypto.assemble(softmax_core(t), [0, 0], sm)
        am[:] = pypto.argmax(t, -1, True)
        pypto.assemble(pypto.cumsum(t, 1), [0, 0], cs)

    for n in (100, 128, 1):
        # all negative: a padded zero would win the arg max
        x = -rand((4, n), seed=n, scale=3.0).abs() - 0.5
        sm, am, cs = torch.zeros(4, n), torch.zeros(4, 1, dtype=torch.int32), torch.zeros(4, n)
        k(x, sm, am, cs)
        check(sm, torch.softmax(x.double(), -1))
        assert torch.equal(am, x.argmax(-1, keepdim=True).int())
        check(cs, x.double().cumsum(1))


def test_column_mean_divided_by_a_dynamic_row_count():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), out: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(128, 64)
        rows = x.shape[0]
        t = pypto.view(x, [128, 64], [0, 0], valid_shape=[rows, 64])
        out[:] = pypto.sum(t, 0, True) / rows

    for n in (100, 7):
        x, out = rand((n, 64), seed=n), torch.zeros(1, 64)
        k(x, out)
        check(out, x.double().mean(0, keepdim=True))


def test_log_softmax_of_a_dynamic_3d_batch_with_a_tail():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((bs, 3, 40), F32)) -> pypto.Tensor((bs, 3, 40), F32):
        out = pypto.tensor((bs, 3, 40), F32)
        pypto.set_vec_tile_shapes(2, 3, 40)
        for i in pypto.loop(0, (bs + 1) // 2, 1, name="LOOP_B", idx_name="i"):
            t = pypto.view(x, [2, 3, 40], [i * 2, 0, 0], valid_shape=[(bs - i * 2).min(2), 3, 40])
            pypto.assemble(log_softmax_core(t), [i * 2, 0, 0], out)
        return out

    for n in (5, 2):
        x = rand((n, 3, 40), seed=n)
        check(k(x), torch.log_softmax(x.double(), -1))


def test_silu_over_2d_tiles_of_two_dynamic_axes():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], F32),
          out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        r, c = x.shape[0], x.shape[1]
        for i in pypto.loop(0, (r + 7) // 8, 1, name="R", idx_name="i"):
            for j in pypto.loop(0, (c + 31) // 32, 1, name="C", idx_name="j"):
                t = pypto.view(x, [8, 32], [i * 8, j * 32],
                               valid_shape=[(r - i * 8).min(8), (c - j * 32).min(32)])
                pypto.assemble(pypto.sigmoid(t) * t, [i * 8, j * 32], out)

    for r, c in ((13, 70), (8, 32)):
        x, out = rand((r, c), seed=r), torch.zeros(r, c)
        k(x, out)
        check(out, torch.nn.functional.silu(x.double()))


def test_row_sum_accumulated_from_the_loop_begin():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((4, 256), F32), out: pypto.Tensor((4, 1), F32)):
        pypto.set_vec_tile_shapes(4, 64)
        for i in pypto.loop(0, 4, 1, name="L", idx_name="i"):
            part = pypto.sum(x[:, i * 64:(i + 1) * 64], -1, True)
            if pypto.is_loop_begin(i):
                out[:] = part
            else:
                out[:] = out + part

    x, out = rand((4, 256), seed=3), torch.zeros(4, 1)
    k(x, out)
    check(out, x.double().sum(-1, keepdim=True))


def test_expand_clone_blocks_with_a_valid_tail_as_its_page_writes_them():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((4, 1), F32), out: pypto.Tensor((4, 5), F32)):
        pypto.set_vec_tile_shapes(4, 2)
        for b_idx in pypto.loop(0, 3, 1, name="L", idx_name="b"):
            blk = pypto.expand_clone(a, [4, 2], valid_shape=[4, (5 - 2 * b_idx).min(2)])
            pypto.assemble(blk, [0, b_idx * 2], out)

    a, out = rand((4, 1), seed=1), torch.zeros(4, 5)
    k(a, out)
    check(out, a.double().expand(4, 5))


# -- losses ------------------------------------------------------------------------------------


def test_cross_entropy_as_logsumexp_minus_the_gathered_logit():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(logits: pypto.Tensor((12, 50), F32), tgt: pypto.Tensor((12, 1), I64),
          out: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(12, 64)
        m = pypto.amax(logits, -1, True)
        lse = pypto.log(pypto.sum(pypto.exp(logits - m), -1, True)) + m
        out[:] = pypto.sum(lse - pypto.gather(logits, 1, tgt), 0, True) / 12.0

    logits = rand((12, 50), seed=10, scale=2.0)
    tgt = _ints((12, 1), 0, 50, 11, torch.int64)
    out = torch.zeros(1, 1)
    k(logits, tgt, out)
    check(out, torch.nn.functional.cross_entropy(logits.double(), tgt[:, 0]).reshape(1, 1))


def test_nll_loss_per_row_from_one_hot_without_keepdim():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(logp: pypto.Tensor((16, 10), F32),
          tgt: pypto.Tensor((16,), I32)) -> pypto.Tensor((16,), F32):
        pypto.set_vec_tile_shapes(16, 16)
        return pypto.neg(pypto.sum(pypto.where(pypto.one_hot(tgt, 10) == 1, logp, 0.0), -1))

    logp = torch.log_softmax(rand((16, 10), seed=12), -1)
    tgt = _ints((16,), 0, 10, 13)
    check(k(logp, tgt), torch.nn.functional.nll_loss(logp.double(), tgt.long(), reduction="none"))


def test_mse_of_fp16_inputs_smooth_l1_and_huber():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(p: pypto.Tensor((33, 65), F16), t: pypto.Tensor((33, 65), F16),
          a: pypto.Tensor((20, 40), F32), b: pypto.Tensor((20, 40), F32),
          mse: pypto.Tensor((1, 1), F32), sl1: pypto.Tensor((20, 40), F32),
          hub: pypto.Tensor((20, 1), F32)):
        pypto.set_vec_tile_shapes(16, 32)
        d = pypto.cast(p, F32) - pypto.cast(t, F32)
        mse[:] = pypto.sum(pypto.sum(d * d, 1, True), 0, True) / (33 * 65)
        pypto.set_vec_tile_shapes(8, 40)
        ad = pypto.abs(a - b)
        sl1[:] = pypto.where(pypto.lt(ad, 0.5), ad * ad, ad - 0.25)  # beta 0.5
        q = pypto.clip(ad, max=1.0)
        hub[:] = pypto.sum(q * (ad - 0.5 * q), -1, True) / 40

    p, t = rand((33, 65), torch.float16, 14), rand((33, 65), torch.float16, 15)
    a, b = rand((20, 40), seed=16, scale=2.0), rand((20, 40), seed=17)
    mse, sl1, hub = torch.zeros(1, 1), torch.zeros(20, 40), torch.zeros(20, 1)
    k(p, t, a, b, mse, sl1, hub)
    F = torch.nn.functional
    check(mse, F.mse_loss(p.double(), t.double()).reshape(1, 1))
    check(sl1, F.smooth_l1_loss(a.double(), b.double(), reduction="none", beta=0.5))
    check(hub, F.huber_loss(a.double(), b.double(), reduction="none").mean(-1, keepdim=True))


def test_binary_cross_entropy_on_probabilities_with_log_clamped_at_minus_100():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(p: pypto.Tensor((16, 32), F32), t: pypto.Tensor((16, 32), F32),
          out: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(16, 32)
        lp = pypto.maximum(pypto.log(p), -100.0)
        lq = pypto.maximum(pypto.log(1.0 - p), -100.0)
        loss = pypto.neg(t * lp + (1.0 - t) * lq)
        out[:] = pypto.sum(pypto.sum(loss, 1, True), 0, True) / 512.0

    g = torch.Generator().manual_seed(19)
    p = torch.rand(16, 32, generator=g) * 0.98 + 0.01
    t = (torch.rand(16, 32, generator=g) > 0.5).float()
    out = torch.zeros(1, 1)
    k(p, t, out)
    check(out, torch.nn.functional.binary_cross_entropy(p.double(), t.double()).reshape(1, 1))


# -- elementwise, masks and integers -----------------------------------------------------------


def test_masked_fill_by_an_nx1_mask_clamp_by_tensors_and_an_outer_sum():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((16, 48), F32), keep: pypto.Tensor((16, 1), pypto.DT_BOOL),
          lo: pypto.Tensor((16, 48), F32), hi: pypto.Tensor((16, 48), F32),
          a: pypto.Tensor((16, 1), F32), b: pypto.Tensor((1, 48), F32),
          o1: pypto.Tensor((16, 48), F32), o2: pypto.Tensor((16, 48), F32),
          o3: pypto.Tensor((16, 48), F32)):
        pypto.set_vec_tile_shapes(16, 48)
        o1[:] = pypto.where(keep, x, -1e4)
        o2[:] = pypto.clip(x, lo, hi)
        o3[:] = pypto.add(a, b) * pypto.sub(a, b)

    x = rand((16, 48), seed=23, scale=3.0)
    keep = torch.rand(16, 1, generator=torch.Generator().manual_seed(24)) > 0.5
    lo = -torch.rand(16, 48, generator=torch.Generator().manual_seed(26))
    hi = torch.rand(16, 48, generator=torch.Generator().manual_seed(27))
    a, b = rand((16, 1), seed=29), rand((1, 48), seed=30)
    o1, o2, o3 = torch.zeros(16, 48), torch.zeros(16, 48), torch.zeros(16, 48)
    k(x, keep, lo, hi, a, b, o1, o2, o3)
    check(o1, x.double().masked_fill(~keep, -1e4))
    check(o2, torch.clamp(x.double(), lo.double(), hi.double()))
    check(o3, (a.double() + b.double()) * (a.double() - b.double()))


def test_nan_to_num_and_a_count_of_combined_masks():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((8, 64), F32), clean: pypto.Tensor((8, 64), F32),
          n: pypto.Tensor((8, 1), I32)):
        pypto.set_vec_tile_shapes(8, 64)
        clean[:] = pypto.where(pypto.isfinite(x), x, 0.0)
        m = pypto.logical_and(x > -0.5, pypto.logical_not(x > 0.5))
        n[:] = pypto.sum(pypto.cast(m, I32), -1, True)

    x = rand((8, 64), seed=11)
    x[0, 3], x[1, 4], x[2, 5] = float("nan"), float("inf"), float("-inf")
    clean, n = torch.zeros(8, 64), torch.zeros(8, 1, dtype=torch.int32)
    k(x, clean, n)
    check(clean, torch.nan_to_num(x.double(), 0.0, 0.0, 0.0))
    assert torch.equal(n, ((x > -0.5) & ~(x > 0.5)).int().sum(-1, keepdim=True).int())


def test_elementwise_math_of_two_inputs():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((8, 32), F32), y: pypto.Tensor((8, 32), F32),
          o: pypto.Tensor((8, 8, 32), F32)):
        pypto.set_vec_tile_shapes(8, 32)
        ax = pypto.abs(x) + 0.1
        o[0, :, :] = pypto.reciprocal(ax)
        o[1, :, :] = pypto.sign(x)
        o[2, :, :] = pypto.pow(ax, y)
        o[3, :, :] = pypto.atan2(x, y)
        o[4, :, :] = pypto.hypot(x, y)
        o[5, :, :] = pypto.log2(ax) + pypto.log10(ax)
        o[6, :, :] = pypto.expm1(x) - pypto.exp2(y)
        o[7, :, :] = pypto.fmod(x * 3.0, 1.5)

    x, y = rand((8, 32), seed=12, scale=2.0), rand((8, 32), seed=13)
    o = torch.zeros(8, 8, 32)
    k(x, y, o)
    xd, yd = x.double(), y.double()
    ax = xd.abs() + 0.1
    check(o, torch.stack([1 / ax, torch.sign(xd), ax ** yd, torch.atan2(xd, yd),
                          torch.hypot(xd, yd), torch.log2(ax) + torch.log10(ax),
                          torch.expm1(xd) - torch.exp2(yd), torch.fmod(xd * 3, 1.5)]))


def test_integer_bitwise_division_and_gcd_ops():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((4, 16), I32), b: pypto.Tensor((4, 16), I32),
          o: pypto.Tensor((9, 4, 16), I32)):
        pypto.set_vec_tile_shapes(4, 16)
        o[0, :, :] = pypto.bitwise_and(a, b)
        o[1, :, :] = pypto.remainder(a, b)
        o[2, :, :] = pypto.floor_div(a, b)
        o[3, :, :] = pypto.ceil_div(a, 7)
        o[4, :, :] = pypto.bitwise_left_shift(a, 2)
        o[5, :, :] = pypto.bitwise_right_shift(a, 1)
        o[6, :, :] = pypto.bitwise_xor(a, b)
        o[7, :, :] = pypto.bitwise_not(a)
        o[8, :, :] = pypto.gcd(a, pypto.abs(b))

    a = _ints((4, 16), -1000, 1000, 9)
    b = _ints((4, 16), 1, 13, 10) * torch.where(_ints((4, 16), 0, 2, 11) > 0, 1, -1).int()
    o = torch.zeros(9, 4, 16, dtype=torch.int32)
    k(a, b, o)
    want = torch.stack([a & b, torch.remainder(a, b), torch.div(a, b, rounding_mode="floor"),
                        -torch.div(-a, 7, rounding_mode="floor"), a << 2, a >> 1, a ^ b, ~a,
                        torch.gcd(a, b.abs())])
    assert torch.equal(o, want)


def test_integer_division_in_fp32_as_the_div_page_gives_it():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((1, 8), I32), b: pypto.Tensor((1, 8), I32), q: pypto.Tensor((1, 8), F32),
          q4: pypto.Tensor((1, 8), F32), fl: pypto.Tensor((1, 8), F32),
          r: pypto.Tensor((1, 8), F32)):
        pypto.set_vec_tile_shapes(1, 8)
        q[:] = pypto.div(a, b)  # DT_INT32 operands: divided in fp32, a DT_FP32 result
        q4[:] = a / 4
        fl[:] = a // 3  # PyPTO's Tensor.__floordiv__: floor(div(a, 3))
        r[:] = 2 / a

    a = torch.tensor([[-7, 7, -8, 9, 1, -1, 100, 5]], dtype=torch.int32)
    b = torch.tensor([[3, 3, 3, -2, 2, 2, 7, 5]], dtype=torch.int32)
    q, q4, fl, r = torch.zeros(1, 8), torch.zeros(1, 8), torch.zeros(1, 8), torch.zeros(1, 8)
    k(a, b, q, q4, fl, r)
    check(q, a.double() / b.double())
    check(q4, a.double() / 4)
    check(fl, torch.floor(a.double() / 3))
    check(r, 2 / a.double())


def test_pow_of_mixed_dtypes_promotes_as_the_pow_page_gives_it():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(h: pypto.Tensor((4, 8), F16), f: pypto.Tensor((4, 8), F32),
          b: pypto.Tensor((4, 8), BF16), i: pypto.Tensor((4, 8), I32),
          hf: pypto.Tensor((4, 8), F32), hb: pypto.Tensor((4, 8), F32),
          ih: pypto.Tensor((4, 8), F16), root: pypto.Tensor((4, 8), F32),
          sq: pypto.Tensor((4, 8), I32)):
        pypto.set_vec_tile_shapes(4, 8)
        hf[:] = pypto.pow(h, f)  # fp16 and fp32: fp32
        hb[:] = pypto.pow(h, b)  # fp16 and bf16: fp32
        ih[:] = pypto.pow(i, h)  # int32 and fp16: fp16
        root[:] = pypto.pow(i, 0.5)  # an int32 base to a float power: fp32
        sq[:] = pypto.pow(i, 2)

    h = (torch.rand(4, 8, generator=torch.Generator().manual_seed(1)) + 0.5).half()
    f, b = rand((4, 8), seed=2), rand((4, 8), torch.bfloat16, 3)
    i = _ints((4, 8), 0, 20, 4)
    hf, hb, root = torch.zeros(4, 8), torch.zeros(4, 8), torch.zeros(4, 8)
    ih, sq = torch.zeros(4, 8, dtype=torch.float16), torch.zeros(4, 8, dtype=torch.int32)
    k(h, f, b, i, hf, hb, ih, root, sq)
    check(hf, h.double() ** f.double())
    check(hb, h.double() ** b.double())
    check(ih, i.double() ** h.double())
    check(root, i.double() ** 0.5)
    assert torch.equal(sq, i * i)


def test_per_row_int8_quantize_and_dequantize():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((16, 64), F32), q: pypto.Tensor((16, 64), I8),
          scale: pypto.Tensor((16, 1), F32), deq: pypto.Tensor((16, 64), F16)):
        pypto.set_vec_tile_shapes(16, 64)
        sc = pypto.amax(pypto.abs(x), -1, True) / 127.0
        scale[:] = sc
        qi = pypto.cast(pypto.clip(pypto.round(x / sc), -127.0, 127.0), I8)
        q[:] = qi
        deq[:] = pypto.cast(qi, F16) * pypto.cast(sc, F16)

    x = rand((16, 64), seed=8, scale=3.0)
    q, sc = torch.zeros(16, 64, dtype=torch.int8), torch.zeros(16, 1)
    deq = torch.zeros(16, 64, dtype=torch.float16)
    k(x, q, sc, deq)
    want_sc = x.abs().amax(-1, keepdim=True) / 127.0
    check(sc, want_sc.double())
    want_q = torch.round(x / want_sc).clamp(-127, 127).to(torch.int8)
    assert torch.equal(q, want_q)
    check(deq, want_q.double() * want_sc.half().double())


def test_cast_saturation_and_rounding_modes_as_the_cast_page_gives_them():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(h: pypto.Tensor((3,), F16), x: pypto.Tensor((4, 8), F32), on: pypto.Tensor((3,), I8),
          off: pypto.Tensor((3,), I8), t: pypto.Tensor((4, 8), I32), r: pypto.Tensor((4, 8), I32),
          f: pypto.Tensor((4, 8), I32)):
        pypto.set_vec_tile_shapes(16)
        on[:] = pypto.cast(h, I8, satmode=pypto.SaturationMode.ON)
        off[:] = pypto.cast(h, I8, satmode=pypto.SaturationMode.OFF)
        pypto.set_vec_tile_shapes(4, 8)
        t[:] = pypto.cast(x, I32)
        r[:] = pypto.cast(x, I32, pypto.CastMode.CAST_RINT)
        f[:] = pypto.cast(x, I32, mode=pypto.CastMode.CAST_FLOOR)

    h = torch.tensor([300.0, -300.0, 50.0], dtype=torch.float16)
    x = rand((4, 8), seed=1, scale=5.0)
    x[0, :4] = torch.tensor([0.5, 1.5, -0.5, -2.5])
    on, off = torch.zeros(3, dtype=torch.int8), torch.zeros(3, dtype=torch.int8)
    t, r, f = (torch.zeros(4, 8, dtype=torch.int32) for _ in range(3))
    k(h, x, on, off, t, r, f)
    assert on.tolist() == [127, -128, 50] and off.tolist() == [44, -44, 50]
    assert torch.equal(t, x.to(torch.int32))
    assert torch.equal(r, torch.round(x).to(torch.int32))
    assert torch.equal(f, torch.floor(x).to(torch.int32))


# -- indexing ----------------------------------------------------------------------------------


def test_gather_on_both_axes_and_index_select_of_columns():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((6, 40), F32), i1: pypto.Tensor((6, 5), I32),
          y: pypto.Tensor((30, 8), F32), i0: pypto.Tensor((4, 8), I64),
          h: pypto.Tensor((8, 50), F16), cols: pypto.Tensor((7,), I32),
          g1: pypto.Tensor((6, 5), F32), g0: pypto.Tensor((4, 8), F32),
          sel: pypto.Tensor((8, 7), F16)):
        pypto.set_vec_tile_shapes(6, 40)
        g1[:] = pypto.gather(x, 1, i1)
        pypto.set_vec_tile_shapes(32, 8)
        g0[:] = pypto.gather(y, 0, i0)
        pypto.set_vec_tile_shapes(8, 64)
        sel[:] = pypto.index_select(h, 1, cols)

    x, y, h = rand((6, 40), seed=13), rand((30, 8), seed=15), rand((8, 50), torch.float16, 17)
    i1, i0 = _ints((6, 5), 0, 40, 14), _ints((4, 8), 0, 30, 16, torch.int64)
    cols = torch.tensor([0, 49, 3, 3, 17, 8, 25], dtype=torch.int32)
    g1, g0, sel = torch.zeros(6, 5), torch.zeros(4, 8), torch.zeros(8, 7, dtype=torch.float16)
    k(x, i1, y, i0, h, cols, g1, g0, sel)
    check(g1, torch.gather(x.double(), 1, i1.long()))
    check(g0, torch.gather(y.double(), 0, i0))
    check(sel, torch.index_select(h.double(), 1, cols.long()))


def test_gather_and_scatter_subscripts_as_the_getitem_page_writes_them():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((4, 4), F32), idx: pypto.Tensor((1, 4), I32),
          v: pypto.Tensor((1, 4), F32), diag: pypto.Tensor((1, 4), F32)):
        pypto.set_vec_tile_shapes(4, 4)
        diag[:] = a[0:idx]  # pypto.gather(a, 0, idx)
        a[0:idx] = v  # pypto.scatter(a, 0, idx, v), in place

    a = torch.arange(1, 17, dtype=torch.float32).reshape(4, 4)
    idx = torch.tensor([[0, 1, 2, 3]], dtype=torch.int32)
    v, diag = torch.full((1, 4), 10.0), torch.zeros(1, 4)
    want = a.double().scatter(0, idx.long(), 10.0)
    k(a, idx, v, diag)
    check(diag, torch.tensor([[1.0, 6.0, 11.0, 16.0]], dtype=torch.float64))
    check(a, want)


def test_gather_subscript_needs_an_int_dim():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((4, 4), F32),
          idx: pypto.Tensor((1, 4), I32)) -> pypto.Tensor((1, 4), F32):
        pypto.set_vec_tile_shapes(4, 4)
        return a[None:idx]

    with pytest.raises(pypto.PyptoTypeError,
                       match=r"Tensor.__getitem__: x\[dim:index\] is "
                             r"pypto.gather\(x, dim, index\): dim \(the slice start\) must be an "
                             r"int, got None"):
        k(torch.zeros(4, 4), torch.zeros(1, 4, dtype=torch.int32))


def test_int_subscripts_dropping_an_axis_and_an_element_read_as_an_offset():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((4, 4), F32), b: pypto.Tensor((2,), F32), x: pypto.Tensor((16, 32), F32),
          start: pypto.Tensor((1, 1), I32), row: pypto.Tensor((2,), F32),
          win: pypto.Tensor((4, 32), F32)):
        pypto.set_vec_tile_shapes(4, 4)
        row[:] = a[-1, -3:-1] * 2.0
        a[0, 1:3] = b
        pypto.set_vec_tile_shapes(4, 32)
        win[:] = pypto.view(x, [4, 32], [start[0, 0], 0]) + 1.0

    a = torch.arange(1, 17, dtype=torch.float32).reshape(4, 4)
    b, x = torch.tensor([10.0, 11.0]), rand((16, 32), seed=3)
    start = torch.tensor([[5]], dtype=torch.int32)
    row, win = torch.zeros(2), torch.zeros(4, 32)
    want_a = a.clone()
    want_a[0, 1:3] = b
    k(a, b, x, start, row, win)
    check(row, torch.tensor([28.0, 30.0], dtype=torch.float64))
    check(a, want_a.double())
    check(win, x[5:9].double() + 1)


def test_scatter_update_of_kv_caches_2d_and_4d():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(c2: pypto.Tensor((8, 3), I32), i2: pypto.Tensor((2, 2), I64),
          s2: pypto.Tensor((4, 3), I32), c4: pypto.Tensor((2, 6, 1, 16), BF16),
          i4: pypto.Tensor((2, 2), I32), s4: pypto.Tensor((2, 2, 1, 16), BF16),
          o4: pypto.Tensor((2, 6, 1, 16), BF16)):
        pypto.set_vec_tile_shapes(2, 3)
        c2[:] = pypto.scatter_update(c2, -2, i2, s2)
        pypto.set_vec_tile_shapes(1, 2, 1, 16)
        o4[:] = pypto.scatter_update(c4, -2, i4, s4)

    c2, i2 = torch.zeros(8, 3, dtype=torch.int32), torch.tensor([[1, 2], [4, 5]])
    s2 = torch.arange(1, 13, dtype=torch.int32).reshape(4, 3)
    c4 = rand((2, 6, 1, 16), torch.bfloat16, 18)
    i4 = torch.tensor([[1, 8], [4, 10]], dtype=torch.int32)
    s4, o4 = rand((2, 2, 1, 16), torch.bfloat16, 19), torch.zeros(2, 6, 1, 16, dtype=torch.bfloat16)
    k(c2, i2, s2, c4, i4, s4, o4)
    want2 = torch.zeros(8, 3, dtype=torch.int32)
    want2[[1, 2, 4, 5]] = s2
    assert torch.equal(c2, want2)
    want4 = c4.clone()
    for i in range(2):
        for j in range(2):
            p = int(i4[i, j])
            want4[p // 6, p % 6] = s4[i, j]
    assert torch.equal(o4, want4)


def test_scatter_a_scalar_scatter_add_index_add_and_index_put():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3, 5), F32), i: pypto.Tensor((2, 2), I64), y: pypto.Tensor((4, 10), F32),
          j: pypto.Tensor((4, 3), I32), s: pypto.Tensor((4, 3), F32), z: pypto.Tensor((5, 16), F32),
          r: pypto.Tensor((3,), I32), zs: pypto.Tensor((3, 16), F32), w: pypto.Tensor((10, 8), F32),
          wr: pypto.Tensor((4,), I32), wv: pypto.Tensor((4, 8), F32), o1: pypto.Tensor((3, 5), F32),
          o2: pypto.Tensor((4, 10), F32), o3: pypto.Tensor((5, 16), F32)):
        pypto.set_vec_tile_shapes(3, 5)
        o1[:] = pypto.scatter(x, 0, i, 2.0)
        pypto.set_vec_tile_shapes(4, 16)
        o2[:] = pypto.scatter(y, 1, j, s, reduce="add")
        pypto.set_vec_tile_shapes(3, 16)
        o3[:] = pypto.index_add(z, 0, r, zs, alpha=0.5)
        pypto.set_vec_tile_shapes(4, 8)
        pypto.index_put_(w, (wr,), wv, accumulate=True)

    x, i = torch.zeros(3, 5), torch.tensor([[1, 2], [0, 1]])
    y, s = rand((4, 10), seed=20), rand((4, 3), seed=21)
    j = torch.tensor([[0, 0, 9], [1, 2, 1], [5, 6, 7], [3, 3, 3]], dtype=torch.int32)
    z, zs = rand((5, 16), seed=22), rand((3, 16), seed=23)
    r = torch.tensor([0, 4, 0], dtype=torch.int32)
    w, wv = rand((10, 8), seed=13), rand((4, 8), seed=14)
    wr = torch.tensor([1, 3, 1, 9], dtype=torch.int32)
    want_w = w.double().index_put((wr.long(),), wv.double(), accumulate=True)
    o1, o2, o3 = torch.zeros(3, 5), torch.zeros(4, 10), torch.zeros(5, 16)
    k(x, i, y, j, s, z, r, zs, w, wr, wv, o1, o2, o3)
    check(o1, torch.zeros(3, 5, dtype=torch.float64).scatter(0, i, 2.0))
    check(o2, y.double().scatter_add(1, j.long(), s.double()))
    check(o3, z.double().index_add(0, r.long(), zs.double(), alpha=0.5))
    check(w, want_w)


# -- layout and rotary embedding ---------------------------------------------------------------


def test_rope_on_3d_heads_with_views_and_concat():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(q: pypto.Tensor((8, 4, 32), F32), cos: pypto.Tensor((8, 1, 32), F32),
          sin: pypto.Tensor((8, 1, 32), F32)) -> pypto.Tensor((8, 4, 32), F32):
        pypto.set_vec_tile_shapes(4, 4, 32)
        x1 = pypto.view(q, [8, 4, 16], [0, 0, 0])
        x2 = pypto.view(q, [8, 4, 16], [0, 0, 16])
        return q * cos + pypto.concat([pypto.neg(x2), x1], dim=-1) * sin

    q = rand((8, 4, 32), seed=9)
    ang = torch.arange(8).double()[:, None] * torch.arange(32).double()[None] / 32
    cos, sin = torch.cos(ang).float().reshape(8, 1, 32), torch.sin(ang).float().reshape(8, 1, 32)
    qd = q.double()
    rotated = torch.cat([-qd[..., 16:], qd[..., :16]], -1)
    check(k(q, cos, sin), qd * cos.double() + rotated * sin.double())


def test_rope_bf16_with_angles_from_arange():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((8, 32), BF16),
          inv_freq: pypto.Tensor((1, 16), F32)) -> pypto.Tensor((8, 32), BF16):
        pypto.set_vec_tile_shapes(8, 32)
        ang = pypto.cast(pypto.reshape(pypto.arange(8), [8, 1]), F32) * inv_freq
        c, s = pypto.cos(ang), pypto.sin(ang)
        xf = pypto.cast(x, F32)
        a, b = xf[:, 0:16], xf[:, 16:32]
        return pypto.cast(pypto.concat([a * c - b * s, b * c + a * s], -1), BF16)

    x = rand((8, 32), torch.bfloat16, 10)
    inv = (1.0 / (10000 ** (torch.arange(16).float() / 16))).reshape(1, 16)
    ang = torch.arange(8).double()[:, None] * inv.double()
    c, s = torch.cos(ang), torch.sin(ang)
    a, b = x.double()[:, :16], x.double()[:, 16:]
    check(k(x, inv), torch.cat([a * c - b * s, b * c + a * s], -1))


def test_concat_on_dim_0_unsqueeze_pad_and_triangles():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((3, 24), F32), b: pypto.Tensor((5, 24), F32), s: pypto.Tensor((8,), F32),
          x: pypto.Tensor((6, 30), F32), m: pypto.Tensor((12, 12), F32),
          o1: pypto.Tensor((8, 24), F32), o2: pypto.Tensor((6, 32), F32),
          o3: pypto.Tensor((12, 12), F32)):
        pypto.set_vec_tile_shapes(8, 24)
        o1[:] = pypto.concat([a, b], 0) * pypto.unsqueeze(s, 1)
        pypto.set_vec_tile_shapes(6, 32)
        o2[:] = pypto.pad(x, [0, 2], value=1.5)
        pypto.set_vec_tile_shapes(12, 12)
        o3[:] = pypto.triu(m, -1) + m.tril(2)

    a, b, s = rand((3, 24), seed=12), rand((5, 24), seed=13), rand((8,), seed=14)
    x, m = rand((6, 30), seed=14), rand((12, 12), seed=15)
    o1, o2, o3 = torch.zeros(8, 24), torch.zeros(6, 32), torch.zeros(12, 12)
    k(a, b, s, x, m, o1, o2, o3)
    check(o1, torch.cat([a, b]).double() * s.double()[:, None])
    check(o2, torch.nn.functional.pad(x.double(), (0, 2), value=1.5))
    check(o3, torch.triu(m.double(), -1) + torch.tril(m.double(), 2))


# -- matmul ------------------------------------------------------------------------------------


def test_bmm_with_both_operands_transposed_fp32():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((3, 40, 24), F32),
          b: pypto.Tensor((3, 56, 40), F32)) -> pypto.Tensor((3, 24, 56), F32):
        pypto.set_cube_tile_shapes([16, 32], [32, 64], [32, 64])
        return pypto.matmul(a, b, F32, a_trans=True, b_trans=True)

    a, b = rand((3, 40, 24), seed=1), rand((3, 56, 40), seed=2)
    check(k(a, b), a.double().transpose(1, 2) @ b.double().transpose(1, 2))


def test_linear_bias_then_tanh_gelu_fp16():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((20, 48), F16), w: pypto.Tensor((48, 72), F16),
          b: pypto.Tensor((1, 72), F32)) -> pypto.Tensor((20, 72), F16):
        pypto.set_cube_tile_shapes([16, 16], [48, 48], [64, 64])
        pypto.set_vec_tile_shapes(16, 72)
        h = pypto.matmul(x, w, F32) + b
        inner = (h + 0.044715 * pypto.pow(h, 3.0)) * math.sqrt(2 / math.pi)
        return pypto.cast(0.5 * h * (1.0 + pypto.tanh(inner)), F16)

    x, w = rand((20, 48), torch.float16, 3), rand((48, 72), torch.float16, 4, 0.2)
    b = rand((1, 72), seed=5)
    h = x.double() @ w.double() + b.double()
    check(k(x, w, b), torch.nn.functional.gelu(h, approximate="tanh"))


def test_odd_and_degenerate_matmul_shapes():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((7, 33), F32), b: pypto.Tensor((33, 5), F32),
          c: pypto.Tensor((1, 1), F32), d: pypto.Tensor((1, 1), F32), u: pypto.Tensor((32, 1), F16),
          v: pypto.Tensor((1, 48), F16), ab: pypto.Tensor((7, 5), F32),
          cd: pypto.Tensor((1, 1), F32), uv: pypto.Tensor((32, 48), F32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
        ab[:] = pypto.matmul(a, b, F32)
        cd[:] = pypto.matmul(c, d, F32)
        pypto.set_cube_tile_shapes([32, 32], [16, 16], [48, 48])
        uv[:] = pypto.matmul(u, v, F32)

    a, b = rand((7, 33), seed=5), rand((33, 5), seed=6)
    c, d = torch.tensor([[1.5]]), torch.tensor([[-2.0]])
    u, v = rand((32, 1), torch.float16, 3), rand((1, 48), torch.float16, 4)
    ab, cd, uv = torch.zeros(7, 5), torch.zeros(1, 1), torch.zeros(32, 48)
    k(a, b, c, d, u, v, ab, cd, uv)
    check(ab, a.double() @ b.double())
    check(cd, torch.tensor([[-3.0]], dtype=torch.float64))
    check(uv, u.double() @ v.double())


def test_matmul_operator_keeps_fp16_and_the_fp16_result_joins_an_fp32_residual():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((32, 64), F16), w: pypto.Tensor((64, 32), F16),
          r: pypto.Tensor((32, 32), F32), y: pypto.Tensor((32, 32), F16),
          out: pypto.Tensor((32, 32), F32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        y[:] = x @ w
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = pypto.cast(pypto.matmul(x, w, F16), F32) + r

    x, w = rand((32, 64), torch.float16, 6, 0.3), rand((64, 32), torch.float16, 7, 0.3)
    r = rand((32, 32), seed=8)
    y, out = torch.zeros(32, 32, dtype=torch.float16), torch.zeros(32, 32)
    k(x, w, r, y, out)
    exact = x.double() @ w.double()
    check(y, exact, 8e-3)
    check(out, (x.float() @ w.float()).half().double() + r.double(), 4e-3)


def test_transpose_and_head_split_before_the_matmuls():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((64, 32), F32), w: pypto.Tensor((64, 16), F32),
          q: pypto.Tensor((2, 16, 2, 32), F16), kk: pypto.Tensor((2, 16, 2, 32), F16),
          xtw: pypto.Tensor((32, 16), F32), s: pypto.Tensor((2, 2, 16, 16), F32)):
        pypto.set_vec_tile_shapes(32, 32)
        xt = pypto.transpose(x, 0, 1)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [16, 16])
        xtw[:] = pypto.matmul(xt, w, F32)
        pypto.set_vec_tile_shapes(1, 16, 2, 32)
        qh, kh = pypto.transpose(q, 1, 2), pypto.transpose(kk, 1, 2)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        s[:] = pypto.matmul(qh, kh, F32, b_trans=True) * (1 / math.sqrt(32))

    x, w = rand((64, 32), seed=26), rand((64, 16), seed=27)
    q, kk = rand((2, 16, 2, 32), torch.float16, 28), rand((2, 16, 2, 32), torch.float16, 29)
    xtw, s = torch.zeros(32, 16), torch.zeros(2, 2, 16, 16)
    k(x, w, q, kk, xtw, s)
    check(xtw, x.double().T @ w.double())
    qh, kh = q.double().transpose(1, 2), kk.double().transpose(1, 2)
    check(s, qh @ kh.transpose(-1, -2) / math.sqrt(32))


def test_batch_by_weight_matmul_after_reshaping_the_weight_to_3d():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3, 16, 32), BF16),
          w: pypto.Tensor((32, 24), BF16)) -> pypto.Tensor((3, 16, 24), F32):
        pypto.set_vec_tile_shapes(1, 16, 32)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        return pypto.matmul(x, pypto.reshape(w, [1, 32, 24]), F32)

    x, w = rand((3, 16, 32), torch.bfloat16, 7), rand((32, 24), torch.bfloat16, 8)
    check(k(x, w), x.double() @ w.double())


def test_matmul_of_mixed_ranks_says_to_reshape():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3, 16, 32), BF16),
          w: pypto.Tensor((32, 24), BF16)) -> pypto.Tensor((3, 16, 24), F32):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        return pypto.matmul(x, w, F32)

    with pytest.raises(pypto.PyptoValueError,
                       match=r"pypto.matmul: operands must have the same rank, got 3-D "
                             r"\[3, 16, 32\] and 2-D \[32, 24\]; for a batch broadcast reshape "
                             r"the 2-D one to \[1, 32, 24\]"):
        k(torch.zeros(3, 16, 32, dtype=torch.bfloat16), torch.zeros(32, 24, dtype=torch.bfloat16))


def test_bias_on_a_batched_matmul_is_refused_as_pypto_refuses_it():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((2, 16, 32), F16), b: pypto.Tensor((2, 32, 48), F16),
          bias: pypto.Tensor((1, 48), F32)) -> pypto.Tensor((2, 16, 48), F32):
        pypto.set_vec_tile_shapes(1, 16, 48)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [48, 48])
        return pypto.matmul(a, b, F32, extend_params={"bias_tensor": bias})

    with pytest.raises(pypto.PyptoValueError, match="extend_params apply to 2-D matmuls only"):
        k(torch.zeros(2, 16, 32, dtype=torch.float16), torch.zeros(2, 32, 48, dtype=torch.float16),
          torch.zeros(1, 48))


def test_pairwise_distances_and_cosine_similarities_by_matmul():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((32, 16), F32), b: pypto.Tensor((48, 16), F32),
          d: pypto.Tensor((32, 48), F32), cs: pypto.Tensor((32, 48), F32)):
        pypto.set_vec_tile_shapes(32, 48)
        pypto.set_cube_tile_shapes([32, 32], [16, 16], [48, 48])
        na = pypto.sum(a * a, -1, True)
        nb = pypto.reshape(pypto.sum(b * b, -1, True), [1, 48])
        d[:] = na + nb - 2.0 * pypto.matmul(a, b, F32, b_trans=True)
        an, bn = a * pypto.rsqrt(na), b * pypto.rsqrt(pypto.sum(b * b, -1, True))
        cs[:] = pypto.matmul(an, bn, F32, b_trans=True)

    a, b = rand((32, 16), seed=5), rand((48, 16), seed=6)
    d, cs = torch.zeros(32, 48), torch.zeros(32, 48)
    k(a, b, d, cs)
    check(d, torch.cdist(a.double(), b.double()) ** 2)
    F = torch.nn.functional
    check(cs, F.normalize(a.double(), dim=-1) @ F.normalize(b.double(), dim=-1).T)


def test_attention_with_an_online_softmax_over_two_kv_blocks():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(q: pypto.Tensor((16, 32), F32), kk: pypto.Tensor((64, 32), F32),
          v: pypto.Tensor((64, 32), F32), out: pypto.Tensor((16, 32), F32)):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        m = pypto.full([16, 1], float("-inf"), F32)
        den = pypto.zeros([16, 1], dtype=F32)
        acc = pypto.zeros([16, 32], dtype=F32)
        for j in pypto.loop(0, 2, 1, name="KV", idx_name="j"):
            s = pypto.matmul(q, kk[j * 32:(j + 1) * 32, :], F32, b_trans=True) / math.sqrt(32)
            m_new = pypto.maximum(m, pypto.amax(s, -1, True))
            p = pypto.exp(s - m_new)
            alpha = pypto.exp(m - m_new)
            den = den * alpha + pypto.sum(p, -1, True)
            acc = acc * alpha + pypto.matmul(p, v[j * 32:(j + 1) * 32, :], F32)
            m = m_new
        out[:] = acc / den

    q, kk, v = rand((16, 32), seed=9), rand((64, 32), seed=10), rand((64, 32), seed=11)
    out = torch.zeros(16, 32)
    k(q, kk, v, out)
    check(out, torch.softmax(q.double() @ kk.double().T / math.sqrt(32), -1) @ v.double())


def test_linear_with_a_dynamic_m_tail_and_bias_relu_after_the_cube():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], F16), w: pypto.Tensor((32, 48), F16),
          b: pypto.Tensor((1, 48), F32), out: pypto.Tensor([pypto.DYNAMIC, 48], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [48, 48])
        pypto.set_vec_tile_shapes(16, 48)
        rows = x.shape[0]
        for i in pypto.loop(0, (rows + 15) // 16, 1, name="M", idx_name="i"):
            t = pypto.view(x, [16, 32], [i * 16, 0], valid_shape=[(rows - i * 16).min(16), 32])
            pypto.assemble(pypto.relu(pypto.matmul(t, w, F32) + b), [i * 16, 0], out)

    w, b = rand((32, 48), torch.float16, 21), rand((1, 48), seed=22)
    for n in (21, 5):
        x, out = rand((n, 32), torch.float16, n), torch.zeros(n, 48)
        k(x, w, b, out)
        check(out, torch.relu(x.double() @ w.double() + b.double()))


def test_matmul_over_a_dynamic_k_and_qkv_split_of_its_result():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([16, pypto.DYNAMIC], F32), b: pypto.Tensor([pypto.DYNAMIC, 96], F32),
          q: pypto.Tensor((16, 32), F32), kk: pypto.Tensor((16, 32), F32),
          v: pypto.Tensor((16, 32), F32)):
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [96, 96])
        n = a.shape[1]
        av = pypto.view(a, [16, 64], [0, 0], valid_shape=[16, n])
        bv = pypto.view(b, [64, 96], [0, 0], valid_shape=[n, 96])
        qkv = pypto.matmul(av, bv, F32)
        pypto.set_vec_tile_shapes(16, 32)
        q[:] = qkv[:, 0:32]
        kk[:] = qkv[:, 32:64]
        v[:] = pypto.view(qkv, [16, 32], [0, 64])

    for n in (40, 64):
        a, b = rand((16, n), seed=n), rand((n, 96), seed=n + 1)
        q, kk, v = torch.zeros(16, 32), torch.zeros(16, 32), torch.zeros(16, 32)
        k(a, b, q, kk, v)
        ref = a.double() @ b.double()
        check(q, ref[:, :32])
        check(kk, ref[:, 32:64])
        check(v, ref[:, 64:])


def test_grouped_query_attention_4d_with_kv_heads_repeated_by_expand_clone():
    b, h, kvh, s, d = 1, 4, 2, 16, 32

    @pypto.frontend.jit(runtime_options=SIM)
    def k(q: pypto.Tensor((b, h, s, d), F16), kk: pypto.Tensor((b, kvh, s, d), F16),
          v: pypto.Tensor((b, kvh, s, d), F16), mask: pypto.Tensor((1, 1, s, s), F32),
          out: pypto.Tensor((b, h, s, d), F32)):
        pypto.set_vec_tile_shapes(1, 1, s, d)

        def repeat_heads(t):
            wide = pypto.expand_clone(pypto.reshape(t, [b, kvh, 1, s * d]),
                                      [b, kvh, h // kvh, s * d])
            return pypto.reshape(wide, [b, h, s, d])

        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        scores = pypto.matmul(q, repeat_heads(kk), F32, b_trans=True) * (1.0 / math.sqrt(d))
        pypto.set_vec_tile_shapes(1, 1, s, s)
        p = pypto.cast(softmax_core(scores + mask), F16)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
        out[:] = pypto.matmul(p, repeat_heads(v), F32)

    q = rand((b, h, s, d), torch.float16, 1)
    kk, v = rand((b, kvh, s, d), torch.float16, 2), rand((b, kvh, s, d), torch.float16, 3)
    mask = torch.triu(torch.full((s, s), float("-inf")), 1).reshape(1, 1, s, s)
    out = torch.zeros(b, h, s, d)
    k(q, kk, v, mask, out)
    kx, vx = kk.double().repeat_interleave(h // kvh, 1), v.double().repeat_interleave(h // kvh, 1)
    scores = q.double() @ kx.transpose(-1, -2) / math.sqrt(d) + mask.double()
    check(out, torch.softmax(scores, -1).half().double() @ vx, 4e-3)


def test_embedding_of_2d_ids_and_a_gather_on_the_last_axis_of_a_3d_tensor():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(table: pypto.Tensor((50, 16), BF16), ids: pypto.Tensor((2, 4), I64),
          x: pypto.Tensor((2, 3, 4), I32), idx: pypto.Tensor((2, 3, 2), I32),
          emb: pypto.Tensor((2, 4, 16), BF16), g: pypto.Tensor((2, 3, 2), I32)):
        pypto.set_vec_tile_shapes(8, 16)
        e = pypto.index_select(table, 0, pypto.reshape(ids, [8]))
        pypto.set_vec_tile_shapes(2, 4, 16)
        emb[:] = pypto.reshape(e, [2, 4, 16]) * 4.0
        pypto.set_vec_tile_shapes(8, 8, 8)
        g[:] = pypto.gather(x, 2, idx)

    table, ids = rand((50, 16), torch.bfloat16, 4), _ints((2, 4), 0, 50, 5, torch.int64)
    x = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    idx = torch.tensor([[[0, 3], [2, 1], [3, 3]], [[1, 2], [0, 3], [2, 0]]], dtype=torch.int32)
    emb, g = torch.zeros(2, 4, 16, dtype=torch.bfloat16), torch.zeros(2, 3, 2, dtype=torch.int32)
    k(table, ids, x, idx, emb, g)
    check(emb, table[ids].double() * 4)
    assert torch.equal(g, torch.gather(x, 2, idx.long()))
