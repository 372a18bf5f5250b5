# SPDX-License-Identifier: Apache-2.0
"""``pypto.verify`` (PyPTO's runtime.py): func builds a graph over IN_i / OUT_i, SIM runs it on
the torch tensors, and each output is compared with its golden (one verdict line per output on
the ``pypto`` logger). Outputs are checked against torch; verdicts against goldens made wrong
on purpose."""

import logging

import pytest
import torch

import pypto
from pypto import _verify

F32 = pypto.DT_FP32


# The eager form and the option setters change the global scope.
pytestmark = pytest.mark.usefixtures("options_reset")


def _add(inputs, outputs):
    # PyPTO's own test form: func opens its block over the tensors and assigns the output.
    a, b = inputs
    c = outputs[0]
    with pypto.function("add", a, b, c):
        for _ in pypto.loop(1):
            pypto.set_vec_tile_shapes(16, 16)
            c[:] = a + b


def _matmul(inputs, outputs):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    outputs[0].move(pypto.matmul(inputs[0], inputs[1], F32))


def _verdicts(caplog):
    return [r for r in caplog.records if r.name == "pypto" and "pypto.verify(" in r.getMessage()]


def test_verify_add_fills_the_output_and_logs_pass(caplog):
    a, b, c = torch.rand(64, 64), torch.rand(64, 64), torch.zeros(64, 64)
    with caplog.at_level(logging.INFO, logger="pypto"):
        assert pypto.verify(_add, [a, b], [c], [a + b]) is None
    torch.testing.assert_close(c, a + b, rtol=1e-6, atol=1e-6)
    (rec,) = _verdicts(caplog)
    assert rec.levelno == logging.INFO
    assert rec.getMessage().startswith("pypto.verify(_add): OUT_0 PASS (max abs error ")
    assert ("0 of 4096 elements beyond rtol 0.001 / atol 0.001 (at most 4 allowed)"
            in rec.getMessage())


def test_verify_matmul_with_extra_args_and_pypto_runtime_name(caplog):
    x, y, z = torch.randn(64, 96), torch.randn(96, 32), torch.zeros(64, 32)
    seen = []

    def mm(inputs, outputs, tag, *, scale):
        seen.append((tag, scale, [t.name for t in inputs], [t.name for t in outputs]))
        _matmul(inputs, outputs)

    assert pypto.runtime.verify is pypto.verify
    with caplog.at_level(logging.INFO, logger="pypto"):
        pypto.runtime.verify(mm, [x, y], [z], [x @ y], "t", scale=2)
    assert seen == [("t", 2, ["IN_0", "IN_1"], ["OUT_0"])]
    torch.testing.assert_close(z, x @ y, rtol=1e-4, atol=1e-4)
    (rec,) = _verdicts(caplog)
    assert " OUT_0 PASS " in rec.getMessage()


def test_wrong_golden_logs_failed_with_the_error_figures(caplog):
    a, b, c = torch.rand(64, 64), torch.rand(64, 64), torch.zeros(64, 64)
    golden = a + b
    golden[3, 5] += 1.0
    with caplog.at_level(logging.INFO, logger="pypto"):
        assert pypto.verify(_add, [a, b], [c], [golden]) is None
    torch.testing.assert_close(c, a + b, rtol=1e-6, atol=1e-6)  # the run is not affected
    (rec,) = _verdicts(caplog)
    msg = rec.getMessage()
    assert rec.levelno == logging.ERROR
    assert "OUT_0 FAILED (max abs error 1, " in msg
    assert "1 of 4096 elements beyond rtol 0.001 / atol 0.001 (at most 4 allowed)" in msg
    assert "1 beyond 128x or not finite; worst at [3, 5]: output " in msg


