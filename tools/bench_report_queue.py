#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Memory of the background reports: peak RSS of a process that makes cached SIM calls faster
than the report worker times them, with the queue bounded as by default, bounded to one run,
and unbounded; one child process per setting. Prints one JSON object.

A cached call returns once its outputs are computed and leaves its launch (graph, task
programs) queued for the report worker, which runs as SCHED_IDLE while nobody waits: on a
busy machine it falls behind, and without a bound the queue would grow with every call.
``--busy N`` (default 2, this machine's cores) keeps N spinning processes running during the
calls, so that the worker lags as it does on a loaded box.

Run with the project's venv: .venv/bin/python tools/bench_report_queue.py [--calls 300]
"""
import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time

SETTINGS = {"default": None, "one_run": {"runs": 1}, "unbounded": {"runs": 10**9, "tasks": 10**15}}


def child(setting: str, calls: int, n: int) -> None:
    import torch

    import pypto
    import pypto.sim

    limits = SETTINGS[setting]
    if limits is not None:
        pypto.sim.set_report_queue_limits(**limits)

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def add(x: pypto.Tensor([n, n], pypto.DT_FP32), y: pypto.Tensor([n, n], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 64)
        y[:] = x + 1.0

    x, y = torch.randn(n, n), torch.empty(n, n)
    add(x, y)  # compiles and waits for its report
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    for _ in range(calls):
        add(x, y)
    t1 = time.perf_counter()
    pypto.sim.wait_reports()
    t2 = time.perf_counter()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    json.dump({"tasks_per_call": add.last_report.tasks, "calls_s": t1 - t0,
               "all_reports_s": t2 - t0, "peak_rss_growth_mib": (rss1 - rss0) / 1024},
              sys.stdout)


def spin() -> None:
    while True:
        pass


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--size", type=int, default=2048, help="n of the n x n add (64x64 tiles)")
    p.add_argument("--busy", type=int, default=2, help="spinning processes during the calls")
    p.add_argument("--child", choices=sorted(SETTINGS), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.child, a.calls, a.size)
        return 0
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(a.busy)]
    for s in spinners:
        s.start()
    out = {"calls": a.calls, "size": a.size, "busy": a.busy}
    try:
        for setting in SETTINGS:
            with tempfile.TemporaryDirectory(prefix="pypto_queue_") as d:
                env = dict(os.environ, PYPTO_OUTPUT_DIR=d)
                env.pop("PYPTO_SIM_REPORTS", None)
                r = subprocess.run([sys.executable, __file__, "--child", setting, "--calls",
                                    str(a.calls), "--size", str(a.size)],
                                   env=env, check=True, capture_output=True, text=True)
                out[setting] = json.loads(r.stdout)
    finally:
        for s in spinners:
            s.terminate()
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
