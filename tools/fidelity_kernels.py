#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Timing-fidelity probes (issue 9): a large fp16 matmul against the cube peak and an
HBM-bound element-wise kernel against the HBM peak, in SIM on the chosen chip.

Run: .venv/bin/python tools/fidelity_kernels.py [--n 4096] [--rows 16384]
     PYPTO_SIM_CHIP=<preset or yaml> picks the chip (default a2).
Expected with the A2 preset: matmul 75-88 % of the cube peak, element-wise 70-90 % of the
HBM peak (hbm.aggregate_gbps).
"""
import argparse
import os

import torch

import pypto
from scratch import scratch_output_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096, help="M = N = K of the matmul")
    ap.add_argument("--rows", type=int, default=16384, help="rows of the [rows, 4096] fp32 stream")
    ap.add_argument("--aic", type=int, default=24)
    ap.add_argument("--freq-mhz", type=float, default=1850.0)
    ap.add_argument("--hbm-gbps", type=float, default=1600.0)
    a = ap.parse_args()
    scratch_output_dir("fidelity_")
    os.environ["PYPTO_SIM_L2"] = "cold"

    n = a.n

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def mm(x: pypto.Tensor([n, n], pypto.DT_FP16), w: pypto.Tensor([n, n], pypto.DT_FP16),
           y: pypto.Tensor([n, n], pypto.DT_FP16)):
        # PyPTO's recommended fp16 tiling (docs/tutorials/debug/performance.md).
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        y[:, :] = pypto.matmul(x, w, pypto.DT_FP16)

    x = torch.randn(n, n).half()
    w = torch.randn(n, n).half()
    y = torch.empty(n, n, dtype=torch.float16)
    mm(x, w, y)
    r = mm.last_report
    flops = 2.0 * n * n * n
    peak = a.aic * 16 * 16 * 16 * 2 * a.freq_mhz * 1e6  # one fractal per cycle per AIC
    t = r.makespan_ns * 1e-9
    span = r.stats["task_span_ns"] * 1e-9
    print(f"matmul {n}^3 fp16: makespan {r.makespan_ns / 1000:.1f} us, "
          f"{100 * flops / t / peak:.1f} % of the cube peak ({peak / 1e12:.1f} TFLOPS; "
          f"task span: {100 * flops / span / peak:.1f} %)")

    rows, cols = a.rows, 4096

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def stream(x: pypto.Tensor([rows, cols], pypto.DT_FP32),
               y: pypto.Tensor([rows, cols], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 1024)
        for i in pypto.loop(rows // 64, idx_name="i"):
            t = pypto.view(x, [64, cols], [i * 64, 0])
            y[i * 64:, :] = t + 1.0

    xs = torch.randn(rows, cols)
    ys = torch.empty(rows, cols)
    stream(xs, ys)
    r = stream.last_report
    h = r.stats["hbm"]
    moved = 2.0 * xs.numel() * 4
    t = r.makespan_ns * 1e-9
    print(f"stream [{rows}, {cols}] fp32 y = x + 1: makespan {r.makespan_ns / 1000:.1f} us, "
          f"{100 * moved / t / 1e9 / a.hbm_gbps:.1f} % of the HBM peak by tensor bytes, "
          f"HBM achieved {h['achieved_gbps']:.0f} GB/s = {100 * h['achieved_gbps'] / a.hbm_gbps:.1f} %"
          f" (pending write-back {h.get('pending_writeback_bytes', 0) / 2**20:.0f} MiB, "
          f"L2 read hit rate {100 * r.stats['l2']['hit_rate']:.1f} %)")


if __name__ == "__main__":
    main()
