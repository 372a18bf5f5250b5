# SPDX-License-Identifier: Apache-2.0
"""tools/pypto_examples.py: the device edits, case discovery and classification, on a small
checkout of our own (no PyPTO file is used)."""

import importlib.util
import json
import os
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location(
        "pypto_examples", os.path.join(ROOT, "tools", "pypto_examples.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


def test_device_edits(tool):
    src = textwrap.dedent('''\
        import torch_npu
        import os, torch_npu as tn, sys
        from torch_npu.contrib import transfer_to_npu
        def f(device_id, run_mode):
            import torch_npu
            torch.npu.set_device(device_id)
            torch_npu.npu.synchronize()
            x = torch.ones(2).npu()
            y = torch.ones(2, device=f'npu:{device_id}')
            z = torch.ones(2, device="npu:0")
            w = torch.zeros(2, device=device_id)
            v = x.to("npu")
            mode = pypto.RunMode.NPU
            if "npu" in device:
                check()
            if run_mode == "npu":
                pass
        ''')
    out, n = tool.device_edit(src)
    assert "torch_npu" not in out.replace("torch_npu.npu", "")
    assert "import os, sys" in out
    assert "torch.npu" not in out and "torch_npu.npu" not in out
    assert ".npu()" not in out and ".cpu().contiguous()" in out  # a board copy is dense
    assert "npu:" not in out
    assert 'device="cpu")' in out                      # device=device_id
    assert '.to("cpu")' in out
    assert "pypto.RunMode.SIM" in out and "RunMode.NPU" not in out
    assert "if True:" in out
    assert 'run_mode == "npu"' in out                  # run-mode strings are not devices
    compile(out, "edited", "exec")
    assert n >= 12



def test_device_edits_format_cast_and_query(tool):
    # A model test hands its NZ weights through npu_format_cast and checks them with torch_npu's
    # format query behind a device-type guard; on CPU the cast copies the ND data and remembers
    # the format, which the query answers; the internal-format switch goes.
    src = textwrap.dedent('''\
        import torch
        import torch_npu
        def get_format(t):
            if t.device.type == "npu":
                return "NZ" if torch_npu.get_npu_format(t) == 29 else "ND"
            return "ND"
        def f(data):
            torch_npu.npu.config.allow_internal_format = True
            w = torch_npu.npu_format_cast(data["w"].npu().contiguous(), torch_npu.Format.FRACTAL_NZ)
            v = dict(k=torch_npu.npu_format_cast(
                data["k"].npu(), 29), s=", )")
            nd = torch_npu.npu_format_cast(w, 2)
            return w, v, nd, [get_format(t) for t in (data["w"], w, v["k"], nd)]
        ''')
    out, n = tool.device_edit(src)
    assert "torch_npu" not in out
    assert "    pass  # device edit\n    w = " in out
    compile(out, "edited", "exec")
    ns = {}
    exec(out, ns)
    import torch
    data = {"w": torch.arange(6.0).reshape(2, 3), "k": torch.arange(6.0).reshape(3, 2).t()}
    w, v, nd, formats = ns["f"](data)
    assert formats == ["ND", "NZ", "NZ", "ND"]
    # a dense copy of the data: the input keeps its own (unasked) format
    assert torch.equal(w, data["w"]) and w.data_ptr() != data["w"].data_ptr()
    assert torch.equal(v["k"], data["k"]) and v["k"].is_contiguous() and v["s"] == ", )"
    # the import, three casts, the format name, the switch, two .npu(), the query, its guard
    assert n == 10


def test_device_edits_npu_graph_runs_the_capture_once(tool):
    # The board runs a captured call at replay, once; here it runs where the capture is and the
    # replay adds nothing, so an accumulating kernel ends as on the board.
    src = textwrap.dedent('''\
        import torch
        calls = []
        def kernel(out):
            calls.append(1)
            out += 1
        def f():
            out = torch.zeros(2, device="npu:0")
            g = torch.npu.NPUGraph()
            with torch.npu.graph(g):
                kernel(out)
            g.replay()
            return out
        ''')
    out, _ = tool.device_edit(src)
    assert "torch.npu" not in out
    ns = {}
    exec(out, ns)
    import torch
    assert torch.equal(ns["f"](), torch.ones(2)) and ns["calls"] == [1]


def _write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))


