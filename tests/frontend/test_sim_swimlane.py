# SPDX-License-Identifier: Apache-2.0
"""Where PyPTO's tooling finds a SIM call's swimlane, read back the way that tooling reads it.

PyPTO's cost-model example (examples/.../cost_model.py) runs a kernel with run_mode=SIM, takes
the newest folder under ./output (by ctime) and json-loads
CostModelSimulationOutput/merged_swimlane.json in it; its profiling tools
(tools/profiling/draw_swim_lane.py, which writes that file) and the analyzers on top of it
read ``traceEvents``: the "Machine View" process, a thread_name per core (AIC_n / AIV_n),
one "X" event per task with ts/dur in microseconds and args taskId/seqNo, and
"machine-view-last-dep" s/f flow pairs. The reader below does exactly that and nothing more.
"""

import json
import os
import re

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}


@pytest.fixture(autouse=True)
def _native_and_cwd(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401  (part of the build: its absence is a failure)
    monkeypatch.delenv("PYPTO_OUTPUT_DIR", raising=False)  # the default, ./output
    monkeypatch.chdir(tmp_path)


# ---- PyPTO's access pattern ------------------------------------------------------------------
def pypto_latest_output(base="./output"):
    subdirs = [os.path.join(base, d) for d in os.listdir(base)
               if os.path.isdir(os.path.join(base, d))]
    return max(subdirs, key=os.path.getctime) if subdirs else None


def pypto_read_swimlane(output_path):
    with open(os.path.join(output_path, "CostModelSimulationOutput/merged_swimlane.json"),
              encoding="utf-8") as f:
        return json.load(f)


def lanes_and_tasks(data):
    events = data["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tasks = [e for e in events if e.get("ph") == "X"]
    return procs, threads, tasks


# ---- kernels -------------------------------------------------------------------------------
@pypto.frontend.jit(runtime_options=SIM)
def scale_rows(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
               y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 64)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 32), idx_name="i"):
        t = pypto.view(x, [32, 64], [i * 32, 0], valid_shape=[pypto.min(n - i * 32, 32), 64])
        y[i * 32:, :] = pypto.exp(t) * 2.0


