#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Derive AICPU costs from the board measurements quoted in issue 9 (a real A2 recording of
MlaProlog: 233 tasks, 20 clusters, 3 schedule threads), for which no recording is in the
repository:

  * the 20 first-wave tasks all started within 0.16 us;
  * 12 successors of one task started within 0.10 us of each other, 1.46 us after it ended;
  * a 12x12 fan-in (144 edges) took 6.4 us from the last predecessor's end to the
    successors' start;
  * the wait from a task's last predecessor end to its start: p10/p50/p90 = 0.78/1.32/2.62 us.

The first three are written as small recordings (native traces with start/end,
traces/FORMAT.md) that show exactly those figures, and `pypto-sim calibrate` fits the AICPU
costs to them on a2-20c with 3 schedule threads: the one fitter, fed with recordings made from
the facts. The fourth is a check: the wait distribution of a 233-task mixed graph under the
fitted costs is printed next to the board's.

  /usr/bin/python3 tools/calibrate_from_board_facts.py [--sim .venv/bin/pypto-sim] [-o DIR]

prints the fit and writes DIR/board_facts.yaml (an overlay for --config). Deterministic.
"""
import argparse
import json
import os
import subprocess
import sys

PARAMS = ("aicpu.poll_cycles,aicpu.resolve_cycles,aicpu.dispatch_cycles,aicpu.queue_op_cycles,"
          "aicpu.completion_latency_ns")
# The facts do not say the recording's device_sched_mode: PyPTO's default (0, fifo) is assumed,
# and named, since a run infers the mode of a recording that does not name one.
CHIP = ["--chip", "a2-20c", "--launch-sched-aicpu-num", "3", "--device-sched-mode", "fifo"]
TASK_NS = 5000  # durations of the fact tasks: long enough that nothing overlaps a round


def header(n, what):
    return {"format": "pypto-sim-trace", "version": 1, "chip": "a2-20c", "time_unit": "ns",
            "tasks": n, "generator": "tools/calibrate_from_board_facts.py: " + what}


def spread(k, n, width_ns):
    """The k-th of n starts spread evenly over width_ns."""
    return round(k * width_ns / max(n - 1, 1))


def first_wave():
    # 20 independent AIC tasks, one per cluster: started within 0.16 us.
    tasks = []
    for i in range(20):
        s = spread(i, 20, 160)
        tasks.append({"id": i, "core": "AIC", "kernel": "wave", "start": s, "end": s + TASK_NS})
    return [header(20, "first wave of 20 within 0.16 us")] + tasks


def fan_out():
    # One AIV task, then its 12 successors 1.46 us after its end, within 0.10 us.
    tasks = [{"id": 0, "core": "AIV", "kernel": "producer", "succ": list(range(1, 13)),
              "start": 0, "end": TASK_NS}]
    for k in range(12):
        s = TASK_NS + 1460 + spread(k, 12, 100)
        tasks.append({"id": 1 + k, "core": "AIV", "kernel": "consumer", "start": s,
                      "end": s + TASK_NS})
    return [header(13, "1 -> 12 fan-out, successors 1.46 us after")] + tasks


def fan_in():
    # 12 AIV producers (a first wave: within 0.10 us), each feeding all 12 consumers (144
    # edges); the consumers start 6.4 us after the last producer's end, within 0.10 us.
    tasks = []
    for p in range(12):
        s = spread(p, 12, 100)
        tasks.append({"id": p, "core": "AIV", "kernel": "producer", "succ": list(range(12, 24)),
                      "start": s, "end": s + TASK_NS})
    last_end = spread(11, 12, 100) + TASK_NS
    for k in range(12):
        s = last_end + 6400 + spread(k, 12, 100)
        tasks.append({"id": 12 + k, "core": "AIV", "kernel": "consumer", "start": s,
                      "end": s + TASK_NS})
    return [header(24, "12 x 12 fan-in, consumers 6.4 us after the last producer")] + tasks


def write(path, records):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(r.returncode)
    return r.stdout


def wait_check(sim, out, config):
    """Wait percentiles of a 233-task mixed graph under `config` (chip flags included)."""
    graph = os.path.join(out, "mix233.ndjson")
    run([sim, "gen", "--shape", "mix", "--tasks", "233", "--recorded", "--no-memory",
         "-o", graph])
    timed = os.path.join(out, "mix233_timed.ndjson")
    run([sim, "run", graph] + config + ["--timed-trace", timed, "--no-trace", "-q",
                                               "-o", os.path.join(out, "mix233_run")])
    # Replaying the timed trace measures its own waits as the "recorded" ones.
    run([sim, "run", timed] + config + ["--no-trace", "-q",
                                               "-o", os.path.join(out, "mix233_replay")])
    with open(os.path.join(out, "mix233_replay", "stats.json")) as f:
        w = json.load(f)["replay"]["wait_us"]["recorded"]
    return w["p10"], w["p50"], w["p90"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=".venv/bin/pypto-sim")
    ap.add_argument("-o", "--out", default="output/board_facts")
    ap.add_argument("--max-sims", default="600")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    recs = []
    for name, records in (("first_wave", first_wave()), ("fan_out", fan_out()),
                          ("fan_in", fan_in())):
        path = os.path.join(a.out, name + ".ndjson")
        write(path, records)
        recs.append(path)
    overlay = os.path.join(a.out, "board_facts.yaml")
    # Fit from the PyPTO cost-model values (the presets' old defaults), whatever the presets
    # now say, so the result does not depend on an earlier fit.
    start = ["--set", "aicpu.poll_cycles=240", "--set", "aicpu.resolve_cycles=390",
             "--set", "aicpu.dispatch_cycles=200", "--set", "aicpu.queue_op_cycles=40",
             "--set", "aicpu.completion_latency_ns=500"]
    print(run([a.sim, "calibrate"] + recs + CHIP + start +
              ["--params", PARAMS, "--max-sims", a.max_sims, "-o", overlay]), end="")
    before = wait_check(a.sim, a.out, CHIP + start)
    after = wait_check(a.sim, a.out, ["--config", overlay] + CHIP[2:])
    print("\nwait p10/p50/p90 on a 233-task mix graph (us): board 0.78/1.32/2.62, "
          "old defaults %.2f/%.2f/%.2f, fitted %.2f/%.2f/%.2f" % (before + after))


if __name__ == "__main__":
    main()
