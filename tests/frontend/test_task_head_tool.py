# SPDX-License-Identifier: Apache-2.0
"""tools/task_head_from_swimlane.py on a swimlane of our own written in the board's format
(lanes as thread names, operand hints as PyPTO writes them): which tasks it takes, and the
head it derives from them."""

import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "task_head_from_swimlane.py")


@pytest.fixture(scope="module")
def tool():
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    spec = importlib.util.spec_from_file_location("task_head_from_swimlane", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def hint(*operands):
    return str([{100 + i: {"shape": s, "dtype": d, "rawmagic": 7}}
                for i, (s, d) in enumerate(operands)])


def swimlane(path, with_fill=True):
    lanes = [("AIV_25", 25), ("AIC_1", 1), ("AIC_2", 2), ("Fake Core_0", 99)]
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": name}}
          for name, tid in lanes]

    def task(tid, dur, ins, outs):
        ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": 0.0, "dur": dur, "name": "t",
                   "args": {"ioperand-hint": ins, "ooperand-hint": outs}})

    slice_in = hint(([16, 192], 1), ([192, 5120], 1))
    slice_out = hint(([16, 5120], 3))
    task(1, 2.5, slice_in, slice_out)
    task(2, 1.75, slice_in, slice_out)
    task(99, 1.0, slice_in, slice_out)  # a Fake Core lane holds no recorded time
    task(2, 0.9, hint(([16, 192], 1)), slice_out)  # another leaf
    if with_fill:
        task(25, 2.0, "[]", hint(([16, 256], 3)))
        task(25, 3.0, "[]", hint(([16, 256], 3)))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": ev}, f)


def test_takes_the_shortest_recorded_task_of_each_leaf(tool, tmp_path):
    path = str(tmp_path / "swim.json")
    swimlane(path)
    got = tool.recorded_min_us(path)
    assert got == {"AIV fill [16,256] int32": (2.0, 2),
                   "AIC int8 [16,192]x[192,5120] slice": (1.75, 2)}


def test_a_swimlane_without_the_leaves_is_refused(tool, tmp_path):
    path = str(tmp_path / "swim.json")
    swimlane(path, with_fill=False)
    with pytest.raises(SystemExit, match=r"no recorded task of AIV fill \[16,256\] int32"):
        tool.recorded_min_us(path)


def test_head_is_the_old_head_plus_the_geometric_middle_of_the_gaps(tmp_path):
    path = str(tmp_path / "swim.json")
    swimlane(path)
    env = dict(os.environ, PYPTO_OUTPUT_DIR=str(tmp_path / "out"))
    r = subprocess.run([sys.executable, TOOL, path], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    rows = [line.split("|") for line in r.stdout.splitlines() if line.startswith("| A")]
    gaps = [float(row[5].split()[0]) for row in rows]
    assert [float(row[3].split()[0]) for row in rows] == [2.0, 1.75]
    assert all(g > 0 for g in gaps)
    head = 100 + math.sqrt(gaps[0] * gaps[1]) * 1850  # A2's AICore clock
    printed = float(r.stdout.rsplit("head 100 + that = ", 1)[1].split()[0])
    assert printed == pytest.approx(head, rel=0.005)  # the table's gaps are rounded to 10 ns
