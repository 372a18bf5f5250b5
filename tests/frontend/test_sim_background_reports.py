# SPDX-License-Identifier: Apache-2.0
"""A cache-hit SIM call returns once its outputs are computed; its timing run and report
folder follow on the report worker, in call order (pypto/_backend.py SimBackend). These tests
check what a user relies on: the outputs are there at once, the report waits where it is
needed, the results are exactly those of every call waiting (PYPTO_SIM_REPORTS=wait),
failures are not lost, and nothing is left unwritten at exit."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import pypto
import pypto.sim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import golden as _golden  # noqa: E402


def _scale(rows=256):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def scale(x: pypto.Tensor([rows, 64], pypto.DT_FP32),
              y: pypto.Tensor([rows, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 64)
        for i in pypto.loop(rows // 32, idx_name="i"):
            t = pypto.view(x, [32, 64], [i * 32, 0])
            y[i * 32:, :] = t * 2.0

    return scale


def _shift():
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def shift(x: pypto.Tensor([256, 64], pypto.DT_FP32),
              y: pypto.Tensor([256, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 64)
        y[:] = x + 1.0

    return shift


pytestmark = pytest.mark.l2_warm  # the warm L2 across calls is part of what is checked


@pytest.fixture
def out_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path))
    monkeypatch.delenv("PYPTO_SIM_REPORTS", raising=False)
    pypto.sim.wait_reports()
    pypto.sim.reset_l2()
    yield tmp_path
    pypto.sim.wait_reports()


def test_first_call_waits_and_a_cached_call_returns_with_its_outputs(out_dir):
    k = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    k(x, y)
    first = k.last_report
    assert not first.pending
    # The first call of a kernel leaves its folder complete, for tools that look at once.
    assert os.path.isfile(os.path.join(first.path, "stats.json"))
    assert os.path.isfile(first.swimlane_path)

    y2 = torch.empty(256, 64)
    k(x, y2)
    assert torch.equal(y2, x * 2.0)  # before anything waited for the report
    rep = k.last_report
    assert rep.tasks == first.tasks and rep.tile_ops == first.tile_ops
    stats = rep.stats  # waits
    assert not rep.pending
    assert stats["l2"]["warm_start"]
    with open(os.path.join(rep.path, "stats.json"), encoding="utf-8") as f:
        assert _golden.strip_wall(json.load(f)) == _golden.strip_wall(stats)
    assert rep.path != first.path
    assert "makespan" in str(rep)


def _sequence(out_dir, sub):
    """Calls of two kernels interleaved (the second kernel's first call waits for the queued
    calls of the first); returns each call's stats and trace.json bytes."""
    os.environ["PYPTO_OUTPUT_DIR"] = str(out_dir / sub)
    pypto.sim.reset_l2()
    a, b = _scale(), _shift()
    x = torch.arange(256 * 64, dtype=torch.float32).reshape(256, 64)
    y = torch.empty(256, 64)
    reports, outputs = [], []
    for kernel in (a, a, a, b, a, b, b):
        kernel(x, y)
        outputs.append(y.clone())
        reports.append(kernel.last_report)
    runs = []
    for r in reports:
        with open(os.path.join(r.path, "trace.json"), "rb") as f:
            runs.append((_golden.strip_wall(r.stats), f.read()))
    return runs, outputs


def test_background_reports_equal_those_of_waiting_calls(out_dir, monkeypatch):
    background, out_bg = _sequence(out_dir, "bg")
    monkeypatch.setenv("PYPTO_SIM_REPORTS", "wait")
    waited, out_wait = _sequence(out_dir, "wait")
    assert len(background) == len(waited) == 7
    for i, ((s_bg, t_bg), (s_w, t_w)) in enumerate(zip(background, waited)):
        assert s_bg == s_w, f"call {i}: stats differ"
        assert t_bg == t_w, f"call {i}: trace.json differs"
    for o_bg, o_w in zip(out_bg, out_wait):
        assert torch.equal(o_bg, o_w)
    # The L2 kept across calls went through them in call order: every repeated call of a
    # kernel on the same tensors starts warm.
    assert [s["l2"]["warm_start"] for s, _ in background] == [False] + [True] * 6


def test_wait_reports_and_a_bad_setting(out_dir, monkeypatch):
    k = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    k(x, y)
    k(x, y)
    rep = k.last_report
    pypto.sim.wait_reports()
    assert not rep.pending
    monkeypatch.setenv("PYPTO_SIM_REPORTS", "later")
    with pytest.raises(pypto.error.FeError, match=r"PYPTO_SIM_REPORTS='later': expected one "
                                                  r"of background, wait"):
        k(x, y)


def test_a_failed_background_report_is_raised_where_it_is_used(out_dir, monkeypatch):
    k = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    k(x, y)
    blocker = out_dir / "not_a_folder"
    blocker.write_text("x")
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(blocker))
    k(x, y)  # the outputs are computed; the report cannot be written
    assert torch.equal(y, x * 2.0)
    with pytest.raises(Exception, match="not_a_folder"):
        k.last_report.stats
    # Unobserved: wait_reports names it.
    k(x, y)
    with pytest.raises(pypto.error.FeError, match=r"SIM report\(s\) not written: .*not_a_folder"):
        pypto.sim.wait_reports()
    pypto.sim.wait_reports()  # said once


