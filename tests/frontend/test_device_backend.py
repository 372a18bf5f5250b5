# SPDX-License-Identifier: Apache-2.0
"""The hardware backend (pypto.backends.DeviceBackend): run_mode=NPU kernels on an explicit
device, dispatched by the wall-clock runtime. On the cpu device the numbers equal SIM's bit
for bit (same compiled tasks, same executor) and torch's within the SIM tolerances; every
run leaves a board-format recording that `pypto-sim run` replays."""

import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import torch

import pypto
from aten_devices import aten_devices, has_aten
from pypto import _backend

F32, F16 = pypto.DT_FP32, pypto.DT_FP16
NPU = {"run_mode": pypto.RunMode.NPU}
CLI = Path(sys.executable).parent / "pypto-sim"


@pytest.fixture(autouse=True)
def _out(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "output"))


def on_cpu_device(kernel, *args):
    with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu")):
        return kernel(*args)


def on_sim(kernel, *args):
    """The same kernel object on the simulator (its run mode is NPU; the SIM backend takes
    its place for the call)."""
    with pypto.use_backend(pypto.RunMode.NPU, _backend.SimBackend()):
        return kernel(*args)


def make_row_kernel():
    @pypto.frontend.jit(runtime_options=NPU)
    def rows(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 16), idx_name="i"):
            t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[pypto.min(n - i * 16, 16), 64])
            y[i * 16:, :] = pypto.exp(t) * 2.0 + t

    return rows


def make_attention(S=64, D=32, pt=F16):
    @pypto.frontend.jit(runtime_options=NPU)
    def attn(q: pypto.Tensor([S, D], pt), kk: pypto.Tensor([S, D], pt),
             v: pypto.Tensor([S, D], pt), o: pypto.Tensor([S, D], pt)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        scores = pypto.matmul(q, kk, F32, b_trans=True)
        pypto.set_vec_tile_shapes(16, S)
        p = pypto.softmax(scores * (1.0 / D ** 0.5), -1)
        o[:] = pypto.matmul(pypto.cast(p, pt), v, pt)

    return attn


def make_layernorm():
    @pypto.frontend.jit(runtime_options=NPU)
    def ln(x: pypto.Tensor([40, 96], F32), y: pypto.Tensor([40, 96], F32)):
        pypto.set_vec_tile_shapes(8, 96)
        mean = pypto.sum(x, -1, keepdim=True) / 96.0
        d = x - mean
        var = pypto.sum(d * d, -1, keepdim=True) / 96.0
        y[:] = d * pypto.rsqrt(var + 1e-5)

    return ln


def test_elementwise_equals_sim_and_torch():
    k = make_row_kernel()
    x = torch.randn(300, 64, generator=torch.Generator().manual_seed(1))
    y_dev, y_sim = torch.zeros_like(x), torch.zeros_like(x)
    on_cpu_device(k, x, y_dev)
    rep = k.last_report
    on_sim(k, x, y_sim)
    assert torch.equal(y_dev, y_sim)
    torch.testing.assert_close(y_dev, torch.exp(x) * 2.0 + x, rtol=1e-6, atol=1e-6)
    assert rep.backend == "device:cpu:tile" and rep.makespan_ns > 0
    assert rep.stats["tasks"] == 19 and rep.stats["device"] == "cpu"


def test_attention_matmul_softmax_equals_sim_and_torch():
    k = make_attention()
    g = torch.Generator().manual_seed(2)
    q, kk, v = (torch.randn(64, 32, generator=g).half() for _ in range(3))
    o_dev, o_sim = torch.zeros(64, 32).half(), torch.zeros(64, 32).half()
    on_cpu_device(k, q, kk, v, o_dev)
    assert k.last_report.stats["cores"]["aic"]["tasks"] > 0  # cube tasks ran on AIC streams
    on_sim(k, q, kk, v, o_sim)
    assert torch.equal(o_dev, o_sim)
    p = torch.softmax((q.float() @ kk.float().T) / 32 ** 0.5, -1)
    torch.testing.assert_close(o_dev.float(), (p.half().float() @ v.float()), rtol=4e-3,
                               atol=4e-3)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_every_policy_gives_sim_numbers(mode):
    k = make_layernorm()
    k.options["runtime_options"]["device_sched_mode"] = mode
    x = torch.randn(40, 96, generator=torch.Generator().manual_seed(3))
    y_dev, y_sim = torch.zeros_like(x), torch.zeros_like(x)
    on_cpu_device(k, x, y_dev)
    on_sim(k, x, y_sim)
    assert torch.equal(y_dev, y_sim)
    want = torch.nn.functional.layer_norm(x, (96,), eps=1e-5)
    torch.testing.assert_close(y_dev, want, rtol=1e-4, atol=1e-4)


def test_many_device_tasks_and_repeat_calls():
    """Stitching splits a long loop into device tasks admitted one after another; a second
    call on new data gives new numbers."""
    k = make_row_kernel()
    for seed in (4, 5):
        x = torch.randn(4000, 64, generator=torch.Generator().manual_seed(seed))
        y_dev, y_sim = torch.zeros_like(x), torch.zeros_like(x)
        on_cpu_device(k, x, y_dev)
        stats = k.last_report.stats
        on_sim(k, x, y_sim)
        assert torch.equal(y_dev, y_sim)
    assert stats["device_tasks"] > 1 and stats["tasks"] == 250


def test_agent_threads_are_kept_across_calls_and_a_forked_child_makes_its_own():
    """A run borrows one host thread per agent from threads kept across runs (starting ~75
    threads per call was most of a small kernel's overhead); fork copies only the calling
    thread, so a child's first run must start threads of its own instead of waiting for the
    parent's parked ones."""
    def native_threads():
        return len(os.listdir("/proc/self/task"))

    k = make_row_kernel()
    x = torch.randn(100, 64)
    y = torch.zeros_like(x)
    on_cpu_device(k, x, y)
    s = k.last_report.stats
    agents = s["cores"]["aic"]["count"] + s["cores"]["aiv"]["count"] + s["sched_threads"]
    after_first = native_threads()
    assert after_first > agents  # parked for the next call, not joined
    for _ in range(3):
        on_cpu_device(k, x, y)
    assert native_threads() == after_first  # the same threads serve every call
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if the run finished with the right numbers
        code = 1
        try:
            y2 = torch.zeros_like(x)
            on_cpu_device(k, x, y2)
            code = 0 if torch.equal(y2, y) else 3
        finally:
            os._exit(code)
    deadline = 120
    for _ in range(deadline * 10):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail(f"the forked child's device run did not finish within {deadline} s")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def run_cli(*args):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)


