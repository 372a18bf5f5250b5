# SPDX-License-Identifier: Apache-2.0
"""Vector kernels for common ML operators written the way PyPTO's API reference and examples
write them (set_vec_tile_shapes, a dynamic batch walked with pypto.loop where the examples do
so, run_mode SIM): activations, softmax and log-softmax, norms from primitives, reductions over
long axes with small tiles (PyPTO cuts the reduced axis and combines the partial results), and
losses, each compared with torch on the CPU within PyPTO's tolerances."""

import logging
import math

import pytest
import torch

import pypto
from ml_kernels import (BF16, F16, F32, I32, SIM, TORCH, check, log_softmax_core, rand,
                        softmax_core, native_and_output)  # noqa: F401 (an autouse fixture)

# -- activations -------------------------------------------------------------------------------


def _gelu_erf(x):
    return x * 0.5 * (pypto.erf(x * (1.0 / math.sqrt(2.0))) + 1.0)


def _gelu_tanh(x):
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (pypto.tanh(inner) + 1.0)


ACTIVATIONS = {
    # id: (kernel body on a tile, torch reference, dtype)
    "relu": (pypto.relu, torch.relu, F32),
    "relu_bf16": (pypto.relu, torch.relu, BF16),
    "relu_from_maximum": (lambda x: pypto.maximum(x, pypto.full(x.shape, 0.0, x.dtype)),
                          torch.relu, F32),
    "leaky_relu": (lambda x: pypto.lrelu(x, 0.1),
                   lambda x: torch.nn.functional.leaky_relu(x, 0.1), F32),
    "gelu_erf": (_gelu_erf, torch.nn.functional.gelu, F32),
    "gelu_tanh_bf16": (_gelu_tanh, lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
                       BF16),
    "gelu_sigmoid": (lambda x: x * pypto.sigmoid(x * 1.702),
                     lambda x: x * torch.sigmoid(x * 1.702), F16),
    "silu": (lambda x: x * pypto.sigmoid(x), torch.nn.functional.silu, F32),
    "silu_from_exp": (lambda x: x / (pypto.exp(-x) + 1.0), torch.nn.functional.silu, F32),
    "sigmoid_fp16": (pypto.sigmoid, torch.sigmoid, F16),
    "tanh": (pypto.tanh, torch.tanh, F32),
    "softplus": (lambda x: pypto.log1p(pypto.exp(x)), torch.nn.functional.softplus, F32),
    "elu": (lambda x: pypto.where(x > 0.0, x, pypto.exp(x) - 1.0), torch.nn.functional.elu, F32),
    "hardswish": (lambda x: x * pypto.clip(x + 3.0, 0.0, 6.0) / 6.0,
                  torch.nn.functional.hardswish, F32),
    "mish": (lambda x: x * pypto.tanh(pypto.log1p(pypto.exp(x))), torch.nn.functional.mish, F32),
    "relu6": (lambda x: pypto.minimum(pypto.maximum(x, 0.0), 6.0), torch.nn.functional.relu6,
              F32),
    "sigmoid_bf16": (pypto.sigmoid, torch.sigmoid, BF16),
    "erf_bf16": (pypto.erf, torch.erf, BF16),
    "exp_fp16": (pypto.exp, torch.exp, F16),
    "heaviside_step": (lambda x: pypto.where(x > 0.0, 1.0, 0.0), lambda x: (x > 0).double(), F32),
}


@pytest.mark.parametrize("case", sorted(ACTIVATIONS))
def test_activation(case):
    body, ref, pt = ACTIVATIONS[case]

    @pypto.frontend.jit(runtime_options=SIM)
    def act(x: pypto.Tensor((32, 128), pt), out: pypto.Tensor((32, 128), pt)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = body(x)

    x = rand((32, 128), TORCH[pt], 21, 2.0)
    out = torch.zeros(32, 128, dtype=TORCH[pt])
    act(x, out)
    check(out, ref(x.double()))


def test_silu_over_a_dynamic_batch_bf16():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def silu(x: pypto.Tensor((bs, 256), BF16)) -> pypto.Tensor((bs, 256), BF16):
        out = pypto.tensor((bs, 256), BF16)
        pypto.set_vec_tile_shapes(8, 128)
        for idx in pypto.loop(0, bs // 8, 1, name="LOOP_B", idx_name="idx"):
            xv = x[idx * 8:(idx + 1) * 8, :]
            xf = pypto.cast(xv, F32)
            out[idx * 8:, :] = pypto.cast(xf * pypto.sigmoid(xf), BF16)
        return out

    for n in (16, 40):
        x = rand((n, 256), torch.bfloat16, n)
        check(silu(x), torch.nn.functional.silu(x.float()))


def test_swiglu():
    @pypto.frontend.jit(runtime_options=SIM)
    def swiglu(gate: pypto.Tensor((32, 128), BF16), up: pypto.Tensor((32, 128), BF16),
               out: pypto.Tensor((32, 128), BF16)):
        pypto.set_vec_tile_shapes(32, 32)
        g = pypto.cast(gate, F32)
        out[:] = pypto.cast(g * pypto.sigmoid(g) * pypto.cast(up, F32), BF16)

    gate, up = rand((32, 128), torch.bfloat16, 31), rand((32, 128), torch.bfloat16, 32)
    out = torch.zeros(32, 128, dtype=torch.bfloat16)
    swiglu(gate, up, out)
    check(out, torch.nn.functional.silu(gate.double()) * up.double())


def test_softmax_builtin():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((16, 512), F32)) -> pypto.Tensor((16, 512), F32):
        pypto.set_vec_tile_shapes(8, 128)
        return pypto.softmax(x, -1)

    x = rand((16, 512), seed=41, scale=3.0)
    check(sm(x), torch.softmax(x.double(), -1))


def test_softmax_4d_over_a_dynamic_batch():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((bs, 8, 2, 256), F32)) -> pypto.Tensor((bs, 8, 2, 256), F32):
        out = pypto.tensor((bs, 8, 2, 256), F32)
        pypto.set_vec_tile_shapes(1, 4, 1, 64)
        for idx in pypto.loop(0, bs, 1, name="LOOP_B", idx_name="idx"):
            view = x[idx:idx + 1, :8, :2, :256]
            out[idx:, ...] = softmax_core(view)
        return out

    for n in (2, 3):
        x = rand((n, 8, 2, 256), seed=n)
        check(sm(x), torch.softmax(x.double(), -1))


