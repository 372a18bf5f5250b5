#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Frontend figures for the benchmark suite; prints one JSON object.

  compile_tile_ops_per_s   tile ops produced per second when a large kernel (4096x4096 fp32,
                           64x64 tiles, a fused chain of 61 element-wise ops: 4096 tasks,
                           ~250k tile ops) is traced, compiled and instantiated
  compile_s                trace + compile + instantiate of a 4096x4096 fp32 add with 64x64
                           tiles (4096 tasks, one op each; target: < 1 s)
  compile_tasks_per_s      tasks per second of that add (per-task overhead dominates there)
  first_call_ms            the first call of a one-tile 64x64 add: trace, compile, instantiate,
                           simulate, execute, write the report folder (target: < 200 ms)
  cached_call_ms           median latency of a cached call of that add: it returns once the
                           outputs are computed (instantiate, execute); the timing run and the
                           report folder follow on the report worker (target: < 2 ms)
  cached_call_sustained_ms the cost per cached call including its report: the calls' time plus
                           the wait for the last report, divided by the number of calls
  sim_s_4096               one SIM call of the 4096x4096 add, end to end (target: < 2 s)
  sim_us_per_task_python   that time per task

Run with the project's venv: .venv/bin/python tools/bench_frontend.py [--quick]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

import pypto
from scratch import scratch_output_dir
import pypto._C as native
import pypto.sim

SIM = {"run_mode": pypto.RunMode.SIM}


def make_add(n, tile):
    @pypto.frontend.jit(runtime_options=SIM)
    def add(a: pypto.Tensor([n, n], pypto.DT_FP32), b: pypto.Tensor([n, n], pypto.DT_FP32),
            out: pypto.Tensor([n, n], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(tile, tile)
        out[:] = a + b
    return add


def make_chain(n, tile, length):
    @pypto.frontend.jit(runtime_options=SIM)
    def chain(a: pypto.Tensor([n, n], pypto.DT_FP32), b: pypto.Tensor([n, n], pypto.DT_FP32),
              out: pypto.Tensor([n, n], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(tile, tile)
        t = a + b
        for _ in range(length):
            t = t * 1.0001 + b
        out[:] = t
    return chain


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1024x1024 instead of 4096x4096, fewer calls")
    a = p.parse_args()
    scratch_output_dir("pypto_bench_fe_")
    n = 1024 if a.quick else 4096
    x, y, z = torch.rand(n, n), torch.rand(n, n), torch.zeros(n, n)

    # Compile: trace + C++ compile + instantiate (tiling, tasks, dependencies, stitching).
    big = make_add(n, 64)
    t0 = time.perf_counter()
    entry = big.warmup(x, y, z)
    t1 = time.perf_counter()
    inst = native.instantiate(entry.compiled, [x, y, z], {}, entry.options)
    compile_s = (t1 - t0) + inst["seconds"]

    # Throughput on a large kernel: many tile ops per task.
    chain = make_chain(n, 64, 30)
    t0 = time.perf_counter()
    centry = chain.warmup(x, y, z)
    t1 = time.perf_counter()
    cinst = native.instantiate(centry.compiled, [x, y, z], {}, centry.options)
    chain_s = (t1 - t0) + cinst["seconds"]

    # SIM of the big kernel from Python, end to end.
    t0 = time.perf_counter()
    big(x, y, z)
    sim_s = time.perf_counter() - t0
    if not torch.equal(z, x + y):
        sys.exit("bench_frontend: wrong result for the large add")

    # Cached call of a small kernel.
    small = make_add(64, 64)
    s1, s2, s3 = torch.rand(64, 64), torch.rand(64, 64), torch.zeros(64, 64)
    t0 = time.perf_counter()
    small(s1, s2, s3)  # compile once
    first_call_s = time.perf_counter() - t0
    times = []
    for _ in range(20 if a.quick else 100):
        t0 = time.perf_counter()
        small(s1, s2, s3)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    pypto.sim.wait_reports()
    drain_s = time.perf_counter() - t0
    json.dump({
        "compile_size": n,
        "compile_tasks": inst["tasks"],
        "compile_tile_ops": inst["tile_ops"],
        "compile_s": compile_s,
        "compile_tasks_per_s": inst["tasks"] / compile_s,
        "large_kernel_tile_ops": cinst["tile_ops"],
        "large_kernel_compile_s": chain_s,
        "compile_tile_ops_per_s": cinst["tile_ops"] / chain_s,
        "sim_s_4096" if not a.quick else "sim_s_1024": sim_s,
        "sim_us_per_task_python": sim_s / inst["tasks"] * 1e6,
        "first_call_ms": first_call_s * 1e3,
        "cached_call_ms": statistics.median(times) * 1e3,
        "cached_call_sustained_ms": (sum(times) + drain_s) / len(times) * 1e3,
    }, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
