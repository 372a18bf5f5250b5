# SPDX-License-Identifier: Apache-2.0
"""The two examples of the pypto.frontend.jit API document, traced and run through a backend
test double (SIM execution itself lives in pypto._C)."""

import pytest
import torch

import pypto
from pypto import ir


def seed_kernels():
    """The document's kernels, decorated inside the test so that the environment fixture
    (no ASCEND_HOME_PATH) decides the default run mode."""

    # Example 1, verbatim apart from the CPU device at the call site (no NPU here).
    @pypto.frontend.jit
    def add_kernel(
        a: pypto.Tensor([3], pypto.DT_FP32),
        b: pypto.Tensor([3], pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_NZ),
        out: pypto.Tensor([3], pypto.DT_FP32)
    ):
        pypto.set_vec_tile_shapes(2, 8)
        out[:] = pypto.add(a, b)

    # Example 2.
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def kernel_npu(x: pypto.Tensor):
        ...

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def kernel_sim(x: pypto.Tensor):
        ...

    return add_kernel, kernel_npu, kernel_sim


def test_example1_omitted_output_is_allocated_and_returned(recorder):
    add_kernel, _, _ = seed_kernels()
    assert add_kernel.run_mode is pypto.RunMode.SIM  # no ASCEND_HOME_PATH in the tests
    x = torch.randn(3, dtype=torch.float32)
    y = torch.randn(3, dtype=torch.float32)
    result = add_kernel(x, y)
    assert isinstance(result, torch.Tensor)
    assert result.shape == (3,) and result.dtype == torch.float32
    (call,) = recorder.calls
    assert len(call["tensors"]) == 3
    assert call["tensors"][0] is x and call["tensors"][1] is y and call["tensors"][2] is result
    kir = call["compiled"]
    assert isinstance(kir, ir.Kernel)
    assert [p.format for p in kir.params] == [pypto.TileOpFormat.TILEOP_ND,
                                              pypto.TileOpFormat.TILEOP_NZ,
                                              pypto.TileOpFormat.TILEOP_ND]
    add, write = kir.variants[0].body
    assert add.op == "add" and add.vec_tile == (2, 8)
    assert write.dst is kir.params[2].value and write.src is add.out
    assert kir.params[2].is_output_written


def test_example1_with_all_tensors_returns_none(recorder):
    add_kernel, _, _ = seed_kernels()
    x, y, z = torch.randn(3), torch.randn(3), torch.empty(3)
    assert add_kernel(x, y, z) is None
    assert recorder.calls[0]["tensors"][2] is z


def test_example1_without_simulator_module_needs_pypto_c(monkeypatch):
    from pypto import _backend
    monkeypatch.setattr(_backend, "_native", lambda: None)
    add_kernel, _, _ = seed_kernels()
    with pytest.raises(NotImplementedError) as e:
        add_kernel(torch.randn(3), torch.randn(3))
    assert str(e.value) == ("SIM execution needs the compiled pypto._C module; build it with "
                            "tools/setup.sh")


def test_omitted_tensor_that_is_only_read_is_an_error(recorder):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([3], pypto.DT_FP32), b: pypto.Tensor([3], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        a[:] = a + b

    # PyPTO's tests catch pypto.error.FeError for a call with too few inputs.
    with pytest.raises(pypto.error.FeError,
                       match="Tensor parameter 'b' was omitted from the call, but kernel 'k' "
                             "never writes it, so it is an input: pass it explicitly."):
        k(torch.zeros(3))
    assert recorder.calls == []


def test_omission_rule_only_trailing_written_parameters(recorder):
    # The rule (the seed's example 1 wins over PyPTO's test_number_of_input_not_match, which
    # expects an error for the same call shape): only trailing parameters may be omitted, and
    # each must be written by the kernel (an output) and fully static with a dtype.
    @pypto.frontend.jit
    def k(a: pypto.Tensor([4], pypto.DT_FP32), b: pypto.Tensor([4], pypto.DT_FP32),
          c: pypto.Tensor([4], pypto.DT_FP32), d: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        d[:] = a + b + c

    with pytest.raises(pypto.error.FeError, match="Tensor parameter 'c' was omitted"):
        k(torch.zeros(4), torch.zeros(4))
    assert recorder.calls == []
    assert k(torch.zeros(4), torch.zeros(4), torch.zeros(4)).shape == (4,)


def test_two_omitted_outputs_come_back_as_a_tuple(recorder):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([2, 2], pypto.DT_FP32), o1: pypto.Tensor([2, 2], pypto.DT_FP32),
          o2: pypto.Tensor([2], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(2, 2)
        o1[:] = a
        o2[:] = 0

    r1, r2 = k(torch.zeros(2, 2))
    assert r1.shape == (2, 2) and r2.dtype == torch.int32
    tensors = recorder.calls[0]["tensors"]
    assert tensors[1] is r1 and tensors[2] is r2


def test_example2_npu_mode_without_cann_is_a_clear_error():
    _, kernel_npu, _ = seed_kernels()
    with pytest.raises(pypto.PyptoRuntimeError) as e:
        kernel_npu(torch.randn(4))
    assert str(e.value) == (
        "run_mode=NPU needs CANN (ASCEND_HOME_PATH) and torch_npu; missing: CANN "
        "(ASCEND_HOME_PATH) and torch_npu; use runtime_options={'run_mode': pypto.RunMode.SIM}, "
        "or select a device explicitly: pypto.use_backend(pypto.RunMode.NPU, "
        "pypto.backends.DeviceBackend('cpu'))")
    assert kernel_npu.compile_count == 1  # traced and compiled before the launch failed


def test_example2_npu_mode_with_cann_path_but_no_torch_npu(monkeypatch):
    _, kernel_npu, _ = seed_kernels()
    monkeypatch.setenv("ASCEND_HOME_PATH", "/usr/local/Ascend")
    with pytest.raises(pypto.PyptoRuntimeError, match="needs CANN .* and torch_npu"):
        kernel_npu(torch.randn(4))


def test_example2_sim_mode(recorder):
    _, _, kernel_sim = seed_kernels()
    x = torch.randn(2, 5)
    assert kernel_sim(x) is None
    kir = recorder.calls[0]["compiled"]
    assert kir.params[0].shape == (2, 5) and kir.variants[0].body == []