EXAMPLE = '''\
    import argparse, os, sys
    import torch, pypto

    def get_mode(run_mode):
        return pypto.RunMode.NPU if run_mode == "npu" else pypto.RunMode.SIM

    def make(run_mode):
        @pypto.frontend.jit(runtime_options={"run_mode": get_mode(run_mode)})
        def k(x: pypto.Tensor((4, 8), pypto.DT_FP32)) -> pypto.Tensor((4, 8), pypto.DT_FP32):
            pypto.set_vec_tile_shapes(4, 8)
            return x * 2.0
        return k

    def test_ok(device_id, run_mode):
        device = f"npu:{device_id}" if run_mode == "npu" else "cpu"
        x = torch.ones(4, 8, device=device)
        y = make(run_mode)(x)
        if run_mode == "npu":
            assert torch.equal(y.cpu(), x.cpu() * 2.0)

    def test_wrong(device_id, run_mode):
        x = torch.ones(4, 8)
        y = make(run_mode)(x)
        if run_mode == "npu":
            assert torch.equal(y, x * 3.0), "numbers differ"

    def test_missing(device_id, run_mode):
        pypto.no_such_op(1)

    def test_env(device_id, run_mode):
        torch.uint7  # a dtype no torch has: the host environment lacks it

    def main():
        p = argparse.ArgumentParser()
        p.add_argument("example_id", nargs="?")
        p.add_argument("--run_mode", default="npu", choices=["npu", "sim"])
        a = p.parse_args()
        examples = {"a::ok": {"function": test_ok}, "a::wrong": {"function": test_wrong},
                    "a::missing": {"function": test_missing}, "a::env": {"function": test_env}}
        import torch_npu
        torch.npu.set_device(int(os.environ["TILE_FWK_DEVICE_ID"]))
        examples[a.example_id]["function"](0, a.run_mode)

    if __name__ == "__main__":
        main()
'''

TEST = '''\
    import pytest, torch, torch_npu, pypto

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def k(x: pypto.Tensor((4, 8), pypto.DT_FP32), out: pypto.Tensor((4, 8), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + 1.0

    def test_add():
        x = torch.ones(4, 8, device="npu:0")
        out = torch.zeros(4, 8).npu()
        k(x, out)
        torch.npu.synchronize()
        assert torch.equal(out.cpu(), x.cpu() + 1.0)

    @pytest.mark.skip("not here")
    def test_skipped():
        pass
'''


def test_classify_env_names_the_host_torch_only(tool):
    def case(error):
        c = tool.Case("x", "example", ".", [], "fail", error)
        tool.classify_env(c)
        return c.status

    # torch.compile arrived in torch 2.0; a script's own host code calling it is the host's.
    assert case("AttributeError: module 'torch' has no attribute 'compile'") == "env"
    assert case("AttributeError: module 'torch' has no attribute 'uint16'") == "env"
    assert case("AttributeError: module 'torch' has no attribute 'compiled'") == "fail"
    assert case("AttributeError: module 'pypto' has no attribute 'compile'") == "fail"
    # What only a board has: torch_npu's NPU dispatch key, torchair, HCCL.
    assert case("collection: RuntimeError: could not parse dispatch key: NPU") == "env"
    assert case("ModuleNotFoundError: No module named 'torchair'") == "env"
    assert case("RuntimeError: Distributed package doesn't have HCCL built in") == "env"
    assert case("RuntimeError: could not parse dispatch key: CPU") == "fail"