def test_softmax_bf16_long_row_small_tile():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((4, 8192), BF16), out: pypto.Tensor((4, 8192), BF16)):
        pypto.set_vec_tile_shapes(4, 1024)
        out[:] = pypto.cast(softmax_core(pypto.cast(x, F32)), BF16)

    x = rand((4, 8192), torch.bfloat16, 42, 4.0)
    out = torch.zeros(4, 8192, dtype=torch.bfloat16)
    sm(x, out)
    check(out, torch.softmax(x.double(), -1))


def test_softmax_over_the_first_axis():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((64, 32), F32)) -> pypto.Tensor((64, 32), F32):
        pypto.set_vec_tile_shapes(16, 32)
        return softmax_core(x, 0)

    x = rand((64, 32), seed=43)
    check(sm(x), torch.softmax(x.double(), 0))


def testlog_softmax_core():
    @pypto.frontend.jit(runtime_options=SIM)
    def lsm(x: pypto.Tensor((32, 1000), F32), out: pypto.Tensor((32, 1000), F32)):
        pypto.set_vec_tile_shapes(8, 256)
        shifted = x - pypto.amax(x, -1, True)
        out[:] = shifted - pypto.log(pypto.sum(pypto.exp(shifted), -1, True))

    x = rand((32, 1000), seed=44, scale=3.0)
    out = torch.zeros(32, 1000)
    lsm(x, out)
    check(out, torch.log_softmax(x.double(), -1))


def test_softmax_builtin_fp16_and_4d():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((16, 256), F16), y: pypto.Tensor((2, 4, 64, 128), F32),
           ox: pypto.Tensor((16, 256), F16), oy: pypto.Tensor((2, 4, 64, 128), F32)):
        pypto.set_vec_tile_shapes(16, 64)
        ox[:] = pypto.softmax(x, -1)
        pypto.set_vec_tile_shapes(1, 2, 16, 128)
        oy[:] = pypto.softmax(y, -1)

    x, y = rand((16, 256), torch.float16, 45), rand((2, 4, 64, 128), seed=46)
    ox, oy = torch.zeros(16, 256, dtype=torch.float16), torch.zeros(2, 4, 64, 128)
    sm(x, y, ox, oy)
    check(ox, torch.softmax(x.double(), -1))
    check(oy, torch.softmax(y.double(), -1))


def test_softmax_3d_middle_axis_with_a_tail():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((2, 300, 16), F32)) -> pypto.Tensor((2, 300, 16), F32):
        pypto.set_vec_tile_shapes(1, 64, 16)
        return softmax_core(x, 1)

    x = rand((2, 300, 16), seed=47)
    check(sm(x), torch.softmax(x.double(), 1))


