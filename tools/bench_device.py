# SPDX-License-Identifier: Apache-2.0
"""Host overhead per task of the hardware backend on the cpu device (docs/hardware.md): a
kernel of one-op tasks (one small vector tile each: y = x + 1.0), run through
pypto.backends.DeviceBackend("cpu"), timed by the backend itself (device.json).

Usage: .venv/bin/python tools/bench_device.py [--tasks N] [--repeat R] [--mode M]
                                             [--executor tile|aten]
Prints tasks/s over the launch-to-end makespan and over the task span (first start to last
end), the best of R runs.
"""

import argparse
import json
import os
import sys

import torch

import pypto
from scratch import scratch_output_dir

ROWS = 8  # rows per tile: one task per tile


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mode", type=int, default=0, help="device_sched_mode (0 fifo .. 3)")
    ap.add_argument("--executor", default="tile", choices=["tile", "aten"])
    a = ap.parse_args()
    scratch_output_dir("bench_device_")

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU,
                                         "device_sched_mode": a.mode})
    def one_op(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
               y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(ROWS, 16)
        n = x.shape[0]
        for i in pypto.loop(n // ROWS, idx_name="i"):
            t = pypto.view(x, [ROWS, 16], [i * ROWS, 0])
            y[i * ROWS:, :] = t + 1.0

    x = torch.randn(a.tasks * ROWS, 16)
    y = torch.empty_like(x)
    best = None
    with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu", a.executor)):
        for _ in range(a.repeat):
            one_op(x, y)
            s = one_op.last_report.stats
            if best is None or s["makespan_ns"] < best["makespan_ns"]:
                best = s
    assert torch.equal(y, x + 1.0)
    span = best["last_end_ns"] - best["first_start_ns"]
    print(json.dumps({"executor": best["executor"], "tasks": best["tasks"], "device_tasks": best["device_tasks"],
                      "sched_threads": best["sched_threads"], "policy": best["policy"],
                      "makespan_ms": best["makespan_ns"] / 1e6,
                      "tasks_per_s": round(best["tasks_per_s"]),
                      "tasks_per_s_over_task_span": round(best["tasks"] * 1e9 / max(span, 1)),
                      "host_us_per_task": best["makespan_ns"] / 1e3 / best["tasks"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
