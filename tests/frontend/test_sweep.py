# SPDX-License-Identifier: Apache-2.0
"""pypto.sweep: a few hundred cheap points give the same table serially, on a local Dask
cluster of two workers, after a stop and a resume, and on an external cluster on loopback;
failed points are recorded; bad specs are refused; the pictures show the table's numbers."""

import csv
import os
import signal
import socket
import subprocess
import sys
import time
import warnings

import pytest

from pypto import sweep

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.path.join(sys.prefix, "bin", "pypto-sim")
PY = sys.executable
WALL = "wall_s"

# 4 traces x 2 chips x 2 l2.ways x 6 policy variants x 3 AICPU thread counts = 288 points.
SPEC = """\
traces:
  - t1.ndjson
  - t2.ndjson
  - t3.ndjson
  - {path: %(samples)s/dyn_topo.txt, prof: %(samples)s/tilefwk_L1_prof_data.json}
chips: [a2, a3]
set: {l2.ways: [8, 16]}
policies:
  - fifo
  - fair
  - l2_affinity
  - {name: random, params: {seed: [1, 2, 3]}}
runtime_options: {launch_sched_aicpu_num: [1, 2, 3]}
"""
N_POINTS = 288

BOOM = """\
import pypto.sim

class Boom(pypto.sim.Policy):
    def on_ready(self, c, t):
        if self.params["fail"]:
            raise RuntimeError("boom on task %d" % t)

pypto.sim.register_policy("boom", Boom, params={"fail": {"type": "bool", "default": False}})
"""


def _sweep(*args, **kw):
    """The sweep in a child process (its own signals; Dask's workers are its children)."""
    return subprocess.run([PY, "-m", "pypto.sweep", *map(str, args)], capture_output=True,
                          text=True, timeout=240, **kw)


def _table(folder, keep_wall=False):
    """results.csv without its wall_s column (the one column that differs between runs)."""
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        rows = list(csv.reader(f))
    i = rows[0].index(WALL)
    return rows if keep_wall else [r[:i] + r[i + 1:] for r in rows]


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    for seed in (1, 2, 3):
        subprocess.run([CLI, "gen", "--tasks", "60", "--seed", str(seed), "-o",
                        str(d / f"t{seed}.ndjson")], check=True, capture_output=True)
    (d / "spec.yaml").write_text(SPEC % {"samples": os.path.join(ROOT, "traces", "samples")})
    (d / "boom.py").write_text(BOOM)
    (d / "boom.yaml").write_text("traces: [t1.ndjson, t2.ndjson]\npolicy_modules: [boom.py]\n"
                                 "policies: [fifo, {name: boom, params: {fail: [false, true]}}]\n")
    return d


