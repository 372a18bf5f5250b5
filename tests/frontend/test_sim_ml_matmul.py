# SPDX-License-Identifier: Apache-2.0
"""Matmul kernels for common ML layers written the way PyPTO's API reference and examples write
them (set_cube_tile_shapes before each matmul, a dynamic batch walked with pypto.loop where the
examples do so, run_mode SIM): operand dtypes, transposed operands, batched and broadcast
batches, bias/ReLU/dequant epilogues, linear layers, FFNs and an attention head, each compared
with torch on the CPU within PyPTO's tolerances."""

import pytest
import torch

import pypto
from ml_kernels import (BF16, F16, F32, I8, I32, SIM, TORCH, TOL, check, rand, softmax_core,
                        native_and_output)  # noqa: F401 (an autouse fixture)

MATMULS = {
    # id: (a shape as stored, b shape as stored, in dtype, out dtype, a_trans, b_trans, m, k, n)
    "fp16_to_fp32": ((64, 128), (128, 96), F16, F32, False, False, [32, 64], [64, 128], [32, 96]),
    "fp16_to_fp16": ((64, 128), (128, 64), F16, F16, False, False, [64, 64], [64, 128], [64, 64]),
    "bf16_to_bf16": ((32, 256), (256, 64), BF16, BF16, False, False, [32, 32], [128, 256],
                     [64, 64]),
    "bf16_to_fp32": ((48, 64), (64, 80), BF16, F32, False, False, [16, 48], [64, 64], [16, 80]),
    "fp32": ((32, 64), (64, 48), F32, F32, False, False, [16, 32], [32, 64], [16, 48]),
    "a_trans": ((128, 64), (128, 32), F16, F32, True, False, [32, 64], [64, 128], [32, 32]),
    "b_trans": ((64, 128), (96, 128), F16, F32, False, True, [32, 64], [64, 128], [32, 96]),
    "ab_trans": ((128, 64), (96, 128), BF16, F32, True, True, [32, 64], [64, 128], [32, 96]),
    "int8_to_int32": ((64, 128), (128, 64), I8, I32, False, False, [32, 64], [64, 128], [32, 64]),
    "unaligned_sizes": ((50, 72), (72, 40), F16, F32, False, False, [16, 64], [32, 96], [16, 48]),
    "split_k_loop": ((32, 512), (512, 64), F16, F32, False, False, [32, 32], [64, 128], [64, 64]),
    "wide_l1_tiles": ((256, 64), (64, 256), F16, F32, False, False, [128, 256], [32, 32],
                      [128, 256]),
    "bmm_3d": ((2, 32, 64), (2, 64, 32), F16, F16, False, False, [32, 32], [64, 64], [32, 32]),
    "bmm_broadcast": ((1, 32, 64), (3, 64, 16), F32, F32, False, False, [16, 32], [32, 64],
                      [16, 16]),
    "bmm_4d": ((2, 2, 16, 32), (2, 2, 32, 16), F16, F32, False, False, [16, 16], [32, 32],
               [16, 16]),
    "bmm_b_trans": ((4, 32, 64), (4, 48, 64), BF16, F32, False, True, [32, 32], [64, 64],
                    [16, 48]),
}


def _mm_torch(a, b, a_trans, b_trans):
    a = a.transpose(-1, -2) if a_trans else a
    b = b.transpose(-1, -2) if b_trans else b
    if a.dtype == torch.int8:
        return torch.matmul(a.long(), b.long())
    return torch.matmul(a.double(), b.double())


@pytest.mark.parametrize("case", sorted(MATMULS))
def test_matmul_variant(case):
    sa, sb, pt, opt, at, bt, m, k, n = MATMULS[case]
    ma = sa[-1] if at else sa[-2]
    nb = sb[-2] if bt else sb[-1]
    batch = [max(x, y) for x, y in zip(sa[:-2], sb[:-2])]
    oshape = batch + [ma, nb]

    @pypto.frontend.jit(runtime_options=SIM)
    def mm(a: pypto.Tensor(sa, pt), b: pypto.Tensor(sb, pt)) -> pypto.Tensor(oshape, opt):
        if len(sa) > 2:
            pypto.set_vec_tile_shapes(*([1] * (len(sa) - 2) + [32, 32]))
        pypto.set_cube_tile_shapes(m, k, n)
        return pypto.matmul(a, b, opt, a_trans=at, b_trans=bt)

    if pt is I8:
        g = torch.Generator().manual_seed(1)
        a = torch.randint(-8, 8, sa, generator=g, dtype=torch.int8)
        b = torch.randint(-8, 8, sb, generator=g, dtype=torch.int8)
    else:
        a, b = rand(sa, TORCH[pt], 1), rand(sb, TORCH[pt], 2)
    got = mm(a, b)
    want = _mm_torch(a, b, at, bt)
    if pt is I8:
        assert torch.equal(got, want.to(torch.int32))
    else:
        # A 16-bit output rounds a sum of k products once.
        check(got, want, None if opt is F32 else TOL[TORCH[opt]] * 2)


