#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SIM against the board: PyPTO's documented kernels whose board times PyPTO's tuning docs
publish, rewritten here from the docs' descriptions (shapes, tiles, options; no PyPTO file is
copied), compiled by this package, timed by the simulator (timing only: each kernel's trace is
dumped with ``dump_trace`` and replayed by ``pypto-sim run``), and compared with the published
board time and with each published tuning step's factor. The SIM figure compared is the AICore
end to end (first task start to last task end), the kernel time PyPTO's swimlane summary prints
and its docs quote ("算子kernel耗时", apart from the scheduling time); the makespan (from the
launch) is printed beside it.

    .venv/bin/python tools/board_cases.py [--case C1 ...] [--json out.json] [--keep DIR]

Cases (hicann/pypto ``docs/zh/tutorials/debug/``):

* C1 ``matmul_performance_guide.md`` (访存带宽优化): 6144^3 fp16 matmul, cube tiles
  [128,128],[64,256],[256,256], defaults: about 2.1 ms.
* C2 same section: the same matmul in 8 x 6 ``pypto.loop`` blocks of 768 x 1024 outputs (one
  24-tile wave each): about 1.6 ms. Step C1 -> C2.
* C4a/C4b ``performance.md`` (其他调优方法): a [884736, 16] x [16, 16] bf16 matmul, 500 us with
  L1 reuse only (the doc does not give its tiles: this script assumes the after-tiles' M tile,
  [512,512],[16,16],[16,16]), then 40 us as a [221184, 64] x [64, 64] block-diagonal matmul
  with tiles [512,512],[64,64],[64,64] split-K and ``cube_l1_reuse_setting={"DEFAULT": 9}``,
  reshaped back and assembled into the output. Step C4a -> C4b.

Exit status 0 when every case ran (the comparison is reported, not asserted).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

import pypto
from board_report import report
from scratch import scratch_output_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIM = os.path.join(ROOT, ".venv", "bin", "pypto-sim")
FP16, BF16 = pypto.DT_FP16, pypto.DT_BF16
SIM_MODE = {"run_mode": pypto.RunMode.SIM}


def c1():
    n = 6144

    @pypto.frontend.jit(runtime_options=SIM_MODE)
    def mm(x: pypto.Tensor([n, n], FP16), w: pypto.Tensor([n, n], FP16),
           y: pypto.Tensor([n, n], FP16)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        y[:, :] = pypto.matmul(x, w, FP16)

    return mm, [torch.zeros(n, n, dtype=torch.float16) for _ in range(3)]


def c2():
    n, mv, nv = 6144, 768, 1024

    @pypto.frontend.jit(runtime_options=SIM_MODE)
    def mm(x: pypto.Tensor([n, n], FP16), w: pypto.Tensor([n, n], FP16),
           y: pypto.Tensor([n, n], FP16)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        for i in pypto.loop(0, n // mv, 1, name="m_loop", idx_name="i"):
            for j in pypto.loop(0, n // nv, 1, name="n_loop", idx_name="j"):
                a = pypto.view(x, [mv, n], [i * mv, 0])
                b = pypto.view(w, [n, nv], [0, j * nv])
                y[i * mv:(i + 1) * mv, j * nv:(j + 1) * nv] = pypto.matmul(a, b, FP16)

    return mm, [torch.zeros(n, n, dtype=torch.float16) for _ in range(3)]


M_SKINNY = 884736


def skinny_tensors():
    return [torch.zeros(M_SKINNY, 16, dtype=torch.bfloat16),
            torch.zeros(16, 16, dtype=torch.bfloat16),
            torch.zeros(M_SKINNY, 16, dtype=torch.bfloat16)]


def c4a():
    m = M_SKINNY

    @pypto.frontend.jit(runtime_options=SIM_MODE)
    def skinny(a: pypto.Tensor([m, 16], BF16), b: pypto.Tensor([16, 16], BF16),
               out: pypto.Tensor([m, 16], BF16)):
        pypto.set_cube_tile_shapes([512, 512], [16, 16], [16, 16])
        out[:, :] = pypto.matmul(a, b, BF16)

    return skinny, skinny_tensors()


def c4b():
    m = M_SKINNY

    @pypto.frontend.jit(runtime_options=SIM_MODE,
                        pass_options={"cube_l1_reuse_setting": {"DEFAULT": 9}})
    def skinny(a: pypto.Tensor([m, 16], BF16), b: pypto.Tensor([16, 16], BF16),
               out: pypto.Tensor([m, 16], BF16)):
        pypto.set_vec_tile_shapes(64, 64)
        zero = pypto.full([16, 16], 0.0, BF16)
        rows = [pypto.concat([b if c == r else zero for c in range(4)], 1) for r in range(4)]
        diag = pypto.concat(rows, 0)  # four copies of b on the diagonal
        a4 = pypto.reshape(a, [m // 4, 64])
        pypto.set_cube_tile_shapes([512, 512], [64, 64], [64, 64], True)
        e = pypto.matmul(a4, diag, BF16)
        out[:, :] = pypto.reshape(e, [m, 16])

    return skinny, skinny_tensors()


# name: (builder, board time in us, where the doc publishes it)
CASES = {
    "C1": (c1, 2100.0, "matmul_performance_guide.md: 6144^3 fp16, defaults"),
    "C2": (c2, 1600.0, "matmul_performance_guide.md: 8x6 L2-aware outer loops"),
    "C4a": (c4a, 500.0, "performance.md: skinny matmul, L1 reuse only (tiles assumed)"),
    "C4b": (c4b, 40.0, "performance.md: block-diagonal 64-wide form, L1 reuse 9"),
}
# (from, to, what changed)
STEPS = [("C1", "C2", "loop blocks for L2 hits"),
         ("C4a", "C4b", "block-diagonal reformulation, cube_l1_reuse_setting DEFAULT 9")]


def run_case(name, work):
    build, board_us, where = CASES[name]
    kernel, tensors = build()
    trace = os.path.join(work, name + ".ndjson")
    out = os.path.join(work, name)
    kernel.dump_trace(trace, *tensors)
    t0 = time.time()
    subprocess.run([SIM, "run", trace, "--chip", "a2", "--no-trace", "-q", "-o", out],
                   check=True)
    with open(os.path.join(out, "stats.json")) as f:
        stats = json.load(f)
    # The docs quote a kernel's time as PyPTO's swimlane summary prints it: the AICore end to
    # end (first task start to last task end), without the launch and the first build.
    sim_us = stats["aicore"]["end_to_end_ns"] / 1000.0
    return {"case": name, "where": where, "board_us": board_us, "sim_us": round(sim_us, 1),
            "makespan_us": round(stats["makespan_ns"] / 1000.0, 1),
            "ratio": round(sim_us / board_us, 3), "tasks": stats["tasks"],
            "wall_s": round(time.time() - t0, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", choices=sorted(CASES),
                    help="run only these cases (repeatable; default: all)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--keep", help="keep the traces and reports in this folder")
    a = ap.parse_args()
    if not os.access(SIM, os.X_OK):
        sys.exit(f"board_cases: {SIM} not found; build with tools/setup.sh")
    names = a.case or list(CASES)
    if a.keep:
        work = a.keep
        os.makedirs(work, exist_ok=True)
        os.environ.setdefault("PYPTO_OUTPUT_DIR", os.path.join(work, "pypto_out"))
    else:  # traces and reports removed at exit
        work = scratch_output_dir("board_cases_")
    rows = {n: run_case(n, work) for n in names}
    report(rows, STEPS, a.json)


if __name__ == "__main__":
    main()
