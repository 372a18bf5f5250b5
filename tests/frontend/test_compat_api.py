# SPDX-License-Identifier: Apache-2.0
"""PyPTO compatibility of the API surface: pypto.options scopes, set_/get_*_options, tile
shapes outside a kernel, pypto.error, the jit keywords and runtime_options held by reference,
Tensor([], dtype) and PyPTO's Tensor methods, loop-carried Python ints with and without
readable source."""

import subprocess
import sys
import time

import pytest
import torch

import pypto
from pypto.error import (FeError, ParserError, PassError, PyptoError, PyptoGeneralError,
                         PyptoRtError, RenderedParserError, VerifyError)

F32 = pypto.DT_FP32


# The eager form and the option setters change the global scope.
pytestmark = pytest.mark.usefixtures("options_reset")


SIM = {"run_mode": pypto.RunMode.SIM}


# --- pypto.error --------------------------------------------------------------------------


def test_error_hierarchy_is_pyptos():
    for cls in (FeError, PyptoRtError, PassError, VerifyError):
        assert issubclass(cls, PyptoGeneralError) and issubclass(cls, PyptoError)
    assert issubclass(RenderedParserError, ParserError) and issubclass(ParserError, PyptoError)
    assert pypto.error.PyptoError is pypto.PyptoError


def test_error_codes_follow_the_wrapped_type():
    e = FeError(ValueError("bad shape"))
    assert str(e) == "bad shape" and e.err_code == 0xF00002 and e.err_code_str == "F00002"
    assert isinstance(e.__cause__, ValueError)
    assert FeError(TypeError("t")).err_code == 0xF00001
    assert FeError("plain").err_code == 0xF0FFFF
    assert PyptoError(0xF00003, "x").err_code == 0xF00003
    p = ParserError("node", KeyError("k"))
    assert p.node == "node" and p.err_code == 0xF00006


@pytest.mark.parametrize("cls,builtin,code", [
    (pypto.PyptoTypeError, TypeError, 0xF00001),
    (pypto.PyptoValueError, ValueError, 0xF00002),
    (pypto.PyptoRuntimeError, RuntimeError, 0xF00003),
    (pypto.PyptoNotImplementedError, NotImplementedError, 0xF00005),
    (pypto.PyptoKeyError, KeyError, 0xF00006),
    (pypto.PyptoIndexError, IndexError, 0xF00008),
])
def test_our_errors_are_fe_errors_and_builtins(cls, builtin, code):
    e = cls("msg")
    assert isinstance(e, FeError) and isinstance(e, builtin) and e.err_code == code
    assert str(e) == "msg"


def test_frontend_errors_are_caught_as_fe_error():
    with pytest.raises(FeError, match="jit decorator can only be used on functions"):
        pypto.frontend.jit(42)
    with pytest.raises(FeError, match="out of range"):
        pypto.frontend.jit(runtime_options={"device_sched_mode": 7})(lambda: None)
    assert issubclass(pypto.PyptoRuntimeError, PyptoRtError)


# --- pypto.options and the set_/get_*_options ---------------------------------------------


def test_options_context_manager_scopes_values():
    pypto.set_pass_options(enable_slice=True)
    assert pypto.get_pass_options()["enable_slice"] is True
    with pypto.options("outer", pass_options={"sg_set_tunevf_mode": 1},
                       vec_tile_shapes=[8, 16]):
        assert pypto.get_pass_options()["sg_set_tunevf_mode"] == 1
        assert pypto.get_pass_options()["enable_slice"] is True   # inherited
        assert pypto.get_vec_tile_shapes() == [8, 16]
        pypto.set_vec_tile_shapes(4, 4)                            # overwrites the inner scope
        assert pypto.get_vec_tile_shapes() == [4, 4]
    assert "sg_set_tunevf_mode" not in pypto.get_pass_options()
    assert pypto.get_vec_tile_shapes() == []


def test_options_validates_like_the_jit_dicts():
    with pytest.raises(pypto.PyptoValueError, match="unknown key 'device_sched_mod'"):
        pypto.options(runtime_options={"device_sched_mod": 1})
    with pytest.raises(pypto.PyptoValueError, match="vec_tile_shapes"):
        pypto.options(vec_tile_shapes=[0, 8])
    with pytest.raises(pypto.PyptoValueError, match="entries must be positive ints"):
        pypto.options(cube_tile_shapes=[[16, -16], [32, 64], [32, 64]])
    with pytest.raises(pypto.PyptoValueError, match="out of range"):
        pypto.set_runtime_options(device_sched_parallelism=9)


def test_options_decorator_on_a_plain_function():
    @pypto.options(debug_options={"runtime_debug_mode": 1})
    def f():
        return pypto.get_debug_options()["runtime_debug_mode"]

    assert f() == 1 and pypto.get_debug_options()["runtime_debug_mode"] == 0
    assert f.__name__ == "f"


def add_rows(x: pypto.Tensor([16, 16], F32), out: pypto.Tensor([16, 16], F32)):
    out[:] = x + 1.0