def test_runner_end_to_end(tool, tmp_path, capsys):
    checkout = tmp_path / "checkout"
    _write(str(checkout), "examples/00_demo/demo.py", EXAMPLE)
    _write(str(checkout), "examples/00_demo/_helper.py", "X = 1\n")  # not a script
    _write(str(checkout), "python/tests/st/frontend/test_demo.py", TEST)
    report = tmp_path / "r.json"
    rc = tool.main([str(checkout), "--json", str(report), "-j", "2", "--timeout", "120",
                    "--python", sys.executable])
    assert rc == 0  # no crash, no timeout
    data = json.loads(report.read_text())
    status = {c["id"]: (c["status"], c["error"]) for c in data["cases"]}
    assert status["examples/00_demo/demo.py::a::ok"][0] == "pass"
    assert status["examples/00_demo/demo.py::a::wrong"] == (
        "fail", "AssertionError: numbers differ")
    kind, err = status["examples/00_demo/demo.py::a::missing"]
    assert kind == "fail" and err.startswith("AttributeError: module 'pypto' has no attribute")
    assert status["examples/00_demo/demo.py::a::env"][0] == "env"
    assert status["python/tests/st/frontend/test_demo.py::test_add"][0] == "pass"
    assert status["python/tests/st/frontend/test_demo.py::test_skipped"][0] == "skip"
    s = data["summary"]
    assert (s["cases"], s["counted"], s["pass"], s["fail"], s["env"]) == (6, 5, 2, 2, 1)
    assert "pass rate 2/5 = 40.0 %" in capsys.readouterr().out
    assert not os.path.exists(checkout / "examples" / "00_demo" / "_edited")  # copies only
    assert "torch_npu" in (checkout / "examples/00_demo/demo.py").read_text()  # untouched


SHIM_CHECK = """
import torch
torch.manual_seed(0)
a = torch.randn(64, 256).to(torch.bfloat16)
b = torch.randn(256, 32).to(torch.bfloat16)
# matmuls of half types accumulate in fp32, as the board's torch computes them
assert torch.equal(a @ b, (a.float() @ b.float()).to(torch.bfloat16))
assert torch.equal(torch.matmul(a, b), (a.float() @ b.float()).to(torch.bfloat16))
h = torch.randn(8, 16).to(torch.float16)
assert torch.equal(h @ h.t(), (h.float() @ h.float().t()).to(torch.float16))
# fp16 relu exists and is exact (it only selects)
for r in (torch.relu(h), h.relu(), torch.nn.functional.relu(h)):
    assert r.dtype == torch.float16 and torch.equal(r, torch.where(h > 0, h, torch.zeros_like(h)))
# other dtypes and call forms go to torch unchanged
x = torch.randn(4, 4)
assert torch.equal(torch.relu(x), x.clamp_min(0))
assert hasattr(torch, "uint16") and {torch.float8_e4m3fn: 1}[torch.float8_e4m3fn] == 1
# a bare device index (the board's NPU) is the CPU; named devices are left alone
assert torch.zeros(2, device=0).device.type == "cpu"
assert torch.arange(4, device=0).tolist() == [0, 1, 2, 3]
assert torch.ones(2, device="cpu").device.type == "cpu"
# torch.library's FRAGMENT kind, which the model kernels register their ops with
lib = torch.library.Library("pypto_shim_check", "FRAGMENT")
lib.define("twice(Tensor x) -> Tensor")
torch.library.impl(lib, "twice", "CPU")(lambda x: x * 2)
assert torch.equal(torch.ops.pypto_shim_check.twice(torch.ones(2)), torch.full((2,), 2.0))
# fp16 sigmoid through fp32, rounded once
for r in (torch.sigmoid(h), h.sigmoid()):
    assert r.dtype == torch.float16 and torch.equal(r, torch.sigmoid(h.float()).half())
assert torch.equal(torch.trunc(h * 8), (h * 8).float().trunc().half())
assert h.trunc().dtype == torch.float16
# dtype.itemsize (torch >= 2.1)
assert [d.itemsize for d in (torch.float16, torch.bfloat16, torch.int32, torch.int64,
                             torch.bool)] == [2, 2, 4, 8, 1]
# torch.rand of an integer dtype is U(0, 1) in that dtype, zeros, as on the board
r = torch.rand((3, 4), dtype=torch.int32, device=0)
assert r.dtype == torch.int32 and r.shape == (3, 4) and not r.any()
assert torch.rand(5).dtype == torch.float32
# int32 index tensors, as torch >= 2.0 takes them
table = torch.arange(12).reshape(3, 4)
i32 = torch.tensor([2], dtype=torch.int32)
assert table[1, i32].tolist() == [6]
assert table[torch.tensor([0, 2], dtype=torch.int32)].shape == (2, 4)
table[0, i32] = -1
assert table[0].tolist() == [0, 1, -1, 3]
# topk(sorted=False) in the board's (descending) order
v = torch.randn(4, 64)
for t in (torch.topk(v, 8, dim=-1, sorted=False), v.topk(8, sorted=False)):
    assert torch.equal(t[1], torch.topk(v, 8, dim=-1, sorted=True)[1])
print("ok")
"""