def test_recording_in_board_format_replays():
    k = make_row_kernel()
    x = torch.randn(300, 64)
    on_cpu_device(k, x, torch.zeros_like(x))
    rep = k.last_report
    for p in (rep.topo_path, rep.prof_path, rep.dyn_topo_path):
        assert os.path.isfile(p) and os.path.dirname(p) == rep.path
    assert rep.stats["recording"]["prof"] == rep.prof_path
    prof = json.load(open(rep.prof_path))
    recs = [r for b in prof for r in b["tasks"]]
    assert len(recs) == rep.stats["tasks"]
    assert all(b["coreType"] == "AIV" and b["blockIdx"] >= 24 for b in prof)  # a2: 24 AIC first
    assert all(r["execEnd"] >= r["execStart"] for r in recs)
    # Ticks of the chip's board clock (a2: 50 MHz) cover the measured task span.
    span_ticks = max(r["execEnd"] for r in recs) - min(r["execStart"] for r in recs)
    span_ns = rep.stats["last_end_ns"] - rep.stats["first_start_ns"]
    assert abs(span_ticks * 20 - span_ns) <= 40
    topo = json.load(open(rep.topo_path))
    assert sorted(t["taskId"] for t in topo) == list(range(19))
    out = run_cli("run", rep.topo_path, "--prof", rep.prof_path)
    assert out.returncode == 0, out.stderr
    assert "recorded" in out.stdout and "start error" in out.stdout


def test_dyn_topo_replays_every_device_task():
    k = make_row_kernel()
    x = torch.randn(4000, 64)
    on_cpu_device(k, x, torch.zeros_like(x))
    rep = k.last_report
    out = run_cli("run", rep.dyn_topo_path, "--prof", rep.prof_path)
    assert out.returncode == 0, out.stderr
    assert f"{rep.stats['tasks']} in {rep.stats['device_tasks']} device tasks" in out.stdout


def test_report_summary_says_measured():
    k = make_row_kernel()
    x = torch.randn(32, 64)
    on_cpu_device(k, x, torch.zeros_like(x))
    text = str(k.last_report)
    assert "measured on device:cpu:tile" in text and "tilefwk_L1_prof_data.json" in text


