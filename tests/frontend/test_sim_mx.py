# SPDX-License-Identifier: Apache-2.0
"""The Ascend 950's MX ops on the 950 presets: pypto.quant_mx (FP8E4M3 elements, FP8E8M0 block
scales), pypto.scaled_mm (FP8E4M3/FP8E5M2/FP4_E2M1 operands) and pypto.cast to an MX type,
against values worked out by hand and against a reference written here independently of
pypto._mx (the formats' value tables, nearest value by search); and the error on A2/A3."""

import math

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32 = pypto.DT_FP32
E4M3, E5M2, E8M0, FP4 = pypto.DT_FP8E4M3, pypto.DT_FP8E5M2, pypto.DT_FP8E8M0, pypto.DT_FP4_E2M1


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")


# ---- the reference: value tables of the formats, by their definitions ----------------------

def table(ebits, mbits, bias, nan_codes=()):
    """{code: value} of a signed small float format (subnormals at exponent field 0)."""
    out = {}
    for code in range(1 << (1 + ebits + mbits)):
        if code in nan_codes:
            continue
        s, e, m = code >> (ebits + mbits), (code >> mbits) & ((1 << ebits) - 1), \
            code & ((1 << mbits) - 1)
        mag = (m / 2 ** mbits) * 2.0 ** (1 - bias) if e == 0 else \
            (1 + m / 2 ** mbits) * 2.0 ** (e - bias)
        out[code] = -mag if s else mag
    return out


E4M3_VALUES = table(4, 3, 7, nan_codes=(0x7F, 0xFF))
E5M2_VALUES = {c: v for c, v in table(5, 2, 15).items() if (c >> 2) & 0x1F != 0x1F}
FP4_VALUES = table(2, 1, 1)


def nearest_code(x, values):
    """The code of the value nearest x; a tie goes to the even code (even mantissa)."""
    best = min(values.items(), key=lambda kv: (abs(kv[1] - x), kv[0] & 1, kv[0] >> 7))
    return best[0]


