# SPDX-License-Identifier: Apache-2.0
"""The compile/run seam: backend registry and the built-in backends' failure modes."""

import sys
import types

import pytest
import torch

import pypto
from pypto import _backend, ir

from conftest import RecordingBackend


def test_builtin_backends_registered():
    assert _backend.registered_backends() == {"NPU": "npu", "SIM": "sim"}
    assert isinstance(_backend.get_backend(pypto.RunMode.SIM), _backend.SimBackend)
    assert isinstance(_backend.get_backend(0), _backend.NpuBackend)


def test_duplicate_registration_raises():
    with pytest.raises(pypto.PyptoValueError,
                       match="run mode SIM already has backend 'sim'; pass replace=True"):
        _backend.register_backend(pypto.RunMode.SIM, RecordingBackend())


def test_register_rejects_non_backends_and_bad_modes():
    with pytest.raises(pypto.PyptoValueError, match="is not a pypto Backend"):
        _backend.register_backend(pypto.RunMode.SIM, object())
    with pytest.raises(pypto.PyptoValueError, match="invalid run mode 5"):
        _backend.get_backend(5)


def test_use_backend_restores_previous():
    sim = _backend.get_backend(pypto.RunMode.SIM)
    double = RecordingBackend()
    with _backend.use_backend(pypto.RunMode.SIM, double):
        assert _backend.get_backend(pypto.RunMode.SIM) is double
    assert _backend.get_backend(pypto.RunMode.SIM) is sim


def test_compile_returns_ir_without_native_module(monkeypatch):
    monkeypatch.setattr(_backend, "_native", lambda: None)
    kir = ir.Kernel(name="k", params=[], variants=[ir.Variant(conds=[])])
    assert _backend.compile(kir, {}) is kir


def test_compile_and_run_use_native_module_when_present(monkeypatch):
    calls = []

    class FakeNative:
        @staticmethod
        def compile(ir_dict, options):
            calls.append(("compile", ir_dict["name"]))
            return "program"

        @staticmethod
        def run_sim(compiled, tensors, bindings, options):
            calls.append(("run_sim", compiled, len(tensors), bindings))
            return {"path": "out/k", "stats": {"makespan_ns": 1.5}, "log": ["hello"], "tasks": 1,
                    "tile_ops": 2}

    monkeypatch.setattr(_backend, "_native", lambda: FakeNative)

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32)):
        pass

    k(torch.zeros(5))
    assert calls == [("compile", "k"), ("run_sim", "program", 1, {"x.shape[0]": 5})]
    assert k.last_report.makespan_ns == 1.5
    assert k.last_report.path == "out/k" and k.last_report.log == ["hello"]


def test_native_module_without_entry_point(monkeypatch):
    monkeypatch.setattr(_backend, "_native", lambda: object())
    with pytest.raises(pypto.PyptoNotImplementedError,
                       match="SIM execution needs pypto._C.run_sim, which this build"):
        _backend.SimBackend().run(None, [], {}, {})


def test_sim_backend_without_native_module(monkeypatch):
    monkeypatch.setattr(_backend, "_native", lambda: None)
    with pytest.raises(NotImplementedError,
                       match=r"SIM execution needs the compiled pypto._C module; build it with "
                             r"tools/setup.sh"):
        _backend.SimBackend().run(None, [], {}, {})


def test_npu_without_cann_points_to_sim(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_npu", None)  # import fails
    with pytest.raises(pypto.PyptoRuntimeError,
                       match=r"run_mode=NPU needs CANN \(ASCEND_HOME_PATH\) and torch_npu"):
        _backend.NpuBackend().run(None, [], {}, {})


def test_npu_without_the_aten_executor_says_rebuild(monkeypatch):
    """CANN and torch_npu present, but this build of pypto._C has no ATen executor (the part
    that runs tile ops on the NPU): the message says so, how to rebuild, and points to SIM."""
    monkeypatch.setenv("ASCEND_HOME_PATH", "/usr/local/Ascend/ascend-toolkit/latest")
    fake = types.ModuleType("torch_npu")
    fake.npu = types.SimpleNamespace(device_count=lambda: 1)
    monkeypatch.setitem(sys.modules, "torch_npu", fake)
    monkeypatch.setattr(_backend, "_native", lambda: types.SimpleNamespace(run_sim=None))
    with pytest.raises(pypto.PyptoNotImplementedError) as e:
        _backend.NpuBackend().run(None, [], {}, {})
    msg = str(e.value)
    assert "this build of pypto._C has no ATen executor" in msg
    assert "tools/setup.sh" in msg and "RunMode.SIM" in msg
    assert "not implemented" not in msg
