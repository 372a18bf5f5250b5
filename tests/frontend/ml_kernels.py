# SPDX-License-Identifier: Apache-2.0
"""What the ML operator kernels (test_sim_ml_*.py) share: the SIM run mode, the dtypes, seeded
inputs, the comparison with torch within PyPTO's tolerances, softmax written from
primitives as PyPTO's softmax example writes it, and a matmul kernel with extend_params
(run_mm, also for the matmul epilogue and quantization tests)."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
I8, I32 = pypto.DT_INT8, pypto.DT_INT32
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I8: torch.int8,
         I32: torch.int32}
# rtol = atol by output dtype: fp32 as PyPTO's examples check it, the 16-bit types one or two
# units in the last place of their mantissa.
TOL = {torch.float32: 1e-3, torch.float16: 4e-3, torch.bfloat16: 2e-2}


@pytest.fixture(autouse=True)
def native_and_output(tmp_path, monkeypatch):
    """The kernels run on pypto._C; their reports go to the test's folder."""
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, dtype=torch.float32, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def check(got, want, tol=None):
    """got (the kernel's output) against want (computed in fp32 or fp64 by torch) rounded to
    got's dtype."""
    t = TOL[got.dtype] if tol is None else tol
    assert got.shape == want.shape, (got.shape, want.shape)
    torch.testing.assert_close(got.double(), want.double().to(got.dtype).double(), rtol=t,
                               atol=t)


def softmax_core(x, dim=-1):
    """exp(x - max) / sum(exp(x - max)) over dim."""
    row_max = pypto.amax(x, dim=dim, keepdim=True)
    e = pypto.exp(x - row_max)
    return e / pypto.sum(e, dim=dim, keepdim=True)


def log_softmax_core(x):
    """(x - max) - log(sum(exp(x - max))) over the last axis."""
    shifted = x - pypto.amax(x, -1, True)
    return shifted - pypto.log(pypto.sum(pypto.exp(shifted), -1, True))


def run_mm(a, b, pt, out_pt, out_t, ext_fn, extra, extra_annots, m=40, k_=64, n=48):
    """a @ b with extend_params ext_fn(*extra tensors), the extra tensors kernel inputs."""
    A, B, O = pypto.Tensor([m, k_], pt), pypto.Tensor([k_, n], pt), pypto.Tensor([m, n], out_pt)
    E = list(extra_annots) + [A, A]

    # PyPTO's rule: nL0 is 32-byte aligned, 32 elements for int8 operands.
    n_tile = [32, 32] if pt == I8 else [16, 16]

    def mm(x, y, *ins):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], n_tile)
        return pypto.matmul(x, y, out_pt, extend_params=ext_fn(*ins))

    if not extra:
        @pypto.frontend.jit(runtime_options=SIM)
        def kern(x: A, y: B, out: O):
            out[:] = mm(x, y)
    elif len(extra) == 1:
        @pypto.frontend.jit(runtime_options=SIM)
        def kern(x: A, y: B, e0: E[0], out: O):
            out[:] = mm(x, y, e0)
    else:
        @pypto.frontend.jit(runtime_options=SIM)
        def kern(x: A, y: B, e0: E[0], e1: E[1], out: O):
            out[:] = mm(x, y, e0, e1)
    out = torch.zeros(m, n, dtype=out_t)
    kern(a, b, *extra, out)
    return out
