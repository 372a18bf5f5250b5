# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of the element-wise ops added for PyPTO compatibility, round 2: inverse
trigonometric (tan, asin, acos, atan, atan2) and hyperbolic (asinh, acosh, atanh), copysign,
hypot, fmod, the tests (isfinite, isnan, isinf, signbit), the integer ops (gcd, floor_div,
ceil_div, bitwise and/or/xor/not, shifts), against torch in each dtype PyPTO takes for them.
fp16/bf16 references are computed in fp32 and rounded once (torch 1.13's CPU lacks several
half kernels, e.g. hypot)."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
I8, I16, I32, I64, BOOL = (pypto.DT_INT8, pypto.DT_INT16, pypto.DT_INT32, pypto.DT_INT64,
                           pypto.DT_BOOL)
FLOATS = [(F32, torch.float32), (F16, torch.float16), (BF16, torch.bfloat16)]
INTS = [(I8, torch.int8), (I16, torch.int16), (I32, torch.int32)]
SHAPE, TILE = (24, 40), (8, 16)
TOL = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(dtype, lo=-3.0, hi=3.0, seed=0, shape=SHAPE):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


def randint(dtype, lo, hi, seed=0, shape=SHAPE):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def run(fn, pt, out_pt, inputs, out_tt):
    """``out = fn(*inputs)`` in one SIM kernel over SHAPE, tiled by TILE."""
    n = len(inputs)

    def body(*ts):
        pypto.set_vec_tile_shapes(*TILE)
        ts[n][:] = fn(*ts[:n])

    ann = [pypto.Tensor(list(SHAPE), pt) for _ in range(n)] + [pypto.Tensor(list(SHAPE), out_pt)]
    params = ", ".join(f"a{i}" for i in range(n + 1))
    ns = {"body": body}
    exec(f"def k({params}):\n    body({params})", ns)  # a kernel of n inputs and one output
    k = ns["k"]
    k.__annotations__ = {f"a{i}": a for i, a in enumerate(ann)}
    out = torch.zeros(SHAPE, dtype=out_tt)
    pypto.frontend.jit(runtime_options=SIM)(k)(*inputs, out)
    return out


def ref(top, tt, *xs):
    """torch's op in fp32 for half types, rounded once to tt."""
    if tt in (torch.float16, torch.bfloat16):
        return top(*(x.float() for x in xs)).to(tt)
    return top(*xs)


UNARY = {
    "tan": (pypto.tan, torch.tan, (-1.4, 1.4)),
    "asin": (pypto.asin, torch.asin, (-0.99, 0.99)),
    "acos": (pypto.acos, torch.acos, (-0.99, 0.99)),
    "atan": (pypto.atan, torch.atan, (-6.0, 6.0)),
    "asinh": (pypto.asinh, torch.asinh, (-6.0, 6.0)),
    "acosh": (pypto.acosh, torch.acosh, (1.0, 8.0)),
    "atanh": (pypto.atanh, torch.atanh, (-0.99, 0.99)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("pt,tt", FLOATS)
def test_inverse_trigonometric(name, pt, tt):
    pop, top, (lo, hi) = UNARY[name]
    a = rand(tt, lo, hi, seed=1)
    out = run(pop, pt, pt, [a], tt)
    torch.testing.assert_close(out.float(), ref(top, tt, a).float(), rtol=TOL[tt], atol=TOL[tt])


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_atan2_hypot_copysign(pt, tt):
    a, b = rand(tt, seed=2), rand(tt, seed=3)
    b[0, :4] = torch.tensor([0.0, -0.0, 0.0, -0.0]).to(tt)
    a[0, :4] = torch.tensor([0.0, 0.0, -1.0, 2.0]).to(tt)
    out = run(pypto.atan2, pt, pt, [a, b], tt)
    torch.testing.assert_close(out.float(), ref(torch.atan2, tt, a, b).float(), rtol=TOL[tt],
                               atol=TOL[tt])
    out = run(pypto.hypot, pt, pt, [a, b], tt)
    torch.testing.assert_close(out.float(), ref(torch.hypot, tt, a, b).float(), rtol=TOL[tt],
                               atol=TOL[tt])
    out = run(pypto.copysign, pt, pt, [a, b], tt)
    assert torch.equal(out, ref(torch.copysign, tt, a, b))  # exact, -0.0 counts as negative
    out = run(lambda x: pypto.copysign(x, -1.0), pt, pt, [a], tt)
    assert torch.equal(out, -a.abs())


@pytest.mark.parametrize("pt,tt", FLOATS + [(I32, torch.int32), (I16, torch.int16)])
def test_fmod_and_remainder(pt, tt):
    if tt.is_floating_point:
        a, b = rand(tt, -20, 20, seed=4), rand(tt, 0.5, 4, seed=5)
        b[::2] = -b[::2]
        scalar = 2.5
    else:
        a, b = randint(tt, -50, 50, seed=4), randint(tt, 1, 9, seed=5)
        b[::2] = -b[::2]
        scalar = 3
    assert torch.equal(run(pypto.fmod, pt, pt, [a, b], tt), ref(torch.fmod, tt, a, b))
    assert torch.equal(run(lambda x: pypto.fmod(x, scalar), pt, pt, [a], tt),
                       ref(lambda x: torch.fmod(x, scalar), tt, a))
    # PyPTO's remainder takes a number first (and a precision_type it may ignore).
    got = run(lambda y: pypto.remainder(scalar, y, pypto.PrecisionType.HIGH_PRECISION),
              pt, pt, [b], tt)
    want = torch.remainder(torch.full_like(b.float() if not tt.is_floating_point else b,
                                           scalar), b if tt.is_floating_point else b.float())
    assert torch.equal(got, want.to(tt))


@pytest.mark.parametrize("pt,tt", FLOATS)
def test_isfinite_isnan_isinf_signbit_floats(pt, tt):
    a = rand(tt, seed=6)
    a[0, :6] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0,
                             -float("nan")]).to(tt)
    for pop, top in ((pypto.isfinite, torch.isfinite), (pypto.isnan, torch.isnan),
                     (pypto.isinf, torch.isinf), (pypto.signbit, torch.signbit)):
        out = run(pop, pt, BOOL, [a], torch.bool)
        assert torch.equal(out, top(a)), pop.__name__


