# SPDX-License-Identifier: Apache-2.0
"""The pictures (pypto._plot behind tools/plot.py and Report.plot): what they show is checked
on the figure's axes against numbers worked out independently from the run's own files."""

import json
import os
import subprocess
import sys

import pytest

from pypto import _plot
from pypto._report import Report
from pypto.error import FeError

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CLI = os.path.join(sys.prefix, "bin", "pypto-sim")


def _cli(*args):
    subprocess.run([CLI, *args], check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 300-task synthetic trace, one run of it and one compare folder of all policies."""
    d = tmp_path_factory.mktemp("plot")
    trace = str(d / "mix.ndjson")
    _cli("gen", "--tasks", "300", "--seed", "7", "-o", trace)
    _cli("run", trace, "-o", str(d / "run"))
    _cli("compare", trace, "-o", str(d / "cmp"))
    return d


def _events(run):
    with open(os.path.join(run, "trace.json")) as f:
        return json.load(f)["traceEvents"]


def _max_overlap(intervals):
    """Most intervals open at once, counted pairwise (independent of the plot's sweep)."""
    best = 0
    for s, _ in intervals:
        best = max(best, sum(1 for a, b in intervals if a <= s < b))
    return best


def test_swimlane_rows_axis_and_boundaries(runs):
    run = str(runs / "run")
    with open(os.path.join(run, "stats.json")) as f:
        stats = json.load(f)
    fig = _plot.swimlane_figure(run)
    lane, busy, queue = fig.axes[:3]
    labels = [t.get_text() for t in lane.get_yticklabels()]
    # AICPU threads on top (control flow first), then every core of the chip, idle or not.
    assert labels[0] == "control flow"
    assert labels[1:4] == ["sched 0", "sched 1", "sched 2"]
    n_cores = stats["cores"]["AIC"]["count"] + stats["cores"]["AIV"]["count"]
    assert len(labels) == 4 + n_cores and labels[4] == "AIC 0"
    # The time axis starts at the launch so that start-up shows.
    assert queue.get_xlim()[0] == 0.0
    assert queue.get_xlim()[1] >= stats["makespan_ns"] / 1000
    # One dashed boundary per device task in each of the three panels.
    dashed = [ln for a in (lane, busy, queue) for ln in a.get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 3 * stats["device_tasks"]
    assert f"{stats['tasks']} tasks" in lane.get_title()
    # Busy cores: the plotted maximum per type equals the overlap counted from trace.json.
    ev = _events(run)
    name = {e["tid"]: e["args"]["name"] for e in ev
            if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1}
    for line in busy.get_lines():
        if line.get_linestyle() == "--":
            continue
        ct = line.get_label().split()[0]
        iv = [(e["ts"], e["ts"] + e["dur"]) for e in ev
              if e["ph"] == "X" and e["pid"] == 1 and name[e["tid"]].startswith(ct)]
        assert max(line.get_ydata()) == _max_overlap(iv), ct


def test_swimlane_says_when_it_draws_only_the_first_tasks(runs):
    fig = _plot.swimlane_figure(str(runs / "run"), max_tasks=50)
    assert "first 50 of 300 tasks drawn" in fig.axes[0].get_title()
    # The panels below still count every task.
    busy_total = sum(1 for e in _events(str(runs / "run")) if e["ph"] == "X" and e["pid"] == 1)
    assert busy_total == 300


def test_compare_folder_relative_to_fifo(runs):
    cmp = str(runs / "cmp")
    folders = _plot.compare_runs([cmp])
    assert os.path.basename(folders[0]) == "fifo" and len(folders) == 4
    fig = _plot.compare_figure([cmp])
    texts = [t.get_text() for t in fig.axes[0].texts]
    stats = {}
    for f in folders:
        with open(os.path.join(f, "stats.json")) as fh:
            s = json.load(fh)
        stats[s["policy"]] = s["makespan_ns"]
    assert texts[0].endswith("(baseline)")
    for text, f in zip(texts[1:], folders[1:]):
        policy = os.path.basename(f)
        rel = 100 * (stats[policy] - stats["fifo"]) / stats["fifo"]
        rel = 0.0 if abs(rel) < 0.05 else rel
        assert text.split("\n")[1] == f"{rel:+.1f} %", policy


def test_cli_draws_and_refuses_a_folder_without_a_run(runs, tmp_path):
    out = tmp_path / "swim.png"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot.py"), str(runs / "run"),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot.py"), str(tmp_path),
                        "-o", str(tmp_path / "x.png")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "no stats.json in it nor in any sub-folder" in r.stderr
    assert not (tmp_path / "x.png").exists()


def test_report_summary_table_and_plot(runs, tmp_path):
    run = str(runs / "run")
    with open(os.path.join(run, "stats.json")) as f:
        stats = json.load(f)
    rep = Report(path=run, stats=stats, tasks=stats["tasks"], tile_ops=0)
    text = str(rep)
    assert text.splitlines()[0].split() == ["makespan", f"{stats['makespan_ns'] / 1000:.3f}", "us"]
    assert f"{100 * stats['l2']['hit_rate']:.1f} %" in text and run in text
    html = rep._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == len(rep.summary_rows())
    png = tmp_path / "r.png"
    assert rep.plot(str(png)) == str(png) and png.read_bytes()[:4] == b"\x89PNG"
    # A report folder without its trace (trace switched off) says which file is missing.
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "stats.json").write_text(json.dumps(stats))
    with pytest.raises(FeError, match=r"trace\.json not found"):
        Report(path=str(bare), stats=stats).plot(str(tmp_path / "n.png"))
