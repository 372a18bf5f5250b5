# SPDX-License-Identifier: Apache-2.0
"""pypto.Function, get_last_function, get_current_function and function: PyPTO's handles on
the functions it builds, which in pypto-sim are traced jit kernels."""

import json

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32 = pypto.DT_FP32


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def test_last_and_current_function_and_the_function_scope(tmp_path):
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def add_one(a: pypto.Tensor([16, 16], F32), b: pypto.Tensor([16, 16], F32),
                c: pypto.Tensor([16, 16], F32)):
        seen["current"] = pypto.get_current_function()
        with pypto.function("main", a, b, c) as f:
            for _ in f:
                pypto.set_vec_tile_shapes(16, 16)
                c[:] = a + b

    a, b, c = torch.rand(16, 16), torch.rand(16, 16), torch.zeros(16, 16)
    add_one(a, b, c)
    assert torch.equal(c, a + b)
    assert seen["current"].raw_name == "add_one"
    assert pypto.get_current_function() is None  # not tracing

    f = pypto.get_last_function()
    assert isinstance(f, pypto.Function)
    assert f.raw_name == "add_one" and f.function_type_str == "STATIC" and f.is_static
    assert [p.name for p in f.incast] == ["a", "b"]
    assert [p.name for p in f.outcast] == ["c"]
    assert f.root_function is f and not f.has_parent and not f.is_eager
    assert f.magic_name == f"add_one_{f.func_magic}"
    assert repr(f) == f"<Function 'add_one' (magic: {f.func_magic}, type: STATIC)>"
    assert f.dump().startswith("kernel add_one(a: DT_FP32[16, 16]")
    path = tmp_path / "f.json"
    f.dump_json_file(str(path))
    assert json.loads(path.read_text())["name"] == "add_one"


def test_dynamic_kernels_are_dynamic_functions():
    @pypto.frontend.jit(runtime_options=SIM)
    def dyn(x: pypto.Tensor([pypto.DYNAMIC, 16], F32), y: pypto.Tensor([pypto.DYNAMIC, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(x.shape[0] // 8):
            y[i * 8:, :] = pypto.view(x, [8, 16], [i * 8, 0]) * 2.0

    x, y = torch.rand(16, 16), torch.zeros(16, 16)
    dyn(x, y)
    assert torch.equal(y, x * 2)
    f = pypto.get_last_function()
    assert f.raw_name == "dyn" and f.function_type_str == "DYNAMIC"


def test_function_outside_a_kernel_takes_graph_tensors_only():
    # Outside a kernel the block records a function of graph tensors (test_sim_eager_function).
    with pytest.raises(pypto.PyptoTypeError, match=r"argument 0 must be a graph tensor"):
        with pypto.function("main", torch.zeros(4)):
            pass
    assert str(pypto.Function()) == "Function(uninitialized)"
