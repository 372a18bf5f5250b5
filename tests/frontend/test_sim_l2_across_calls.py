# SPDX-License-Identifier: Apache-2.0
"""L2 contents across SIM calls: consecutive kernels share the L2 as they do on a device,
unless PYPTO_SIM_L2=cold or pypto.sim.set_l2_warm(False) asks for cold starts."""

import pytest
import torch

import pypto
import pypto.sim


def _scale():
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def scale(x: pypto.Tensor([256, 64], pypto.DT_FP32), y: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 64)
        for i in pypto.loop(8, idx_name="i"):
            t = pypto.view(x, [32, 64], [i * 32, 0])
            y[i * 32:, :] = t * 2.0

    return scale


@pytest.mark.l2_warm
def test_second_call_on_the_same_tensors_hits_in_l2():
    pypto.sim.reset_l2()
    scale = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    scale(x, y)
    first = scale.last_report.stats
    assert not first["l2"]["warm_start"]
    assert first["l2"]["read_hits"] == 0
    assert first["l2"]["write_allocations"] > 0
    # The output stays dirty in L2: reported as owed, not as moved.
    assert first["hbm"]["pending_writeback_bytes"] == 256 * 64 * 4
    scale(x, y)
    second = scale.last_report.stats
    assert second["l2"]["warm_start"]
    assert second["l2"]["read_misses"] == 0
    assert second["l2"]["hit_rate"] == 1.0
    assert second["hbm"]["bytes"] == 0
    assert second["makespan_ns"] < first["makespan_ns"]
    assert torch.equal(y, x * 2.0)
    # reset_l2(): the next call is cold again.
    pypto.sim.reset_l2()
    scale(x, y)
    assert not scale.last_report.stats["l2"]["warm_start"]


@pytest.mark.l2_warm
def test_cold_starts_by_option_and_by_environment(monkeypatch):
    scale = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    assert pypto.sim.l2_warm()
    pypto.sim.set_l2_warm(False)
    try:
        assert not pypto.sim.l2_warm()
        scale(x, y)
        scale(x, y)
        assert not scale.last_report.stats["l2"]["warm_start"]
        assert scale.last_report.stats["l2"]["read_hits"] == 0
    finally:
        pypto.sim.set_l2_warm(True)
    monkeypatch.setenv("PYPTO_SIM_L2", "cold")
    scale(x, y)
    scale(x, y)
    assert not scale.last_report.stats["l2"]["warm_start"]
    with pytest.raises(TypeError, match="warm must be a bool"):
        pypto.sim.set_l2_warm(1)
