# SPDX-License-Identifier: Apache-2.0
"""PyPTO's rules for whole dynamic tensors and for the inputs of kernels that return their
outputs (issue 8):

* an op that computes on its operands rejects an operand with a DYNAMIC axis (size -1 when
  PyPTO compiles), with PyPTO's message, as a ``pypto.error.FeError``; moving data (copies,
  views, reshape, allocation) takes dynamic sizes, and computing on static ``pypto.view`` /
  slice tiles inside a ``pypto.loop`` over the dynamic axis gives torch's numbers;
* a kernel with a return annotation traces its inputs with the arguments' own shapes (PyPTO
  checks them against the annotations only in a debug mode); an in-place kernel still rejects
  a shape that differs from its annotation, unless the annotation holds markers alone
  (``pypto.STATIC``/``DYNAMIC``, no sizes: PyPTO's parser then traces the call's tensors).
"""

import pytest
import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


def test_elementwise_op_on_a_whole_dynamic_tensor_is_rejected():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], F32),
          out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = pypto.exp(a)

    with pytest.raises(pypto.error.FeError, match="has invalid shape value: -1") as e:
        k(torch.ones(1, 8), torch.zeros(1, 8))
    assert isinstance(e.value, ValueError)
    assert "pypto.exp" in str(e.value) and "name: a" in str(e.value)
    assert "dimension[0]" in str(e.value) and "pypto.view" in str(e.value)


def test_matmul_on_a_whole_dynamic_tensor_names_the_operand():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP16),
          b: pypto.Tensor([], pypto.DT_FP16), out: pypto.Tensor([], pypto.DT_FP16)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        out[:] = pypto.matmul(a, b, out_dtype=pypto.DT_FP16)

    a = torch.rand(32, 32, dtype=torch.float16)
    with pytest.raises(pypto.PyptoValueError, match=r"operand1 dim\[0\] = -1, must be > 0"):
        k(a, a.clone(), torch.zeros(32, 32, dtype=torch.float16))


def test_reduce_and_one_hot_on_whole_dynamic_tensors_are_rejected():
    @pypto.frontend.jit(runtime_options=SIM)
    def red(a: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 1], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.sum(a, dim=-1, keepdim=True)

    with pytest.raises(pypto.PyptoValueError, match="has invalid shape value: -1"):
        red(torch.ones(4, 8), torch.zeros(4, 1))

    @pypto.frontend.jit(runtime_options=SIM)
    def hot(a: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_INT32),
            out: pypto.Tensor([], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.one_hot(a, 5)

    with pytest.raises(pypto.PyptoValueError, match="has invalid shape value: -1"):
        hot(torch.tensor([0, 2, 4], dtype=torch.int32), torch.zeros(3, 5, dtype=torch.int64))


def test_one_hot_returns_int64_as_pypto_documents():
    @pypto.frontend.jit(runtime_options=SIM)
    def hot(a: pypto.Tensor([3], pypto.DT_INT32)) -> pypto.Tensor([3, 5], pypto.DT_INT64):
        pypto.set_vec_tile_shapes(4, 8)
        return pypto.one_hot(a, 5)

    a = torch.tensor([0, 2, 4], dtype=torch.int32)
    got = hot(a)
    assert got.dtype == torch.int64
    assert torch.equal(got, torch.nn.functional.one_hot(a.long(), 5))


def test_static_tiles_of_a_dynamic_tensor_compute_and_copies_move_it_whole():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32),
          copy: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        rows = a.shape[0]
        for i in pypto.loop(0, (rows + 1) // 2, 1):
            tile = pypto.view(a, [2, 8], [i * 2, 0], valid_shape=[(rows - i * 2).min(2), 8])
            pypto.assemble(pypto.exp(tile) * 2.0, [i * 2, 0], out)
        copy[:] = a  # data movement takes the dynamic size

    for rows in (3, 6):
        a = torch.randn(rows, 8)
        out, copy = torch.zeros(rows, 8), torch.zeros(rows, 8)
        k(a, out, copy)
        assert torch.allclose(out, torch.exp(a) * 2.0, rtol=1e-5, atol=1e-6)
        assert torch.equal(copy, a)
    assert k.compile_count == 1


def test_returning_kernel_traces_an_input_with_its_own_shape():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(dummy: pypto.Tensor([4], pypto.DT_INT32)) -> pypto.Tensor([4], pypto.DT_INT32):
        pypto.set_vec_tile_shapes(8)
        return pypto.arange(4)

    # A one-element placeholder where the annotation says [4], and another rank: accepted.
    assert torch.equal(k(torch.tensor([0], dtype=torch.int32)),
                       torch.arange(4, dtype=torch.int32))
    assert torch.equal(k(torch.zeros(2, 2, dtype=torch.int32)),
                       torch.arange(4, dtype=torch.int32))

    @pypto.frontend.jit(runtime_options=SIM)
    def used(x: pypto.Tensor([4, 8], F32)) -> pypto.Tensor([4, 8], F32):
        pypto.set_vec_tile_shapes(4, 8)
        return x + 1.0

    # A used input of another shape makes a result that does not meet the return annotation.
    with pytest.raises(pypto.PyptoValueError, match="return annotation"):
        used(torch.zeros(2, 8))


def test_in_place_kernel_still_checks_its_annotations():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + 1.0

    with pytest.raises(pypto.error.FeError, match="does not match the shape"):
        k(torch.zeros(4, 6), torch.zeros(4, 8))
    with pytest.raises(pypto.error.FeError, match="number of dimensions"):
        k(torch.zeros(4, 8, 1), torch.zeros(4, 8))


def test_marker_annotation_takes_an_argument_of_another_rank():
    # models/kimi: `gamma: pypto.Tensor([pypto.STATIC, pypto.STATIC])` gets a [1, 1, D]
    # tensor; PyPTO's parser traces the call's own tensors when an annotation holds markers.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC], F32),
          g: pypto.Tensor([pypto.STATIC, pypto.STATIC], F32),
          out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC], F32)):
        pypto.set_vec_tile_shapes(1, 4, 16)
        for i in pypto.loop(x.shape[0]):
            t = pypto.view(x, [1, 4, 16], [i, 0, 0])
            pypto.assemble(t * g, [i, 0, 0], out)

    x, g = torch.randn(3, 4, 16), torch.randn(1, 1, 16)
    out = torch.zeros(3, 4, 16)
    k(x, g, out)
    torch.testing.assert_close(out, x * g, rtol=1e-6, atol=1e-6)
    # A sized annotation still checks its argument.
    with pytest.raises(pypto.PyptoValueError, match="number of dimensions"):
        _sized_kernel()(torch.zeros(4, 8, 1), torch.zeros(4, 8))


def _sized_kernel():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + 1.0
    return k


def test_a_view_past_its_tensor_names_the_value_and_the_bytes():
    # The bounds check of every tile load: its message names what the tile belongs to.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([16, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 16)
        for i in pypto.loop(2):
            t = pypto.view(x, [16, 16], [i * 24, 0])
            out[:] = t + 1.0

    with pytest.raises(pypto.PyptoValueError,
                       match=r"reads bytes \[1536, 2560\) of value %\d+, which has 2048 bytes"):
        k(torch.rand(32, 16), torch.zeros(16, 16))