@pytest.fixture(scope="module")
def serial(spec):
    """The reference: the spec run serially in this process."""
    out = spec / "serial"
    assert sweep.main([str(spec / "spec.yaml"), "-o", str(out), "--serial", "-q"]) == 0
    return _table(out)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """A Dask scheduler and two single-threaded workers on loopback, as a user starts them."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(
                [PY, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client
        with warnings.catch_warnings():  # tornado's make_current, inside distributed
            warnings.simplefilter("ignore", DeprecationWarning)
            with Client(address, timeout="30s") as c:
                c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_serial_table(spec, serial):
    header, rows = serial[0], serial[1:]
    assert header[:8] == ["point", "trace", "prof", "chip", "set:l2.ways", "policy", "params",
                          "launch_sched_aicpu_num"]
    assert len(rows) == N_POINTS and [r[0] for r in rows] == [str(i) for i in range(N_POINTS)]
    assert all(r[header.index("status")] == "ok" for r in rows)
    # The last spec dimension varies fastest; the policy's parameters have their own column.
    assert [r[7] for r in rows[:3]] == ["1", "2", "3"]
    assert rows[3 * 3][5:7] == ["random", "seed=1"] and rows[3 * 5][5:7] == ["random", "seed=3"]
    # Deterministic: a second serial run gives the same rows.
    again = spec / "serial2"
    assert sweep.main([str(spec / "spec.yaml"), "-o", str(again), "--serial", "-q"]) == 0
    assert _table(again) == serial


def test_local_cluster_same_table(spec, serial):
    out = spec / "local"
    r = _sweep(spec / "spec.yaml", "-o", out, "--workers", 2)
    assert r.returncode == 0, r.stderr
    assert _table(out) == serial
    assert f"sweep: {N_POINTS} points, 0 already done" in r.stderr


def test_resume_after_sigint(spec, serial):
    out = spec / "resume"
    results = out / "results.csv"
    # SIGINT at its default in the child, whatever this shell left it at.
    p = subprocess.Popen([PY, "-m", "pypto.sweep", str(spec / "spec.yaml"), "-o", str(out),
                          "--workers", "2", "-q"], stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while (not results.exists() or results.read_text().count("\n") - 1 < 40) and \
            time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    before = _table(out, keep_wall=True)
    done = len(before) - 1
    assert 40 <= done < N_POINTS and f"holds {done} of {N_POINTS} points" in err
    r = _sweep(spec / "spec.yaml", "-o", out, "--workers", 2)
    assert r.returncode == 0, r.stderr
    assert f"{N_POINTS} points, {done} already done, running {N_POINTS - done}" in r.stderr
    after = _table(out, keep_wall=True)
    # The points done before the stop were not run again: their rows, wall time included,
    # are unchanged.
    assert {tuple(x) for x in before[1:]} <= {tuple(x) for x in after[1:]}
    assert _table(out) == serial


def test_resume_after_limit(spec, serial):
    out = spec / "limit"
    assert sweep.main([str(spec / "spec.yaml"), "-o", str(out), "--serial", "-q",
                       "--limit", "100"]) == 0
    assert len(_table(out)) == 101
    assert sweep.main([str(spec / "spec.yaml"), "-o", str(out), "--serial", "-q"]) == 0
    assert _table(out) == serial


def test_external_cluster_same_table(spec, serial, cluster):
    out = spec / "external"
    r = _sweep(spec / "spec.yaml", "-o", out, "--scheduler", cluster, "-q")
    assert r.returncode == 0, r.stderr
    assert _table(out) == serial


def test_failed_points_recorded(spec, cluster):
    """A Python policy (from policy_modules, run in every worker) that raises: its points
    fail with the error, the others run; exit 1; the same on a cluster."""
    tables = []
    for mode in (["--serial"], ["--scheduler", cluster]):
        out = spec / f"boom{len(tables)}"
        r = _sweep(spec / "boom.yaml", "-o", out, "-q", *mode)
        assert r.returncode == 1, r.stderr
        tables.append(_table(out))
    assert tables[0] == tables[1]
    header, rows = tables[0][0], tables[0][1:]
    status, error = header.index("status"), header.index("error")
    assert [r[status] for r in rows] == ["ok", "ok", "failed"] * 2
    assert rows[2][error] == "RuntimeError: boom on task 0"
    # --retry-failed runs the failed points again (and they fail again); the others stay.
    r = _sweep(spec / "boom.yaml", "-o", spec / "boom0", "-q", "--serial", "--retry-failed")
    assert r.returncode == 1 and _table(spec / "boom0") == tables[0]


@pytest.mark.parametrize("text,message", [
    ("trace: [t1.ndjson]\npolicies: [fifo]\n", "trace: unknown key; did you mean 'traces'?"),
    ("traces: [nope.ndjson]\npolicies: [fifo]\n", "traces[0]: 'nope.ndjson': no such file"),
    ("traces: [t1.ndjson]\npolicies: [fiar]\n",
     "policies[0]: 'fiar': not a registered policy; did you mean 'fair'?"),
    ("traces: [t1.ndjson]\npolicies: [{name: random, params: {sed: 1}}]\n",
     "policies[0].params: {'sed': 1}: policy 'random': unknown parameter 'sed'; did you mean "
     "'seed'?"),
    ("traces: [t1.ndjson]\npolicies: [{name: random, params: {seed: [-1]}}]\n",
     "is out of range [0, 4294967295]"),
    ("traces: [t1.ndjson]\nset: {l2.ways: [0]}\npolicies: [fifo]\n",
     "set.l2.ways: 0: l2.ways: 0 is out of range [1, 64]"),
    ("traces: [t1.ndjson]\nchips: [a22]\npolicies: [fifo]\n", "chips[0]: 'a22': not a chip preset"),
    ("traces: [t1.ndjson]\npolicies: [fifo]\nruntime_options: {launch_sched_aicpu_nun: [2]}\n",
     "did you mean 'launch_sched_aicpu_num'?"),
    ("traces: [t1.ndjson]\npolicies: [fifo]\nruntime_options: {device_sched_parallelism: 99}\n",
     "runtime.device_sched_parallelism: 99 is out of range [1, 8]"),
])
def test_bad_spec(spec, tmp_path, capsys, text, message):
    path = spec / "bad.yaml"
    path.write_text(text)
    out = tmp_path / "out"
    assert sweep.main([str(path), "-o", str(out), "--serial"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: " in err and message in err, err
    assert not out.exists()  # nothing left behind


def test_other_spec_refused(spec, tmp_path, capsys):
    a, b = spec / "a.yaml", spec / "b.yaml"
    a.write_text("traces: [t1.ndjson]\npolicies: [fifo]\n")
    b.write_text("traces: [t1.ndjson]\npolicies: [fifo, fair]\n")
    out = str(tmp_path / "out")
    assert sweep.main([str(a), "-o", out, "--serial", "-q"]) == 0
    assert sweep.main([str(b), "-o", out, "--serial", "-q"]) == 2
    assert "holds the sweep of another spec" in capsys.readouterr().err
    assert len(_table(out)) == 2


@pytest.fixture(scope="module")
def kept(spec):
    """A small sweep with every point's reports kept, for the pictures."""
    path = spec / "plot.yaml"
    path.write_text("traces: [t1.ndjson, t2.ndjson]\npolicies: [fifo, fair, l2_affinity]\n"
                    "runtime_options: {launch_sched_aicpu_num: [1, 3]}\n")
    out = spec / "kept"
    assert sweep.main([str(path), "-o", str(out), "--serial", "-q", "--keep-reports"]) == 0
    return out