def test_softmax_rows_of_a_dynamic_batch_with_a_tail():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor([pypto.DYNAMIC, 300], F32),
           out: pypto.Tensor([pypto.DYNAMIC, 300], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        rows = x.shape[0]
        for i in pypto.loop(0, (rows + 7) // 8, 1, name="LOOP_B", idx_name="i"):
            t = pypto.view(x, [8, 300], [i * 8, 0], valid_shape=[(rows - i * 8).min(8), 300])
            pypto.assemble(softmax_core(t), [i * 8, 0], out)

    for n in (13, 8):
        x = rand((n, 300), seed=n)
        out = torch.zeros(n, 300)
        sm(x, out)
        check(out, torch.softmax(x.double(), -1))


def test_softmax_with_masked_entries():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((64, 64), F32), ninf: pypto.Tensor((8, 64), F32),
           o1: pypto.Tensor((64, 64), F32), o2: pypto.Tensor((8, 64), F32)):
        pypto.set_vec_tile_shapes(32, 64)
        o1[:] = softmax_core(pypto.tril(x) + pypto.triu(pypto.full([64, 64], -1e9, F32), 1))
        pypto.set_vec_tile_shapes(8, 64)
        o2[:] = softmax_core(ninf)

    x, ninf = rand((64, 64), seed=48), rand((8, 64), seed=49)
    ninf[:, 10:20] = float("-inf")
    o1, o2 = torch.zeros(64, 64), torch.zeros(8, 64)
    sm(x, ninf, o1, o2)
    mask = torch.triu(torch.full((64, 64), -1e9, dtype=torch.float64), 1)
    check(o1, torch.softmax(torch.tril(x.double()) + mask, -1))
    check(o2, torch.softmax(ninf.double(), -1))


def test_softmax_over_unrolled_row_blocks():
    @pypto.frontend.jit(runtime_options=SIM)
    def sm(x: pypto.Tensor((32, 128), F32), out: pypto.Tensor((32, 128), F32)):
        pypto.set_vec_tile_shapes(4, 128)
        for i, n in pypto.loop_unroll(0, 8, 1, unroll_list=[4, 2]):
            out[i * 4:(i + n) * 4, :] = softmax_core(x[i * 4:(i + n) * 4, :])

    x = rand((32, 128), seed=50)
    out = torch.zeros(32, 128)
    sm(x, out)
    check(out, torch.softmax(x.double(), -1))


def test_softmax_of_the_top_k():
    @pypto.frontend.jit(runtime_options=SIM)
    def router(x: pypto.Tensor((8, 256), F32), w: pypto.Tensor((8, 8), F32),
               idx: pypto.Tensor((8, 8), I32)):
        pypto.set_vec_tile_shapes(8, 256)
        v, i = pypto.topk(x, 8, -1)
        pypto.set_vec_tile_shapes(8, 8)
        w[:] = softmax_core(v)
        idx[:] = i

    x = rand((8, 256), seed=51)
    w, idx = torch.zeros(8, 8), torch.zeros(8, 8, dtype=torch.int32)
    router(x, w, idx)
    top = torch.topk(x.double(), 8, -1)
    check(w, torch.softmax(top.values, -1))
    assert torch.equal(idx, top.indices.int())


def test_log_softmax_bf16_without_casts():
    @pypto.frontend.jit(runtime_options=SIM)
    def lsm(x: pypto.Tensor((16, 512), BF16)) -> pypto.Tensor((16, 512), BF16):
        pypto.set_vec_tile_shapes(16, 128)
        s = x - pypto.amax(x, -1, True)
        return s - pypto.log(pypto.sum(pypto.exp(s), -1, True))

    x = rand((16, 512), torch.bfloat16, 52)
    check(lsm(x), torch.log_softmax(x.double(), -1), 5e-2)


def test_glu_and_rotary_halves():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((16, 256), F32), cos: pypto.Tensor((16, 64), F32),
          sin: pypto.Tensor((16, 64), F32), glu: pypto.Tensor((16, 128), F32),
          rope: pypto.Tensor((16, 64), F32)):
        pypto.set_vec_tile_shapes(16, 128)
        gate = pypto.sigmoid(pypto.view(x, [16, 128], [0, 128]))
        glu[:] = pypto.view(x, [16, 128], [0, 0]) * gate
        pypto.set_vec_tile_shapes(16, 64)
        q = x[:, :64]
        rotated = pypto.concat([q[:, 32:] * -1.0, q[:, :32]], -1)
        rope[:] = q * cos + rotated * sin

    x, c, s = rand((16, 256), seed=53), rand((16, 64), seed=54), rand((16, 64), seed=55)
    glu, rope = torch.zeros(16, 128), torch.zeros(16, 64)
    k(x, c, s, glu, rope)
    check(glu, torch.nn.functional.glu(x.double(), -1))
    q = x[:, :64].double()
    check(rope, q * c.double() + torch.cat([-q[:, 32:], q[:, :32]], -1) * s.double())


# -- norms -------------------------------------------------------------------------------------


def _layer_norm(x, gamma, beta, eps, hidden):
    mean = pypto.sum(x, dim=-1, keepdim=True) / hidden
    centered = x - mean
    var = pypto.sum(centered * centered, dim=-1, keepdim=True) / hidden
    return centered / pypto.sqrt(var + eps) * gamma + beta


def _rms_norm(x, gamma, eps, hidden):
    ms = pypto.sum(x * x, dim=-1, keepdim=True) / hidden
    return x * pypto.rsqrt(ms + eps) * gamma


def _ln_torch(x, g, b, eps=1e-5):
    return torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), g.double(), b.double(), eps)


def _rms_torch(x, g, eps=1e-6):
    x = x.double()
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * g.double()


def test_layer_norm_fp32():
    @pypto.frontend.jit(runtime_options=SIM)
    def ln(x: pypto.Tensor((32, 128), F32), gamma: pypto.Tensor((128,), F32),
           beta: pypto.Tensor((128,), F32)) -> pypto.Tensor((32, 128), F32):
        pypto.set_vec_tile_shapes(16, 128)
        return _layer_norm(x, gamma, beta, 1e-5, x.shape[1])

    x, g, b = rand((32, 128), seed=51, scale=2.0), rand((128,), seed=52), rand((128,), seed=53)
    check(ln(x, g, b), _ln_torch(x, g, b))


def test_layer_norm_bf16_computed_in_fp32():
    @pypto.frontend.jit(runtime_options=SIM)
    def ln(x: pypto.Tensor((16, 256), BF16), gamma: pypto.Tensor((256,), BF16),
           beta: pypto.Tensor((256,), BF16), out: pypto.Tensor((16, 256), BF16)):
        pypto.set_vec_tile_shapes(16, 128)
        y = _layer_norm(pypto.cast(x, F32), pypto.cast(gamma, F32), pypto.cast(beta, F32), 1e-5,
                        256)
        out[:] = pypto.cast(y, BF16)

    x, g, b = (rand(s, torch.bfloat16, i) for s, i in (((16, 256), 54), ((256,), 55), ((256,), 56)))
    out = torch.zeros(16, 256, dtype=torch.bfloat16)
    ln(x, g, b, out)
    check(out, _ln_torch(x, g, b))


