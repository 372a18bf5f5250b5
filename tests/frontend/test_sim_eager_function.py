# SPDX-License-Identifier: Apache-2.0
"""PyPTO's older eager form (pypto._eager): ``with pypto.function(name, *graph_tensors):``
outside any kernel records a function, ``pypto.runtime._device_run_once_data_from_host`` runs
it on torch tensors in place. Numbers are checked against torch."""

import pytest
import torch

import pypto
from pypto import _eager

F32, I32 = pypto.DT_FP32, pypto.DT_INT32


# The eager form and the option setters change the global scope.
pytestmark = pytest.mark.usefixtures("options_reset")


def _record_accumulate(shape, dtype, tiles):
    a = pypto.tensor(shape, dtype, "PTO_TENSOR_a")
    b = pypto.tensor(shape, dtype, "PTO_TENSOR_b")
    pypto.set_vec_tile_shapes(*tiles)
    with pypto.function("MAIN", a, b):
        for k in pypto.loop(10, name="s0", idx_name="k"):
            if pypto.cond(k == 0):
                b.move(pypto.add(a, a))
            else:
                b.move(pypto.add(a, b))
    return a, b


@pytest.mark.parametrize("shape,tiles", [((8, 8), (8, 8)), ((16, 16, 16), (16, 16, 16)),
                                         ((32, 24), (16, 8))])
def test_eager_function_runs_on_host_tensors_in_place(shape, tiles):
    pypto.runtime._device_init()
    a, b = _record_accumulate(shape, F32, tiles)
    assert isinstance(a, pypto.tensor) and isinstance(b, pypto.Tensor)
    assert pypto.get_last_function().raw_name == "MAIN"
    x = torch.rand(shape) * 2 - 1
    y = torch.zeros(shape)
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x, "x"), pypto.from_torch(y, "y"))
    pypto.runtime._device_fini()
    torch.testing.assert_close(y, 11 * x, rtol=1e-5, atol=1e-5)


def test_eager_function_int32_is_exact():
    _record_accumulate((32, 32), I32, (32, 32))
    x = torch.arange(32 * 32, dtype=torch.int32).reshape(32, 32)
    y = torch.zeros(32, 32, dtype=torch.int32)
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x), pypto.from_torch(y))
    assert torch.equal(y, 11 * x)


def test_eager_function_iterated_with_tensors_from_a_list():
    # PyPTO's st/pypto_test.py form: tensors kept in lists, the body run by iterating `as`.
    ins = [pypto.tensor([16, 32], F32, f"PTO_TENSOR_{i}") for i in range(2)]
    outs = [pypto.tensor([16, 32], F32, "PTO_TENSOR_out_0")]

    def kernel(x, y, out):
        pypto.set_vec_tile_shapes(8, 16)
        for k in pypto.loop(2, name="LOOP", idx_name="k"):
            if pypto.cond(k < 10):
                out.move(pypto.mul(pypto.sub(x, y), 3.0) + y)

    with pypto.function("MAIN", *ins, *outs) as rlf:
        for _ in rlf:
            kernel(*ins, *outs)
        del rlf
    assert all(isinstance(t, pypto.tensor) for t in outs)
    x, y, out = torch.randn(16, 32), torch.randn(16, 32), torch.zeros(16, 32)
    pypto.runtime._device_run_once_data_from_host(*(pypto.from_torch(t) for t in (x, y, out)))
    torch.testing.assert_close(out, (x - y) * 3.0 + y, rtol=1e-5, atol=1e-5)


def test_graph_tensor_outside_its_block_is_refused():
    a, b = _record_accumulate((8, 8), F32, (8, 8))
    with pytest.raises(pypto.PyptoTypeError, match=r"PTO_TENSOR_b is used \(\.move\) outside "
                       r"the pypto\.function block"):
        b.move(a)
    # An annotation that no block took is no pypto.Tensor (it describes a kernel parameter).
    assert not isinstance(pypto.Tensor([8], F32), pypto.Tensor)


def test_run_checks_the_tensors_against_the_function():
    _record_accumulate((8, 8), F32, (8, 8))
    x = torch.rand(8, 8)
    with pytest.raises(pypto.PyptoValueError, match=r"function 'MAIN' takes 2 tensors "
                       r"\(PTO_TENSOR_a, PTO_TENSOR_b\), got 1"):
        pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x))
    with pytest.raises(pypto.PyptoValueError, match=r"inputs\[1\] is a torch.float32 tensor of "
                       r"shape \[8, 4\]; parameter 'PTO_TENSOR_b' of function 'MAIN' is DT_FP32 "
                       r"\[8, 8\]"):
        pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x),
                                                      pypto.from_torch(torch.zeros(8, 4)))
    with pytest.raises(pypto.PyptoTypeError, match=r"made by pypto.from_torch at inputs\[0\], "
                       "got Tensor"):
        pypto.runtime._device_run_once_data_from_host(x, pypto.from_torch(x))


def test_run_without_a_recorded_function_says_so(monkeypatch):
    monkeypatch.setattr(_eager, "_last", [None])
    with pytest.raises(pypto.PyptoRuntimeError, match="no function has been recorded"):
        pypto.runtime._device_run_once_data_from_host()


def test_dynamic_graph_tensor_is_refused():
    d = pypto.tensor([-1, 8], F32, "d")
    with pytest.raises(pypto.PyptoValueError, match=r"argument 0 is .*shape of ints"):
        with pypto.function("MAIN", d):
            pass