def test_pending_reports_are_written_at_exit(tmp_path):
    script = textwrap.dedent(f"""
        import torch, pypto
        @pypto.frontend.jit(runtime_options={{"run_mode": pypto.RunMode.SIM}})
        def k(x: pypto.Tensor([512, 64], pypto.DT_FP32), y: pypto.Tensor([512, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(32, 64)
            for i in pypto.loop(16, idx_name="i"):
                y[i * 32:, :] = pypto.view(x, [32, 64], [i * 32, 0]) + 1.0
        x = torch.randn(512, 64); y = torch.empty(512, 64)
        for _ in range(4):
            k(x, y)
        assert torch.equal(y, x + 1.0)
        """)
    env = dict(os.environ, PYPTO_OUTPUT_DIR=str(tmp_path / "out"))
    env.pop("PYPTO_SIM_REPORTS", None)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    folders = sorted(os.listdir(tmp_path / "out"))
    assert len(folders) == 4
    for f in folders:
        assert os.path.isfile(tmp_path / "out" / f / "stats.json"), f


def test_a_python_policy_runs_on_the_calling_thread(out_dir):
    class Fifo(pypto.sim.Policy):
        """fifo in Python"""

    with pypto.sim.registered_policy("py_fifo_bg", Fifo):
        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM,
                                             "device_sched_mode": "py_fifo_bg"})
        def k(x: pypto.Tensor([256, 64], pypto.DT_FP32), y: pypto.Tensor([256, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(64, 64)
            y[:] = x * 3.0

        x = torch.randn(256, 64)
        y = torch.empty(256, 64)
        k(x, y)
        k(x, y)
        # Its hooks need the interpreter: the run finished inside the call.
        assert not k.last_report.pending
        assert k.last_report.stats["policy"] == "py_fifo_bg"
        assert torch.equal(y, x * 3.0)


def test_runtime_log_lines_once_per_compiled_kernel(out_dir, caplog):
    # PyPTO prints the workspace lines when it encodes a kernel, not at every launch.
    k = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    with caplog.at_level("INFO", logger="pypto"):
        for _ in range(3):
            k(x, y)
    logged = [m for m in caplog.messages if m.startswith("[workspaceSize] stitch depth")]
    assert len(logged) == 1
    assert any(m.startswith("[workspaceSize] stitch depth") for m in k.last_report.log)


def test_a_forked_child_gets_a_worker_of_its_own(out_dir):
    # fork() copies only the calling thread: the fork waits until the parent's worker is idle
    # (so no lock it holds is copied held), and the child makes a worker of its own.
    k = _scale(rows=8192)  # 256 tasks: the cached call's timing run is still going at the fork
    x = torch.randn(8192, 64)
    y = torch.empty(8192, 64)
    k(x, y)
    k(x, y)
    inherited = k.last_report
    pid = os.fork()
    if pid == 0:  # the child: exit status says what it saw
        code = 0
        try:
            y2 = torch.empty(8192, 64)
            k(x, y2)
            if not torch.equal(y2, x * 2.0) or k.last_report.stats["tasks"] != 256:
                code = 3
            if inherited.pending:  # the fork waited for it
                code = 4
            pypto.sim.wait_reports()
        except BaseException:
            code = 5
        os._exit(code)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung in its SIM call")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert inherited.stats["tasks"] == 256


def test_the_queue_of_pending_reports_is_bounded(out_dir):
    # A pending call keeps its launch in memory: at most `runs` calls may lag behind.
    saved = pypto.sim.report_queue_limits()
    assert saved == {"runs": 4096, "tasks": 1 << 16}
    with pytest.raises(pypto.PyptoValueError,
                       match=r"runs must be an integer in \[1, 2\*\*63 - 1\]; got 0"):
        pypto.sim.set_report_queue_limits(runs=0)
    with pytest.raises(pypto.PyptoValueError,
                       match=r"tasks must be an integer in \[1, 2\*\*63 - 1\]; got 1.5"):
        pypto.sim.set_report_queue_limits(tasks=1.5)
    assert pypto.sim.report_queue_limits() == saved
    k = _scale()
    x = torch.randn(256, 64)
    y = torch.empty(256, 64)
    k(x, y)  # compiles; waits for its report
    try:
        pypto.sim.set_report_queue_limits(runs=1)
        assert pypto.sim.report_queue_limits() == {"runs": 1, "tasks": 1 << 16}
        reports = []
        for _ in range(4):
            k(x, y)
            # The call made room by waiting for the one before it.
            assert all(not r.pending for r in reports)
            reports.append(k.last_report)
        assert torch.equal(y, x * 2.0)
    finally:
        pypto.sim.set_report_queue_limits(**saved)
    pypto.sim.wait_reports()
    assert all(os.path.isfile(os.path.join(r.path, "stats.json")) for r in reports)