def _expected_speedups(folder):
    """fifo makespan / makespan for the same trace and option, from the CSV directly."""
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    fifo = {(r["trace"], r["launch_sched_aicpu_num"]): float(r["makespan_ns"]) for r in rows
            if r["policy"] == "fifo"}
    return {(r["trace"], r["launch_sched_aicpu_num"], r["policy"]):
            fifo[(r["trace"], r["launch_sched_aicpu_num"])] / float(r["makespan_ns"])
            for r in rows if r["policy"] != "fifo"}


def test_plot_files(kept, tmp_path):
    paths = sweep.plot(str(kept), str(tmp_path), heatmap="launch_sched_aicpu_num",
                       swimlanes=["fifo", "fair"])
    assert [os.path.basename(p) for p in paths] == [
        "speedup.png", "heatmap_launch_sched_aicpu_num.png", "swimlanes_fifo_vs_fair.png"]
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_speedup_bars_show_the_numbers(kept):
    exp = _expected_speedups(kept)
    fig = sweep.speedup_figure(str(kept))
    ax = fig.axes[0]
    texts = sorted(t.get_text() for t in ax.texts)
    want = {}
    for (trace, _, pol), v in exp.items():  # geometric mean over the two option values
        want.setdefault((trace, pol), []).append(v)
    assert texts == sorted(f"{(v[0] * v[1]) ** 0.5:.3f}×" for v in want.values())
    # The axis spans the data, not from 0: a 1 % difference is a visible part of it.
    lo, hi = ax.get_ylim()
    assert lo > 0.5 and 0.01 / (hi - lo) > 0.05


def test_heatmap_cells(kept):
    exp = _expected_speedups(kept)
    d = sweep.heatmap_data(str(kept), "launch_sched_aicpu_num")
    assert d["x"] == ["1", "3"] and d["y"] == ["fair", "l2_affinity"]
    for i, pol in enumerate(d["y"]):
        for j, x in enumerate(d["x"]):
            v = [s for (t, o, p), s in exp.items() if p == pol and o == x]
            assert d["values"][i][j] == pytest.approx((v[0] * v[1]) ** 0.5)
    fig = sweep.heatmap_figure(str(kept), "launch_sched_aicpu_num")
    assert f"{d['values'][0][0]:.3f}" in [t.get_text() for t in fig.axes[0].texts]


def test_plot_refusals(kept, spec, serial, capsys):
    assert sweep.main(["plot", str(kept), "--heatmap", "launch_sched_aicpu_nun"]) == 2
    assert "did you mean 'launch_sched_aicpu_num'?" in capsys.readouterr().err
    # No fifo points: no speed-up over fifo.
    (spec / "nofifo.yaml").write_text("traces: [t1.ndjson]\npolicies: [fair]\n")
    assert sweep.main([str(spec / "nofifo.yaml"), "-o", str(spec / "nofifo"), "-q",
                       "--serial"]) == 0
    assert sweep.main(["plot", str(spec / "nofifo")]) == 2
    assert "no ok fifo point" in capsys.readouterr().err
    # Swimlanes need the kept reports.
    assert sweep.main(["plot", str(spec / "serial"), "--swimlanes", "fifo,fair"]) == 2
    assert "--keep-reports" in capsys.readouterr().err