def test_npu_without_explicit_backend_fails_clearly(monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.setitem(sys.modules, "torch_npu", None)
    k = make_row_kernel()
    with pytest.raises(pypto.error.PyptoRtError if hasattr(pypto.error, "PyptoRtError")
                       else pypto.PyptoRuntimeError) as e:
        k(torch.randn(16, 64), torch.zeros(16, 64))
    msg = str(e.value)
    assert "CANN" in msg and "torch_npu" in msg and "RunMode.SIM" in msg
    assert "DeviceBackend('cpu')" in msg


def test_npu_with_torch_npu_but_no_device(monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", "/usr/local/Ascend")
    fake = types.ModuleType("torch_npu")
    fake.npu = types.SimpleNamespace(device_count=lambda: 0)
    monkeypatch.setitem(sys.modules, "torch_npu", fake)
    with pytest.raises(pypto.PyptoRuntimeError, match="no NPU device is visible"):
        _backend.NpuBackend().run(None, [], {}, {})


def test_tensor_on_another_device_is_rejected_with_the_device_named():
    with pytest.raises(pypto.PyptoValueError,
                       match=r"tensor argument 0 is on device 'meta', which this backend "
                             r"cannot use; pass tensors on 'cpu'"):
        _backend.DeviceBackend("cpu").run(None, [torch.empty(2, device="meta")], {}, {})


def test_unknown_device_and_devices_without_an_executor():
    with pytest.raises(pypto.PyptoValueError, match="'tpu' is not a torch device"):
        pypto.backends.DeviceBackend("tpu")
    with pytest.raises(pypto.PyptoValueError, match="executor 'x'; expected 'tile' or 'aten'"):
        pypto.backends.DeviceBackend("cpu", executor="x")
    if "aten" in pypto._C.device_executors() and not torch.cuda.is_available():
        with pytest.raises(pypto.PyptoNotImplementedError,
                           match="needs the ATen executor on a torch that has the cuda device"):
            pypto.backends.DeviceBackend("cuda").run(None, [], {}, {})


def test_run_mode_npu_is_never_a_silent_fallback():
    """Selecting the cpu device backend is explicit and scoped: after the block, run_mode=NPU
    is the NPU backend again."""
    with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend("cpu")):
        assert isinstance(_backend.get_backend(pypto.RunMode.NPU), _backend.DeviceBackend)
    assert isinstance(_backend.get_backend(pypto.RunMode.NPU), _backend.NpuBackend)


# ---- the ATen executor: each tile instruction one ATen op on the tensors' device ----------
needs_aten = pytest.mark.skipif(not has_aten(), reason="pypto._C built without libtorch")


def on_aten(device, kernel, *args):
    with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend(device, "aten")):
        return kernel(*args)


@needs_aten
@pytest.mark.parametrize("device", aten_devices())
def test_aten_executor_elementwise_matches_torch(device):
    k = make_row_kernel()
    x = torch.randn(300, 64, generator=torch.Generator().manual_seed(6)).to(device)
    y = torch.zeros_like(x)
    on_aten(device, k, x, y)
    assert k.last_report.backend == f"device:{device}:aten"
    torch.testing.assert_close(y, torch.exp(x) * 2.0 + x, rtol=1e-6, atol=1e-6)
    # Data movement and + * are the tile executor's bits; exp is ATen's own.
    y_sim = torch.zeros(300, 64)
    on_sim(k, x.cpu(), y_sim)
    torch.testing.assert_close(y.cpu(), y_sim, rtol=2e-7, atol=1e-6)


@needs_aten
@pytest.mark.parametrize("device", aten_devices())
def test_aten_executor_attention_and_layernorm_match_torch(device):
    attn = make_attention()
    g = torch.Generator().manual_seed(7)
    q, kk, v = (torch.randn(64, 32, generator=g).half().to(device) for _ in range(3))
    o = torch.zeros(64, 32).half().to(device)
    on_aten(device, attn, q, kk, v, o)
    p = torch.softmax((q.float() @ kk.float().T) / 32 ** 0.5, -1)
    torch.testing.assert_close(o.float(), (p.half().float() @ v.float()), rtol=4e-3, atol=4e-3)
    ln = make_layernorm()
    x = torch.randn(40, 96, generator=g).to(device)
    y = torch.zeros_like(x)
    on_aten(device, ln, x, y)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (96,), eps=1e-5), rtol=1e-4,
                               atol=1e-4)


@needs_aten
def test_aten_executor_runs_every_instruction_family():
    """Nothing is refused up front any more: the indexed ops that once were run on the device
    too (test_device_aten.py covers each family against SIM)."""
    @pypto.frontend.jit(runtime_options=NPU)
    def g(x: pypto.Tensor([8, 16], F32), i: pypto.Tensor([8, 4], pypto.DT_INT32),
          y: pypto.Tensor([8, 4], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        y[:] = pypto.gather(x, 1, i)

    x, i, y = torch.randn(8, 16), torch.randint(0, 16, (8, 4), dtype=torch.int32), torch.zeros(8, 4)
    on_aten("cpu", g, x, i, y)
    assert torch.equal(y, torch.gather(x, 1, i.long()))
