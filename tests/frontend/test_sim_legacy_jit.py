# SPDX-License-Identifier: Apache-2.0
"""PyPTO's older kernel form (issue 8): ``@pypto.jit`` over un-annotated tensor parameters,
called with ``pypto.from_torch`` handles (or torch tensors), computing in place."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}


def test_untyped_kernel_called_with_from_torch_handles():
    @pypto.jit(runtime_options=SIM, verify_options={"enable_pass_verify": True})
    def add(a, b, c):
        for _ in pypto.loop(1):
            pypto.set_vec_tile_shapes(16, 16)
            c[:] = a + b

    a, b, c = torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)
    ins = [pypto.from_torch(t, f"IN_{i}") for i, t in enumerate((a, b))]
    out = pypto.from_torch(c, "OUT_0")
    assert out.data is c and out.name == "OUT_0" and out.dtype is pypto.DT_FP32
    assert list(out.shape) == [64, 64]
    add(*ins, out)
    assert torch.equal(c, a + b)  # written in place, no copy


def test_untyped_kernel_takes_torch_tensors_and_trailing_scalars():
    @pypto.jit(runtime_options=SIM)
    def scale(x, y, factor=2.0):
        pypto.set_vec_tile_shapes(8, 8)
        y[:] = x * factor

    x, y = torch.randn(8, 8), torch.zeros(8, 8)
    scale(x, y, 3.0)
    assert torch.allclose(y, x * 3.0)
    assert [p.name for p in scale.function.params][:2] == ["x", "y"]


def test_frontend_jit_keeps_unannotated_parameters_non_tensor():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a):
        pass

    with pytest.raises(pypto.PyptoTypeError, match="must not be a torch.Tensor"):
        k(torch.zeros(4))


def test_from_torch_marks_dynamic_axes_and_checks_its_input():
    h = pypto.from_torch(torch.zeros(3, 4, dtype=torch.float16), "x", dynamic_axis=[0])
    assert h.spec[0] is pypto.DYNAMIC and h.shape[1] == 4 and h.dtype is pypto.DT_FP16
    assert str(h.shape[0]) == "RUNTIME_GetInputShapeDim(ARG_x,0)"  # PyPTO: a graph tensor
    with pytest.raises(pypto.PyptoTypeError, match="expected a torch.Tensor"):
        pypto.from_torch([1, 2])
    with pytest.raises(pypto.PyptoValueError, match="dynamic_axis 2"):
        pypto.from_torch(torch.zeros(3, 4), dynamic_axis=[2])
    with pytest.raises(pypto.PyptoValueError, match="not contiguous"):
        pypto.from_torch(torch.zeros(4, 3).t())

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.from_torch(torch.zeros(4))

    with pytest.raises(pypto.error.FeError, match="inside a kernel"):
        k(torch.zeros(4))


def test_untyped_kernel_is_looked_up_by_its_tensors_alone():
    # PyPTO's test_onboard calls such a kernel again without its tiling: the board's kernel
    # module reuses the kernel compiled for the same tensors instead of tracing None.
    @pypto.jit(runtime_options=SIM)
    def twice(a, b, tiling=None):
        pypto.set_vec_tile_shapes(tiling, tiling)
        b[:] = a + a

    a, b = torch.randn(32, 32), torch.zeros(32, 32)
    twice(pypto.from_torch(a, "IN"), pypto.from_torch(b, "OUT"), 16)
    c, d = torch.randn(32, 32), torch.zeros(32, 32)
    twice(pypto.from_torch(c, "IN"), pypto.from_torch(d, "OUT"))
    assert torch.equal(b, a + a) and torch.equal(d, c + c)
    assert twice.compile_count == 1
    e, f = torch.randn(16, 32), torch.zeros(16, 32)
    twice(e, f, 8)  # other shapes: traced again, with this call's tiling
    assert torch.equal(f, e + e) and twice.compile_count == 2


def test_annotated_kernels_still_key_on_their_non_tensor_values():
    @pypto.jit(runtime_options=SIM)
    def scaled(x: pypto.Tensor([8, 8], pypto.DT_FP32), y: pypto.Tensor([8, 8], pypto.DT_FP32),
               factor=2.0):
        pypto.set_vec_tile_shapes(8, 8)
        y[:] = x * factor

    x, y = torch.randn(8, 8), torch.zeros(8, 8)
    scaled(x, y, 3.0)
    scaled(x, y, 4.0)
    assert torch.allclose(y, x * 4.0) and scaled.compile_count == 2


def test_varargs_kernel_takes_its_tensors_positionally():
    # PyPTO's older _JIT calls its function with whatever it gets: qwen3_next's gated delta
    # rule reads its twelve tensors from `def chunk_gated_delta_rule(*args)`.
    @pypto.jit(runtime_options=SIM)
    def axpy(*args):
        x, y, out = args[0], args[1], args[2]
        alpha = args[3] if len(args) > 3 else 1.0
        for i in pypto.loop(x.shape[0] // 16):
            pypto.set_vec_tile_shapes(16, 32)
            xi = pypto.view(x, [16, 32], [i * 16, 0])
            yi = pypto.view(y, [16, 32], [i * 16, 0])
            pypto.assemble(xi * alpha + yi, [i * 16, 0], out)

    x, y = torch.randn(64, 32), torch.randn(64, 32)
    out = torch.zeros(64, 32)
    axpy(*(pypto.from_torch(t, dynamic_axis=[0]) for t in (x, y, out)))
    assert torch.allclose(out, x + y, atol=1e-6)
    out.zero_()
    axpy(x, y, out, 0.5)  # a fourth argument: a kernel of four parameters, the last a value
    assert torch.allclose(out, 0.5 * x + y, atol=1e-6)
    assert [p.name for p in axpy.function.params][:3] == ["args_0", "args_1", "args_2"]
    with pytest.raises(pypto.PyptoValueError, match='tensor "args_2", which has size 32'):
        axpy(x, y, torch.zeros(32, 32))
