# SPDX-License-Identifier: Apache-2.0
"""The bad-input catalogue (tests/badinput/cases.yaml): each row is run in a fresh folder and
must give its exit status (CLI) or exception (Python), the expected words in one clear
message, and leave nothing behind. The table's header describes the fields."""

import faulthandler
import json
import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_CASES = os.path.join(_REPO, "tests", "badinput", "cases.yaml")
_SAMPLES = os.path.join(_REPO, "traces", "samples")

# What no message may show: a crash, an uncaught library exception, a sanitizer report.
_NEVER = ("terminate called", "what():", "bad_alloc", "Segmentation", "AddressSanitizer",
          "runtime error:", "Traceback", "Assertion", "core dumped", "nlohmann", "simdjson",
          "yaml-cpp", "[json.exception")

# The prelude of every Python row: a small SIM kernel the rows may call.
_PRELUDE = '''\
import json, torch, pypto

@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def double(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 64)
    y[:] = x * 2.0

'''


def _cli():
    env = os.environ.get("PYPTO_SIM_CLI")
    for path in (env, os.path.join(_REPO, ".venv", "bin", "pypto-sim"),
                 os.path.join(_REPO, "build", "tools", "pypto-sim")):
        if path and os.path.exists(path):
            return path
    pytest.skip("pypto-sim is not built (tools/setup.sh)")


def _load():
    with open(_CASES, encoding="utf-8") as f:
        rows = yaml.safe_load(f)
    ids = [r["id"] for r in rows]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate ids in {_CASES}: {sorted(dup)}"
    return rows


_ROWS = _load()


def _params():
    for r in _ROWS:
        marks = []
        if r.get("pending"):
            marks.append(pytest.mark.xfail(strict=True, reason=f"fix pending in {r['pending']}"))
        yield pytest.param(r, id=r["id"], marks=marks)


def _subst(s, tmp, cli=""):
    return (s.replace("{samples}", _SAMPLES).replace("{tmp}", tmp).replace("{cli}", cli)
            .replace("{python}", sys.executable))


def _snapshot(root):
    out = set()
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def _write_inputs(row, tmp):
    for name, content in (row.get("files") or {}).items():
        path = os.path.join(tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, dict):
            content = eval(content["expr"])  # noqa: S307 - the table's own generator
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
            f.write(content)


def _check_message(row, text):
    for bad in _NEVER:
        assert bad not in text, f"message shows {bad!r}:\n{text}"
    low = text.lower()
    for w in row.get("words", []):
        assert str(w).lower() in low, f"expected {w!r} in the message:\n{text}"
    for w in row.get("not_words", []):
        assert str(w).lower() not in low, f"{w!r} must not be in the message:\n{text}"


def _wait_for(proc, path, timeout, row_id):
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None:
            return  # ended before the marker: the exit status tells what happened
        if time.monotonic() > end:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{row_id}: {os.path.basename(path)} not written within {timeout} s")
        time.sleep(0.05)


