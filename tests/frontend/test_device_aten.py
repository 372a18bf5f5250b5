# SPDX-License-Identifier: Apache-2.0
"""The ATen executor (DeviceBackend(device, "aten")) against SIM's tile executor, family by
family, for the instructions it composes from several ATen ops: indexed ops (gather,
index_select, scatter with duplicates, scatter_update), stable sorts and top-k, round with
decimals, cbrt, TF32 rounding, casts with saturation and rounding modes, and the element-wise
ops beyond torch's plain arithmetic. Outputs are compared bit for bit (NaN positions and the
sign of zero included); ops that are torch's own approximations (atan2, tan, ...) within one
unit in the last place. Every test also runs on cuda/npu where present (only cpu here)."""

import math

import numpy as np
import pytest
import torch

import pypto
from aten_devices import aten_devices, has_aten
from pypto import _backend

F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
I8, I16, I32, I64 = pypto.DT_INT8, pypto.DT_INT16, pypto.DT_INT32, pypto.DT_INT64
NPU = {"run_mode": pypto.RunMode.NPU}
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I8: torch.int8,
         I16: torch.int16, I32: torch.int32, I64: torch.int64}
FLOATS = [F32, F16, BF16]


pytestmark = pytest.mark.skipif(not has_aten(), reason="pypto._C built without libtorch")


@pytest.fixture(autouse=True)
def _out(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "output"))


def run_both(kernel, inputs, outputs, device="cpu"):
    """Runs kernel(*inputs, *outputs) under DeviceBackend(device, "aten") and under SIM on
    copies of the outputs; returns (aten outputs on cpu, SIM outputs)."""
    dev_out = [o.clone().to(device) for o in outputs]
    with pypto.use_backend(pypto.RunMode.NPU, pypto.backends.DeviceBackend(device, "aten")):
        kernel(*[x.to(device) for x in inputs], *dev_out)
    assert kernel.last_report.backend == f"device:{device}:aten"
    sim_out = [o.clone() for o in outputs]
    with pypto.use_backend(pypto.RunMode.NPU, _backend.SimBackend()):
        kernel(*inputs, *sim_out)
    return [o.cpu() for o in dev_out], sim_out


def assert_same(a, b):
    """Bit-for-bit equality that also holds for NaN (any payload) and checks zero signs."""
    assert a.dtype == b.dtype and a.shape == b.shape
    if not a.is_floating_point():
        assert torch.equal(a, b)
        return
    assert torch.equal(a.isnan(), b.isnan())
    ok = ~a.isnan()
    assert torch.equal(a[ok], b[ok]), (a[ok] != b[ok]).nonzero()[:5]
    assert torch.equal(a[ok].signbit(), b[ok].signbit())


def ulps(a, b):
    """The distance in units in the last place between float tensors of one dtype."""
    bits = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
    def ordered(t):
        i = t.contiguous().view(bits[t.dtype]).long()
        top = 1 << (8 * t.element_size() - 1)
        return torch.where(i < 0, -(i + top), i)
    both_nan = a.isnan() & b.isnan()
    d = (ordered(a) - ordered(b)).abs()
    return torch.where(both_nan, torch.zeros_like(d), d)


