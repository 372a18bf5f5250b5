#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pictures of pypto-sim runs (Debian's python3-matplotlib).

  tools/plot.py RUN_DIR -o swim.png            swimlane: one row per core, one bar per task
  tools/plot.py RUN_DIR RUN_DIR... -o cmp.png  policies side by side: makespan and utilisation

RUN_DIR is a folder written by `pypto-sim run` (or a `compare` sub-folder): it holds
stats.json and, for the swimlane, trace.json.
"""
import argparse
import json
import os
import sys


def load(path, name):
    f = os.path.join(path, name)
    try:
        with open(f) as fh:
            return json.load(fh)
    except FileNotFoundError:
        sys.exit(f"plot.py: {f} not found (is {path} a pypto-sim output folder?)")
    except json.JSONDecodeError as e:
        sys.exit(f"plot.py: {f}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})")


def swimlane(run, out, max_tasks):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    stats = load(run, "stats.json")
    events = load(run, "trace.json")["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["pid"] == 1 and e["name"] == "thread_name"}
    tasks = [e for e in events if e["ph"] == "X" and e["pid"] == 1][:max_tasks]
    kernels = sorted({e["name"] for e in tasks})
    cmap = plt.get_cmap("tab20")
    color = {k: cmap(i % 20) for i, k in enumerate(kernels)}
    used = sorted({e["tid"] for e in tasks})
    row = {tid: i for i, tid in enumerate(used)}
    fig, ax = plt.subplots(figsize=(14, max(3, 0.22 * len(used) + 1.5)))
    for e in tasks:
        ax.barh(row[e["tid"]], e["dur"], left=e["ts"], height=0.8, color=color[e["name"]],
                linewidth=0)
    ax.set_yticks(range(len(used)))
    ax.set_yticklabels([names.get(t, str(t)) for t in used], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    ax.set_title(f"{stats['chip']} / {stats['policy']}: makespan {stats['makespan_ns'] / 1000:.1f} us, "
                 f"{stats['tasks']} tasks")
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[k]) for k in kernels[:20]]
    ax.legend(handles, kernels[:20], fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def compare(runs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    stats = [load(r, "stats.json") for r in runs]
    labels = [s["policy"] for s in stats]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.bar(labels, [s["makespan_ns"] / 1000 for s in stats], color="#4c72b0")
    a.set_ylabel("makespan (us)")
    a.set_title(f"{stats[0]['source']} on {stats[0]['chip']}", fontsize=9)
    x = range(len(labels))
    w = 0.27
    for k, (key, lab) in enumerate([("AIC", "AIC util"), ("AIV", "AIV util")]):
        b.bar([i + (k - 1) * w for i in x], [100 * s["cores"][key]["utilization"] for s in stats],
              width=w, label=lab)
    b.bar([i + w for i in x], [100 * s["l2"]["hit_rate"] for s in stats], width=w, label="L2 hit")
    b.set_xticks(list(x))
    b.set_xticklabels(labels)
    b.set_ylabel("%")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="pypto-sim output folders")
    p.add_argument("-o", "--out", required=True, help="PNG file to write")
    p.add_argument("--max-tasks", type=int, default=20000, help="swimlane: tasks drawn at most")
    a = p.parse_args()
    if len(a.runs) == 1:
        swimlane(a.runs[0], a.out, a.max_tasks)
    else:
        compare(a.runs, a.out)
    print(a.out)


if __name__ == "__main__":
    main()
