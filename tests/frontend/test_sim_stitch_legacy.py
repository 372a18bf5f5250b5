# SPDX-License-Identifier: Apache-2.0
"""PyPTO's older stitching options in SIM: stitch_function_num_initial / num_step grow each
device task's root count (as PyPTO's control flow did before stitch_function_max_num),
stitch_function_size caps its leaf tasks, and stitch_function_max_num, when given too, rules
with a warning. The outputs never change: only how the roots are grouped."""

import logging

import torch

import pypto

ITERS = 20


def _run(runtime_options):
    rows, cols = ITERS * 16, 64

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, **runtime_options})
    def k(x: pypto.Tensor([rows, cols], pypto.DT_FP32), y: pypto.Tensor([rows, cols], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(ITERS, idx_name="i"):
            t = pypto.view(x, [16, cols], [i * 16, 0])
            y[i * 16:, :] = pypto.exp(t) * 2.0

    x = torch.linspace(-3.0, 3.0, rows * cols).reshape(rows, cols)
    y = torch.empty(rows, cols)
    k(x, y)
    return y, k.last_report.stats["device_tasks"]


def test_num_initial_and_step_grow_each_device_task():
    y0, n0 = _run({})
    assert n0 == 1  # 20 roots fit one device task of stitch_function_max_num 128
    # 2, 2 + 3, 2 + 6 roots, then the last 5 of 20: four device tasks.
    y, n = _run({"stitch_function_num_initial": 2, "stitch_function_num_step": 3})
    assert n == 4
    assert torch.equal(y, y0)
    # Step 0: 3 roots each (7 device tasks); a missing initial is PyPTO's old default, 30.
    assert _run({"stitch_function_num_initial": 3, "stitch_function_num_step": 0})[1] == 7
    assert _run({"stitch_function_num_step": 1})[1] == 1


def test_stitch_function_size_caps_leaf_tasks():
    # Every root has at least one leaf task: a cap of 1 gives each its own device task.
    y0, _ = _run({})
    y, n = _run({"stitch_function_size": 1})
    assert n == ITERS
    assert torch.equal(y, y0)


def test_max_num_given_supersedes_the_older_pair(caplog):
    with caplog.at_level(logging.WARNING, logger="pypto"):
        _, n = _run({"stitch_function_num_initial": 2, "stitch_function_num_step": 3,
                     "stitch_function_max_num": 8})
    assert n == 3  # 8, 8, 4
    warned = [m for m in caplog.messages if "superseded by stitch_function_max_num=8" in m]
    assert warned == ["runtime_options: stitch_function_num_initial=2, stitch_function_num_step=3 "
                      "superseded by stitch_function_max_num=8 (PyPTO replaced the older options "
                      "with it); device tasks hold up to 8 roots"]
