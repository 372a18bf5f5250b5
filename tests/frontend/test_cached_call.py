# SPDX-License-Identifier: Apache-2.0
"""A call of a compiled kernel (PyPTO's test_kernel_reuse: a new size of a dynamic axis) does
only the work that call needs: the options are resolved again only when a scope changed what
is in force, not because the previous call's trace opened and closed the body's own scope;
the environment is checked again only when it changed; and the native side converts the
options dict again only when it differs from the kernel's last one."""

import copy
import importlib
import os

import pytest
import torch

import pypto
from pypto import _backend, _jit

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


@pytest.fixture
def resolves(monkeypatch):
    """Counts the jit calls' option resolutions (the full merge and validation of every group)."""
    count = [0]
    real = _jit.resolve_options

    def counting(*a, **k):
        count[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(_jit, "resolve_options", counting)
    return count


@pytest.fixture
def native(monkeypatch):
    """pypto._C for this test (the module's other tests run without it)."""
    module = importlib.import_module("pypto._C")
    monkeypatch.setattr(_backend, "_native", lambda: module)
    yield module
    module.wait_sims()


def _dynamic_kernel():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], F32),
          out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        for idx in pypto.loop(a.shape[0], name="LOOP", idx_name="k"):
            out[idx:idx + 1, :] = a[idx:idx + 1, :] + 1
    return k


def test_a_call_after_a_compile_does_not_resolve_the_options_again(recorder, resolves):
    k = _dynamic_kernel()
    declared = resolves[0]
    k(torch.ones(1, 8), torch.zeros(1, 8))  # traces: the body's scope opens and closes
    k(torch.ones(2, 8), torch.zeros(2, 8))
    k(torch.ones(3, 8), torch.zeros(3, 8))
    assert resolves[0] == declared
    assert k.compile_count == 1 and len(recorder.calls) == 3


def test_a_scope_that_changes_the_options_resolves_them_again(recorder, resolves):
    k = _dynamic_kernel()
    k(torch.ones(1, 8), torch.zeros(1, 8))
    before = resolves[0]
    with pypto.options(pass_options={"vec_nbuffer_mode": 0}):
        k(torch.ones(2, 8), torch.zeros(2, 8))
    assert resolves[0] == before + 1
    assert recorder.calls[-1]["options"]["pass_options"]["vec_nbuffer_mode"] == 0
    k(torch.ones(2, 8), torch.zeros(2, 8))  # the scope is gone: resolved again, without it
    assert resolves[0] == before + 2
    assert "vec_nbuffer_mode" not in recorder.calls[-1]["options"]["pass_options"]


def test_the_same_options_scope_around_every_call_resolves_once(recorder, resolves):
    k = pypto.options(pass_options={"vec_nbuffer_mode": 0})(_dynamic_kernel())
    k(torch.ones(1, 8), torch.zeros(1, 8))
    first = resolves[0]
    k(torch.ones(2, 8), torch.zeros(2, 8))
    k(torch.ones(3, 8), torch.zeros(3, 8))
    assert resolves[0] == first


def test_set_options_in_a_reopened_scope_is_seen(recorder, resolves):
    k = _dynamic_kernel()
    scope = pypto.options(name="s")
    seen = []
    for mode in (0, 1):
        with scope:
            pypto.set_pass_options(vec_nbuffer_mode=mode)
            k(torch.ones(2, 8), torch.zeros(2, 8))
            seen.append(recorder.calls[-1]["options"]["pass_options"]["vec_nbuffer_mode"])
    assert seen == [0, 1]


def test_an_unchanged_environment_is_not_checked_again(monkeypatch):
    _backend.check_environment()

    def no_walk():
        raise AssertionError("the unchanged environment was decoded and checked again")

    monkeypatch.setattr(os.environ, "items", no_walk)
    _backend.check_environment()
    monkeypatch.undo()
    monkeypatch.setenv("PYPTO_SIM_L22", "cold")  # a changed environment is checked
    with pytest.raises(pypto.PyptoValueError, match="PYPTO_SIM_L22.*did you mean PYPTO_SIM_L2"):
        _backend.check_environment()
    monkeypatch.setenv("PYPTO_SIM_L2", "colt")
    monkeypatch.delenv("PYPTO_SIM_L22")
    with pytest.raises(pypto.PyptoValueError, match="PYPTO_SIM_L2='colt'"):
        _backend.check_environment()


def test_a_cached_sim_call_does_not_convert_its_options_again(native):
    k = _dynamic_kernel()
    k(torch.ones(1, 8), torch.zeros(1, 8))
    converted = native.option_conversions()
    for n in (2, 3, 2):
        a = torch.arange(n * 8, dtype=torch.float32).reshape(n, 8)
        out = torch.zeros(n, 8)
        k(a, out)
        assert torch.equal(out, a + 1)
    assert native.option_conversions() == converted
    assert k.compile_count == 1


def test_other_options_for_the_same_kernel_are_converted(native):
    k = _dynamic_kernel()
    k(torch.ones(1, 8), torch.zeros(1, 8))
    entry = k.cache.entries()[0]
    options = copy.deepcopy(entry.options)
    converted = native.option_conversions()

    def run(opts):
        a, out = torch.ones(2, 8), torch.zeros(2, 8)
        raw = native.run_sim(entry.compiled, [a, out], {"a.shape[0]": 2, "out.shape[0]": 2}, opts)
        assert torch.equal(out, a + 1)
        return raw["stats"]["policy"]

    default = run(options)
    assert native.option_conversions() == converted  # equal to the first call's dict
    options["runtime_options"]["device_sched_mode"] = 1
    other = run(options)
    assert native.option_conversions() == converted + 1
    assert other != default
    options["runtime_options"]["device_sched_mode"] = 0  # the memo held the changed dict
    assert run(options) == default
    assert native.option_conversions() == converted + 2


def test_a_launch_past_the_memory_available_is_still_refused(native):
    # Small launches skip reading the memory available; a large projection still reads it.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([1, 8], F32), out: pypto.Tensor([1, 8], F32), n: int):
        pypto.set_vec_tile_shapes(16, 16)
        for _ in pypto.loop(n, name="LOOP", idx_name="k"):
            out[0:1, :] = a[0:1, :] + 1

    with pytest.raises(pypto.PyptoValueError, match=r"1e\+09 tasks .* MiB of memory available"):
        k(torch.ones(1, 8), torch.zeros(1, 8), 10**9)