def test_none_golden_is_not_compared_and_each_output_gets_a_line(caplog):
    a, b = torch.rand(32, 32), torch.rand(32, 32)
    s, d = torch.zeros(32, 32), torch.zeros(32, 32)

    def two(inputs, outputs):
        pypto.set_vec_tile_shapes(32, 32)
        outputs[0].move(pypto.add(inputs[0], inputs[1]))
        outputs[1].move(pypto.sub(inputs[0], inputs[1]))

    with caplog.at_level(logging.INFO, logger="pypto"):
        pypto.verify(two, [a, b], [s, d], [None, a - b])
    torch.testing.assert_close(s, a + b, rtol=1e-6, atol=1e-6)
    msgs = [r.getMessage() for r in _verdicts(caplog)]
    assert msgs[0] == "pypto.verify(two): OUT_0 not compared (its golden is None)"
    assert " OUT_1 PASS " in msgs[1] and len(msgs) == 2


@pytest.mark.parametrize("tol,verdict", [([0.0, 0.5], "PASS"), ([0.5, 0.0], "FAILED")])
def test_error_tol_is_rtol_then_atol(caplog, tol, verdict):
    # Output 0.2, golden 0.45: within atol 0.5, but beyond rtol 0.5 of (0.2 + 0.45) / 2.
    a, b, c = torch.full((32, 32), 0.1), torch.full((32, 32), 0.1), torch.zeros(32, 32)
    with caplog.at_level(logging.INFO, logger="pypto"):
        pypto.verify(_add, [a, b], [c], [torch.full((32, 32), 0.45)],
                     verify_options={"enable_pass_verify": True, "pass_verify_error_tol": tol})
    (rec,) = _verdicts(caplog)
    assert f" OUT_0 {verdict} " in rec.getMessage()


def test_disabled_verification_runs_without_comparing(caplog):
    a, b, c = torch.rand(32, 32), torch.rand(32, 32), torch.zeros(32, 32)
    with caplog.at_level(logging.INFO, logger="pypto"):
        pypto.verify(_add, [a, b], [c], [torch.zeros(32, 32)],
                     verify_options={"enable_pass_verify": False})
    torch.testing.assert_close(c, a + b, rtol=1e-6, atol=1e-6)
    (rec,) = _verdicts(caplog)
    assert "enable_pass_verify is False: the outputs are computed, not compared" in rec.getMessage()


def test_options_hold_in_the_call_and_are_restored_after_it():
    pypto.set_pass_options(pg_upper_bound=5000)
    before = pypto.get_options()
    seen = {}

    def add(inputs, outputs):
        seen["pass"] = pypto.get_pass_options()
        seen["verify"] = pypto.get_verify_options()
        _add(inputs, outputs)

    a, b, c = torch.rand(16, 16), torch.rand(16, 16), torch.zeros(16, 16)
    pypto.verify(add, [a, b], [c], [a + b], pass_options={"pg_upper_bound": 7000},
                 codegen_options={"support_dynamic_aligned": True})
    assert seen["pass"]["pg_upper_bound"] == 7000
    assert seen["verify"]["enable_pass_verify"] is True  # PyPTO's default for verify
    assert pypto.get_options() == before  # func's tile shapes are gone with the scope too

    def broken(inputs, outputs):
        pypto.set_vec_tile_shapes(8, 8)
        raise RuntimeError("in func")

    with pytest.raises(RuntimeError, match="in func"):
        pypto.verify(broken, [a, b], [c], [a + b], verify_options={"pass_verify_error_tol": [1, 1]})
    assert pypto.get_options() == before


@pytest.mark.parametrize("kw,setter", [
    ({"verify_options": {"pass_verify_error_toll": [1e-3, 1e-3]}}, pypto.set_verify_options),
    ({"verify_options": {"pass_verify_error_tol": [1e-3]}}, pypto.set_verify_options),
    ({"pass_options": {"pg_upper_bound": 0}}, pypto.set_pass_options),
    ({"codegen_options": {"support_dynamic_aligned": 1}}, pypto.set_codegen_options),
    ({"host_options": {"compile_stage": "x"}}, pypto.set_host_options),
])
def test_option_errors_are_the_setters_own(kw, setter):
    ((group, bad),) = kw.items()
    with pytest.raises(pypto.PyptoError) as by_setter:
        with pypto.options():
            setter(**bad)
    a, b, c = torch.rand(16, 16), torch.rand(16, 16), torch.zeros(16, 16)
    with pytest.raises(type(by_setter.value)) as by_verify:
        pypto.verify(_add, [a, b], [c], [a + b], **kw)
    assert str(by_verify.value) == str(by_setter.value)
    assert not torch.any(c)  # nothing ran