def _run_cli(row, tmp):
    cli = _cli()
    timeout = row.get("timeout", 30)
    env = dict(os.environ)
    # A shell row may run a Python script that imports pypto ({python} is this interpreter).
    env["PYTHONPATH"] = os.path.join(_REPO, "frontend") + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: _subst(str(v), tmp) for k, v in (row.get("env") or {}).items()})
    if row.get("setup"):
        subprocess.run([cli] + [_subst(a, tmp) for a in row["setup"]], cwd=tmp, env=env,
                       check=True, capture_output=True, timeout=timeout)
    before = _snapshot(tmp)
    if "shell" in row:
        argv = ["bash", "-c", _subst(row["shell"], tmp, cli)]
    else:
        argv = [cli] + [_subst(str(a), tmp) for a in row["cli"]]
    proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        if row.get("interrupt"):
            # [after_s, SIG] or [after_s, SIG, marker]: with a marker (a file the row's code
            # writes where the signal must land) the wait starts when it appears, so a loaded
            # machine's slow start-up cannot put the signal before it.
            after_s, sig, *marker = row["interrupt"]
            if marker:
                _wait_for(proc, os.path.join(tmp, marker[0]), timeout, row["id"])
            try:
                proc.wait(timeout=after_s)
            except subprocess.TimeoutExpired:
                proc.send_signal(getattr(signal, "SIG" + sig))
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{row['id']}: still running after {timeout} s (a hang)")
    if row.get("interrupt") and proc.returncode == 0:
        pytest.skip("the run ended before the signal (machine too fast for this row)")
    accepted = row["exit"] if isinstance(row["exit"], list) else [row["exit"]]
    assert proc.returncode in accepted, (
        f"exit status {proc.returncode}, expected {row['exit']}\nstderr:\n{err[-4000:]}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if proc.returncode != 0:
        assert lines, "no message on stderr"
    assert len(lines) <= row.get("lines", 1), (
        f"{len(lines)} lines on stderr, expected at most {row.get('lines', 1)}:\n{err[-4000:]}")
    for bad in _NEVER:
        assert bad not in err, f"message shows {bad!r}:\n{err}"
    if proc.returncode != 0 or not isinstance(row["exit"], list):
        _check_message(row, err)
    if proc.returncode != 0:
        # A run that failed claims nothing: whatever `leaves` allows for success is absent.
        row = dict(row, leaves=[])
    return before, row


def _run_python(row, tmp, monkeypatch):
    from pypto import _backend
    import importlib

    # This catalogue runs the real SIM backend (tests/frontend hides it from most modules).
    monkeypatch.setattr(_backend, "_native", lambda: importlib.import_module("pypto._C"))
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", os.path.join(tmp, "output"))
    for k, v in (row.get("env") or {}).items():
        monkeypatch.setenv(k, _subst(str(v), tmp))
    script = os.path.join(tmp, "case.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(_PRELUDE + row["python"])
    before = _snapshot(tmp)
    monkeypatch.chdir(tmp)
    expected = row["raises"]
    faulthandler.dump_traceback_later(row.get("timeout", 60), exit=True)
    try:
        runpy.run_path(script, run_name="__main__")
    except Exception as e:  # noqa: BLE001 - the row names the class
        names = [c.__name__ for c in type(e).__mro__]
        assert expected in names, f"raised {type(e).__name__} ({names}), expected {expected}: {e}"
        text = str(e)
        assert len(text) <= 1000, f"message of {len(text)} characters"
        assert "\n" not in text.strip(), f"message is not one line:\n{text}"
        _check_message(row, text)
    else:
        pytest.fail(f"no exception, expected {expected}")
    finally:
        faulthandler.cancel_dump_traceback_later()
    return before


@pytest.mark.parametrize("row", _params())
def test_bad_input(row, tmp_path, monkeypatch):
    tmp = str(tmp_path)
    _write_inputs(row, tmp)
    if "python" in row:
        before = _run_python(row, tmp, monkeypatch)
    else:
        before, row = _run_cli(row, tmp)
    if row.get("check"):
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            exec(row["check"], {"json": json})  # noqa: S102 - the table's own check
        finally:
            os.chdir(cwd)
    marker = (row.get("interrupt") or [None, None])[2:]  # the row's own signal marker
    left = sorted(_snapshot(tmp) - before - set(row.get("leaves", [])) - set(marker))
    assert not left, f"left behind: {left}"


def test_catalogue_size():
    """Issue 12 asks for at least 80 cases over every input kind."""
    assert len(_ROWS) >= 80
    kinds = {"cli": 0, "python": 0}
    for r in _ROWS:
        kinds["python" if "python" in r else "cli"] += 1
    assert kinds["python"] >= 20 and kinds["cli"] >= 60, kinds


_PY_LONG = '''\
import torch, pypto

@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([4096, 4096], pypto.DT_FP32), y: pypto.Tensor([4096, 4096], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = (x * 2.0 + 1.0) * x

x = torch.zeros(4096, 4096); y = torch.zeros(4096, 4096)
k(x, y)
print("ready", flush=True)
for _ in range(200):
    k(x, y)
'''


def test_python_ctrl_c_keeps_only_complete_reports(tmp_path):
    """Ctrl-C during SIM calls: KeyboardInterrupt, and every report folder left is complete
    (a call cut short leaves no folder and no temporary)."""
    script = tmp_path / "long.py"
    script.write_text(_PY_LONG)
    out = tmp_path / "output"
    env = dict(os.environ, PYPTO_OUTPUT_DIR=str(out), PYPTO_SIM_L2="cold")
    env["PYTHONPATH"] = os.path.join(_REPO, "frontend") + os.pathsep + env.get("PYTHONPATH", "")
    # SIGINT at its default in the child, as in a user's terminal: a shell that started this
    # run in the background without job control left it ignored, and a Python started with
    # SIGINT ignored installs no KeyboardInterrupt handler.
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "KeyboardInterrupt" in err, err[-2000:]
    files = ["stats.json", "trace.json", "swim.json", "topo.json", "aicpu.data",
             os.path.join("CostModelSimulationOutput", "merged_swimlane.json"),
             os.path.join("CostModelSimulationOutput", "bubble_analysis.log")]
    folders = sorted(os.listdir(out))
    assert folders, "not even the first call's reports"
    for d in folders:
        left = _snapshot(out / d)
        want = set(files) | {"CostModelSimulationOutput"}
        assert left == want, f"{d}: {sorted(left)}"