def test_set_verify_golden_data():
    g = torch.ones(4)
    pypto.set_verify_golden_data(goldens=[None, g])
    assert pypto.get_verify_golden_data()["goldens"][1] is g
    with pytest.raises(pypto.PyptoTypeError, match=r"goldens\[0\] must be a torch.Tensor"):
        pypto.set_verify_golden_data(goldens=[3])
    with pytest.raises(pypto.PyptoTypeError, match="must be a list"):
        pypto.set_verify_golden_data(in_out_tensors=g)


# --- jit keywords and runtime_options ------------------------------------------------------


def test_jit_accepts_every_pypto_keyword():
    k = pypto.frontend.jit(add_rows, host_options={}, codegen_options={}, pass_options={},
                           runtime_options=SIM, verify_options={}, debug_options={},
                           new_ir=False, create_new_logical_tensor=True)
    assert k.new_ir is False and k.create_new_logical_tensor is True
    assert pypto.jit(new_ir=True)(add_rows).new_ir is True
    with pytest.raises(pypto.PyptoTypeError, match="new_ir must be a bool"):
        pypto.frontend.jit(new_ir="yes")(add_rows)


def test_in_place_list_change_counts_as_a_change():
    rt = {"run_mode": 1, "ready_on_host_tensors": []}
    k = pypto.frontend.jit(runtime_options=rt)(add_rows)
    rt["ready_on_host_tensors"].append("nope")
    with pytest.raises(pypto.PyptoValueError, match="'nope' is not a tensor parameter"):
        k.warmup(torch.zeros(16, 16), torch.zeros(16, 16))


def test_cached_call_overhead_stays_small(recorder):
    rt = {"run_mode": pypto.RunMode.SIM}

    @pypto.frontend.jit(runtime_options=rt)
    def k(x: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = x + 1.0

    x, out = torch.randn(8), torch.zeros(8)
    k(x, out)
    times = []
    for _ in range(15):
        t = time.perf_counter()
        k(x, out)
        times.append(time.perf_counter() - t)
    times.sort()
    assert times[len(times) // 2] < 2e-3, times   # median of a cached call (frontend side)
    t = time.perf_counter()
    for _ in range(200):
        k._refresh_options()
    assert (time.perf_counter() - t) / 200 < 2e-5   # the unchanged-dict check itself


# --- Tensor ---------------------------------------------------------------------------------


def test_move_needs_a_tensor_and_missing_ops_name_the_line():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out.move(1.0)

    with pytest.raises(pypto.PyptoTypeError, match="'float' type cannot be moved to Tensor"):
        k(torch.zeros(4, 8), torch.zeros(4, 8))
    for name in ("sort32", "topk", "cumsum", "gather", "tril_"):
        assert callable(getattr(pypto.Tensor, name))


# --- Python ints rebound in a pypto.loop body ------------------------------------------------

CARRIED = '''
import torch, pypto
F32 = pypto.DT_FP32
def k(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([4, 8], F32)):
    pypto.set_vec_tile_shapes(1, 8)
    off = 0
    for i in pypto.loop(4):
        off += 2
        out[i:i + 1, :] = a[off:off + 1, :]
    print("AFTER", off)
def bad(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([4, 8], F32)):
    pypto.set_vec_tile_shapes(1, 8)
    off = 1
    for i in pypto.loop(4):
        off *= 2
        out[i:i + 1, :] = a[off:off + 1, :]
a = torch.arange(128, dtype=torch.float32).reshape(16, 8)
out = torch.zeros(4, 8)
pypto.frontend.jit(runtime_options={"run_mode": 1})(k)(a, out)
print("ROWS", out[:, 0].tolist())
try:
    pypto.frontend.jit(runtime_options={"run_mode": 1})(bad)(a, out)
except pypto.error.FeError as e:
    print("REJECTED", e)
'''


def test_loop_carried_int_behaves_the_same_without_source(tmp_path):
    script = tmp_path / "carried.py"
    script.write_text(CARRIED)
    from_file = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    from_c = subprocess.run([sys.executable, "-c", CARRIED], capture_output=True, text=True)
    for r, where in ((from_file, "carried.py"), (from_c, "<string>")):
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert "AFTER 8" in lines and "ROWS [16.0, 32.0, 48.0, 64.0]" in lines, r.stdout
        assert (f"REJECTED pypto.loop at {where}:14: variable 'off' (assigned at {where}:15) "
                "is read in the loop body and then reassigned there") in r.stdout, r.stdout
        assert "its update `off = (off*2)` is not of the form off + d" in r.stdout
    assert from_file.stdout.replace("carried.py", "<string>") == from_c.stdout




def test_bytes_of():
    assert [pypto.bytes_of(d) for d in (pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16,
                                        pypto.DT_INT8, pypto.DT_INT64)] == [4, 2, 2, 1, 8]
    with pytest.raises(pypto.PyptoTypeError, match="expects a pypto.DataType"):
        pypto.bytes_of("fp32")