@pytest.mark.parametrize("pt, bias_pt", [(F16, F16), (F16, F32), (F32, F32)])
def test_matmul_bias(pt, bias_pt):
    @pypto.frontend.jit(runtime_options=SIM)
    def linear(x: pypto.Tensor((32, 64), pt), w: pypto.Tensor((64, 48), pt),
               bias: pypto.Tensor((1, 48), bias_pt), out: pypto.Tensor((32, 48), F32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 64], [16, 48])
        out[:] = pypto.matmul(x, w, F32, extend_params={"bias_tensor": bias})

    x, w = rand((32, 64), TORCH[pt], 3), rand((64, 48), TORCH[pt], 4)
    bias = rand((1, 48), TORCH[bias_pt], 5)
    out = torch.zeros(32, 48)
    linear(x, w, bias, out)
    check(out, x.double() @ w.double() + bias.double())


def test_matmul_one_dimensional_bias():
    # PyPTO's model kernels (fused_swiglu) pass a [N] bias: the [1, N] its docs name.
    @pypto.frontend.jit(runtime_options=SIM)
    def linear(x: pypto.Tensor((32, 64), F16), w: pypto.Tensor((64, 48), F16),
               bias: pypto.Tensor((48,), F32), out: pypto.Tensor((32, 48), F32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 64], [16, 48])
        out[:] = pypto.matmul(x, w, F32, extend_params={"bias_tensor": bias})

    x, w = rand((32, 64), torch.float16, 3), rand((64, 48), torch.float16, 4)
    bias = rand((48,), torch.float32, 5)
    out = torch.zeros(32, 48)
    linear(x, w, bias, out)
    check(out, x.double() @ w.double() + bias.double())


def test_matmul_bias_relu_epilogue():
    @pypto.frontend.jit(runtime_options=SIM)
    def linear_relu(x: pypto.Tensor((32, 64), F16), w: pypto.Tensor((64, 32), F16),
                    bias: pypto.Tensor((1, 32), F16)) -> pypto.Tensor((32, 32), F32):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        return pypto.matmul(x, w, F32, extend_params={"bias_tensor": bias,
                                                      "relu_type": pypto.ReLuType.RELU})

    x, w = rand((32, 64), torch.float16, 6), rand((64, 32), torch.float16, 7)
    bias = rand((1, 32), torch.float16, 8)
    check(linear_relu(x, w, bias), torch.relu(x.double() @ w.double() + bias.double()))


def test_matmul_int8_dequant_scale():
    @pypto.frontend.jit(runtime_options=SIM)
    def dq(a: pypto.Tensor((32, 64), I8),
           b: pypto.Tensor((64, 32), I8)) -> pypto.Tensor((32, 32), F16):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        return pypto.matmul(a, b, F16, extend_params={"scale": 0.25})

    g = torch.Generator().manual_seed(9)
    a = torch.randint(-8, 8, (32, 64), generator=g, dtype=torch.int8)
    b = torch.randint(-8, 8, (64, 32), generator=g, dtype=torch.int8)
    check(dq(a, b), (a.long() @ b.long()).double() * 0.25)


