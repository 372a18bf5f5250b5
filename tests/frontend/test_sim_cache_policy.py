# SPDX-License-Identifier: Apache-2.0
"""Tensor.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True): a kernel input's traffic
goes to HBM past L2, neither filling nor evicting lines (PyPTO applies it to function inputs);
the numbers do not change."""

import pytest
import torch

import pypto
import pypto.sim

ROWS, COLS, STEPS = 32, 64, 8
BYTES = ROWS * COLS * 4  # one [32, 64] fp32 tile


def _kernel(policy_on_w):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([ROWS * STEPS, COLS], pypto.DT_FP32),
          w: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
          y: pypto.Tensor([ROWS * STEPS, COLS], pypto.DT_FP32)):
        if policy_on_w:
            w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        pypto.set_vec_tile_shapes(ROWS, COLS)
        for i in pypto.loop(STEPS, idx_name="i"):
            t = pypto.view(x, [ROWS, COLS], [i * ROWS, 0])
            y[i * ROWS:, :] = t * 2.0 + w  # w is read once per step

    return k


@pytest.fixture(autouse=True)
def _cold(monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("PYPTO_SIM_REPORTS", "wait")
    monkeypatch.setenv("PYPTO_SIM_L2", "cold")


def _run(policy_on_w):
    x, w = torch.randn(ROWS * STEPS, COLS), torch.randn(ROWS, COLS)
    y = torch.empty(ROWS * STEPS, COLS)
    k = _kernel(policy_on_w)
    k(x, w, y)
    torch.testing.assert_close(y, x * 2.0 + w.repeat(STEPS, 1))
    return k.last_report.stats


def test_a_none_cacheable_input_is_read_from_hbm_every_time():
    cached, bypass = _run(False), _run(True)
    # Cached: w misses once and then hits 7 times. Past L2: none of w's 8 reads touch L2, and
    # each of them moves its bytes from HBM (7 more tiles than the cached run's one fill).
    assert cached["l2"]["hit_bytes"] == (STEPS - 1) * BYTES
    assert bypass["l2"]["hit_bytes"] == 0
    assert bypass["l2"]["miss_bytes"] == cached["l2"]["miss_bytes"] - BYTES
    assert bypass["hbm"]["bytes"] == cached["hbm"]["bytes"] + (STEPS - 1) * BYTES


def test_the_policy_is_read_back_and_checked():
    seen = {}

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32), y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
        seen["before"] = x.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE)
        x.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        seen["after"] = x.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE)
        pypto.set_vec_tile_shapes(ROWS, COLS)
        y[:, :] = x + 1.0

    x, y = torch.randn(ROWS, COLS), torch.empty(ROWS, COLS)
    k(x, y)
    assert seen == {"before": False, "after": True}
    torch.testing.assert_close(y, x + 1.0)

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def bad(x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32), y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
        x.set_cache_policy("NONE_CACHEABLE", 1)

    with pytest.raises(TypeError, match="set_cache_policy.*pypto.CachePolicy"):
        bad(x, y)
