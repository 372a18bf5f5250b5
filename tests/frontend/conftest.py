# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the frontend tests."""

import importlib
import json
import os
import sys

import pytest

_FRONTEND = os.path.join(os.path.dirname(__file__), "..", "..", "frontend")
if os.path.abspath(_FRONTEND) not in map(os.path.abspath, sys.path):
    sys.path.insert(0, os.path.abspath(_FRONTEND))

import pypto  # noqa: E402
from pypto import _backend  # noqa: E402


class RecordingBackend(_backend.Backend):
    """Test double: records each run instead of executing (never computes results)."""

    name = "recording"

    def __init__(self):
        self.calls = []

    def run(self, compiled, tensors, bindings, options):
        self.calls.append({"compiled": compiled, "tensors": list(tensors),
                           "bindings": dict(bindings), "options": options})
        return {"run": len(self.calls)}


@pytest.fixture
def options_reset():
    """Global pypto options (tile shapes set outside a kernel, set_*_options) reset before and
    after the test, so no test inherits another's (modules opt in with pytestmark)."""
    pypto.reset_options()
    yield
    pypto.reset_options()


@pytest.fixture(autouse=True)
def _frontend_only(request, monkeypatch):
    """The frontend tests check tracing and validation without the native module (as if it
    were not built); only the end-to-end tests (test_sim_*, and test_device_* of the hardware
    backend) use pypto._C."""
    if not request.module.__name__.split(".")[-1].startswith(("test_sim_", "test_device_")):
        monkeypatch.setattr(_backend, "_native", lambda: None)


@pytest.fixture(autouse=True)
def _clean_env(request, monkeypatch):
    """No CANN in the environment unless a test sets it: run_mode defaults to SIM. SIM calls
    start with a cold L2 (so a golden record does not depend on which tests ran before)
    unless the test is marked ``l2_warm``."""
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.delenv("CAMODEL_LOG_PATH", raising=False)
    if request.node.get_closest_marker("l2_warm") is None:
        monkeypatch.setenv("PYPTO_SIM_L2", "cold")
    else:
        monkeypatch.delenv("PYPTO_SIM_L2", raising=False)
    yield
    pypto.frontend.hooks.clear()


@pytest.fixture
def recorder(monkeypatch):
    """A RecordingBackend registered for SIM (and restored afterwards). The native module is
    hidden so that the backend receives the traced IR itself."""
    monkeypatch.setattr(_backend, "_native", lambda: None)
    backend = RecordingBackend()
    with _backend.use_backend(pypto.RunMode.SIM, backend):
        yield backend


# --- Golden SIM results ----------------------------------------------------------------------
# Every SIM call of the test_sim_* modules is recorded (stats.json without wall-clock fields,
# task and tile-op counts, the log, a SHA-256 of every tensor after the call) and compared with
# tests/golden/python_sim.json, so a change of the model or the compiler shows up as a
# reviewed diff. PYPTO_GOLDEN_UPDATE=1 (tools/update_golden.sh) rewrites the records instead.

_GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "golden")
_GOLDEN_PY = os.path.join(_GOLDEN_DIR, "python_sim.json")
sys.path.insert(0, os.path.abspath(_GOLDEN_DIR))
import golden as _golden  # noqa: E402

_UPDATE = os.environ.get("PYPTO_GOLDEN_UPDATE") == "1"
_updated = {}


def _tensor_digest(t):
    import ctypes
    import hashlib

    c = t.detach().contiguous()
    return hashlib.sha256(ctypes.string_at(c.data_ptr(), c.numel() * c.element_size())).hexdigest()


def _load_golden():
    if not os.path.exists(_GOLDEN_PY):
        return {}
    with open(_GOLDEN_PY, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(autouse=True)
def _golden_sim_results(request, monkeypatch):
    if not request.module.__name__.split(".")[-1].startswith("test_sim_"):
        yield
        return
    native = importlib.import_module("pypto._C")
    real = native.run_sim
    real_submit = native.submit_sim
    calls = []
    pending = []  # (record, PendingSim) of cache-hit calls, resolved after the test

    def recording_run_sim(compiled, tensors, bindings, options):
        raw = real(compiled, tensors, bindings, options)
        calls.append({"stats": _golden.strip_wall(raw["stats"]), "tasks": raw["tasks"],
                      "tile_ops": raw["tile_ops"], "log": list(raw["log"]),
                      "tensors": [_tensor_digest(t) for t in tensors]})
        return raw

    def recording_submit_sim(compiled, tensors, bindings, options):
        p = real_submit(compiled, tensors, bindings, options)
        record = {"stats": None, "tasks": p.tasks, "tile_ops": p.tile_ops, "log": list(p.log),
                  "tensors": [_tensor_digest(t) for t in tensors]}
        calls.append(record)
        pending.append((record, p))
        return p

    monkeypatch.setattr(native, "run_sim", recording_run_sim)
    monkeypatch.setattr(native, "submit_sim", recording_submit_sim)
    import torch

    torch.manual_seed(0)  # tests drawing unseeded inputs get the same ones in every run
    yield
    for record, p in pending:
        try:
            record["stats"] = _golden.strip_wall(p.wait()["stats"])
        except Exception as e:  # a test that expects the failure saw it already
            record["stats"] = {"error": type(e).__name__}
    node = request.node.nodeid
    if _UPDATE:
        _updated[node] = calls
        return
    expected = _load_golden().get(node)
    if expected is None:
        if calls:
            pytest.fail(f"{node}: {len(calls)} SIM call(s) without a golden record in "
                        f"{_GOLDEN_PY}; run tools/update_golden.sh and review the diff")
        return
    lines = _golden.diff(expected, calls)
    if lines:
        pytest.fail(f"{node}: SIM results differ from {_GOLDEN_PY} (update deliberately with "
                    "tools/update_golden.sh):\n  " + "\n  ".join(lines[:40]))


def pytest_sessionfinish(session, exitstatus):
    if not _UPDATE or not _updated:
        return
    merged = _load_golden()
    merged.update({k: v for k, v in _updated.items() if v})
    with open(_GOLDEN_PY, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(merged.items())), f, indent=1, sort_keys=True)
        f.write("\n")


def pytest_configure(config):
    # Each xdist worker would write the whole golden file at its end, the last one winning.
    if _UPDATE and getattr(config.option, "numprocesses", None):
        raise pytest.UsageError("PYPTO_GOLDEN_UPDATE=1 rewrites tests/golden/python_sim.json "
                                "from one process: run it without -n (tools/update_golden.sh)")
    config.addinivalue_line("markers", "l2_warm: SIM calls keep the L2 across calls (the default "
                            "outside the test suite)")
    config.addinivalue_line("markers", "cuda: needs a CUDA device (runs wherever torch sees one)")
    config.addinivalue_line("markers", "npu: needs an Ascend NPU through torch_npu (runs wherever "
                            "one is visible)")