def ref_quant_mx(x):
    """(codes, scale codes) of MX quantization of the rows of x (a 2-D float tensor)."""
    rows, n = x.shape
    codes = torch.zeros(rows, n, dtype=torch.int64)
    scales = torch.zeros(rows, n // 32, dtype=torch.int64)
    pos = {c: v for c, v in E4M3_VALUES.items() if c < 0x80}
    for r in range(rows):
        for b in range(n // 32):
            block = [float(v) for v in x[r, 32 * b:32 * b + 32]]
            amax = max(abs(v) for v in block)
            shared = -127 if amax == 0 else max(-127, math.frexp(amax)[1] - 1 - 8)
            scales[r, b] = shared + 127
            for i, v in enumerate(block):
                y = min(abs(v) / 2.0 ** shared, 448.0)
                c = nearest_code(y, pos)
                codes[r, 32 * b + i] = c | (0x80 if math.copysign(1, v) < 0 else 0)
    return codes, scales.reshape(rows, n // 64, 2)


def quant_kernel(m, n, dtype=F32):
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([m, n], dtype), q: pypto.Tensor([m, n], E4M3),
             s: pypto.Tensor([m, n // 64, 2], E8M0)):
        pypto.set_vec_tile_shapes(m, n)
        qa, sa = pypto.quant_mx(x)
        assert qa.dtype is E4M3 and sa.dtype is E8M0
        q.move(qa)
        s.move(sa)
    return kern


def run_quant(x):
    m, n = x.shape
    q = torch.zeros(m, n, dtype=torch.uint8)
    s = torch.zeros(m, n // 64, 2, dtype=torch.uint8)
    quant_kernel(m, n, {torch.float32: F32, torch.float16: pypto.DT_FP16,
                        torch.bfloat16: pypto.DT_BF16}[x.dtype])(x, q, s)
    return q.long(), s.long()


def test_quant_mx_by_hand():
    # Block 0: max |x| = 3 -> shared exponent floor(log2 3) - 8 = -7 (E8M0 code 120); the
    # elements are x * 128: 3 -> 384 (0x7C), 0.3 -> 38.4 -> 40 (0x62), -1 -> -128 (0xF0),
    # 1e-6 -> 1.28e-4, under half the smallest subnormal 2^-9 -> 0. Block 1 is all zero:
    # scale 2^-127 (code 0), elements 0.
    x = torch.zeros(1, 64)
    x[0, :4] = torch.tensor([3.0, 0.3, -1.0, 1e-6])
    q, s = run_quant(x)
    assert q[0, :4].tolist() == [0x7C, 0x62, 0xF0, 0x00]
    assert q[0, 4:].tolist() == [0] * 60
    assert s.tolist() == [[[120, 0]]]


def test_quant_mx_rounds_ties_to_even_and_saturates():
    # max 480 -> shared exponent 8 - 8 = 0: 464 is halfway between 448 and 480 (not a value
    # of E4M3FN): saturates to 448 (0x7E); 17 is halfway between 16 and 18 -> 16 (even);
    # 19 -> 20 (even mantissa).
    x = torch.zeros(1, 64)
    x[0, :4] = torch.tensor([480.0, 464.0, 17.0, 19.0])
    q, s = run_quant(x)
    assert s[0, 0, 0].item() == 127
    assert q[0, :4].tolist() == [0x7E, 0x7E, 0x58, 0x5A]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_quant_mx_matches_the_reference(dtype):
    g = torch.Generator().manual_seed(1)
    n = 64 if dtype is torch.float32 else 128
    x = (torch.randn(4, n, generator=g) * torch.logspace(-3, 3, n)).to(dtype)
    x[1, 5] = 2.0 ** 10 * (1 - 2 ** -11)  # just under a power of two (the log2 edge)
    q, s = run_quant(x)
    rq, rs = ref_quant_mx(x.float())
    assert torch.equal(s, rs)
    assert torch.equal(q, rq)


def decode(codes, values):
    return torch.tensor([[values[int(c)] for c in row] for row in codes], dtype=torch.float64)


def random_codes(rows, cols, values, g):
    keys = torch.tensor(sorted(values))
    return keys[torch.randint(len(keys), (rows, cols), generator=g)]


def scaled_mm_kernel(shapes, dtypes, trans, out_dtype=F32, bias=False, relu=False):
    (sa_, sb_, ssa, ssb, so) = shapes
    da, db = dtypes
    a_t, b_t, sa_t, sb_t = trans

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(a: pypto.Tensor(sa_, da), b: pypto.Tensor(sb_, db), sa: pypto.Tensor(ssa, E8M0),
             sb: pypto.Tensor(ssb, E8M0), bias_t: pypto.Tensor([1, so[1]], F32),
             out: pypto.Tensor(so, out_dtype)):
        pypto.set_vec_tile_shapes(64, 128)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        ep = {}
        if bias:
            ep["bias_tensor"] = bias_t
        if relu:
            ep["relu_type"] = pypto.ReLuType.RELU
        out.move(pypto.scaled_mm(a, b, out_dtype, sa, sb, a_trans=a_t, b_trans=b_t,
                                 scale_a_trans=sa_t, scale_b_trans=sb_t, extend_params=ep))
    return kern


@pytest.mark.parametrize("trans", [(False, False, False, False), (True, True, True, True),
                                   (False, True, True, False)])
@pytest.mark.parametrize("dtypes", [(E4M3, E4M3), (E5M2, E4M3)])
def test_scaled_mm_matches_torch(trans, dtypes):
    m, k, n = 32, 128, 32
    g = torch.Generator().manual_seed(2)
    vals = {E4M3: E4M3_VALUES, E5M2: E5M2_VALUES}
    a = random_codes(m, k, vals[dtypes[0]], g)
    b = random_codes(k, n, vals[dtypes[1]], g)
    sa = torch.randint(118, 136, (m, k // 32), generator=g)
    sb = torch.randint(118, 136, (k // 32, n), generator=g)
    gold = (decode(a, vals[dtypes[0]]) * 2.0 ** (sa - 127).double().repeat_interleave(32, 1)) @ \
        (decode(b, vals[dtypes[1]]) * 2.0 ** (sb - 127).double().repeat_interleave(32, 0))
    a_t, b_t, sa_t, sb_t = trans
    a_in = a.t() if a_t else a
    b_in = b.t() if b_t else b
    sa_in = sa.reshape(m, k // 64, 2)
    sa_in = sa_in.permute(1, 0, 2) if sa_t else sa_in
    sb_in = sb.t().reshape(n, k // 64, 2)  # [N, K/64, 2]: per column, pairs of blocks
    sb_in = sb_in if sb_t else sb_in.permute(1, 0, 2)
    u8 = lambda t: t.contiguous().to(torch.uint8)  # noqa: E731
    out = torch.zeros(m, n)
    kern = scaled_mm_kernel((list(a_in.shape), list(b_in.shape), list(sa_in.shape),
                             list(sb_in.shape), [m, n]), dtypes, trans)
    kern(u8(a_in), u8(b_in), u8(sa_in), u8(sb_in), torch.zeros(1, n), out)
    assert torch.allclose(out.double(), gold, rtol=1e-6, atol=1e-6 * gold.abs().max().item())


def test_scaled_mm_fp4_with_bias_and_relu():
    m, k, n = 32, 64, 32
    g = torch.Generator().manual_seed(3)
    a = random_codes(m, k, FP4_VALUES, g)
    b = random_codes(k, n, FP4_VALUES, g)
    sa = torch.randint(125, 130, (m, k // 32), generator=g)
    sb = torch.randint(125, 130, (k // 32, n), generator=g)
    bias = torch.randn(1, n, generator=g)
    gold = (decode(a, FP4_VALUES) * 2.0 ** (sa - 127).double().repeat_interleave(32, 1)) @ \
        (decode(b, FP4_VALUES) * 2.0 ** (sb - 127).double().repeat_interleave(32, 0))
    gold = torch.relu(gold + bias.double())
    pack = lambda c: (c[:, 0::2] | (c[:, 1::2] << 4)).to(torch.uint8)  # noqa: E731
    out = torch.zeros(m, n)
    kern = scaled_mm_kernel(([m, k], [k, n], [m, k // 64, 2], [k // 64, n, 2], [m, n]),
                            (FP4, FP4), (False, False, False, False), bias=True, relu=True)
    sb_in = sb.t().reshape(n, k // 64, 2).permute(1, 0, 2).contiguous()
    kern(pack(a), pack(b), sa.reshape(m, k // 64, 2).to(torch.uint8), sb_in.to(torch.uint8),
         bias, out)
    assert torch.allclose(out.double(), gold, rtol=1e-6, atol=1e-5)


def test_cast_to_fp8_rounds_to_the_format():
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([1, 8], F32), y: pypto.Tensor([1, 8], E5M2),
             z: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        c = pypto.cast(x, E5M2, satmode=pypto.SaturationMode.ON)
        y.move(c)
        z.move(pypto.cast(c, F32))

    # E5M2 (2 mantissa bits): 1.125 is halfway between 1 and 1.25 -> 1 (even); 1.375 -> 1.5;
    # 6e4 overflows and saturates to 57344; 2^-17 is half the smallest subnormal -> 0;
    # 3 * 2^-17 -> 2^-15 (ties to even, code 2).
    x = torch.tensor([[1.125, 1.375, -3.0, 6e4, 2.0 ** -17, 3 * 2.0 ** -17, 0.0, 100.0]])
    y = torch.zeros(1, 8, dtype=torch.uint8)
    z = torch.zeros(1, 8)
    kern(x, y, z)
    assert z.tolist() == [[1.0, 1.5, -3.0, 57344.0, 0.0, 2.0 ** -15, 0.0, 96.0]]
    assert y.tolist() == [[0x3C, 0x3E, 0xC2, 0x7B, 0x00, 0x02, 0x00, 0x56]]


def test_mx_values_refuse_arithmetic():
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([1, 64], E4M3), y: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        y.move(pypto.mul(x, 2.0))

    with pytest.raises(pypto.PyptoTypeError, match="MX-quantized values; pypto.cast"):
        kern(torch.zeros(1, 64, dtype=torch.uint8), torch.zeros(1, 64))


@pytest.mark.parametrize("chip", ["a2", "a3"])
def test_mx_ops_name_the_chip_on_a2_a3(monkeypatch, chip):
    monkeypatch.setenv("PYPTO_SIM_CHIP", chip)
    with pytest.raises(pypto.PyptoValueError, match=r"pypto.quant_mx: is an Ascend 950 "
                                                    r"operation .* simulated chip is"):
        run_quant(torch.ones(1, 64))
