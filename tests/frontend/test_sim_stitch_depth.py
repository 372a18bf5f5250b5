# SPDX-License-Identifier: Apache-2.0
"""Stitch depth against the shape of PyPTO's published glm_attention figures
(docs/tutorials/debug/performance.md, "Stitch 调优"): kernel time 1230 us at
stitch_function_max_num=1, 180 us at 128, 150 us at 512 (falling all the way), while the
end-to-end time including the control flow's stitching is 1590, 803 and 977 us (512 pays
more stitching before the first dispatch than it saves)."""

import torch

import pypto

ITERS = 512


def _run(depth):
    rows, cols = ITERS * 16, 256

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM,
                                         "stitch_function_max_num": depth})
    def k(x: pypto.Tensor([rows, cols], pypto.DT_FP32), y: pypto.Tensor([rows, cols], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 256)
        for i in pypto.loop(ITERS, idx_name="i"):
            t = pypto.view(x, [16, cols], [i * 16, 0])
            y[i * 16:, :] = pypto.exp(t) * 2.0

    x = torch.randn(rows, cols)
    y = torch.empty(rows, cols)
    k(x, y)
    assert torch.allclose(y, torch.exp(x) * 2.0)
    return k.last_report.stats


def test_kernel_time_falls_with_stitch_depth_as_pypto_reports():
    s1, s128, s512 = (_run(d) for d in (1, 128, 512))
    assert (s1["device_tasks"], s128["device_tasks"], s512["device_tasks"]) == (512, 4, 1)
    # Kernel time (first task start to last end): every step of depth helps; depth 1 is
    # several times slower (PyPTO: 6.8x), 512 a little faster than 128 (PyPTO: 1.2x).
    k1, k128, k512 = (s["task_span_ns"] for s in (s1, s128, s512))
    assert k1 > 3 * k128
    assert k128 > k512
    # The control flow stitches device task N+1 while N runs: with depth 128 most of its
    # work is hidden, so it is busy longer than the time it adds before the first dispatch.
    ahead128 = s128["makespan_ns"] - k128
    assert s128["aicpu"]["control_flow_busy_ns"] > ahead128 * 0.9