def test_linear_over_a_dynamic_batch():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def linear(x: pypto.Tensor((bs, 64), F16), w: pypto.Tensor((64, 32), F16),
               out: pypto.Tensor((bs, 32), F32)):
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
        tile_b = 16
        for idx in pypto.loop(0, bs // tile_b, 1, name="LOOP_B", idx_name="idx"):
            rows = x[idx * tile_b:(idx + 1) * tile_b, :]
            out[idx * tile_b:, :] = pypto.matmul(rows, w, F32)

    w = rand((64, 32), torch.float16, 11)
    for n in (32, 64):
        x = rand((n, 64), torch.float16, n)
        out = torch.zeros(n, 32)
        linear(x, w, out)
        check(out, x.double() @ w.double())


def test_ffn_matmul_gelu_matmul():
    @pypto.frontend.jit(runtime_options=SIM)
    def ffn(x: pypto.Tensor((32, 64), F16), w1: pypto.Tensor((64, 128), F16),
            w2: pypto.Tensor((128, 64), F16)) -> pypto.Tensor((32, 64), F32):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 128])
        h = pypto.matmul(x, w1, F32)
        pypto.set_vec_tile_shapes(32, 64)
        h = h * pypto.sigmoid(h * 1.702)
        h = pypto.cast(h, F16)
        pypto.set_cube_tile_shapes([32, 32], [64, 128], [64, 64])
        return pypto.matmul(h, w2, F32)

    x = rand((32, 64), torch.float16, 12)
    w1, w2 = rand((64, 128), torch.float16, 13, 0.1), rand((128, 64), torch.float16, 14, 0.1)
    h = x.float() @ w1.float()
    h = (h * torch.sigmoid(h * 1.702)).half()
    check(ffn(x, w1, w2), h.double() @ w2.double(), 4e-3)


def test_gemv_one_row():
    @pypto.frontend.jit(runtime_options=SIM)
    def gemv(a: pypto.Tensor((1, 4096), F16),
             b: pypto.Tensor((4096, 128), F16)) -> pypto.Tensor((1, 128), F32):
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        return pypto.matmul(a, b, F32)

    a, b = rand((1, 4096), torch.float16, 15), rand((4096, 128), torch.float16, 16)
    check(gemv(a, b), a.double() @ b.double())


def test_matmul_one_column_and_k_tail():
    @pypto.frontend.jit(runtime_options=SIM)
    def mm(a: pypto.Tensor((64, 100), F16),
           b: pypto.Tensor((100, 1), F16)) -> pypto.Tensor((64, 1), F32):
        pypto.set_cube_tile_shapes([64, 64], [32, 64], [16, 16])
        return pypto.matmul(a, b, F32)

    a, b = rand((64, 100), torch.float16, 17), rand((100, 1), torch.float16, 18)
    check(mm(a, b), a.double() @ b.double())


def test_matmul_operator_and_split_k_switch():
    @pypto.frontend.jit(runtime_options=SIM)
    def mm(a: pypto.Tensor((32, 1024), F16),
           b: pypto.Tensor((1024, 64), F16)) -> pypto.Tensor((32, 64), F16):
        pypto.set_cube_tile_shapes([32, 32], [64, 256], [64, 64], enable_split_k=True)
        return a @ b

    a, b = rand((32, 1024), torch.float16, 19, 0.1), rand((1024, 64), torch.float16, 20, 0.1)
    check(mm(a, b), a.double() @ b.double(), 8e-3)


@pytest.mark.parametrize("sa, sb, at", [((2, 64, 32), (2, 64, 48), True),
                                        ((3, 32, 64), (1, 64, 48), False),
                                        ((2, 1, 16, 64), (1, 3, 64, 48), False)])
def test_batched_matmul_transposed_and_broadcast_without_vec_tiles(sa, sb, at):
    oshape = [max(x, y) for x, y in zip(sa[:-2], sb[:-2])] + [sa[-1] if at else sa[-2], 48]

    @pypto.frontend.jit(runtime_options=SIM)
    def bmm(a: pypto.Tensor(sa, F16), b: pypto.Tensor(sb, F16)) -> pypto.Tensor(oshape, F32):
        pypto.set_cube_tile_shapes([16, 32], [64, 64], [16, 48])
        return pypto.matmul(a, b, F32, a_trans=at)

    a, b = rand(sa, torch.float16, 22), rand(sb, torch.float16, 23)
    check(bmm(a, b), _mm_torch(a, b, at, False))


def test_nn_linear_weight_layout_with_fp32_bias():
    # torch.nn.Linear keeps its weight as [out, in]: b_trans reads it transposed.
    @pypto.frontend.jit(runtime_options=SIM)
    def linear(x: pypto.Tensor((32, 64), F16), w: pypto.Tensor((48, 64), F16),
               b: pypto.Tensor((1, 48), F32)) -> pypto.Tensor((32, 48), F16):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [16, 48])
        return pypto.matmul(x, w, F16, b_trans=True, extend_params={"bias_tensor": b})

    x, w = rand((32, 64), torch.float16, 24), rand((48, 64), torch.float16, 25)
    b = rand((1, 48), seed=26)
    check(linear(x, w, b), torch.nn.functional.linear(x.double(), w.double(), b.double()[0]),
          8e-3)


