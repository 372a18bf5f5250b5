#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pictures of pypto-sim runs (Debian's python3-matplotlib).

  tools/plot.py RUN_DIR -o swim.png            swimlane: one row per core, one bar per task
  tools/plot.py RUN_DIR RUN_DIR... -o cmp.png  policies side by side: makespan and utilisation
  tools/plot.py RUN_DIR --recorded tilefwk_L1_prof_data.json -o replay.png
                                               recorded (top) vs simulated (bottom) swimlanes
                                               of a board recording's replay, same time axis

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


def block_tasks(blocks, clock_mhz):
    """(row label, start us, dur us, (seqNo, taskId)) per task of a prof/swim file, the times
    relative to the file's first start."""
    starts = [t["execStart"] for b in blocks for t in b.get("tasks", [])]
    t0 = min(starts) if starts else 0
    out = []
    for b in blocks:
        label = f"{b.get('coreType', '?')} {b.get('blockIdx', '?')}"
        for t in b.get("tasks", []):
            out.append((label, (t["execStart"] - t0) / clock_mhz,
                        (t["execEnd"] - t["execStart"]) / clock_mhz,
                        (t.get("seqNo", 0), t["taskId"])))
    return out


def replay(run, prof, out, max_tasks):
    """Recorded vs simulated swimlanes: the prof file and the run's swim.json are both in
    board ticks (50 MHz on A2/A3, 1 GHz on the 950), each drawn from its own first start."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    stats = load(run, "stats.json")
    sim_blocks = load(run, "swim.json")
    try:
        with open(prof) as fh:
            rec_blocks = json.load(fh)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plot.py: cannot read the recording {prof}: {e}")
    clock = 1000.0 if stats["chip"].startswith("950") else 50.0  # ticks per us
    # Kernel names (colours) from trace.json when it is there (--no-trace runs have none).
    kernel = {}
    if os.path.exists(os.path.join(run, "trace.json")):
        for e in load(run, "trace.json")["traceEvents"]:
            if e["ph"] == "X" and e["pid"] == 1:
                kernel[(e["args"]["seqNo"], e["args"]["taskId"])] = e["name"]
    rec = block_tasks(rec_blocks, clock)[:max_tasks]
    sim = block_tasks(sim_blocks, clock)[:max_tasks]
    kernels = sorted({kernel.get(k, "task") for *_, k in rec + sim})
    cmap = plt.get_cmap("tab20")
    color = {k: cmap(i % 20) for i, k in enumerate(kernels)}

    def rows(tasks):
        labels = sorted({lab for lab, *_ in tasks},
                        key=lambda s: (s.split()[0], int(s.split()[1]) if s.split()[1].isdigit() else 0))
        return {lab: i for i, lab in enumerate(labels)}

    rr, sr = rows(rec), rows(sim)
    height = lambda n: max(1.5, 0.22 * n + 0.8)
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(14, height(len(rr)) + height(len(sr))),
                               gridspec_kw={"height_ratios": [max(1, len(rr)), max(1, len(sr))]})
    for ax, tasks, row, title in ((a, rec, rr, "recorded"), (b, sim, sr, "simulated")):
        for lab, start, dur, key in tasks:
            ax.barh(row[lab], dur, left=start, height=0.8, color=color[kernel.get(key, "task")],
                    linewidth=0)
        ax.set_yticks(range(len(row)))
        ax.set_yticklabels(list(row), fontsize=7)
        ax.invert_yaxis()
        ax.set_ylabel(title)
    r = stats.get("replay", {})
    extra = ""
    if "start_error_us" in r:
        extra = (f"; start error median {r['start_error_us']['median']:.2f} us, "
                 f"Spearman {r['start_order_spearman']}")
    a.set_title(f"{stats['source']} on {stats['chip']} / {stats['policy']}: recorded "
                f"{r.get('recorded_makespan_ns', 0) / 1000:.1f} us, simulated "
                f"{r.get('simulated_makespan_ns', 0) / 1000:.1f} us{extra}", fontsize=9)
    b.set_xlabel("time from the first start (us)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[k]) for k in kernels[:20]]
    a.legend(handles, kernels[:20], fontsize=7, loc="upper right")
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
    p.add_argument("--recorded", metavar="PROF",
                   help="tilefwk_L1_prof_data.json of the recording RUN_DIR replayed: draw "
                        "recorded and simulated swimlanes one above the other")
    a = p.parse_args()
    if a.recorded:
        if len(a.runs) != 1:
            sys.exit("plot.py: --recorded takes one RUN_DIR")
        replay(a.runs[0], a.recorded, a.out, a.max_tasks)
    elif len(a.runs) == 1:
        swimlane(a.runs[0], a.out, a.max_tasks)
    else:
        compare(a.runs, a.out)
    print(a.out)


if __name__ == "__main__":
    main()
