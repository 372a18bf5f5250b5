# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the frontend tests."""

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


@pytest.fixture(autouse=True)
def _frontend_only(request, monkeypatch):
    """The frontend tests check tracing and validation without the native module (as if it
    were not built); only the SIM end-to-end tests (test_sim_*) use pypto._C."""
    if not request.module.__name__.split(".")[-1].startswith("test_sim_"):
        monkeypatch.setattr(_backend, "_native", lambda: None)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """No CANN in the environment unless a test sets it: run_mode defaults to SIM."""
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.delenv("CAMODEL_LOG_PATH", raising=False)
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
