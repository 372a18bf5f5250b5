# SPDX-License-Identifier: Apache-2.0
"""Scheduling policies written in Python (pypto.sim.Policy): fifo written out in Python
reproduces fifo's makespan exactly, hooks see events and parameters, exceptions come out
as themselves with the hook named, registration can be scoped, and a jit kernel can use
one through runtime_options (runs outside test_sim_*: no golden records)."""

import importlib
import json
import os
import runpy

import pytest
import torch

import pypto
import pypto.sim as ps
from pypto import _backend


@pytest.fixture
def sim_backend(monkeypatch):
    native = importlib.import_module("pypto._C")
    monkeypatch.setattr(_backend, "_native", lambda: native)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A 3000-task synthetic trace (fan-outs, chains, loops) from the generator."""
    path = tmp_path_factory.mktemp("traces") / "mix.ndjson"
    lines = []
    # Written here rather than by pypto-sim gen: four chains of 3 and 40 fan-outs of 8,
    # with memory so that L2 and HBM take part.
    tid = 0
    for root in range(40):
        head = tid
        lines.append({"id": head, "core": "AIC", "root": root, "succ": list(range(head + 1, head + 9)),
                      "mem": [[root * 65536, 32768, "r"], [1 << 30 | root * 65536, 32768, "w"]],
                      "ops": [["mmad", "fp16", [128, 128, 128]]]})
        tid += 1
        for k in range(8):
            lines.append({"id": tid, "core": "AIV", "root": root,
                          "mem": [[1 << 30 | root * 65536, 4096, "r"], [2 << 30 | tid * 4096, 4096, "w"]],
                          "ops": [["exp", "fp16", [32, 64]]]})
            tid += 1
    with open(path, "w") as f:
        f.write(json.dumps({"format": "pypto-sim-trace", "version": 1, "tasks": tid}) + "\n")
        for r in lines:
            f.write(json.dumps(r) + "\n")
    return str(path)


# fifo written out in Python: the class the CLI tests load too (tests/cli/policies).
PyFifo = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "cli", "policies",
                                     "fifo_hooks.py"))["PyFifo"]


class Delegate(ps.Policy):
    def pick_shared(self, c, ct, q, first_batch, before_resolve):
        return super().pick_shared(c, ct, q, first_batch, before_resolve)


def test_fifo_in_python_reproduces_fifo(trace):
    base = ps.replay(trace, "fifo")
    with ps.registered_policy("py_fifo", PyFifo), ps.registered_policy("py_delegate", Delegate):
        assert "py_fifo" in ps.policies()
        for name in ("py_fifo", "py_delegate"):
            r = ps.replay(trace, name)
            assert r["makespan_ns"] == base["makespan_ns"], name
            assert r["policy"] == name
    assert "py_fifo" not in ps.policies()
    for threads in (1, 2):
        b = ps.replay(trace, 0, launch_sched_aicpu_num=threads)
        with ps.registered_policy("py_fifo", PyFifo):
            assert ps.replay(trace, "py_fifo", launch_sched_aicpu_num=threads)["makespan_ns"] == \
                b["makespan_ns"]


def test_events_and_parameters(trace):
    class Watch(ps.Policy):
        def setup(self, m):
            self.log = ["setup", m.num_tasks(), self.params["alpha"]]
            Watch.last = self

        def on_ready(self, c, task):
            self.log.append("ready")

        def on_dispatch(self, c, task, core):
            assert c.view.core_type(core) == c.view.task_type(task)
            self.log.append("dispatch")

        def on_done(self, c, task, core):
            self.log.append("done")

        def on_device_task_finished(self, m, dt, at):
            self.log.append(("finished", dt))

    with ps.registered_policy("watch", Watch, params={
            "alpha": {"type": "float", "default": 0.5, "min": 0.0, "max": 1.0, "doc": "a knob"}}):
        assert ps.policy_info("watch")["params"][0]["default"] == 0.5
        ps.set_policy_params("watch", alpha=0.25)
        r = ps.replay(trace, "watch")
        log = Watch.last.log
        assert log[:3] == ["setup", 360, 0.25]
        assert log.count("dispatch") == 360 and log.count("done") == 360
        assert log.count("ready") == 360
        assert log[-1] == ("finished", 0)
        assert r["makespan_ns"] == ps.replay(trace, "fifo")["makespan_ns"]
        with pytest.raises(ValueError, match=r"alpha = 2 is out of range"):
            ps.set_policy_params("watch", alpha=2)


def test_exception_in_a_hook_surfaces_with_the_hook_named(trace):
    class Boom(ps.Policy):
        def pick_core(self, c, ct, task):
            raise KeyError("no core for you")

    class OutOfRange(ps.Policy):
        def pick_shared(self, c, ct, q, first_batch, before_resolve):
            return len(q)

    with ps.registered_policy("boom", Boom), ps.registered_policy("oor", OutOfRange):
        with pytest.raises(KeyError, match="no core for you") as e:
            ps.replay(trace, "boom")
        assert "in scheduling policy hook pick_core of" in " ".join(e.value.__notes__)
        # An answer outside the hook's contract is the policy's error, not the model's.
        with pytest.raises(ValueError, match=r"scheduling policy 'oor': hook pick_shared "
                           r"returned \d+; expected an index into the shared queue"):
            ps.replay(trace, "oor")
        assert ps.replay(trace, "fifo")["makespan_ns"] > 0  # nothing is left broken


def test_registration_errors():
    with pytest.raises(ValueError, match="expected a subclass of pypto.sim.Policy"):
        ps.register_policy("nope", int)
    with pytest.raises(ValueError, match="already registered"):
        ps.register_policy("fifo", PyFifo)
    with pytest.raises(ValueError, match="was not registered from Python"):
        ps.unregister_policy("critical_path")
    assert ps.unregister_policy("never_registered") is False


def test_jit_kernel_under_a_python_policy(sim_backend):
    def run(mode):
        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM,
                                             "device_sched_mode": mode})
        def k(x: pypto.Tensor([128, 64], pypto.DT_FP32), y: pypto.Tensor([128, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 64)
            for i in pypto.loop(8, idx_name="i"):
                t = pypto.view(x, [16, 64], [i * 16, 0])
                y[i * 16:, :] = t + 1.0

        x = torch.randn(128, 64)
        y = torch.zeros(128, 64)
        k(x, y)
        assert torch.equal(y, x + 1.0)
        return k.last_report.stats["makespan_ns"]

    with ps.registered_policy("py_fifo_k", PyFifo):
        assert run("py_fifo_k") == run("fifo")