def test_matmul_int8_scale_tensor_relu():
    @pypto.frontend.jit(runtime_options=SIM)
    def dq(a: pypto.Tensor((32, 64), I8), b: pypto.Tensor((64, 32), I8),
           st: pypto.Tensor((1, 32), pypto.DT_INT64)) -> pypto.Tensor((32, 32), F16):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        return pypto.matmul(a, b, F16, extend_params={"scale_tensor": st,
                                                      "relu_type": pypto.ReLuType.RELU})

    g = torch.Generator().manual_seed(27)
    a = torch.randint(-8, 8, (32, 64), generator=g, dtype=torch.int8)
    b = torch.randint(-8, 8, (64, 32), generator=g, dtype=torch.int8)
    scales = torch.linspace(0.0625, 0.5, 32).reshape(1, 32)  # exact in fp19
    # DT_UINT64 on the NPU: the low 32 bits hold the fp32 scale; torch has no uint64.
    st = scales.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    check(dq(a, b, st), torch.relu((a.long() @ b.long()).double() * scales.double()))


def test_linear_over_a_dynamic_batch_with_a_tail():
    @pypto.frontend.jit(runtime_options=SIM)
    def linear(x: pypto.Tensor([pypto.DYNAMIC, 64], F16), w: pypto.Tensor((64, 32), F16),
               out: pypto.Tensor([pypto.DYNAMIC, 32], F32)):
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
        rows = x.shape[0]
        for i in pypto.loop(0, (rows + 15) // 16, 1, name="LOOP_M", idx_name="i"):
            t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[(rows - i * 16).min(16), 64])
            pypto.assemble(pypto.matmul(t, w, F32), [i * 16, 0], out)

    w = rand((64, 32), torch.float16, 28)
    for n in (40, 16):
        x = rand((n, 64), torch.float16, n)
        out = torch.zeros(n, 32)
        linear(x, w, out)
        check(out, x.double() @ w.double())


def test_causal_attention_head():
    @pypto.frontend.jit(runtime_options=SIM)
    def attn(q: pypto.Tensor((64, 64), F16), k: pypto.Tensor((64, 64), F16),
             v: pypto.Tensor((64, 64), F16),
             mask: pypto.Tensor((64, 64), pypto.DT_BOOL)) -> pypto.Tensor((64, 64), F32):
        pypto.set_cube_tile_shapes([32, 64], [64, 64], [64, 64])
        pypto.set_vec_tile_shapes(32, 64)
        s = pypto.where(mask, pypto.matmul(q, k, F32, b_trans=True) * 0.125, float("-inf"))
        p = pypto.cast(softmax_core(s), F16)
        return pypto.matmul(p, v, F32)

    q, k, v = (rand((64, 64), torch.float16, i) for i in (29, 30, 31))
    mask = torch.ones(64, 64, dtype=torch.bool).tril()
    s = ((q.float() @ k.float().T) * 0.125).masked_fill(~mask, float("-inf"))
    check(attn(q, k, v, mask), torch.softmax(s, -1).half().double() @ v.double(), 4e-3)


def test_swiglu_ffn_bf16():
    @pypto.frontend.jit(runtime_options=SIM)
    def ffn(x: pypto.Tensor((32, 128), BF16), wg: pypto.Tensor((128, 256), BF16),
            wu: pypto.Tensor((128, 256), BF16),
            wd: pypto.Tensor((256, 128), BF16)) -> pypto.Tensor((32, 128), BF16):
        pypto.set_cube_tile_shapes([32, 32], [64, 128], [64, 128])
        g = pypto.matmul(x, wg, F32)
        u = pypto.matmul(x, wu, F32)
        pypto.set_vec_tile_shapes(32, 128)
        h = pypto.cast(g * pypto.sigmoid(g) * u, BF16)
        pypto.set_cube_tile_shapes([32, 32], [128, 256], [64, 128])
        return pypto.matmul(h, wd, BF16)

    x = rand((32, 128), torch.bfloat16, 32)
    wg, wu, wd = (rand(s, torch.bfloat16, i, 0.1)
                  for i, s in ((33, (128, 256)), (34, (128, 256)), (35, (256, 128))))
    g, u = x.float() @ wg.float(), x.float() @ wu.float()
    h = (torch.nn.functional.silu(g) * u).bfloat16()
    check(ffn(x, wg, wu, wd), h.double() @ wd.double(), 4e-2)