def specials(tt, shape, seed=0, scale=10.0):
    """Random values with ties at .5, signed zeros, inf, NaN and tiny values mixed in."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    v = torch.randn(n, generator=g, dtype=torch.float64) * scale
    v[0::7] = torch.randint(-20, 20, (len(v[0::7]),), generator=g).double() + 0.5
    v[1::11] = 0.0
    v[2::11] = -0.0
    v[3::13] = math.inf
    v[4::13] = -math.inf
    v[5::17] = math.nan
    v[6::19] = 1e-42 if tt is torch.float32 else 1e-6
    return v.to(tt).reshape(shape)


# ---- indexed ops ----------------------------------------------------------------------------

@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", [F32, F16, BF16, I32])
@pytest.mark.parametrize("it", [I32, I64])
@pytest.mark.parametrize("dim", [0, 1])
def test_gather_matches_sim_and_torch(device, pt, it, dim):
    xs, ishape = (24, 40), (20, 36)

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor(list(xs), pt), i: pypto.Tensor(list(ishape), it),
          out: pypto.Tensor(list(ishape), pt)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.gather(x, dim, i)

    g = torch.Generator().manual_seed(1)
    x = (torch.randn(xs, generator=g) * 50).to(TORCH[pt])
    i = torch.randint(0, xs[dim], ishape, generator=g).to(TORCH[it])
    (a,), (s,) = run_both(k, [x, i], [torch.zeros(ishape, dtype=TORCH[pt])], device)
    assert_same(a, s)
    assert torch.equal(a, torch.gather(x, dim, i.long()))


def test_index_select_and_gather_3d():
    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([4, 6, 10], F32), i: pypto.Tensor([4, 5, 3], I32),
          ix: pypto.Tensor([7], I64), out: pypto.Tensor([4, 5, 3], F32),
          sel: pypto.Tensor([4, 7, 10], F32)):
        pypto.set_vec_tile_shapes(2, 7, 10)
        out[:] = pypto.gather(x, -1, i)
        sel[:] = pypto.index_select(x, 1, ix)

    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 6, 10, generator=g)
    i = torch.randint(0, 10, (4, 5, 3), generator=g, dtype=torch.int32)
    ix = torch.tensor([5, 0, 0, 3, 5, 1, 2])
    (a, b), (s, t) = run_both(k, [x, i, ix], [torch.zeros(4, 5, 3), torch.zeros(4, 7, 10)])
    assert_same(a, s) and assert_same(b, t)
    assert torch.equal(a, torch.gather(x, 2, i.long()))
    assert torch.equal(b, torch.index_select(x, 1, ix))


@pytest.mark.parametrize("bad", [16, -1])
def test_gather_index_out_of_range_fails_on_both(bad):
    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([8, 16], F32), i: pypto.Tensor([8, 4], I32),
          y: pypto.Tensor([8, 4], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        y[:] = pypto.gather(x, 1, i)

    i = torch.randint(0, 16, (8, 4), dtype=torch.int32)
    i[3, 2] = bad
    for backend in (pypto.backends.DeviceBackend("cpu", "aten"), _backend.SimBackend()):
        with pypto.use_backend(pypto.RunMode.NPU, backend):
            with pytest.raises(Exception, match=rf"gather index {bad} is outside \[0, 16\)"):
                k(torch.randn(8, 16), i, torch.zeros(8, 4))


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", [F32, F16, BF16, I32])
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
@pytest.mark.parametrize("scalar_src", [False, True])
def test_scatter_with_duplicates_matches_sim(device, pt, reduce, scalar_src):
    """Duplicate indices: the last set wins and sums/products round in row-major order (both
    executors define that order; torch leaves it unspecified off the CPU)."""
    tt = TORCH[pt]
    c = 1.5 if tt.is_floating_point else 3

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([16, 24], pt), i: pypto.Tensor([12, 24], I64),
          src: pypto.Tensor([12, 24], pt), out: pypto.Tensor([16, 24], pt)):
        pypto.set_vec_tile_shapes(16, 8)
        out[:] = pypto.scatter(x, 0, i, c if scalar_src else src, reduce=reduce)

    g = torch.Generator().manual_seed(3)
    x = (torch.rand(16, 24, generator=g) * 4 + 0.5).to(tt)
    i = torch.randint(0, 4, (12, 24), generator=g)  # many duplicates per column
    src = (torch.rand(12, 24, generator=g) * 3 + 0.25).to(tt)
    (a,), (s,) = run_both(k, [x, i, src], [torch.zeros(16, 24, dtype=tt)], device)
    assert_same(a, s)
    if reduce is None or not tt.is_floating_point or tt is torch.float32:
        # torch's CPU kernel walks each column in order: the same numbers.
        want = x.clone()
        val = torch.full_like(src, c) if scalar_src else src
        if reduce is None:
            want.scatter_(0, i, val)
        else:
            want.scatter_(0, i, val, reduce=reduce)
        assert torch.equal(a, want)


def test_scatter_update_repeated_rows_last_wins():
    @pypto.frontend.jit(runtime_options=NPU)
    def k(cache: pypto.Tensor([32, 16], F16), idx: pypto.Tensor([2, 4], I32),
          src: pypto.Tensor([8, 16], F16), out: pypto.Tensor([32, 16], F16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.scatter_update(cache, -2, idx, src)

    g = torch.Generator().manual_seed(4)
    cache = torch.randn(32, 16, generator=g).half()
    idx = torch.tensor([[3, 31, 7, 3], [0, 7, 12, 3]], dtype=torch.int32)
    src = torch.randn(8, 16, generator=g).half()
    (a,), (s,) = run_both(k, [cache, idx, src], [torch.zeros(32, 16).half()])
    assert_same(a, s)
    want = cache.clone()
    for j, r in enumerate(idx.flatten().tolist()):
        want[r] = src[j]
    assert torch.equal(a, want)


def test_scatter_update_4d_paged_cache():
    @pypto.frontend.jit(runtime_options=NPU)
    def k(cache: pypto.Tensor([6, 4, 1, 8], F32), idx: pypto.Tensor([2, 3], I64),
          src: pypto.Tensor([2, 3, 1, 8], F32), out: pypto.Tensor([6, 4, 1, 8], F32)):
        pypto.set_vec_tile_shapes(2, 4, 1, 8)
        out[:] = pypto.scatter_update(cache, -2, idx, src)

    g = torch.Generator().manual_seed(5)
    cache, src = torch.randn(6, 4, 1, 8, generator=g), torch.randn(2, 3, 1, 8, generator=g)
    idx = torch.tensor([[23, 0, 5], [9, 17, 4]])
    (a,), (s,) = run_both(k, [cache, idx, src], [torch.zeros(6, 4, 1, 8)])
    assert_same(a, s)
    want = cache.clone().reshape(24, 8)
    want[idx.flatten()] = src.reshape(6, 8)
    assert torch.equal(a, want.reshape(6, 4, 1, 8))


@pytest.mark.parametrize("device", aten_devices())
def test_experimental_load_and_gather_in_ub_match_sim(device):
    @pypto.frontend.jit(runtime_options=NPU)
    def k(kv: pypto.Tensor([64, 16], BF16), idx: pypto.Tensor([1, 12], I32),
          bt: pypto.Tensor([1, 8], I32), off: pypto.Tensor([3, 5], I64),
          rows: pypto.Tensor([12, 16], BF16), elems: pypto.Tensor([3, 5], BF16)):
        pypto.set_vec_tile_shapes(8, 16)
        rows[:] = pypto.experimental.gather_in_ub(kv, idx, bt, 8, -2)
        elems[:] = pypto.experimental.load(kv, off)

    g = torch.Generator().manual_seed(6)
    kv = torch.randn(64, 16, generator=g).bfloat16()
    idx = torch.randint(0, 64, (1, 12), generator=g, dtype=torch.int32)
    bt = torch.randperm(8, generator=g).to(torch.int32).unsqueeze(0)
    off = torch.randint(0, 64 * 16, (3, 5), generator=g)
    (a_rows, a_elems), (s_rows, s_elems) = run_both(
        k, [kv, idx, bt, off],
        [torch.zeros(12, 16, dtype=torch.bfloat16), torch.zeros(3, 5, dtype=torch.bfloat16)],
        device)
    assert_same(a_rows, s_rows)
    assert_same(a_elems, s_elems)
    t = idx[0].long()
    assert torch.equal(s_rows, kv[bt[0].long()[t // 8] * 8 + t % 8])
    assert torch.equal(s_elems, kv.reshape(-1)[off])


# ---- sorts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", [F32, F16, BF16, I32])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 5, 32])
def test_topk_ties_and_nan_match_sim(device, pt, largest, k):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def kern(x: pypto.Tensor([10, 32], pt), v: pypto.Tensor([10, k], pt),
             i: pypto.Tensor([10, k], I32)):
        pypto.set_vec_tile_shapes(4, 32)
        vals, idx = pypto.topk(x, k, -1, largest)
        v[:] = vals
        i[:] = idx

    g = torch.Generator().manual_seed(6)
    x = torch.randint(-4, 4, (10, 32), generator=g).double()  # many ties
    if tt.is_floating_point:
        x[::3, 5] = math.nan
        x[1, 7] = -0.0
    x = x.to(tt)
    (v, i), (sv, si) = run_both(kern, [x], [torch.zeros(10, k, dtype=tt),
                                             torch.zeros(10, k, dtype=torch.int32)], device)
    assert_same(v, sv)
    assert torch.equal(i, si)
    wv, wi = torch.sort(x.float(), dim=-1, descending=largest, stable=True)
    assert torch.equal(i, wi[:, :k].int())


def test_sort_and_argsort_other_axis():
    @pypto.frontend.jit(runtime_options=NPU)
    def kern(x: pypto.Tensor([2, 30, 3, 8], F32), v: pypto.Tensor([2, 30, 3, 8], F32),
             i: pypto.Tensor([2, 30, 3, 8], I32), j: pypto.Tensor([2, 30, 3, 8], I32)):
        pypto.set_vec_tile_shapes(1, 30, 2, 8)
        vals, idx = pypto.sort(x, 1)
        v[:] = vals
        i[:] = idx
        j[:] = pypto.argsort(x, 1)

    x = torch.randint(-5, 5, (2, 30, 3, 8), generator=torch.Generator().manual_seed(7)).float()
    outs = [torch.zeros(2, 30, 3, 8), torch.zeros(2, 30, 3, 8, dtype=torch.int32),
            torch.zeros(2, 30, 3, 8, dtype=torch.int32)]
    got, sim = run_both(kern, [x], outs)
    for a, s in zip(got, sim):
        assert_same(a, s)
    wv, wi = torch.sort(x, dim=1, stable=True)
    assert torch.equal(got[0], wv) and torch.equal(got[1], wi.int())
    assert torch.equal(got[2], torch.sort(x, dim=1, descending=True, stable=True)[1].int())


# ---- element-wise: round(decimals), cbrt, the remaining families ------------------------------

@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", FLOATS)
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_decimals_matches_sim(device, pt, decimals):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([16, 64], pt), y: pypto.Tensor([16, 64], pt)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.round(x, decimals)

    x = specials(tt, (16, 64), seed=8, scale=300.0)
    x[0, :8] = torch.tensor([0.125, 0.375, 2.5, -2.5, 0.05, 1.005, 250.0, -150.0]).to(tt)
    (a,), (s,) = run_both(k, [x], [torch.zeros(16, 64, dtype=tt)], device)
    assert_same(a, s)
    if tt is torch.float32:
        assert_same(a, torch.round(x, decimals=decimals))


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", FLOATS)
def test_cbrt_matches_sim_and_numpy(device, pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([32, 64], pt), y: pypto.Tensor([32, 64], pt)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.cbrt(x)

    x = specials(tt, (32, 64), seed=9, scale=1e4)
    x[0, :4] = torch.tensor([27.0, -8.0, 1e-30, 3.0e38]).to(tt)
    (a,), (s,) = run_both(k, [x], [torch.zeros(32, 64, dtype=tt)], device)
    # pow + one Newton step in double is within a few double ulps of cbrt: the one rounding
    # to the dtype then gives the same value unless the exact root lies that close to a
    # rounding boundary (never in these values).
    assert_same(a, s)
    want = torch.from_numpy(np.cbrt(x.double().numpy())).to(tt)
    assert_same(a, want)


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", FLOATS)
def test_float_binary_and_tests_match_sim(device, pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([16, 32], pt), z: pypto.Tensor([16, 32], pt),
          cs: pypto.Tensor([16, 32], pt), fm: pypto.Tensor([16, 32], pt),
          at: pypto.Tensor([16, 32], pt), hy: pypto.Tensor([16, 32], pt),
          tr: pypto.Tensor([16, 32], pt), tn: pypto.Tensor([16, 32], pt), fin: pypto.Tensor([16, 32], pypto.DT_BOOL),
          nan: pypto.Tensor([16, 32], pypto.DT_BOOL), inf: pypto.Tensor([16, 32], pypto.DT_BOOL),
          sb: pypto.Tensor([16, 32], pypto.DT_BOOL)):
        pypto.set_vec_tile_shapes(8, 32)
        cs[:] = pypto.copysign(x, z)
        fm[:] = pypto.fmod(x, z)
        at[:] = pypto.atan2(x, z)
        hy[:] = pypto.hypot(x, z)
        tr[:] = pypto.atan(x)
        tn[:] = pypto.tan(z)
        fin[:] = pypto.isfinite(x)
        nan[:] = pypto.isnan(x)
        inf[:] = pypto.isinf(x)
        sb[:] = pypto.signbit(x)

    x, z = specials(tt, (16, 32), seed=10), specials(tt, (16, 32), seed=11, scale=3.0)
    outs = [torch.zeros(16, 32, dtype=tt) for _ in range(6)] + \
        [torch.zeros(16, 32, dtype=torch.bool) for _ in range(4)]
    got, sim = run_both(k, [x, z], outs, device)
    for a, s in zip(got[:2] + got[6:], sim[:2] + sim[6:]):  # exact ops and the tests
        assert_same(a, s)
    for a, s in zip(got[2:6], sim[2:6]):  # torch's atan2/hypot/atan/tan vs correctly rounded
        assert int(ulps(a, s).max()) <= 1


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", FLOATS)
def test_inverse_hyperbolic_ops_match_sim(device, pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([16, 32], pt), y: pypto.Tensor([16, 32], pt),
          sh: pypto.Tensor([16, 32], pt), ch: pypto.Tensor([16, 32], pt),
          th: pypto.Tensor([16, 32], pt)):
        pypto.set_vec_tile_shapes(8, 32)
        sh[:] = pypto.asinh(x)
        ch[:] = pypto.acosh(x)
        th[:] = pypto.atanh(y)

    # specials cover NaN, inf, zeros and the domain edges' outsides (NaN results).
    x, y = specials(tt, (16, 32), seed=12), specials(tt, (16, 32), seed=13, scale=0.5)
    got, sim = run_both(k, [x, y], [torch.zeros(16, 32, dtype=tt) for _ in range(3)], device)
    for a, s in zip(got, sim):  # torch's functions vs correctly rounded
        assert torch.equal(a.isnan(), s.isnan())
        assert int(ulps(a, s).max()) <= 1


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("pt", [I8, I16, I32, I64])
def test_integer_ops_match_sim(device, pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([8, 32], pt), z: pypto.Tensor([8, 32], pt),
          o0: pypto.Tensor([8, 32], pt), o1: pypto.Tensor([8, 32], pt),
          o2: pypto.Tensor([8, 32], pt), o3: pypto.Tensor([8, 32], pt),
          o4: pypto.Tensor([8, 32], pt), o5: pypto.Tensor([8, 32], pt),
          o6: pypto.Tensor([8, 32], pt), o7: pypto.Tensor([8, 32], pt),
          o8: pypto.Tensor([8, 32], pt), o9: pypto.Tensor([8, 32], pt)):
        pypto.set_vec_tile_shapes(8, 32)
        o0[:] = pypto.gcd(x, z)
        o1[:] = pypto.floor_div(x, z)
        o2[:] = pypto.ceil_div(x, z)
        o3[:] = pypto.fmod(x, z)
        o4[:] = pypto.bitwise_and(x, z) + pypto.bitwise_or(x, z)
        o5[:] = pypto.bitwise_xor(x, z)
        o6[:] = pypto.bitwise_not(x)
        o7[:] = pypto.bitwise_left_shift(x, pypto.bitwise_and(z, 7))
        o8[:] = pypto.bitwise_right_shift(x, pypto.bitwise_and(z, 7))
        o9[:] = x % z

    g = torch.Generator().manual_seed(12)
    lo, hi = (-100, 100) if tt is torch.int8 else (-30000, 30000)
    x = torch.randint(lo, hi, (8, 32), generator=g).to(tt)
    z = torch.randint(-9, 9, (8, 32), generator=g).to(tt)
    z[z == 0] = 3
    z[0, :4] = -1
    got, sim = run_both(k, [x, z], [torch.zeros(8, 32, dtype=tt) for _ in range(10)], device)
    for a, s in zip(got, sim):
        assert_same(a, s)
    assert torch.equal(got[1], torch.div(x, z, rounding_mode="floor"))
    assert torch.equal(got[0], torch.gcd(x, z))


def test_integer_division_by_zero_fails_on_both():
    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([4, 8], I32), z: pypto.Tensor([4, 8], I32),
          y: pypto.Tensor([4, 8], I32)):
        pypto.set_vec_tile_shapes(4, 8)
        y[:] = pypto.floor_div(x, z)

    z = torch.ones(4, 8, dtype=torch.int32)
    z[2, 3] = 0
    for backend in (pypto.backends.DeviceBackend("cpu", "aten"), _backend.SimBackend()):
        with pypto.use_backend(pypto.RunMode.NPU, backend):
            with pytest.raises(Exception, match="integer division by zero"):
                k(torch.ones(4, 8, dtype=torch.int32), z, torch.zeros(4, 8, dtype=torch.int32))


@pytest.mark.parametrize("pt", [F32, F16, I32])
def test_arange_matches_sim(pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=NPU)
    def k(y: pypto.Tensor([40], pt), w: pypto.Tensor([40], pt)):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.arange(40, dtype=pt)
        w[:] = pypto.arange(3, 3 + 40 * 7, 7, dtype=pt)

    (a, b), (s, t) = run_both(k, [], [torch.zeros(40, dtype=tt), torch.zeros(40, dtype=tt)])
    assert_same(a, s) and assert_same(b, t)
    assert torch.equal(a, torch.arange(40).to(tt)) and torch.equal(b, torch.arange(3, 283, 7).to(tt))


# ---- casts: saturation and rounding modes -------------------------------------------------

MODES = [pypto.CastMode.CAST_NONE, pypto.CastMode.CAST_RINT, pypto.CastMode.CAST_ROUND,
         pypto.CastMode.CAST_FLOOR, pypto.CastMode.CAST_CEIL, pypto.CastMode.CAST_TRUNC]


def cast_kernel(src, dst, mode, sat):
    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([16, 48], src), y: pypto.Tensor([16, 48], dst)):
        pypto.set_vec_tile_shapes(8, 48)
        y[:] = pypto.cast(x, dst, mode, sat)

    return k


def cast_inputs(src, seed):
    tt = TORCH[src]
    if not tt.is_floating_point:
        g = torch.Generator().manual_seed(seed)
        # int64 beyond 2^53 is out of the tile executor's exact range (a double per value).
        lo, hi = max(torch.iinfo(tt).min, -2 ** 53), min(torch.iinfo(tt).max, 2 ** 53)
        x = torch.randint(lo, hi, (16, 48), generator=g, dtype=torch.int64)
        x[0, :6] = torch.tensor([0, 1, -1, 65504, 65520, 16777217]).clamp(lo, hi)
        return x.to(tt)
    x = specials(tt, (16, 48), seed=seed, scale=400.0)
    big = torch.tensor([65504.0, 65520.0, -70000.0, 3.0e38, 1e-8, -6e-8, 2049.0, 0.1]).to(tt)
    x[1, :8] = big
    x[2] = (torch.randn(48, generator=torch.Generator().manual_seed(seed)) * 1e5).to(tt)
    return x


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("src,dst", [(F32, F16), (F32, BF16), (F16, BF16), (BF16, F16),
                                     (F32, F32), (F16, F16), (I32, F16), (I32, BF16),
                                     (I64, F32)])
@pytest.mark.parametrize("mode", MODES + [pypto.CastMode.CAST_ODD])
@pytest.mark.parametrize("sat", [pypto.SaturationMode.OFF, pypto.SaturationMode.ON])
def test_cast_to_float_modes_and_saturation_match_sim(device, src, dst, mode, sat):
    k = cast_kernel(src, dst, mode, sat)
    x = cast_inputs(src, seed=13)
    (a,), (s,) = run_both(k, [x], [torch.zeros(16, 48, dtype=TORCH[dst])], device)
    assert_same(a, s)


@pytest.mark.parametrize("device", aten_devices())
@pytest.mark.parametrize("src,dst", [(F32, I8), (F32, I16), (F32, I32), (F32, I64), (F16, I8),
                                     (BF16, I32), (I32, I8), (I64, I16), (F32, pypto.DT_BOOL)])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sat", [pypto.SaturationMode.OFF, pypto.SaturationMode.ON])
def test_cast_to_int_modes_and_saturation_match_sim(device, src, dst, mode, sat):
    dtt = TORCH.get(dst, torch.bool)
    k = cast_kernel(src, dst, mode, sat)
    x = cast_inputs(src, seed=14)
    (a,), (s,) = run_both(k, [x], [torch.zeros(16, 48, dtype=dtt)], device)
    assert_same(a, s)
    if sat is pypto.SaturationMode.ON and TORCH[src].is_floating_point and dtt is not torch.bool:
        info = torch.iinfo(dtt)
        r = {pypto.CastMode.CAST_NONE: torch.trunc, pypto.CastMode.CAST_TRUNC: torch.trunc,
             pypto.CastMode.CAST_RINT: torch.round, pypto.CastMode.CAST_FLOOR: torch.floor,
             pypto.CastMode.CAST_CEIL: torch.ceil,
             pypto.CastMode.CAST_ROUND: lambda v: torch.trunc(v + torch.copysign(
                 torch.full_like(v, 0.5), v) * (v.frac().abs() >= 0.5))}[mode]
        want = r(x.double()).nan_to_num(0.0, float(info.max), float(info.min))
        want = want.clamp(info.min, min(float(info.max), 9223372036854774784.0)).to(dtt)
        assert torch.equal(a, want)


def test_cast_saturation_against_torch():
    k = cast_kernel(F32, F16, pypto.CastMode.CAST_NONE, pypto.SaturationMode.ON)
    x = torch.tensor([[1e6, -1e6, 65519.0, 65520.0, math.inf, -math.inf, math.nan, 1.0]]
                     ).repeat(16, 6)
    (a,), (s,) = run_both(k, [x], [torch.zeros(16, 48).half()])
    assert_same(a, s)
    assert_same(a, x.clamp(-65504, 65504).half())


# ---- TF32 rounding (matmul trans_mode) ------------------------------------------------------

@pytest.mark.parametrize("mode", [pypto.TransMode.CAST_RINT, pypto.TransMode.CAST_ROUND])
def test_matmul_tf32_trans_mode_matches_sim(mode):
    @pypto.frontend.jit(runtime_options=NPU)
    def k(x: pypto.Tensor([40, 64], F32), y: pypto.Tensor([64, 48], F32),
          out: pypto.Tensor([40, 48], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        out[:] = pypto.matmul(x, y, F32, extend_params={"trans_mode": mode})

    g = torch.Generator().manual_seed(15)
    a, b = torch.rand(40, 64, generator=g) * 2 - 1, torch.zeros(64, 48)
    b[0] = torch.rand(48, generator=g) * 2 - 1
    a[:3, 0] = torch.tensor([math.inf, math.nan, 3.4028234e38])  # a carry reaches inf
    a[3:6, 0] = torch.tensor([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -11)])  # ties
    (o,), (s,) = run_both(k, [a, b], [torch.zeros(40, 48)])
    # One non-zero row of b: every output is one product of TF32 values (exact in fp32) plus
    # zeros, so the accumulation order cannot differ and the TF32 rounding shows bit for bit.
    assert_same(o, s)
    assert not torch.equal(o[6:], a[6:, :1] * b[:1])  # the rounding took effect


# ---- device availability: ATen's own answer, one clear message when a device is missing -----

def test_device_supported_is_whether_aten_allocates_there():
    import pypto._C as native
    assert native.device_supported("cpu")
    assert native.device_supported("cuda") == torch.cuda.is_available()
    has_npu = False
    try:
        import torch_npu  # noqa: F401
        has_npu = torch.npu.is_available()
    except Exception:
        pass
    assert native.device_supported("npu") == has_npu
    for bogus in ("meta", "xyz", "", "cuda:x"):  # meta tensors have no memory to run on
        assert not native.device_supported(bogus)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the cuda device is present")
def test_missing_device_named_in_one_message():
    for dev, hint in (("npu", "import torch_npu first"), ("cuda", "a CUDA build of torch")):
        if dev == "npu" and pypto._C.device_supported("npu"):
            continue
        with pytest.raises(pypto.PyptoNotImplementedError) as e:
            pypto.backends.DeviceBackend(dev).run(None, [], {}, {})
        msg = str(e.value)
        assert f"cannot allocate a tensor on '{dev}'" in msg and hint in msg
        assert "RunMode.SIM" in msg
    with pytest.raises(pypto.PyptoValueError, match="'xpu9' is not a torch device"):
        pypto.backends.DeviceBackend("xpu9")


def test_npu_backend_names_the_missing_npu_device(monkeypatch):
    """CANN and torch_npu present with a visible NPU, but ATen in this process (pypto._C's
    libtorch) has no npu device: the message says so and what to do (no 'not implemented')."""
    import sys
    import types
    if pypto._C.device_supported("npu"):
        pytest.skip("this process has the npu device")
    monkeypatch.setenv("ASCEND_HOME_PATH", "/usr/local/Ascend")
    fake = types.ModuleType("torch_npu")
    fake.npu = types.SimpleNamespace(device_count=lambda: 1)
    monkeypatch.setitem(sys.modules, "torch_npu", fake)
    with pytest.raises(pypto.PyptoNotImplementedError) as e:
        _backend.NpuBackend().run(None, [], {}, {})
    msg = str(e.value)
    assert "ATen in this process has no 'npu' device" in msg
    assert "rebuild pypto._C" in msg and "RunMode.SIM" in msg
    assert "not implemented" not in msg
