# SPDX-License-Identifier: Apache-2.0
"""``set_cube_tile_shapes(..., enable_split_k=True)``: PyPTO's automatic multi-core split K
(matmul_performance_guide.md, "K轴分核") builds the graph of its manual form, a matmul per
kL1 slice of K and the partial sums added by vector ops. Task counts worked out from that
rule, numbers against torch, the time it buys, and PyPTO's limits."""

import pytest
import torch

import pypto
from pypto import PyptoValueError

SIM = {"run_mode": pypto.RunMode.SIM}
M, K, N = 16, 1024, 128


def _kernel(split, a_dt=pypto.DT_BF16, out_dt=pypto.DT_FP32, k=K, bias=False):
    if bias:
        @pypto.frontend.jit(runtime_options=SIM)
        def mmb(x: pypto.Tensor([M, k], a_dt), w: pypto.Tensor([k, N], a_dt),
                b: pypto.Tensor([1, N], pypto.DT_FP32), y: pypto.Tensor([M, N], out_dt)):
            pypto.set_cube_tile_shapes([16, 16], [256, 256], [64, 64], split)
            y[:, :] = pypto.matmul(x, w, out_dt, extend_params={"bias_tensor": b})
        return mmb

    @pypto.frontend.jit(runtime_options=SIM)
    def mm(x: pypto.Tensor([M, k], a_dt), w: pypto.Tensor([k, N], a_dt),
           y: pypto.Tensor([M, N], out_dt)):
        pypto.set_cube_tile_shapes([16, 16], [256, 256], [64, 64], split)
        y[:, :] = pypto.matmul(x, w, out_dt)
    return mm


def _operands(dtype, k=K):
    g = torch.Generator().manual_seed(3)
    if dtype is torch.int8:
        return (torch.randint(-8, 8, (M, k), generator=g, dtype=torch.int8),
                torch.randint(-8, 8, (k, N), generator=g, dtype=torch.int8))
    return (torch.randn(M, k, generator=g).to(dtype), torch.randn(k, N, generator=g).to(dtype))


def test_each_kl1_slice_is_a_cube_task_and_the_sums_one_vector_leaf_per_tile():
    x, w = _operands(torch.bfloat16)
    ref = x.float() @ w.float()
    results = {}
    for split in (False, True):
        y = torch.full((M, N), 7.0)
        k = _kernel(split)
        k(x, w, y)
        torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-3)
        results[split] = k.last_report
    # Two 16x64 output tiles. Whole K: a cube task each. Split: K / kL1 = 1024 / 256 = 4 slices
    # per tile (8 cube tasks), and each tile's three adds glue into one vector leaf (2 tasks).
    assert results[False].tasks == 2
    assert results[True].tasks == 8 + 2
    # The slices run side by side: the kernel is shorter on the board's cores.
    assert results[True].aicore_end_to_end_ns < results[False].aicore_end_to_end_ns


def test_int8_slices_sum_exactly_in_int32():
    x, w = _operands(torch.int8)
    y = torch.zeros(M, N, dtype=torch.int32)
    k = _kernel(True, pypto.DT_INT8, pypto.DT_INT32)
    k(x, w, y)
    assert torch.equal(y, (x.int() @ w.int()))
    assert k.last_report.tasks == 10


def test_a_half_precision_result_is_the_fp32_sum_cast_once():
    x, w = _operands(torch.float16)
    y = torch.zeros(M, N, dtype=torch.float16)
    k = _kernel(True, pypto.DT_FP16, pypto.DT_FP16)
    k(x, w, y)
    torch.testing.assert_close(y, (x.float() @ w.float()).half(), rtol=2e-3, atol=2e-2)


def test_k_within_one_l1_slice_is_not_split():
    x, w = _operands(torch.bfloat16, k=256)
    y = torch.zeros(M, N)
    k = _kernel(True, k=256)
    k(x, w, y)
    assert k.last_report.tasks == 2


def test_an_epilogue_with_split_k_is_refused():
    x, w = _operands(torch.bfloat16)
    with pytest.raises(PyptoValueError, match="enable_split_k does not combine with "
                                              "extend_params"):
        _kernel(True, bias=True)(x, w, torch.zeros(1, N), torch.zeros(M, N))