def test_torch_dtype_shim(tool, tmp_path):
    # The shim patches torch process-wide, so it runs in a child, as it does for a case.
    (tmp_path / "sitecustomize.py").write_text(tool._SHIM)
    (tmp_path / "check.py").write_text(SHIM_CHECK)
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run([sys.executable, str(tmp_path / "check.py")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


BACKEND_CHECK = """
import torch
import pypto
from pypto import _backend
for mode in (pypto.RunMode.SIM, pypto.RunMode.NPU):
    b = _backend.get_backend(mode)
    assert isinstance(b, pypto.backends.DeviceBackend), b
    assert (b.device, b.executor) == ("cpu", "aten"), b
print("ok")
"""


def test_backend_shim_registers_the_device_backend_for_both_run_modes(tool, tmp_path):
    (tmp_path / "sitecustomize.py").write_text(tool._BACKEND_SHIM.format(executor="aten"))
    (tmp_path / "check.py").write_text(BACKEND_CHECK)
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run([sys.executable, str(tmp_path / "check.py")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


ST_HELPER_TEST = '''\
    import torch, pypto
    from st.demo_helper import SCALE

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def k(x: pypto.Tensor((4, 8), pypto.DT_FP32), out: pypto.Tensor((4, 8), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x * SCALE

    def test_scaled():
        x = torch.ones(4, 8, device="npu:0")
        out = torch.zeros(4, 8, device="npu:0")
        k(x, out)
        assert torch.equal(out.cpu(), x.cpu() * SCALE)
'''


def test_interface_tests_import_st_helpers(tool, tmp_path):
    # PyPTO's interface tests import shared helpers as `st.<module>` from python/tests/st.
    checkout = tmp_path / "checkout"
    _write(str(checkout), "python/tests/st/demo_helper.py", "SCALE = 3.0\n")
    _write(str(checkout), "python/tests/st/interface/test_demo_iface.py", ST_HELPER_TEST)
    report = tmp_path / "r.json"
    rc = tool.main([str(checkout), "--json", str(report), "--no-examples", "-j", "1",
                    "--timeout", "120", "--python", sys.executable])
    assert rc == 0
    cases = json.loads(report.read_text())["cases"]
    assert [(c["id"], c["status"]) for c in cases] == [
        ("python/tests/st/interface/test_demo_iface.py::test_scaled", "pass")]



TOOLS_DEMO = """
import pathlib, sys
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tools"))
from demo_helper_lib.twice import twice

if __name__ == "__main__":
    assert twice(21) == 42
"""


def test_repo_level_tools_are_copied_or_the_case_is_env(tool, tmp_path):
    # An example that imports a helper library from PyPTO's repo-level tools/ (the ONNX export
    # demos) runs against the checkout's tools/; a checkout without it is an environment case.
    def run(with_tools):
        checkout = tmp_path / ("full" if with_tools else "partial")
        _write(str(checkout), "examples/03_x/demo/demo.py", TOOLS_DEMO)
        if with_tools:
            _write(str(checkout), "tools/demo_helper_lib/__init__.py", "")
            _write(str(checkout), "tools/demo_helper_lib/twice.py", "def twice(x):\n    return 2 * x\n")
        report = tmp_path / "r.json"
        assert tool.main([str(checkout), "--json", str(report), "--no-tests", "-j", "1",
                          "--timeout", "120", "--python", sys.executable]) == 0
        return [(c["status"], c["error"]) for c in json.loads(report.read_text())["cases"]]

    assert run(True) == [("pass", "")]
    assert run(False) == [("fail", "ModuleNotFoundError: No module named 'demo_helper_lib'")]

    c = tool.Case("x", "example", ".", [], "fail",
                  "ModuleNotFoundError: No module named 'exported_custom_op_litenpu'")
    tool.classify_env(c)
    assert c.status == "env"


MODEL_IMPL = '''\
    import pypto

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def add_one(x: pypto.Tensor((4, 8), pypto.DT_FP32), out: pypto.Tensor((4, 8), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + 1.0
'''

MODEL_TEST = '''\
    import torch, torch_npu, pytest
    from add_impl import add_one
    from utils.compare import close

    def test_add():
        x = torch.ones(4, 8).npu()
        out = torch.zeros(4, 8, device="npu:0")
        add_one(x, out)
        assert close(out.cpu(), x.cpu() + 1.0)

    def test_board_golden():
        x = torch.ones(4, 8).npu()
        out = torch.zeros(4, 8).npu()
        add_one(x, out)
        assert close(out.cpu(), torch_npu.npu_fast_gelu(x).cpu())

    @pytest.mark.skip(reason="large test case")
    def test_large():
        pass
'''

MODEL_SCRIPT = '''\
    import torch
    from add_impl import add_one

    def run():
        x = torch.ones(4, 8)
        out = torch.zeros(4, 8)
        add_one(x, out)
        assert torch.equal(out, x + 2.0), "script golden differs"

    if __name__ == "__main__":
        run()
'''


def test_models_group(tool, tmp_path, capsys):
    # A model folder's tests import their sibling modules and utils/ from the folder itself;
    # a golden computed with a torch_npu operator is the environment's, naming the operator.
    checkout = tmp_path / "checkout"
    _write(str(checkout), "models/demo/add_impl.py", MODEL_IMPL)
    _write(str(checkout), "models/demo/utils/compare.py",
           "import torch\n\ndef close(a, b):\n    return torch.allclose(a, b)\n")
    _write(str(checkout), "models/demo/test_add.py", MODEL_TEST)
    _write(str(checkout), "models/demo/add_script.py", MODEL_SCRIPT)
    # a test_*.py file without pytest tests (its main marked skip) is a script
    script = MODEL_SCRIPT.replace("    def run",
                                  "    @pytest.mark.skip('run by hand')\n    def run")
    _write(str(checkout), "models/demo/test_script.py",
           "    import pytest\n" + script.replace("+ 2.0", "+ 1.0"))
    _write(str(checkout), "python/tests/st/frontend/test_demo.py", TEST)
    report = tmp_path / "r.json"
    rc = tool.main([str(checkout), "--json", str(report), "--no-examples", "-j", "2",
                    "--timeout", "120", "--python", sys.executable])
    assert rc == 0
    data = json.loads(report.read_text())
    status = {c["id"]: (c["group"], c["status"], c["error"]) for c in data["cases"]}
    assert status["models/demo/test_add.py::test_add"] == ("models", "pass", "")
    group, kind, err = status["models/demo/test_add.py::test_board_golden"]
    assert (group, kind) == ("models", "env") and "torch_npu.npu_fast_gelu" in err
    assert status["models/demo/test_add.py::test_large"][1] == "skip"
    assert status["models/demo/add_script.py"] == (
        "models", "fail", "AssertionError: script golden differs")
    assert status["models/demo/test_script.py"] == ("models", "pass", "")
    groups = data["summary"]["groups"]
    assert (groups["frontend tests"]["pass"], groups["frontend tests"]["counted"]) == (1, 1)
    assert (groups["models"]["pass"], groups["models"]["counted"],
            groups["models"]["env"]) == (2, 4, 1)
    assert "models: pass 2 of 4" in capsys.readouterr().out