def test_tests_on_integers_and_dtype_rules():
    a = randint(torch.int32, -5, 5, seed=7)
    assert run(pypto.isfinite, I32, BOOL, [a], torch.bool).all()
    assert not run(pypto.isnan, I32, BOOL, [a], torch.bool).any()
    assert torch.equal(run(pypto.signbit, I32, BOOL, [a], torch.bool), torch.signbit(a))
    with pytest.raises(pypto.PyptoError, match="pypto.gcd: needs an integer tensor"):
        run(lambda x: pypto.gcd(x, x), F32, F32, [rand(torch.float32)], torch.float32)
    with pytest.raises(pypto.PyptoError, match="pypto.tan: needs a floating-point tensor"):
        run(pypto.tan, I32, I32, [a], torch.int32)


def _ceil_div(a, b):
    return -torch.div(-a.long(), b.long(), rounding_mode="floor")


@pytest.mark.parametrize("pt,tt", INTS)
def test_gcd_floor_div_ceil_div(pt, tt):
    a, b = randint(tt, -100, 100, seed=8), randint(tt, 1, 12, seed=9)
    b[1::2] = -b[1::2]
    a[0, :3] = 0
    assert torch.equal(run(pypto.gcd, pt, pt, [a, b], tt), torch.gcd(a, b))
    assert torch.equal(run(lambda x: pypto.gcd(x, 6), pt, pt, [a], tt),
                       torch.gcd(a, torch.tensor(6, dtype=tt)))
    assert torch.equal(run(pypto.floor_div, pt, pt, [a, b], tt),
                       torch.div(a, b, rounding_mode="floor"))
    assert torch.equal(run(pypto.ceil_div, pt, pt, [a, b], tt), _ceil_div(a, b).to(tt))
    # A number first: 60 // b.
    assert torch.equal(run(lambda y: pypto.floor_div(60, y), pt, pt, [b], tt),
                       torch.div(torch.full_like(b, 60), b, rounding_mode="floor"))


@pytest.mark.parametrize("pt,tt", INTS + [(I64, torch.int64)])
def test_bitwise(pt, tt):
    a, b = randint(tt, -128, 127, seed=10), randint(tt, -128, 127, seed=11)
    for pop, top in ((pypto.bitwise_and, torch.bitwise_and), (pypto.bitwise_or, torch.bitwise_or),
                     (pypto.bitwise_xor, torch.bitwise_xor)):
        assert torch.equal(run(pop, pt, pt, [a, b], tt), top(a, b)), pop.__name__
    assert torch.equal(run(pypto.bitwise_not, pt, pt, [a], tt), torch.bitwise_not(a))
    assert torch.equal(run(lambda x: pypto.bitwise_and(x, 0x3C), pt, pt, [a], tt), a & 0x3C)


@pytest.mark.parametrize("pt,tt", INTS)
def test_shifts(pt, tt):
    bits = torch.iinfo(tt).bits
    a, n = randint(tt, -100, 100, seed=12), randint(tt, 0, bits, seed=13)
    # In-range counts: the left shift wraps to the dtype, the right shift is arithmetic.
    assert torch.equal(run(pypto.bitwise_left_shift, pt, pt, [a, n], tt), a << n)
    assert torch.equal(run(pypto.bitwise_right_shift, pt, pt, [a, n], tt), a >> n)
    assert torch.equal(run(lambda x: pypto.bitwise_left_shift(3, x), pt, pt, [n], tt),
                       torch.full_like(n, 3) << n)