def test_layer_norm_over_a_dynamic_batch():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def ln(x: pypto.Tensor((bs, 128), F32), gamma: pypto.Tensor((128,), F32),
           beta: pypto.Tensor((128,), F32)) -> pypto.Tensor((bs, 128), F32):
        out = pypto.tensor((bs, 128), F32)
        pypto.set_vec_tile_shapes(8, 128)
        for idx in pypto.loop(0, bs // 8, 1, name="LOOP_B", idx_name="idx"):
            rows = x[idx * 8:(idx + 1) * 8, :]
            out[idx * 8:, :] = _layer_norm(rows, gamma, beta, 1e-5, 128)
        return out

    g, b = rand((128,), seed=57), rand((128,), seed=58)
    for n in (8, 24):
        x = rand((n, 128), seed=n)
        check(ln(x, g, b), _ln_torch(x, g, b))


def test_layer_norm_long_hidden_small_tile():
    @pypto.frontend.jit(runtime_options=SIM)
    def ln(x: pypto.Tensor((8, 4096), F32), gamma: pypto.Tensor((4096,), F32),
           beta: pypto.Tensor((4096,), F32), out: pypto.Tensor((8, 4096), F32)):
        pypto.set_vec_tile_shapes(8, 512)
        out[:] = _layer_norm(x, gamma, beta, 1e-5, 4096)

    x, g, b = rand((8, 4096), seed=59, scale=3.0), rand((4096,), seed=60), rand((4096,), seed=61)
    out = torch.zeros(8, 4096)
    ln(x, g, b, out)
    check(out, _ln_torch(x, g, b))


def test_rms_norm_fp32():
    @pypto.frontend.jit(runtime_options=SIM)
    def rms(x: pypto.Tensor((32, 256), F32), gamma: pypto.Tensor((256,), F32),
            out: pypto.Tensor((32, 256), F32)):
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = _rms_norm(x, gamma, 1e-6, 256)

    x, g = rand((32, 256), seed=62), rand((256,), seed=63)
    out = torch.zeros(32, 256)
    rms(x, g, out)
    check(out, _rms_torch(x, g))


def test_rms_norm_bf16_over_a_dynamic_batch():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def rms(x: pypto.Tensor((bs, 512), BF16),
            gamma: pypto.Tensor((512,), BF16)) -> pypto.Tensor((bs, 512), BF16):
        out = pypto.tensor((bs, 512), BF16)
        pypto.set_vec_tile_shapes(4, 256)
        for idx in pypto.loop(0, bs // 4, 1, name="LOOP_B", idx_name="idx"):
            rows = pypto.cast(x[idx * 4:(idx + 1) * 4, :], F32)
            out[idx * 4:, :] = pypto.cast(_rms_norm(rows, pypto.cast(gamma, F32), 1e-6, 512), BF16)
        return out

    g = rand((512,), torch.bfloat16, 64)
    for n in (4, 12):
        x = rand((n, 512), torch.bfloat16, n)
        check(rms(x, g), _rms_torch(x, g))


def test_rms_norm_builtin():
    @pypto.frontend.jit(runtime_options=SIM)
    def rms(x: pypto.Tensor((16, 128), F16),
            gamma: pypto.Tensor((128,), F16)) -> pypto.Tensor((16, 128), F16):
        pypto.set_vec_tile_shapes(16, 128)
        return pypto.rms_norm(x, gamma, 1e-6)

    x, g = rand((16, 128), torch.float16, 65), rand((128,), torch.float16, 66)
    check(rms(x, g), _rms_torch(x, g))


def test_batch_norm_statistics_over_the_first_axis():
    @pypto.frontend.jit(runtime_options=SIM)
    def bn(x: pypto.Tensor((64, 32), F32), out: pypto.Tensor((64, 32), F32)):
        pypto.set_vec_tile_shapes(16, 32)
        mean = pypto.sum(x, 0, True) / 64
        c = x - mean
        out[:] = c / pypto.sqrt(pypto.sum(c * c, 0, True) / 64 + 1e-5)

    x = rand((64, 32), seed=67, scale=2.0)
    out = torch.zeros(64, 32)
    bn(x, out)
    check(out, torch.nn.functional.batch_norm(x.double(), None, None, training=True, eps=1e-5))


def test_layer_norm_3d_with_broadcast_affine():
    @pypto.frontend.jit(runtime_options=SIM)
    def ln(x: pypto.Tensor((2, 16, 128), F32), gamma: pypto.Tensor((1, 1, 128), F32),
           beta: pypto.Tensor((1, 1, 128), F32)) -> pypto.Tensor((2, 16, 128), F32):
        pypto.set_vec_tile_shapes(1, 16, 64)
        return _layer_norm(x, gamma, beta, 1e-5, 128)

    x, g, b = rand((2, 16, 128), seed=68), rand((1, 1, 128), seed=69), rand((1, 1, 128), seed=70)
    check(ln(x, g, b), _ln_torch(x, g.flatten(), b.flatten()))


def test_embedding_lookup_then_layer_norm():
    @pypto.frontend.jit(runtime_options=SIM)
    def emb(table: pypto.Tensor((100, 64), F32), ids: pypto.Tensor((16,), I32),
            gamma: pypto.Tensor((64,), F32),
            beta: pypto.Tensor((64,), F32)) -> pypto.Tensor((16, 64), F32):
        pypto.set_vec_tile_shapes(16, 64)
        return _layer_norm(pypto.index_select(table, 0, ids), gamma, beta, 1e-5, 64)

    table, g, b = rand((100, 64), seed=74), rand((64,), seed=75), rand((64,), seed=76)
    ids = torch.randint(0, 100, (16,), generator=torch.Generator().manual_seed(77),
                        dtype=torch.int32)
    check(emb(table, ids, g, b), _ln_torch(table[ids.long()], g, b))


def test_rms_norm_builtin_bf16_without_gamma():
    @pypto.frontend.jit(runtime_options=SIM)
    def rms(x: pypto.Tensor((16, 1024), BF16)) -> pypto.Tensor((16, 1024), BF16):
        pypto.set_vec_tile_shapes(16, 256)
        return pypto.rms_norm(x)

    x = rand((16, 1024), torch.bfloat16, 78)
    check(rms(x), _rms_torch(x, torch.ones(1024)))


def test_l2_normalize_and_var_std():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((16, 768), F32), unit: pypto.Tensor((16, 768), F32),
          v: pypto.Tensor((16, 1), F32), s: pypto.Tensor((16, 1), F32)):
        pypto.set_vec_tile_shapes(16, 256)
        unit[:] = x * pypto.rsqrt(pypto.sum(x * x, -1, True))
        v[:] = pypto.var(x, -1, keepdim=True)
        s[:] = pypto.std(x, -1, keepdim=True, correction=0)

    x = rand((16, 768), seed=79)
    unit, v, s = torch.zeros(16, 768), torch.zeros(16, 1), torch.zeros(16, 1)
    k(x, unit, v, s)
    check(unit, torch.nn.functional.normalize(x.double(), dim=-1))
    check(v, x.double().var(-1, keepdim=True))
    check(s, x.double().std(-1, keepdim=True, correction=0))


# -- reductions --------------------------------------------------------------------------------

REDUCTIONS = {
    # id: (input shape, vec tile, dim, kernel body, torch reference, dtype, input scale)
    "sum_16384_wide": ((4, 16384), (4, 4096), -1, lambda x, d: pypto.sum(x, d, True),
                       lambda x, d: x.sum(d, keepdim=True), F32, 1.0),
    "mean_16384_wide": ((4, 16384), (4, 4096), -1, lambda x, d: pypto.sum(x, d, True) / 16384,
                        lambda x, d: x.mean(d, keepdim=True), F32, 1.0),
    "amax_16384_wide": ((4, 16384), (4, 4096), -1, lambda x, d: pypto.amax(x, d, True),
                        lambda x, d: x.amax(d, keepdim=True), F32, 1.0),
    "amin_16384_wide": ((4, 16384), (4, 4096), -1, lambda x, d: pypto.amin(x, d, True),
                        lambda x, d: x.amin(d, keepdim=True), F32, 1.0),
    "amin_3d_middle_axis": ((2, 256, 256), (1, 64, 256), 1, lambda x, d: pypto.amin(x, d, True),
                            lambda x, d: x.amin(d, keepdim=True), F32, 1.0),
    "sum_3d_middle_axis": ((2, 256, 256), (1, 64, 256), 1, lambda x, d: pypto.sum(x, d, True),
                           lambda x, d: x.sum(d, keepdim=True), F32, 1.0),
    "sum_first_axis": ((1024, 64), (128, 64), 0, lambda x, d: pypto.sum(x, d, True),
                       lambda x, d: x.sum(d, keepdim=True), F32, 1.0),
    "sum_no_keepdim": ((16, 2048), (8, 256), -1, lambda x, d: pypto.sum(x, d),
                       lambda x, d: x.sum(d), F32, 1.0),
    "sum_bf16": ((8, 4096), (8, 512), -1, lambda x, d: pypto.sum(x, d, True),
                 lambda x, d: x.sum(d, keepdim=True), BF16, 0.1),
    "prod_long_axis": ((4, 2048), (4, 256), -1, lambda x, d: pypto.prod(x, d, True),
                       lambda x, d: x.prod(d, keepdim=True), F32, 0.01),
    "cumsum_long_axis": ((4, 2048), (4, 256), -1, lambda x, d: pypto.cumsum(x, d),
                         lambda x, d: x.cumsum(d), F32, 1.0),
    "cumsum_first_axis": ((512, 16), (64, 16), 0, lambda x, d: pypto.cumsum(x, d),
                          lambda x, d: x.cumsum(d), F32, 1.0),
    "cumprod": ((4, 256), (4, 64), -1, lambda x, d: pypto.cumprod(x, d),
                lambda x, d: x.cumprod(d), F32, 0.01),
    "logsumexp": ((8, 4096), (8, 512), -1,
                  lambda x, d: pypto.log(pypto.sum(pypto.exp(x - pypto.amax(x, d, True)), d, True))
                  + pypto.amax(x, d, True),
                  lambda x, d: torch.logsumexp(x, d, keepdim=True), F32, 3.0),
    "var_two_pass": ((8, 4096), (8, 512), -1,
                     lambda x, d: pypto.sum((x - pypto.sum(x, d, True) / 4096)
                                            * (x - pypto.sum(x, d, True) / 4096), d, True) / 4095,
                     lambda x, d: x.var(d, keepdim=True), F32, 2.0),
    "sum_column_tail": ((4, 1000), (4, 256), -1, lambda x, d: pypto.sum(x, d, True),
                        lambda x, d: x.sum(d, keepdim=True), F32, 1.0),
    "amax_column_tail": ((4, 1000), (4, 256), -1, lambda x, d: pypto.amax(x, d, True),
                         lambda x, d: x.amax(d, keepdim=True), F32, 1.0),
    "amin_row_and_column_tails": ((10, 3000), (4, 512), -1, lambda x, d: pypto.amin(x, d, True),
                                  lambda x, d: x.amin(d, keepdim=True), F32, 1.0),
    "prod_column_tail": ((4, 1000), (4, 256), -1, lambda x, d: pypto.prod(x, d, True),
                         lambda x, d: x.prod(d, keepdim=True), F32, 0.01),
    "sum_1d": ((10000,), (2048,), 0, lambda x, d: pypto.sum(x, d, True),
               lambda x, d: x.sum(d, keepdim=True), F32, 1.0),
    "amax_fp16": ((8, 8192), (8, 1024), -1, lambda x, d: pypto.amax(x, d, True),
                  lambda x, d: x.amax(d, keepdim=True), F16, 1.0),
    "sum_fp16": ((8, 1024), (8, 256), -1, lambda x, d: pypto.sum(x, d, True),
                 lambda x, d: x.sum(d, keepdim=True), F16, 0.1),
    "cumsum_bf16": ((4, 512), (4, 128), -1, lambda x, d: pypto.cumsum(x, d),
                    lambda x, d: x.cumsum(d), BF16, 0.1),
    "prod_first_axis_no_keepdim": ((300, 16), (64, 16), 0, lambda x, d: pypto.prod(x, d),
                                   lambda x, d: x.prod(d), F32, 0.01),
    "mean_4d_third_axis": ((2, 3, 200, 32), (1, 1, 64, 32), 2,
                           lambda x, d: pypto.sum(x, d, True) / 200,
                           lambda x, d: x.mean(d, keepdim=True), F32, 1.0),
    "amax_3d_first_axis": ((64, 8, 32), (16, 8, 32), 0, lambda x, d: pypto.amax(x, d, True),
                           lambda x, d: x.amax(d, keepdim=True), F32, 1.0),
    "center_by_max_without_keepdim": ((16, 256), (16, 64), -1,
                                      lambda x, d: x - pypto.unsqueeze(pypto.amax(x, d), d),
                                      lambda x, d: x - x.amax(d, keepdim=True), F32, 1.0),
}


@pytest.mark.parametrize("case", sorted(REDUCTIONS))
def test_reduction(case):
    shape, tile, dim, body, ref, pt, scale = REDUCTIONS[case]
    want = ref(torch.zeros(shape), dim)

    @pypto.frontend.jit(runtime_options=SIM)
    def red(x: pypto.Tensor(shape, pt)) -> pypto.Tensor(list(want.shape), pt):
        pypto.set_vec_tile_shapes(*tile)
        return body(x, dim)

    x = rand(shape, TORCH[pt], 71, scale)
    if case.startswith(("prod", "cumprod")):  # values near 1: the product stays finite
        x = (1.0 + x.float()).to(TORCH[pt])
    got = red(x)
    check(got, ref(x.double(), dim))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reduction_long_axis(op):
    # PyPTO cuts argmax/argmin on the other axes only: a 2x4096 fp32 tile is 32 KB.
    @pypto.frontend.jit(runtime_options=SIM)
    def arg(x: pypto.Tensor((8, 4096), F32)) -> pypto.Tensor((8, 1), I32):
        pypto.set_vec_tile_shapes(2, 512)
        return getattr(pypto, op)(x, -1, True)

    x = rand((8, 4096), seed=72)
    assert torch.equal(arg(x), getattr(torch, op)(x, -1, keepdim=True).to(torch.int32))


def test_arg_reduction_tile_over_64_kb_warns_naming_the_op_the_tile_and_the_limit(caplog):
    @pypto.frontend.jit(runtime_options=SIM)
    def arg(x: pypto.Tensor((8, 4096), F32)) -> pypto.Tensor((8, 1), I32):
        pypto.set_vec_tile_shapes(8, 512)
        return pypto.argmax(x, -1, True)

    x = rand((8, 4096), seed=72)
    with caplog.at_level(logging.WARNING, logger="pypto"):
        got = arg(x)
    assert torch.equal(got, torch.argmax(x, -1, keepdim=True).to(torch.int32))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("argmax: the reduction tile 8x4096 fp32 is 131072 bytes (128 KiB), above the "
               "65536 bytes (64 KiB) PyPTO's operation pages give" in m for m in warned), warned


def test_sum_int32():
    @pypto.frontend.jit(runtime_options=SIM)
    def s(x: pypto.Tensor((16, 1024), I32)) -> pypto.Tensor((16, 1), I32):
        pypto.set_vec_tile_shapes(16, 128)
        return pypto.sum(x, -1, True)

    x = torch.randint(-1000, 1000, (16, 1024), generator=torch.Generator().manual_seed(73),
                      dtype=torch.int32)
    assert torch.equal(s(x), x.sum(-1, keepdim=True, dtype=torch.int32))


def test_integer_reductions_and_scans():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((8, 512), pypto.DT_INT16), b: pypto.Tensor((8, 4096), I32),
          c: pypto.Tensor((4, 64), I32), sa: pypto.Tensor((8, 1), pypto.DT_INT16),
          mb: pypto.Tensor((8, 1), I32), cc: pypto.Tensor((4, 64), pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(8, 128)
        sa[:] = pypto.sum(a, -1, True)
        pypto.set_vec_tile_shapes(8, 512)
        mb[:] = pypto.amax(b, -1, True)
        pypto.set_vec_tile_shapes(4, 64)
        cc[:] = pypto.cumsum(c, 1)  # PyPTO: an int32 cumsum gives DT_INT64

    g = torch.Generator().manual_seed(80)
    a = torch.randint(-20, 20, (8, 512), generator=g, dtype=torch.int16)
    b = torch.randint(-10000, 10000, (8, 4096), generator=g, dtype=torch.int32)
    c = torch.randint(-100, 100, (4, 64), generator=g, dtype=torch.int32)
    sa, mb = torch.zeros(8, 1, dtype=torch.int16), torch.zeros(8, 1, dtype=torch.int32)
    cc = torch.zeros(4, 64, dtype=torch.int64)
    k(a, b, c, sa, mb, cc)
    assert torch.equal(sa, a.sum(-1, keepdim=True, dtype=torch.int16))
    assert torch.equal(mb, b.amax(-1, keepdim=True))
    assert torch.equal(cc, c.cumsum(1))


def test_half_precision_argmax_argmin_without_keepdim():
    @pypto.frontend.jit(runtime_options=SIM)
    def arg(x: pypto.Tensor((8, 1024), F16), y: pypto.Tensor((8, 1024), BF16),
            ix: pypto.Tensor((8,), I32), iy: pypto.Tensor((8,), I32)):
        pypto.set_vec_tile_shapes(8, 1024)
        ix[:] = pypto.argmax(x, -1)
        iy[:] = pypto.argmin(y, -1)

    x, y = rand((8, 1024), torch.float16, 81), rand((8, 1024), torch.bfloat16, 82)
    ix, iy = torch.zeros(8, dtype=torch.int32), torch.zeros(8, dtype=torch.int32)
    arg(x, y, ix, iy)
    assert torch.equal(ix, x.argmax(-1).int()) and torch.equal(iy, y.argmin(-1).int())


def test_row_sums_of_a_dynamic_batch_with_a_tail():
    @pypto.frontend.jit(runtime_options=SIM)
    def s(x: pypto.Tensor([pypto.DYNAMIC, 512], F32), out: pypto.Tensor([pypto.DYNAMIC, 1], F32)):
        pypto.set_vec_tile_shapes(4, 128)
        rows = x.shape[0]
        for i in pypto.loop(0, (rows + 3) // 4, 1, name="LOOP_B", idx_name="i"):
            t = pypto.view(x, [4, 512], [i * 4, 0], valid_shape=[(rows - i * 4).min(4), 512])
            pypto.assemble(pypto.sum(t, -1, True), [i * 4, 0], out)

    for n in (10, 4):
        x = rand((n, 512), seed=n)
        out = torch.zeros(n, 1)
        s(x, out)
        check(out, x.double().sum(-1, keepdim=True))


def test_row_sums_of_a_dynamic_batch():
    bs = pypto.frontend.dynamic("bs")

    @pypto.frontend.jit(runtime_options=SIM)
    def s(x: pypto.Tensor((bs, 2048), F32)) -> pypto.Tensor((bs, 1), F32):
        out = pypto.tensor((bs, 1), F32)
        pypto.set_vec_tile_shapes(2, 512)
        for idx in pypto.loop(0, bs // 2, 1, name="LOOP_B", idx_name="idx"):
            out[idx * 2:, :] = pypto.sum(x[idx * 2:(idx + 1) * 2, :], -1, True)
        return out

    for n in (2, 6):
        x = rand((n, 2048), seed=n)
        check(s(x), x.double().sum(-1, keepdim=True))


# -- losses ------------------------------------------------------------------------------------


def _mean_all(t, rows, cols):
    return pypto.sum(pypto.sum(t, -1, True), 0, True) / (rows * cols)


def _p_true(logit, t):
    """The probability a binary classifier gives the target t (in [0, 1])."""
    prob = pypto.sigmoid(logit)
    return prob * t + (1.0 - prob) * (1.0 - t)


def _p_true_torch(logit, t):
    prob = torch.sigmoid(logit)
    return prob * t + (1 - prob) * (1 - t)


LOSSES = {
    # id: (kernel body on (pred, target), torch reference giving a [1, 1] result)
    "mse": (lambda p, t: _mean_all((p - t) * (p - t), 64, 256),
            lambda p, t: torch.nn.functional.mse_loss(p, t).reshape(1, 1)),
    "l1": (lambda p, t: _mean_all(pypto.abs(p - t), 64, 256),
           lambda p, t: torch.nn.functional.l1_loss(p, t).reshape(1, 1)),
    "smooth_l1": (lambda p, t: _mean_all(
        pypto.where(pypto.abs(p - t) < 1.0, (p - t) * (p - t) * 0.5, pypto.abs(p - t) - 0.5),
        64, 256), lambda p, t: torch.nn.functional.smooth_l1_loss(p, t).reshape(1, 1)),
    "bce_with_logits": (lambda p, t: _mean_all(
        pypto.relu(p) - p * t + pypto.log1p(pypto.exp(-pypto.abs(p))), 64, 256),
        lambda p, t: torch.nn.functional.binary_cross_entropy_with_logits(p, t).reshape(1, 1)),
    "hinge": (lambda p, t: _mean_all(pypto.relu(1.0 - p * t), 64, 256),
              lambda p, t: torch.relu(1 - p * t).mean().reshape(1, 1)),
    "focal_bce": (lambda p, t: _mean_all(
        pypto.pow(1.0 - _p_true(p, t), 2.0) * pypto.log(_p_true(p, t)) * -1.0, 64, 256),
        lambda p, t: ((1 - _p_true_torch(p, t)) ** 2 * -torch.log(_p_true_torch(p, t))).mean()
        .reshape(1, 1)),
}


@pytest.mark.parametrize("case", sorted(LOSSES))
def test_loss(case):
    body, ref = LOSSES[case]

    @pypto.frontend.jit(runtime_options=SIM)
    def loss(p: pypto.Tensor((64, 256), F32), t: pypto.Tensor((64, 256), F32),
             out: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(16, 128)
        out[:] = body(p, t)

    p = rand((64, 256), seed=81, scale=2.0)
    t = torch.rand(64, 256, generator=torch.Generator().manual_seed(82))
    out = torch.zeros(1, 1)
    loss(p, t, out)
    check(out, ref(p.double(), t.double()))


def test_mse_without_reduction_bf16():
    @pypto.frontend.jit(runtime_options=SIM)
    def mse(p: pypto.Tensor((32, 128), BF16),
            t: pypto.Tensor((32, 128), BF16)) -> pypto.Tensor((32, 128), BF16):
        pypto.set_vec_tile_shapes(32, 64)
        d = p - t
        return d * d

    p, t = rand((32, 128), torch.bfloat16, 83), rand((32, 128), torch.bfloat16, 84)
    check(mse(p, t), torch.nn.functional.mse_loss(p.float(), t.float(), reduction="none"))


def test_cross_entropy_with_one_hot_labels():
    @pypto.frontend.jit(runtime_options=SIM)
    def ce(logits: pypto.Tensor((32, 64), F32), labels: pypto.Tensor((32,), I32),
           out: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(32, 64)
        hot = pypto.cast(pypto.one_hot(labels, 64), F32)
        picked = pypto.sum(hot * log_softmax_core(logits), -1, True)
        out[:] = pypto.sum(picked, 0, True) * (-1.0 / 32)

    g = torch.Generator().manual_seed(91)
    logits = rand((32, 64), seed=92, scale=2.0)
    labels = torch.randint(0, 64, (32,), generator=g, dtype=torch.int32)
    out = torch.zeros(1, 1)
    ce(logits, labels, out)
    check(out, torch.nn.functional.cross_entropy(logits.double(), labels.long()).reshape(1, 1))


def test_cross_entropy_with_gathered_labels_per_row():
    @pypto.frontend.jit(runtime_options=SIM)
    def ce(logits: pypto.Tensor((16, 1024), F32),
           labels: pypto.Tensor((16, 1), I32)) -> pypto.Tensor((16, 1), F32):
        pypto.set_vec_tile_shapes(16, 256)
        return pypto.gather(log_softmax_core(logits), 1, labels) * -1.0

    g = torch.Generator().manual_seed(93)
    logits = rand((16, 1024), seed=94, scale=2.0)
    labels = torch.randint(0, 1024, (16, 1), generator=g, dtype=torch.int32)
    want = torch.nn.functional.cross_entropy(logits.double(), labels[:, 0].long(), reduction="none")
    check(ce(logits, labels), want.reshape(16, 1))


def test_kl_divergence():
    @pypto.frontend.jit(runtime_options=SIM)
    def kl(logp: pypto.Tensor((16, 256), F32), q: pypto.Tensor((16, 256), F32),
           out: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(16, 128)
        pointwise = q * (pypto.log(q) - logp)
        out[:] = pypto.sum(pypto.sum(pointwise, -1, True), 0, True) / 16

    logp = torch.log_softmax(rand((16, 256), seed=95), -1)
    q = torch.softmax(rand((16, 256), seed=96), -1)
    out = torch.zeros(1, 1)
    kl(logp, q, out)
    want = torch.nn.functional.kl_div(logp.double(), q.double(), reduction="batchmean")
    check(out, want.reshape(1, 1))


def test_cross_entropy_ignoring_an_index_and_with_label_smoothing():
    @pypto.frontend.jit(runtime_options=SIM)
    def ce(logits: pypto.Tensor((16, 32), F32), labels: pypto.Tensor((16, 1), I32),
           hot_labels: pypto.Tensor((16,), I32), ignored: pypto.Tensor((1, 1), F32),
           smoothed: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(16, 32)
        lsm = log_softmax_core(logits)
        valid = labels >= 0
        nll = pypto.gather(lsm, 1, pypto.where(valid, labels, 0)) * -1.0
        keep = pypto.cast(valid, F32)
        ignored[:] = pypto.sum(nll * keep, 0, True) / pypto.sum(keep, 0, True)
        soft = pypto.cast(pypto.one_hot(hot_labels, 32), F32) * 0.9 + 0.1 / 32
        smoothed[:] = pypto.sum(pypto.sum(soft * lsm, -1, True), 0, True) * (-1.0 / 16)

    g = torch.Generator().manual_seed(97)
    logits = rand((16, 32), seed=98)
    labels = torch.randint(0, 32, (16, 1), generator=g, dtype=torch.int32)
    labels[::3] = -100
    hot = torch.randint(0, 32, (16,), generator=g, dtype=torch.int32)
    ignored, smoothed = torch.zeros(1, 1), torch.zeros(1, 1)
    ce(logits, labels, hot, ignored, smoothed)
    want = torch.nn.functional.cross_entropy(logits.double(), labels[:, 0].long(),
                                             ignore_index=-100)
    check(ignored, want.reshape(1, 1))
    want = torch.nn.functional.cross_entropy(logits.double(), hot.long(), label_smoothing=0.1)
    check(smoothed, want.reshape(1, 1))


def test_cosine_embedding_loss_and_accuracy():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((16, 768), F32), b: pypto.Tensor((16, 768), F32),
          logits: pypto.Tensor((32, 16), F32), labels: pypto.Tensor((32, 1), I32),
          loss: pypto.Tensor((1, 1), F32), acc: pypto.Tensor((1, 1), F32)):
        pypto.set_vec_tile_shapes(16, 256)
        dot = pypto.sum(a * b, -1, True)
        norms = pypto.sqrt(pypto.sum(a * a, -1, True)) * pypto.sqrt(pypto.sum(b * b, -1, True))
        loss[:] = pypto.sum(1.0 - dot / pypto.maximum(norms, 1e-8), 0, True) / 16
        pypto.set_vec_tile_shapes(32, 16)
        hit = pypto.cast(pypto.argmax(logits, -1, True) == labels, F32)
        acc[:] = pypto.sum(hit, 0, True) / 32

    a, b, logits = rand((16, 768), seed=99), rand((16, 768), seed=100), rand((32, 16), seed=101)
    labels = torch.randint(0, 16, (32, 1), generator=torch.Generator().manual_seed(102),
                           dtype=torch.int32)
    labels[:10, 0] = logits[:10].argmax(-1).int()
    loss, acc = torch.zeros(1, 1), torch.zeros(1, 1)
    k(a, b, logits, labels, loss, acc)
    target = torch.ones(16, dtype=torch.float64)
    check(loss, torch.nn.functional.cosine_embedding_loss(a.double(), b.double(), target)
          .reshape(1, 1))
    check(acc, (logits.argmax(-1, keepdim=True).int() == labels).double().mean().reshape(1, 1))
