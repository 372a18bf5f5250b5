# SPDX-License-Identifier: Apache-2.0
"""PyPTO names that were missing: the per-op precision enums (DivAlgorithm, ExpAlgorithm, ...)
and LogBaseType taken by their ops, pypto.Element as a scalar operand, CachePolicy,
ReduceMode, OpType, OutType, the pass-config switches, pass_verify_print/save and
SymbolicScalar.as_variable; numbers against torch."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32 = pypto.DT_FP32


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def unary(fn):
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([8, 16], F32), y: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        y[:] = fn(x)

    return kern


X = torch.rand(8, 16, generator=torch.Generator().manual_seed(3)) + 0.5


CASES = [
    ("exp", lambda x: pypto.exp(x, pypto.ExpAlgorithm.HIGH_PRECISION), torch.exp),
    ("sqrt", lambda x: pypto.sqrt(x, pypto.SqrtAlgorithm.INTRINSIC), torch.sqrt),
    ("rsqrt", lambda x: pypto.rsqrt(x, pypto.RsqrtAlgorithm.HIGH_PRECISION), torch.rsqrt),
    ("reciprocal", lambda x: pypto.reciprocal(x, pypto.RecipAlgorithm.INTRINSIC),
     torch.reciprocal),
    ("log", lambda x: pypto.log(x, pypto.LogAlgorithm.HIGH_PRECISION), torch.log),
    ("log_e", lambda x: pypto.log(x, pypto.LogBaseType.LOG_E), torch.log),
    ("log_2", lambda x: pypto.log(x, pypto.LogBaseType.LOG_2), torch.log2),
    ("log_10", lambda x: pypto.log(x, pypto.LogBaseType.LOG_10), torch.log10),
    ("div", lambda x: pypto.div(x, x + 1.0, pypto.DivAlgorithm.HIGH_PRECISION),
     lambda x: x / (x + 1.0)),
    ("pow", lambda x: pypto.pow(x, 1.5, pypto.PowAlgorithm.INTRINSIC), lambda x: x ** 1.5),
    ("remainder", lambda x: pypto.remainder(x, 0.3, pypto.RemAlgorithm.INTRINSIC),
     lambda x: torch.remainder(x, 0.3)),
    ("element", lambda x: pypto.add(x, pypto.Element(F32, 2)), lambda x: x + 2),
]


@pytest.mark.parametrize("name,fn,ref", CASES, ids=[c[0] for c in CASES])
def test_precision_enums_and_elements_compute_as_torch(name, fn, ref):
    y = torch.zeros(8, 16)
    unary(fn)(X, y)
    assert torch.allclose(y, ref(X), rtol=1e-5, atol=1e-6), name


def test_an_algorithm_enum_of_another_op_is_refused():
    with pytest.raises(pypto.PyptoTypeError, match="PrecisionType or pypto.ExpAlgorithm"):
        unary(lambda x: pypto.exp(x, pypto.SqrtAlgorithm.INTRINSIC))(X, torch.zeros(8, 16))


def test_element_holds_its_dtype_and_value():
    e = pypto.element(pypto.DT_INT32, 3.0)
    assert e.dtype is pypto.DT_INT32 and e.value == 3 and isinstance(e.value, int)
    assert pypto.Element(F32, 3).value == 3.0
    with pytest.raises(AttributeError):
        e.value = 4
    with pytest.raises(pypto.PyptoTypeError):
        pypto.Element(pypto.DT_INT32, 2.5)


def test_enums_print_as_pypto_does():
    assert str(pypto.CachePolicy.NONE_CACHEABLE) == "CachePolicy.NONE_CACHEABLE"
    assert repr(pypto.ReduceMode.ATOMIC_ADD) == "ReduceMode.ATOMIC_ADD"
    assert [m.name for m in pypto.OpType] == ["EQ", "NE", "LT", "LE", "GT", "GE"]
    assert [m.name for m in pypto.OutType] == ["BOOL", "BIT"]
    assert [m.name for m in pypto.DivAlgorithm] == ["INTRINSIC", "HIGH_PRECISION"]


def test_pass_configs_are_kept_and_returned():
    key = pypto.PassConfigKey.KEY_DUMP_GRAPH
    assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, False) is False
    pypto.set_pass_default_config(key, True)
    assert pypto.get_pass_default_config(key, False) is True
    assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, False) is True
    pypto.set_pass_config("PVC2_OOO", "ExpandFunction", key, False)
    assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, True) is False
    cfg = pypto.get_pass_configs("PVC2_OOO", "ExpandFunction")
    assert cfg.dumpGraph is False and cfg.disablePass is False
    pypto.set_pass_default_config(key, False)
    with pytest.raises(pypto.PyptoTypeError):
        pypto.set_pass_config("PVC2_OOO", "ExpandFunction", "KEY_DUMP_GRAPH", True)


def test_pass_verify_calls_cache_policy_and_as_variable_change_nothing():
    @pypto.frontend.jit(runtime_options=SIM, verify_options={"enable_pass_verify": True})
    def kern(x: pypto.Tensor([8, 16], F32), y: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        x.set_cache_policy(pypto.CachePolicy.PREFETCH, True)
        for i in pypto.loop(2):
            t = pypto.mul(x, 2.0)
            pypto.pass_verify_print(t, "t at", i, cond=(i == 1))
            pypto.pass_verify_save(t, "t_loop_$idx", cond=(i == 1), idx=i)
            (i + 1).as_variable()
            y[:] = t

    y = torch.zeros(8, 16)
    kern(X, y)
    assert torch.equal(y, X * 2)


def test_platform_npuarch_is_the_simulated_chips_and_may_be_set(monkeypatch):
    monkeypatch.delenv("PYPTO_SIM_CHIP", raising=False)
    assert pypto.platform.npuarch == "DAV_2201"
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")
    assert pypto.platform.npuarch == "DAV_3510"
    monkeypatch.setenv("PYPTO_SIM_CHIP", "a3")
    assert pypto.platform.npuarch == "DAV_2201"

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([8, 16], F32), y: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        if pypto.platform.npuarch == "DAV_3510":
            y[:] = pypto.mul(x, 3.0)
        else:
            y[:] = pypto.mul(x, 2.0)

    old = pypto.platform.npuarch
    pypto.platform.npuarch = "DAV_3510"
    try:
        assert pypto.platform.npuarch == "DAV_3510"
        y = torch.zeros(8, 16)
        kern(X, y)
        assert torch.equal(y, X * 3)
    finally:
        pypto.platform.npuarch = None
    assert pypto.platform.npuarch == old
