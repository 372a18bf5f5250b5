# SPDX-License-Identifier: Apache-2.0
"""Policies by name and with parameters from Python: runtime_options={"device_sched_mode":
NAME} and pypto.sim.set_policy_params / policy_params (runs outside test_sim_*: no golden
records; they compare policies with each other)."""

import importlib

import pytest
import torch

import pypto
import pypto.sim
from pypto import _backend


@pytest.fixture
def sim_backend(monkeypatch):
    native = importlib.import_module("pypto._C")
    monkeypatch.setattr(_backend, "_native", lambda: native)


def run(mode):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "device_sched_mode": mode})
    def k(x: pypto.Tensor([256, 64], pypto.DT_FP32), y: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(16, idx_name="i"):
            t = pypto.view(x, [16, 64], [i * 16, 0])
            y[i * 16:, :] = t * 2.0 + 1.0

    x = torch.randn(256, 64)
    y = torch.zeros(256, 64)
    k(x, y)
    assert torch.allclose(y, x * 2.0 + 1.0)
    return k.last_report.stats


def test_policy_by_name_and_number(sim_backend):
    assert run("fifo")["makespan_ns"] == run(0)["makespan_ns"]
    assert run("l2_fair")["makespan_ns"] == run(3)["makespan_ns"]
    for name in ("critical_path", "work_stealing", "random"):
        assert run(name)["policy"] == name


def test_unknown_policy_name_suggests():
    with pytest.raises(ValueError, match=r"unknown policy 'critcal_path'; did you mean "
                                         r"'critical_path'\?"):
        pypto.frontend.jit(runtime_options={"device_sched_mode": "critcal_path"})(lambda: None)
    with pytest.raises(ValueError, match=r"7 is out of range \[0, 3\]"):
        pypto.frontend.jit(runtime_options={"device_sched_mode": 7})(lambda: None)


def test_policy_params(sim_backend):
    info = pypto.sim.policy_info("random")
    assert info["params"] == [{"name": "seed", "type": "int", "default": 1, "min": 0,
                               "max": 4294967295, "doc": "random seed"}]
    assert pypto.sim.get_policy_params("random") == {"seed": 1}
    with pypto.sim.policy_params("random", seed=11):
        assert pypto.sim.get_policy_params("random") == {"seed": 11}
        a = run("random")["makespan_ns"]
        assert run("random")["makespan_ns"] == a  # seeded: deterministic
    assert pypto.sim.get_policy_params("random") == {"seed": 1}
    pypto.sim.set_policy_params("critical_path", unit_cost=True)
    assert pypto.sim.get_policy_params("critical_path") == {"unit_cost": True}
    pypto.sim.set_policy_params("critical_path")
    assert pypto.sim.get_policy_params("critical_path") == {"unit_cost": False}
    with pytest.raises(ValueError, match=r"unknown parameter 'sed'; did you mean 'seed'\?"):
        pypto.sim.set_policy_params("random", sed=3)
    with pytest.raises(ValueError, match=r"out of range"):
        pypto.sim.set_policy_params("random", seed=-2)
    with pytest.raises(ValueError, match=r"did you mean 'work_stealing'"):
        pypto.sim.set_policy_params("work_steal", min_victim_staged=2)
