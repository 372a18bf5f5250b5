# SPDX-License-Identifier: Apache-2.0
"""Kernel forms of PyPTO's interface tests, end to end in SIM against torch: an in-place kernel
that keeps a return annotation, the error for rebinding a tensor parameter (and the in-place
reshape that is not one), a shapeless ``pypto.tensor()`` declaration bound later, and
``@pypto.jit``'s ``infer_controlflow_shape`` and ``triple_stream_sched``."""

import pytest
import torch

import pypto
from pypto.frontend.parser.error import ParserError

F32, F16 = pypto.DT_FP32, pypto.DT_FP16
SIM = {"run_mode": pypto.RunMode.SIM}


def test_in_place_kernel_with_a_return_annotation_returns_nothing():
    # The jit's documented form writes results in place; an annotation alone adds no output.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 4, 16], F32), out: pypto.Tensor([2, 4, 16], F32)
          ) -> pypto.Tensor([2, 4, 16], F32):
        pypto.set_vec_tile_shapes(1, 4, 16)
        for b in pypto.loop(2, name="b", idx_name="b"):
            v = pypto.view(x, [1, 4, 16], [b, 0, 0])
            if pypto.is_loop_begin(b):
                pypto.assemble(pypto.add(v, 1.0), [b, 0, 0], out)
            else:
                pypto.assemble(pypto.mul(v, 2.0), [b, 0, 0], out)

    x, out = torch.rand(2, 4, 16), torch.zeros(2, 4, 16)
    assert k(x, out) is None
    assert torch.equal(out[0], x[0] + 1.0) and torch.equal(out[1], x[1] * 2.0)
    assert [p.name for p in k.function.params] == ["x", "out"]


def test_rebinding_a_tensor_parameter_is_refused():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([32, 32], F16), b: pypto.Tensor([32, 32], F16),
          c: pypto.Tensor([32, 32], F16)):
        pypto.set_vec_tile_shapes(32, 32)
        c = a + b  # noqa: F841 - the mistake under test

    a, b, c = torch.rand(32, 32).half(), torch.rand(32, 32).half(), torch.zeros(32, 32).half()
    with pytest.raises(ParserError, match="Input tensor 'c' cannot be reassigned in kernel 'k'"):
        k(a, b, c)
    assert isinstance(ParserError(None, "x"), pypto.error.PyptoError)


def test_in_place_reshape_and_untaken_branch_rebinding_are_allowed():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), scale: pypto.Tensor([8], F32),
          out: pypto.Tensor([4, 8], F32), flag: bool = True):
        pypto.set_vec_tile_shapes(4, 8)
        scale = pypto.reshape(scale, [1, 8], inplace=True)  # the same buffer
        if flag:
            out[:] = x * scale
        else:
            x = x + 1.0  # a rebinding the trace never runs
            out[:] = x

    x, s, out = torch.rand(4, 8), torch.rand(8), torch.zeros(4, 8)
    k(x, s, out)
    assert torch.equal(out, x * s)


def test_a_kernel_that_returns_may_reuse_a_parameter_name():
    # PyPTO's ffn example: `up = pypto.matmul(x, up, ...)` in a kernel returning its output.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 16], F32), up: pypto.Tensor([16, 16], F32)
          ) -> pypto.Tensor([16, 16], F32):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.set_vec_tile_shapes(16, 16)
        up = pypto.matmul(x, up, F32)
        return up + 1.0

    x, up = torch.rand(16, 16), torch.rand(16, 16)
    assert torch.allclose(k(x, up), x @ up + 1.0, atol=1e-5)


def test_shapeless_tensor_declaration_bound_later():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([64, 64], F16), y: pypto.Tensor([64, 64], F16),
          out: pypto.Tensor([64, 64], F16)):
        pypto.set_vec_tile_shapes(32, 32)
        res = pypto.tensor()
        res = (x * (x + y) - y) * y
        pypto.assemble(res, [0, 0], out)

    x, y, out = torch.rand(64, 64).half(), torch.rand(64, 64).half(), torch.zeros(64, 64).half()
    k(x, y, out)
    ref = ((x.float() * (x.float() + y.float()).half().float()).half().float() - y.float()
           ).half().float() * y.float()
    assert torch.equal(out, ref.half())


def test_shapeless_tensor_used_unbound_names_its_line():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        res = pypto.tensor()
        out[:] = x + res.shape[0]

    with pytest.raises(pypto.error.FeError, match=r"pypto.Tensor\(\) declared at .*has no shape"):
        k(torch.rand(8, 8), torch.zeros(8, 8))


class _Shapes:
    def __call__(self, *args):
        return [[(32, 32)] * 3]


def test_legacy_jit_accepts_infer_controlflow_shape_and_triple_stream_sched():
    shapes = _Shapes()

    @pypto.jit(infer_controlflow_shape=shapes,
               runtime_options={"triple_stream_sched": True,
                                "stitch_cfgcache_size": 1024 * 1024, **SIM})
    def k(a, b, c, scale=1.0):
        pypto.set_vec_tile_shapes(16, 16)
        for i in pypto.loop(0, a.shape[0], 32):
            c[i:, 0:] = a[i:i + 32, :] + b[i:i + 32, :]

    assert k.infer_controlflow_shape is shapes
    a, b, c = torch.randn(64, 32), torch.randn(64, 32), torch.zeros(64, 32)
    k(a, b, c)
    assert torch.equal(c, a + b)
    with pytest.raises(pypto.error.FeError, match="infer_controlflow_shape must be callable"):
        pypto.jit(infer_controlflow_shape=3)


def test_legacy_jit_sizes_passed_after_the_tensors():
    # PyPTO's older kernels take their sizes positionally after the un-annotated tensors.
    @pypto.jit(runtime_options=SIM)
    def k(a, b, out, n, m, tiling=None):
        pypto.set_vec_tile_shapes(tiling, tiling)
        for _ in pypto.loop(1, name="s0", idx_name="i"):
            out.move(pypto.add(pypto.view(a, [n, m], [0, 0]), b))

    a = torch.arange(256, dtype=torch.int32).reshape(16, 16)
    b = torch.ones(16, 16, dtype=torch.int32)
    out = torch.zeros(16, 16, dtype=torch.int32)
    k(pypto.from_torch(a), pypto.from_torch(b), pypto.from_torch(out), 16, 16, tiling=16)
    assert torch.equal(out, a + 1)
    assert [p.name for p in k.function.params] == ["a", "b", "out"]
