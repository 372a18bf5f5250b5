# SPDX-License-Identifier: Apache-2.0
"""Pictures of pypto-sim runs, drawn with matplotlib (Debian's python3-matplotlib).

One owner of the drawing: ``tools/plot.py`` (the command line) and ``Report.plot`` (Python)
both call these functions. The module imports only the standard library at load time, so the
command line loads it without importing the ``pypto`` package (and torch).

A run folder is what ``pypto-sim run`` or a SIM call writes: ``stats.json`` always,
``trace.json`` (Chrome trace events: pid 1 the cores, pid 2 the AICPU threads and the
ready-queue counter) unless the run was made with ``--no-trace``, ``swim.json`` (board ticks).
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Sequence, Tuple


class PlotError(Exception):
    """A run folder or recording that cannot be drawn; the message names the file and why."""


def _load(path: str, name: str):
    f = os.path.join(path, name)
    try:
        with open(f) as fh:
            return json.load(fh)
    except FileNotFoundError:
        hint = (" (the run was made with --no-trace?)" if name == "trace.json" else
                f" (is {path} a pypto-sim output folder?)")
        raise PlotError(f"{f} not found{hint}") from None
    except json.JSONDecodeError as e:
        raise PlotError(f"{f}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _step_series(changes: List[Tuple[float, int]]) -> Tuple[List[float], List[int]]:
    """Times and levels of a step function from (time, +/-delta) changes, changes at one
    instant merged (ends before starts do not matter: only the level after the instant is
    drawn)."""
    changes.sort()
    xs, ys, level = [0.0], [0], 0
    for t, d in changes:
        level += d
        if xs[-1] == t:
            ys[-1] = level
        else:
            xs.append(t)
            ys.append(level)
    return xs, ys


def _core_type(name: str) -> str:
    return name.split()[0] if name else "?"


def swimlane(run: str, out: str, max_tasks: int = 20000) -> str:
    """Writes :func:`swimlane_figure` of the run folder ``run`` to ``out`` (PNG); returns
    ``out``."""
    plt = _pyplot()
    fig = swimlane_figure(run, max_tasks)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def swimlane_figure(run: str, max_tasks: int = 20000):
    """The figure of one run: the AICPU threads and every core as rows (one bar per task, coloured
    by kernel), device-task boundaries as dashed lines, and below it the busy cores of each
    type and the ready-queue depth over time. The time axis starts at the launch (0), so
    start-up is visible. At most ``max_tasks`` task bars are drawn (the title then says
    "first N of M tasks"); the two panels below always count every task. Returns the
    matplotlib Figure (axes: swimlane, busy cores, ready queue)."""
    stats = _load(run, "stats.json")
    trace = _load(run, "trace.json")
    events = trace["traceEvents"]
    meta = trace.get("metadata", {})
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    tasks = sorted((e for e in events if e["ph"] == "X" and e["pid"] == 1),
                   key=lambda e: (e["ts"], e["tid"]))
    spans = [e for e in events if e["ph"] == "X" and e["pid"] == 2]
    queue = [e for e in events if e["ph"] == "C" and e["name"] == "ready queue"]
    drawn = tasks[:max_tasks]
    makespan_us = stats["makespan_ns"] / 1000.0

    plt = _pyplot()
    kernels = sorted({e["name"] for e in drawn})
    cmap = plt.get_cmap("tab20")
    color = {k: cmap(i % 20) for i, k in enumerate(kernels)}
    span_color = {"poll round": "#7f7f7f", "build device task": "#bcbd22"}

    # Rows: the AICPU threads first (control flow, then the schedule threads), then every
    # core of the chip in id order, idle ones included (an idle core is information).
    aicpu_rows = sorted({tid for (pid, tid) in names if pid == 2},
                        key=lambda t: (not names[(2, t)].startswith("control"), t))
    core_rows = sorted(tid for (pid, tid) in names if pid == 1)
    rows = [(2, t) for t in aicpu_rows] + [(1, t) for t in core_rows]
    row_of = {key: i for i, key in enumerate(rows)}

    n_rows = len(rows)
    fig, (ax, busy_ax, queue_ax) = plt.subplots(
        3, 1, sharex=True, figsize=(14, max(4.0, 0.16 * n_rows + 1.5) + 4.0),
        gridspec_kw={"height_ratios": [max(4.0, 0.16 * n_rows), 1.6, 1.6]})

    # Bars grouped per (row, colour): one broken_barh call each keeps 1M-task runs drawable.
    groups: Dict[Tuple[int, str], List[Tuple[float, float]]] = {}
    for e in drawn:
        groups.setdefault((row_of.get((1, e["tid"]), -1), e["name"]), []).append((e["ts"], e["dur"]))
    for (row, kernel), bars in groups.items():
        if row >= 0:
            ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=color[kernel], linewidth=0)
    span_groups: Dict[Tuple[int, str], List[Tuple[float, float]]] = {}
    for e in spans:
        span_groups.setdefault((row_of.get((2, e["tid"]), -1), e["name"]), []).append(
            (e["ts"], e["dur"]))
    for (row, name), bars in span_groups.items():
        if row >= 0:
            ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=span_color.get(name, "#17becf"),
                           linewidth=0)

    # Device-task boundaries: the first start of each device task (args.seqNo), every task
    # counted, drawn across all three panels.
    first_start: Dict[int, float] = {}
    for e in tasks:
        s = e["args"].get("seqNo", 0)
        first_start[s] = min(first_start.get(s, e["ts"]), e["ts"])
    label_them = len(first_start) <= 40
    for seq, t in sorted(first_start.items()):
        for a in (ax, busy_ax, queue_ax):
            a.axvline(t, color="black", linestyle="--", linewidth=0.6, alpha=0.5)
        if label_them:
            ax.text(t, -0.9, f"DT{seq}", fontsize=6, va="bottom", ha="left")

    ax.set_yticks(range(n_rows))
    ax.set_yticklabels([names[k] for k in rows], fontsize=6)
    ax.set_ylim(n_rows - 0.5, -1.2)
    shown = (f"{len(tasks)} tasks" if len(drawn) == len(tasks) else
             f"first {len(drawn)} of {len(tasks)} tasks drawn")
    notes = []
    if meta.get("aicpu_events_truncated"):
        notes.append("AICPU spans truncated in trace.json")
    title = (f"{stats.get('source', run)} on {stats['chip']} / {stats['policy']}: makespan "
             f"{makespan_us:.1f} us, {shown}, {len(first_start)} device tasks")
    if notes:
        title += " (" + "; ".join(notes) + ")"
    ax.set_title(title, fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[k]) for k in kernels[:20]]
    handles += [plt.Rectangle((0, 0), 1, 1, color=c) for c in span_color.values()]
    labels = kernels[:20] + list(span_color)
    ax.legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.005, 1.0))

    # Busy cores of each type over time, from every task's interval.
    by_type: Dict[str, List[Tuple[float, int]]] = {}
    for e in tasks:
        ct = _core_type(names.get((1, e["tid"]), ""))
        by_type.setdefault(ct, []).extend([(e["ts"], 1), (e["ts"] + e["dur"], -1)])
    counts = {ct: sum(1 for (pid, tid) in names if pid == 1 and _core_type(names[(pid, tid)]) == ct)
              for ct in by_type}
    for ct in sorted(by_type):
        xs, ys = _step_series(by_type[ct])
        busy_ax.step(xs, ys, where="post", linewidth=0.8, label=f"{ct} (of {counts[ct]})")
    busy_ax.set_ylabel("busy cores", fontsize=8)
    busy_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))

    # Ready-queue depth: the counter the schedule threads sample after each change.
    if queue:
        keys = sorted({k for e in queue for k in e["args"]})
        qs = sorted(queue, key=lambda e: e["ts"])
        # The depth holds from its last sample to the end of the run: draw it there too.
        xs = [0.0] + [e["ts"] for e in qs] + [max(makespan_us, qs[-1]["ts"])]
        for k in keys:
            ys, last = [0], 0
            for e in qs:
                last = e["args"].get(k, last)
                ys.append(last)
            ys.append(last)
            queue_ax.step(xs, ys, where="post", linewidth=0.8, label=k)
        queue_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    else:
        queue_ax.text(0.5, 0.5, "no ready-queue samples in trace.json", ha="center",
                      va="center", transform=queue_ax.transAxes, fontsize=8)
    queue_ax.set_ylabel("ready tasks", fontsize=8)
    queue_ax.set_xlabel("time from launch (us)")
    queue_ax.set_xlim(0, makespan_us * 1.01 if makespan_us > 0 else 1.0)
    fig.tight_layout()
    return fig


def compare_runs(path_or_runs: Sequence[str]) -> List[str]:
    """The run folders of a comparison: either several run folders, or one folder written by
    ``pypto-sim compare -o`` (its sub-folders that hold a stats.json, fifo first)."""
    runs = list(path_or_runs)
    if len(runs) == 1 and not os.path.exists(os.path.join(runs[0], "stats.json")):
        base = runs[0]
        if not os.path.isdir(base):
            raise PlotError(f"{base}: not a folder")
        subs = sorted(d for d in os.listdir(base)
                      if os.path.exists(os.path.join(base, d, "stats.json")))
        if not subs:
            raise PlotError(f"{base}: no stats.json in it nor in any sub-folder "
                            "(expected a pypto-sim run or compare output folder)")
        subs.sort(key=lambda d: d != "fifo")
        runs = [os.path.join(base, d) for d in subs]
    return runs


def compare(path_or_runs: Sequence[str], out: str) -> str:
    """Writes :func:`compare_figure` to ``out`` (PNG); returns ``out``."""
    plt = _pyplot()
    fig = compare_figure(path_or_runs)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def compare_figure(path_or_runs: Sequence[str]):
    """Policies side by side: makespan and its change relative to fifo (or to the first run
    when fifo is not among them), core utilisation and L2 hit rate, every bar labelled with
    its number. Returns the matplotlib Figure (axes: makespan, utilisation)."""
    runs = compare_runs(path_or_runs)
    stats = [_load(r, "stats.json") for r in runs]
    labels = [s["policy"] for s in stats]
    base_i = labels.index("fifo") if "fifo" in labels else 0
    base = stats[base_i]["makespan_ns"]
    plt = _pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.2))
    ms = [s["makespan_ns"] / 1000 for s in stats]
    bars = a.bar(labels, ms, color=["#999999" if i == base_i else "#4c72b0"
                                    for i in range(len(stats))])
    for rect, s, i in zip(bars, stats, range(len(stats))):
        rel = 100.0 * (s["makespan_ns"] - base) / base if base else 0.0
        rel = 0.0 if abs(rel) < 0.05 else rel
        txt = (f"{rect.get_height():.1f} us\n(baseline)" if i == base_i else
               f"{rect.get_height():.1f} us\n{rel:+.1f} %")
        a.annotate(txt, (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                   ha="center", va="bottom", fontsize=7)
    a.set_ylabel("makespan (us)")
    a.set_ylim(0, max(ms) * 1.25 if ms and max(ms) > 0 else 1)
    a.set_title(f"{stats[0].get('source', '')} on {stats[0]['chip']}: makespan vs "
                f"{labels[base_i]}", fontsize=9)
    x = list(range(len(labels)))
    w = 0.27
    series = [("AIC util", [100 * s["cores"].get("AIC", {}).get("utilization", 0) for s in stats]),
              ("AIV util", [100 * s["cores"].get("AIV", {}).get("utilization", 0) for s in stats]),
              ("L2 hit", [100 * s["l2"]["hit_rate"] for s in stats])]
    for k, (lab, vals) in enumerate(series):
        rects = b.bar([i + (k - 1) * w for i in x], vals, width=w, label=lab)
        for rect, v, i in zip(rects, vals, x):
            d = v - series[k][1][base_i]
            d = 0.0 if abs(d) < 0.05 else d  # no "-0.0"
            txt = f"{v:.1f}" if i == base_i else f"{v:.1f}\n{d:+.1f}"
            b.annotate(txt, (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                       ha="center", va="bottom", fontsize=6)
    b.set_xticks(x)
    b.set_xticklabels(labels)
    b.set_ylabel("% (change vs baseline in points)")
    b.set_ylim(0, 118)
    b.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def _block_tasks(blocks, clock_mhz: float):
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


def replay(run: str, prof: str, out: str, max_tasks: int = 20000) -> str:
    """Recorded vs simulated swimlanes of a board recording's replay, one above the other on
    one time axis: the prof file and the run's swim.json are both in board ticks (50 MHz on
    A2/A3, 1 GHz on the 950), each drawn from its own first start. Returns ``out``."""
    stats = _load(run, "stats.json")
    sim_blocks = _load(run, "swim.json")
    try:
        with open(prof) as fh:
            rec_blocks = json.load(fh)
    except (OSError, json.JSONDecodeError) as e:
        raise PlotError(f"cannot read the recording {prof}: {e}") from None
    clock = 1000.0 if stats["chip"].startswith("950") else 50.0  # ticks per us
    kernel = {}
    if os.path.exists(os.path.join(run, "trace.json")):
        for e in _load(run, "trace.json")["traceEvents"]:
            if e["ph"] == "X" and e["pid"] == 1:
                kernel[(e["args"]["seqNo"], e["args"]["taskId"])] = e["name"]
    rec_all, sim_all = _block_tasks(rec_blocks, clock), _block_tasks(sim_blocks, clock)
    rec, sim = rec_all[:max_tasks], sim_all[:max_tasks]
    plt = _pyplot()
    kernels = sorted({kernel.get(k, "task") for *_, k in rec + sim})
    cmap = plt.get_cmap("tab20")
    color = {k: cmap(i % 20) for i, k in enumerate(kernels)}

    def rows(tasks):
        def key(s):
            parts = s.split()
            return (parts[0], int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0)
        return {lab: i for i, lab in enumerate(sorted({lab for lab, *_ in tasks}, key=key))}

    rr, sr = rows(rec), rows(sim)
    height = lambda n: max(1.5, 0.22 * n + 0.8)
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(14, height(len(rr)) + height(len(sr))),
                               gridspec_kw={"height_ratios": [max(1, len(rr)), max(1, len(sr))]})
    for ax, tasks, row, title in ((a, rec, rr, "recorded"), (b, sim, sr, "simulated")):
        groups: Dict[Tuple[int, str], List[Tuple[float, float]]] = {}
        for lab, start, dur, key in tasks:
            groups.setdefault((row[lab], kernel.get(key, "task")), []).append((start, dur))
        for (r, k), bars in groups.items():
            ax.broken_barh(bars, (r - 0.4, 0.8), facecolors=color[k], linewidth=0)
        ax.set_yticks(range(len(row)))
        ax.set_yticklabels(list(row), fontsize=7)
        ax.set_ylim(len(row) - 0.5, -0.5)
        ax.set_ylabel(title)
    r = stats.get("replay", {})
    extra = ""
    if "start_error_us" in r:
        extra = (f"; start error median {r['start_error_us']['median']:.2f} us, "
                 f"Spearman {r['start_order_spearman']}")
    shown = ""
    if len(rec) < len(rec_all) or len(sim) < len(sim_all):
        shown = f"; first {max_tasks} of {max(len(rec_all), len(sim_all))} tasks drawn"
    a.set_title(f"{stats.get('source', run)} on {stats['chip']} / {stats['policy']}: recorded "
                f"{r.get('recorded_makespan_ns', 0) / 1000:.1f} us, simulated "
                f"{r.get('simulated_makespan_ns', 0) / 1000:.1f} us{extra}{shown}", fontsize=9)
    b.set_xlabel("time from the first start (us)")
    b.set_xlim(left=0)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[k]) for k in kernels[:20]]
    a.legend(handles, kernels[:20], fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