def test_option_group_must_be_a_dict():
    a, b, c = torch.rand(16, 16), torch.rand(16, 16), torch.zeros(16, 16)
    with pytest.raises(pypto.PyptoTypeError, match=r"pass_options must be a dict, got list"):
        pypto.verify(_add, [a, b], [c], [a + b], pass_options=[1])


@pytest.mark.parametrize("args,err,match", [
    (("f", [], [], []), pypto.PyptoTypeError, r"pypto.verify: func must be callable, got str"),
    ((_add, torch.zeros(4), [torch.zeros(4)], [None]), pypto.PyptoTypeError,
     r"pypto.verify: inputs must be a list of torch tensors, got Tensor"),
    ((_add, [torch.zeros(4), 1.0], [torch.zeros(4)], [None]), pypto.PyptoTypeError,
     r"pypto.verify: inputs\[1\] must be a torch.Tensor, got float"),
    ((_add, [torch.zeros(4)], [None], [None]), pypto.PyptoTypeError,
     r"pypto.verify: outputs\[0\] must be a torch.Tensor, got NoneType"),
    ((_add, [torch.zeros(4)], [torch.zeros(4)], [1]), pypto.PyptoTypeError,
     r"pypto.verify: goldens\[0\] must be a torch.Tensor or None \(not compared\), got int"),
    ((_add, [torch.zeros(4)], [torch.zeros(4)], []), pypto.PyptoValueError,
     r"pypto.verify: goldens has 0 entries for 1 outputs; give one golden per output"),
    ((_add, [torch.zeros(4)], [torch.zeros(4)], [torch.zeros(5)]), pypto.PyptoValueError,
     r"goldens\[0\] is a torch.float32 tensor of shape \[5\]; outputs\[0\] \(OUT_0\) is "
     r"torch.float32 \[4\]: a golden must have its output's shape and dtype"),
    ((_add, [torch.zeros(4)], [torch.zeros(4)], [torch.zeros(4, dtype=torch.float16)]),
     pypto.PyptoValueError, r"goldens\[0\] is a torch.float16 tensor of shape \[4\]"),
])
def test_bad_arguments_get_one_clear_error(args, err, match):
    with pytest.raises(err, match=match):
        pypto.verify(*args)


def test_non_contiguous_input_is_refused_by_from_torch():
    x = torch.zeros(8, 16).t()
    with pytest.raises(pypto.PyptoValueError,
                       match=r"pypto.from_torch: the tensor is not contiguous"):
        pypto.verify(_add, [x, x], [torch.zeros(16, 8)], [None])


def test_compare_rule_counts_and_bounds():
    # Exactly 4 of 4096 elements off (PyPTO's allowance at 1e-3) passes, 5 fail; a NaN fails.
    gold = torch.ones(64, 64)
    out = gold.clone()
    out.view(-1)[:4] += 0.01
    r = _verify._compare(out, gold, 1e-3, 1e-3)
    assert (r["off"], r["allowed"], r["failed"], r["passed"]) == (4, 4, 0, True)
    out.view(-1)[4] += 0.01
    assert _verify._compare(out, gold, 1e-3, 1e-3)["passed"] is False
    out = gold.clone()
    out[1, 2] = float("nan")
    r = _verify._compare(out, gold, 1e-3, 1e-3)
    assert (r["passed"], r["failed"], r["worst"]) == (False, 1, [1, 2])
    # Zero in both is not counted; with min(rtol, atol) * m == 0 the allowance is sqrt-based.
    z = torch.zeros(100)
    r = _verify._compare(z, z, 1e-3, 1e-3)
    assert (r["passed"], r["allowed"], r["off"]) == (True, 0, 0)
    r = _verify._compare(torch.ones(100), torch.ones(100) * 2, 1e-3, 1e-3)
    assert (r["allowed"], r["off"], r["passed"]) == (5, 100, False)
