#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Replay every recording the repository holds with default flags and print, per recording,
the replay metrics of stats.json (`replay`): makespan error, per-task start error median and
p90, Spearman rank of the starts, and the waits' p50 recorded against simulated.

The recordings: the samples of traces/samples in each format, and the three board-fact
recordings of tools/calibrate_from_board_facts.py (written into the output folder). Further
recordings (a board swimlane downloaded from an issue thread, a prof + topology pair) are
named on the command line; `PATH:PROF` replays PATH with `--prof PROF`:

  /usr/bin/python3 tools/replay_fidelity.py [--sim .venv/bin/pypto-sim] [-o DIR]
      [--flags "--device-sched-mode l2_affinity"] [RECORDING[:PROF]]...

Deterministic; the table is Markdown, as docs/fidelity.md and the README quote it.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate_from_board_facts as facts  # noqa: E402  (the fact recordings' one writer)

SAMPLES = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "traces",
                                       "samples"))


def repo_recordings(out):
    """(name, trace, prof or None) of every recording the repository holds."""
    s = SAMPLES
    recs = [
        ("sample dyn_topo.txt + prof", f"{s}/dyn_topo.txt", f"{s}/tilefwk_L1_prof_data.json"),
        ("sample merged_swimlane.json", f"{s}/merged_swimlane.json", None),
        ("sample pipeline.ndjson (native)", f"{s}/pipeline.ndjson", None),
        ("sample topo.json + prof", f"{s}/topo.json", f"{s}/tilefwk_L1_prof_data.json"),
    ]
    for name, records in (("first_wave", facts.first_wave()), ("fan_out", facts.fan_out()),
                          ("fan_in", facts.fan_in())):
        path = os.path.join(out, name + ".ndjson")
        facts.write(path, records)
        recs.append(("board fact " + name, path, None))
    return recs


def replay(sim, trace, prof, flags, out):
    cmd = [sim, "run", trace] + (["--prof", prof] if prof else []) + flags
    cmd += ["--no-trace", "-q", "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(" ".join(cmd) + "\n" + r.stderr)
        sys.exit(r.returncode)
    with open(os.path.join(out, "stats.json")) as f:
        return json.load(f)


def row(name, stats):
    rep = stats.get("replay")
    if not rep:
        return f"| {name} | {stats['chip']} | {stats['policy']} | (no recorded times) | | | |"
    se, w = rep["start_error_us"], rep.get("wait_us")
    wait = (f"{w['recorded']['p50']:.2f} → {w['simulated']['p50']:.2f} µs ({w['tasks']} tasks)"
            if w and w.get("tasks") else "–")
    mode = stats["policy"] + (" (inferred)" if "policy_inferred_from" in stats else "")
    return (f"| {name} | {stats['chip']} | {mode} | {rep['error_pct']:+.1f} % | {se['median']:.2f} / "
            f"{se['p90']:.2f} µs ({rep['tasks_compared']} tasks) | "
            f"{rep['start_order_spearman']:.3f} | {wait} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=".venv/bin/pypto-sim")
    ap.add_argument("-o", "--out", default="output/replay_fidelity")
    ap.add_argument("--flags", default="", help="extra pypto-sim run flags (default: none)")
    ap.add_argument("recordings", nargs="*", help="more recordings, PATH or PATH:PROF")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    recs = repo_recordings(a.out)
    for r in a.recordings:
        trace, _, prof = r.partition(":")
        recs.append((os.path.basename(trace), trace, prof or None))
    flags = shlex.split(a.flags)
    print("| recording | chip | mode | makespan error | start error median / p90 | Spearman | "
          "wait p50 recorded → simulated |")
    print("|---|---|---|---|---|---|---|")
    for i, (name, trace, prof) in enumerate(recs):
        print(row(name, replay(a.sim, trace, prof, flags, os.path.join(a.out, f"run{i}"))))


if __name__ == "__main__":
    main()
