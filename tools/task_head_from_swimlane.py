#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the A2/A3 presets' leaf head (`cost.task_overhead_cycles`) comes from: the public A2
board swimlane (``merged_swimlane.json`` of the GitHub repository KayWang12138/pypto, commit
03106bb; not part of this tree) against this model, on two of its leaves whose contents its
operand hints give and which load little:

* an AIV leaf with no input and one [16, 256] int32 output (a fill; it runs in the first wave);
* an AIC leaf ``[16, 192] int8 x [192, 5120] int8 -> [16, 5120] int32``, one of 20 N slices
  (256 wide: 20 tasks, as recorded), in a later wave.

Each is compiled here as a kernel of the same shapes and run in SIM on the chip with the head
set to its old 100 cycles; the least-loaded (shortest) recorded task of each is compared with
the shortest simulated one, and the preset's head is 100 cycles plus the geometric middle of
the two gaps, at the AICore clock.

    .venv/bin/python tools/task_head_from_swimlane.py merged_swimlane.json [--chip a2]
"""
import argparse
import atexit
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import torch
import yaml

import pypto
from scratch import scratch_output_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIM = os.path.join(ROOT, ".venv", "bin", "pypto-sim")
OLD_HEAD_CYCLES = 100
I8, I32 = pypto.DT_INT8, pypto.DT_INT32
SIM_MODE = {"run_mode": pypto.RunMode.SIM}
# PyPTO's DataType numbers in the swimlane's operand hints
DT_INT8, DT_INT32 = 1, 3


def fill_kernel():
    @pypto.frontend.jit(runtime_options=SIM_MODE)
    def fill(y: pypto.Tensor([16, 256], I32)):
        pypto.set_vec_tile_shapes(16, 256)
        y[:, :] = pypto.full([16, 256], 0, I32)

    return fill, [torch.ones(16, 256, dtype=torch.int32)]


def slice_kernel():
    @pypto.frontend.jit(runtime_options=SIM_MODE)
    def mm(a: pypto.Tensor([16, 192], I8), b: pypto.Tensor([192, 5120], I8),
           c: pypto.Tensor([16, 5120], I32)):
        pypto.set_cube_tile_shapes([16, 16], [192, 192], [256, 256])
        c[:, :] = pypto.matmul(a, b, I32)

    return mm, [torch.ones(16, 192, dtype=torch.int8), torch.ones(192, 5120, dtype=torch.int8),
                torch.zeros(16, 5120, dtype=torch.int32)]


def operands(hint):
    """[(shape, dtype)] of an operand hint string of the swimlane."""
    return [(json.loads(s), int(d)) for s, d in
            re.findall(r"'shape': (\[[^\]]*\]), 'dtype': (\d+)", hint or "")]


LEAVES = {  # name: (lane prefix, inputs, outputs, kernel)
    "AIV fill [16,256] int32": ("AIV", [], [([16, 256], DT_INT32)], fill_kernel),
    "AIC int8 [16,192]x[192,5120] slice": (
        "AIC", [([16, 192], DT_INT8), ([192, 5120], DT_INT8)], [([16, 5120], DT_INT32)],
        slice_kernel),
}


def recorded_min_us(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    lanes = {(e["pid"], e["tid"]): e["args"].get("name", "") for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    found = {name: [] for name in LEAVES}
    for e in events:
        lane = lanes.get((e.get("pid"), e.get("tid")), "")
        if e.get("ph") != "X" or lane.startswith("Fake"):
            continue
        args = e.get("args", {})
        ins, outs = operands(args.get("ioperand-hint")), operands(args.get("ooperand-hint"))
        for name, (prefix, want_in, want_out, _) in LEAVES.items():
            if lane.startswith(prefix) and ins == want_in and outs == want_out:
                found[name].append(float(e["dur"]))
    missing = [n for n, d in found.items() if not d]
    if missing:
        sys.exit(f"{path}: no recorded task of {', '.join(missing)} (another swimlane?)")
    return {n: (min(d), len(d)) for n, d in found.items()}


def simulated_min_us(build):
    kernel, tensors = build()
    kernel(*tensors)
    report = kernel.last_report.wait()
    with open(os.path.join(report.path, "trace.json"), encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    return min(e["dur"] for e in events if e.get("ph") == "X" and e.get("cat") == "task")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("swimlane", help="KayWang12138/pypto's merged_swimlane.json")
    ap.add_argument("--chip", default="a2", help="preset the head is derived for (default a2)")
    a = ap.parse_args()
    recorded = recorded_min_us(a.swimlane)
    overlay_dir = tempfile.mkdtemp(prefix="task_head_")
    atexit.register(shutil.rmtree, overlay_dir, ignore_errors=True)  # after the reports (LIFO)
    overlay = os.path.join(overlay_dir, "old_head.yaml")
    with open(overlay, "w", encoding="utf-8") as f:
        f.write(f"base: {a.chip}\ncost:\n  task_overhead_cycles: {OLD_HEAD_CYCLES}\n")
    os.environ["PYPTO_SIM_CHIP"] = overlay
    os.environ["PYPTO_SIM_REPORTS"] = "wait"
    scratch_output_dir("task_head_")
    gaps = []
    print("| leaf | recorded tasks | shortest recorded | shortest simulated (head 100) | gap |")
    print("|---|---|---|---|---|")
    for name, (_, _, _, build) in LEAVES.items():
        rec, n = recorded[name]
        sim = simulated_min_us(build)
        gaps.append(rec - sim)
        print(f"| {name} | {n} | {rec:.2f} us | {sim:.2f} us | {rec - sim:.2f} us |")
    # The chip as the simulator resolves it (`pypto-sim config` prints the whole config).
    chip = subprocess.run([SIM, "config", "--chip", a.chip], check=True, capture_output=True,
                          text=True).stdout
    freq_mhz = yaml.safe_load(chip)["cores"]["freq_mhz"]
    middle = math.sqrt(gaps[0] * gaps[1])
    print(f"\ngeometric middle of the gaps: {middle:.3f} us = {middle * freq_mhz:.0f} cycles at "
          f"{freq_mhz} MHz; head {OLD_HEAD_CYCLES} + that = "
          f"{OLD_HEAD_CYCLES + middle * freq_mhz:.0f} cycles")


if __name__ == "__main__":
    main()
