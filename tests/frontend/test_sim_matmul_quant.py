# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of a quantizing matmul (PyPTO's matmul page, table 5: fp16/bf16/fp32/int8
operands, out_dtype DT_INT8, extend_params ``scale`` or ``scale_tensor``) against torch computed
the documented way: the fp32 (int32 for int8 operands) accumulator, + bias, ReLU, times the
scale as the fixpipe reads it (fp32 with 10 mantissa bits) in fp32, then rounded to the nearest
integer with ties to even and saturated to [-128, 127] (pypto-sim's assumption: PyPTO does not
state the fixpipe's rounding). Integer-valued operands keep the accumulator exact, so the int8
results must match bit for bit, ties and saturated values included."""

import pytest
import torch

import pypto
from ml_kernels import run_mm

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16, I32, I64, I8 = (pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32,
                                pypto.DT_INT64, pypto.DT_INT8)
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I8: torch.int8}
M, K, N = 40, 32, 64  # M = 40: a tail tile of 8 rows


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def ints(shape, lo, hi, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi + 1, shape, generator=g).to(dtype)


def fp19(s: torch.Tensor) -> torch.Tensor:
    """fp32 scales as the fixpipe reads them: sign, 8 exponent and the top 10 mantissa bits."""
    return (s.to(torch.float32).view(torch.int32) & ~((1 << 13) - 1)).view(torch.float32)


def as_scale_tensor(s: torch.Tensor) -> torch.Tensor:
    """DT_UINT64 on the NPU (npu_trans_quant_param): the low 32 bits hold the fp32 scale."""
    return s.to(torch.float32).view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def quant_ref(a, b, scale, bias=None, relu=False):
    """The documented arithmetic: accumulator, + bias, ReLU, * fp19(scale) in fp32, round half
    to even, saturate to int8. ``scale`` is a float or a [1, N] fp32 tensor."""
    acc = a.double() @ b.double()  # exact: integer-valued operands
    acc = acc.to(torch.int32) if a.dtype == torch.int8 else acc.float()
    if bias is not None:
        acc = acc + (bias if acc.dtype == torch.int32 else bias.float())
    if relu:
        acc = torch.relu(acc)
    s = fp19(torch.tensor(scale) if isinstance(scale, float) else scale)
    return torch.round(acc.float() * s).clamp(-128, 127).to(torch.int8)


def run_quant(a, b, pt, ep_fn, extra=(), extra_annots=()):
    """a @ b to DT_INT8 with extend_params ep_fn(*extra tensors), the extra tensors inputs."""
    return run_mm(a, b, pt, I8, torch.int8, ep_fn, list(extra), list(extra_annots), m=M, k_=K,
                  n=N)


def assert_ties_and_saturation(a, b, scale, bias=None, relu=False):
    """The case exercises what it claims: some products in range lie halfway between two
    integers where half-to-even and half-away differ, and some lie outside [-128, 127]."""
    acc = (a.double() @ b.double())
    if bias is not None:
        acc = acc + bias.double()
    if relu:
        acc = torch.relu(acc)
    s = fp19(torch.tensor(scale) if isinstance(scale, float) else scale)
    y = acc.float() * s
    away = torch.sign(y) * torch.floor(y.abs() + 0.5)
    assert ((torch.round(y) != away) & (y.abs() < 127)).any(), "no ties that half-even decides"
    assert ((y > 127.5) | (y < -128.5)).any(), "nothing saturates"


@pytest.mark.parametrize("pt", [F16, BF16, F32, I8])
def test_quantizing_matmul_with_a_scalar_scale(pt):
    # 2.5 is exact in fp19; an odd accumulator times 2.5 is a tie, |acc| > 51 saturates.
    lo, hi = (-4, 4) if pt != I8 else (-8, 8)
    scale = 2.5 if pt != I8 else 0.5
    a, b = ints((M, K), lo, hi, TORCH[pt], 1), ints((K, N), lo, hi, TORCH[pt], 2)
    assert_ties_and_saturation(a, b, scale)
    out = run_quant(a, b, pt, lambda: {"scale": scale})
    assert torch.equal(out, quant_ref(a, b, scale))


def test_quantizing_matmul_truncates_the_scale_to_10_mantissa_bits():
    # 0.0123 is not exact in fp19: the fixpipe reads 0.012298583984375.
    a, b = ints((M, K), -128, 127, torch.int8, 3), ints((K, N), -128, 127, torch.int8, 4)
    out = run_quant(a, b, I8, lambda: {"scale": 0.0123})
    assert torch.equal(out, quant_ref(a, b, 0.0123))
    assert not torch.equal(out, torch.round((a.long() @ b.long()).float() * 0.0123)
                           .clamp(-128, 127).to(torch.int8))


@pytest.mark.parametrize("pt", [F16, I8])
def test_quantizing_matmul_with_a_per_column_scale_tensor(pt):
    a, b = ints((M, K), -16, 16, TORCH[pt], 5), ints((K, N), -16, 16, TORCH[pt], 6)
    # Per column: 2^-1 .. 2^-8 (ties on odd multiples) times 1, 1.2, .. 1.8 (not exact in fp19:
    # the truncation shows), from many saturated values to none.
    col = torch.arange(N)
    scales = (2.0 ** -(col % 8 + 1) * (1 + (col % 5) * 0.2)).reshape(1, N).float()
    assert_ties_and_saturation(a, b, scales)
    st = as_scale_tensor(scales)
    out = run_quant(a, b, pt, lambda st_: {"scale_tensor": st_}, [st], [pypto.Tensor([1, N], I64)])
    assert torch.equal(out, quant_ref(a, b, scales))


def test_quantizing_fp32_matmul_with_scale_tensor_and_relu():
    # PyPTO's example "量化叠加RELU": fp32 operands, a scale tensor, ReLU.
    a, b = ints((M, K), -4, 4, torch.float32, 7), ints((K, N), -4, 4, torch.float32, 8)
    scales = torch.full((1, N), 2.5)
    out = run_quant(a, b, F32, lambda st_: {"scale_tensor": st_, "relu_type": pypto.ReLuType.RELU},
                    [as_scale_tensor(scales)], [pypto.Tensor([1, N], I64)])
    ref = quant_ref(a, b, scales, relu=True)
    assert torch.equal(out, ref)
    assert (ref == 0).any() and (ref == 127).any() and not (ref < 0).any()


def test_quantizing_int8_matmul_with_int32_bias_and_scale():
    a, b = ints((M, K), -16, 16, torch.int8, 9), ints((K, N), -16, 16, torch.int8, 10)
    bias = ints((1, N), -300, 300, torch.int32, 11)
    assert_ties_and_saturation(a, b, 0.5, bias=bias)
    out = run_quant(a, b, I8, lambda bias_: {"bias_tensor": bias_, "scale": 0.5}, [bias],
                    [pypto.Tensor([1, N], I32)])
    assert torch.equal(out, quant_ref(a, b, 0.5, bias=bias))


def _kernel(pt, odt, ep, rank=2):
    lead = (2,) * (rank - 2)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor(lead + (16, 32), pt), b: pypto.Tensor(lead + (32, 64), pt)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
        pypto.matmul(a, b, odt, extend_params=ep)

    return lambda: k(torch.zeros(lead + (16, 32), dtype=TORCH[pt]),
                     torch.zeros(lead + (32, 64), dtype=TORCH[pt]))


@pytest.mark.parametrize("pt,odt,ep,err,msg", [
    # Table 3 has no DT_INT8 result without a scale.
    (F16, I8, None, pypto.PyptoTypeError,
     r"pypto.matmul: out_dtype DT_INT8 for DT_FP16 operands quantizes: it needs extend_params "
     r"'scale' or 'scale_tensor'"),
    # Table 4 dequantizes int8 operands only.
    (F16, F16, {"scale": 0.25}, pypto.PyptoValueError,
     r"pypto.matmul: scale/scale_tensor dequantize int8 matmuls or quantize to out_dtype "
     r"DT_INT8; the operands are DT_FP16 and out_dtype DT_FP16"),
    # A scaled int8 matmul has no int32 result (tables 4 and 5).
    (I8, I32, {"scale": 0.25}, pypto.PyptoTypeError,
     r"pypto.matmul: a scaled int8 matmul needs out_dtype DT_FP16, DT_BF16 or DT_FP32 "
     r"\(dequantizing\) or DT_INT8 \(quantizing\), got DT_INT32"),
])
def test_matmul_combinations_the_page_does_not_list_are_refused(pt, odt, ep, err, msg):
    with pytest.raises(err, match=msg):
        _kernel(pt, odt, ep)()


def test_a_batched_quantizing_matmul_is_refused_as_pypto_refuses_it():
    with pytest.raises(pypto.PyptoValueError, match=r"extend_params apply to 2-D matmuls only"):
        _kernel(F16, I8, {"scale": 0.25}, rank=3)()