@pypto.frontend.jit(runtime_options=SIM)
def mm_then_add(a: pypto.Tensor([64, 64], pypto.DT_FP32),
                b: pypto.Tensor([64, 64], pypto.DT_FP32),
                c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    c[:] = pypto.matmul(a, b, pypto.DT_FP32) + 1.0


def test_swimlane_where_pypto_reads_it():
    x = torch.randn(100, 64)
    y = torch.empty(100, 64)
    scale_rows(x, y)
    torch.testing.assert_close(y, torch.exp(x) * 2.0)
    report = scale_rows.last_report

    latest = pypto_latest_output()
    assert latest is not None
    assert os.path.samefile(latest, report.path)
    data = pypto_read_swimlane(latest)
    assert list(data) == ["traceEvents"]
    procs, threads, tasks = lanes_and_tasks(data)
    assert procs == {1: "Machine View"}
    assert threads and all(name.split("_")[0] in ("AIC", "AIV") for name in threads.values())

    # One X event per task of our swim.json (PyPTO's swimlane input), on its core's lane.
    with open(os.path.join(report.path, "swim.json"), encoding="utf-8") as f:
        swim = json.load(f)
    by_core = {(1, 1000 + 2 * (core["blockIdx"] + 1)): core for core in swim}
    assert len(tasks) == sum(len(core["tasks"]) for core in swim)
    assert len(tasks) == report.tasks  # scale_rows has no HUB tasks
    for e in tasks:
        assert e["cat"] == "event" and e["pid"] == 1 and e["dur"] >= 0
        core = by_core[(e["pid"], e["tid"])]
        assert threads[(e["pid"], e["tid"])] == f"{core['coreType']}_{core['blockIdx'] + 1}"
        assert (e["args"]["seqNo"], e["args"]["taskId"]) in {
            (t["seqNo"], t["taskId"]) for t in core["tasks"]}
        assert e["name"].endswith("(" + e["args"]["color"] + ")")

    # draw_swim_lane.py's AICore end-to-end time (us) is the simulated task span.
    span_us = max(e["ts"] + e["dur"] for e in tasks) - min(e["ts"] for e in tasks)
    assert span_us == pytest.approx(report.stats["task_span_ns"] / 1000.0, rel=1e-6, abs=1e-5)
    assert report.swimlane_path == os.path.join(
        report.path, "CostModelSimulationOutput", "merged_swimlane.json")


def test_swimlane_dependencies_and_ready_counters():
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.empty(64, 64)
    mm_then_add(a, b, c)
    torch.testing.assert_close(c, a @ b + 1.0, rtol=1e-4, atol=1e-4)

    data = pypto_read_swimlane(pypto_latest_output())
    procs, threads, tasks = lanes_and_tasks(data)
    kinds = {threads[(e["pid"], e["tid"])].split("_")[0] for e in tasks}
    assert kinds == {"AIC", "AIV"}
    by_id = {}
    for e in data["traceEvents"]:
        if e.get("cat") == "machine-view-last-dep":
            by_id.setdefault(e["id"], {})[e["ph"]] = e
    assert by_id, "matmul -> add has dependencies"
    lanes = set(threads)
    for pair in by_id.values():
        assert set(pair) == {"s", "f"} and pair["f"]["bp"] == "e"
        assert (1, pair["s"]["tid"]) in lanes and (1, pair["f"]["tid"]) in lanes
        assert pair["s"]["ts"] <= pair["f"]["ts"]
    counters = {e["name"] for e in data["traceEvents"] if e.get("ph") == "C"}
    assert counters <= {"ReadyCount_AIC", "ReadyCount_AIV", "ReadyCount_Total"}
    assert "ReadyCount_Total" in counters


# PyPTO's analyzers and its performance skill read bubble_analysis.log with this pattern and
# take the largest "Core Total Work Time" as the kernel's execution time.
BUBBLE_CORE = re.compile(
    r"\[(AIC_\d+|AIV_\d+)\] Execute task num:(\d+)\s+Core Total Work Time: ([\d.]+)\s+"
    r"Total Wait Time: ([\d.]+)\s+Wait Schedule Time: ([\d.]+)\s+"
    r"Wait Predecessor Time: ([\d.]+)")


def test_bubble_analysis_beside_the_swimlane_as_pyptos_tool_computes_it():
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.empty(64, 64)
    mm_then_add(a, b, c)
    report = mm_then_add.last_report.wait()  # a cached call writes its reports in the background
    latest = pypto_latest_output()
    with open(os.path.join(latest, "CostModelSimulationOutput", "bubble_analysis.log"),
              encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("Top 10 tasks in waiting schedule\n")
    got = {m[0]: [int(m[1])] + [float(v) for v in m[2:]] for m in BUBBLE_CORE.findall(text)}

    # draw_swim_lane.py's analysis_wait_cycles on the swimlane's own events: per core in start
    # order, a task's ready time is its last predecessor's end (its arrows), and the core waits
    # for the scheduler from the later of that and its previous task's end.
    data = pypto_read_swimlane(latest)
    procs, threads, tasks = lanes_and_tasks(data)
    first = min(e["ts"] for e in tasks)
    starts = {(e["tid"], e["ts"]): e for e in tasks}
    ready = {}
    pairs = {}
    for e in data["traceEvents"]:
        if e.get("cat") == "machine-view-last-dep":
            pairs.setdefault(e["id"], {})[e["ph"]] = e
    for p in pairs.values():
        consumer = id(starts[(p["f"]["tid"], p["f"]["ts"])])
        ready[consumer] = max(ready.get(consumer, first), p["s"]["ts"] + 0.0001)
    want = {}
    for tid in sorted({e["tid"] & ~1 for e in tasks}):
        mine = sorted((e for e in tasks if e["tid"] & ~1 == tid), key=lambda e: e["ts"])
        last_end, total, sched = first, 0.0, 0.0
        for e in mine:
            sched += max(0.0, e["ts"] - max(last_end, ready.get(id(e), first)))
            total += max(0.0, e["ts"] - last_end)
            last_end = max(last_end, e["ts"] + e["dur"])
        want[threads[(1, tid)]] = [len(mine), last_end - first, total, sched, total - sched]
    assert set(got) == set(want)
    for core, figures in want.items():
        assert got[core][0] == figures[0]
        assert got[core][1:] == pytest.approx(figures[1:], abs=2e-3), core
    # The largest work time is the kernel time PyPTO's docs quote: the AICore end to end.
    kernel_us = max(v[1] for v in got.values())
    assert kernel_us == pytest.approx(report.aicore_end_to_end_ns / 1000.0, abs=1e-3)
    assert any(v[3] > 0 for v in got.values()), "the add waits for the matmul"


def test_each_call_gets_its_own_folder_and_the_newest_is_found():
    x = torch.randn(32, 64)
    y = torch.empty(32, 64)
    scale_rows(x, y)
    first = scale_rows.last_report.path
    scale_rows(x, y)
    second = scale_rows.last_report.path
    assert first != second
    assert os.path.samefile(pypto_latest_output(), second)
    for path in (first, second):
        assert sorted(os.listdir(path)) == [
            "CostModelSimulationOutput", "aicpu.data", "stats.json", "swim.json", "topo.json",
            "trace.json"]
        assert sorted(os.listdir(os.path.join(path, "CostModelSimulationOutput"))) == [
            "bubble_analysis.log", "merged_swimlane.json"]
