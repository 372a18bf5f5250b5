# SPDX-License-Identifier: Apache-2.0
"""SIM numbers of the rest of PyPTO's public ops that pypto-sim composes from its own:
expand_exp_dif, fillpad, gathermask, quantize (DT_INT8 and DT_UINT8) / dequantize, indexput_ and atomic_add, against
torch in each dtype PyPTO takes for them (and a -inf scalar, which the IR spells as a
string)."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
I8, I16, I32, I64 = pypto.DT_INT8, pypto.DT_INT16, pypto.DT_INT32, pypto.DT_INT64
TORCH = {F32: torch.float32, F16: torch.float16, BF16: torch.bfloat16, I8: torch.int8,
         I16: torch.int16, I32: torch.int32, I64: torch.int64}
TOL = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def values(pt, shape, seed=0, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    tt = TORCH[pt]
    if tt.is_floating_point:
        return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(tt)
    return torch.randint(-50, 50, shape, generator=g).to(tt)


@pytest.mark.parametrize("pt", [F32, F16, BF16])
def test_expand_exp_dif(pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 40], pt), r: pypto.Tensor([8, 1], pt), c: pypto.Tensor([1, 40], pt),
          a: pypto.Tensor([8, 40], pt), b: pypto.Tensor([8, 40], pt)):
        pypto.set_vec_tile_shapes(4, 16)
        a[:] = pypto.expand_exp_dif(x, r)
        b[:] = pypto.expand_exp_dif(x, c)

    x, r, c = values(pt, (8, 40), 1), values(pt, (8, 1), 2), values(pt, (1, 40), 3)
    a, b = torch.zeros_like(x), torch.zeros_like(x)
    k(x, r, c, a, b)
    for got, o in ((a, r), (b, c)):
        # PyPTO computes a bf16 ExpandExpDif in fp32 (AutoCast: the op has no bf16 form on
        # A2/A3), so the difference stays fp32; an fp16 one rounds the difference first.
        d = x.float() - o.float() if pt == BF16 else (x - o).float()
        want = torch.exp(d).to(tt)
        torch.testing.assert_close(got.float(), want.float(), rtol=TOL[tt], atol=TOL[tt])


@pytest.mark.parametrize("pt", [F32, F16, BF16])
def test_fillpad_beyond_the_valid_shape(pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], pt), a: pypto.Tensor([8, 32], pt),
          b: pypto.Tensor([8, 32], pt)):
        pypto.set_vec_tile_shapes(8, 16)
        t = pypto.view(x, [8, 32], [0, 0], valid_shape=[5, 20])
        a[:] = pypto.fillpad(t, "constant", "-inf")
        b[:] = pypto.fillpad(t, value=2.5)

    x = values(pt, (8, 32), 4)
    a, b = torch.zeros_like(x), torch.zeros_like(x)
    k(x, a, b)
    for got, v in ((a, -float("inf")), (b, 2.5)):
        want = torch.full_like(x, v)
        want[:5, :20] = x[:5, :20]
        assert torch.equal(got, want)


@pytest.mark.parametrize("pt", [F32, F16, BF16, I16, I32])
@pytest.mark.parametrize("mode", [1, 2, 3, 4, 5, 6, 7])
def test_gathermask(pt, mode):
    step, first = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3),
                   7: (1, 0)}[mode]
    n = 48 // step

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 6, 48], pt), y: pypto.Tensor([2, 6, n], pt)):
        pypto.set_vec_tile_shapes(1, 4, 48)
        y[:] = pypto.gathermask(x, mode)

    x = values(pt, (2, 6, 48), 5)
    y = torch.zeros(2, 6, n, dtype=TORCH[pt])
    k(x, y)
    assert torch.equal(y, x[..., first::step])


@pytest.mark.parametrize("axis", [-1, -2])
def test_quantize_dequantize(axis):
    sshape = [4, 8] if axis == -1 else [4, 32]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8, 32], F32), s: pypto.Tensor(sshape, F32),
          zp: pypto.Tensor(sshape, F32), q: pypto.Tensor([4, 8, 32], I8),
          d: pypto.Tensor([4, 8, 32], F32), d16: pypto.Tensor([4, 8, 32], F32),
          q16: pypto.Tensor([4, 8, 32], I16)):
        pypto.set_vec_tile_shapes(2, 8, 16)
        qq = pypto.quantize(x, s, pypto.DT_INT8, axis)
        q[:] = qq
        d[:] = pypto.dequantize(qq, s, pypto.DT_FP32, axis, zp)
        d16[:] = pypto.dequantize(q16, s, pypto.DT_FP32, axis)

    x = values(F32, (4, 8, 32), 6)
    s, zp = values(F32, sshape, 7, 10, 80), values(F32, sshape, 8, -3, 3)
    q16 = values(I16, (4, 8, 32), 9)
    q = torch.zeros(4, 8, 32, dtype=torch.int8)
    d, d16 = torch.zeros(4, 8, 32), torch.zeros(4, 8, 32)
    k(x, s, zp, q, d, d16, q16)
    su, zu = s.unsqueeze(axis), zp.unsqueeze(axis)
    want_q = torch.round(x * su).clamp(-128, 127).to(torch.int8)  # saturated, half to even
    assert torch.equal(q, want_q)
    assert torch.equal(d, (want_q.float() + zu) * su)
    assert torch.equal(d16, q16.float() * su)


@pytest.mark.parametrize("axis", [-1, -2])
def test_quantize_to_uint8_as_pyptos_golden(axis):
    sshape = [4, 8] if axis == -1 else [4, 32]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8, 32], F32), s: pypto.Tensor(sshape, F32),
          zp: pypto.Tensor(sshape, F32), q: pypto.Tensor([4, 8, 32], pypto.DT_UINT8),
          q0: pypto.Tensor([4, 8, 32], pypto.DT_UINT8), qi: pypto.Tensor([4, 8, 32], I8)):
        pypto.set_vec_tile_shapes(2, 8, 16)
        q[:] = pypto.quantize(x, s, pypto.DT_UINT8, axis, zp)
        q0[:] = pypto.quantize(x, s, pypto.DT_UINT8, axis)
        qi[:] = pypto.quantize(x, s, pypto.DT_INT8, axis, zp)

    x = values(F32, (4, 8, 32), 10, -10, 10)
    # Halves (round to even), and values past both ends of the range.
    x[0, 0, :6] = torch.tensor([0.5, 1.5, 2.5, -0.5, 1e6, -1e6])
    s, zp = values(F32, sshape, 11, 0.5, 20), values(F32, sshape, 12, 0, 10).round()
    s[0] = 1.0
    zp[0] = 0.0
    q, q0 = torch.zeros(4, 8, 32, dtype=torch.uint8), torch.zeros(4, 8, 32, dtype=torch.uint8)
    qi = torch.zeros(4, 8, 32, dtype=torch.int8)
    k(x, s, zp, q, q0, qi)
    su, zu = s.unsqueeze(axis), zp.unsqueeze(axis)
    # PyPTO's golden (python/tests/st/operation/vector/test_quantize_onboard.py): round half to
    # even in fp32, then clamp to the output type's range.
    r = torch.round(x * su + zu)
    assert torch.equal(q, r.clamp(0, 255).to(torch.uint8))
    assert torch.equal(q0, torch.round(x * su).clamp(0, 255).to(torch.uint8))
    assert torch.equal(qi, r.clamp(-128, 127).to(torch.int8))
    assert q[0, 0, :6].tolist() == [0, 2, 2, 0, 255, 0]


def test_quantize_pyptos_example():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 4], F32), s: pypto.Tensor([3], F32), zp: pypto.Tensor([3], F32),
          y1: pypto.Tensor([3, 4], I8), y2: pypto.Tensor([3, 4], pypto.DT_UINT8)):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.quantize(x, s, pypto.DT_INT8, -1, None)
        y2[:] = pypto.quantize(x, s, pypto.DT_UINT8, -1, zp)

    x = torch.tensor([[1.1, -2.2, 3.3, -4.4]]).repeat(3, 1)
    y1, y2 = torch.zeros(3, 4, dtype=torch.int8), torch.zeros(3, 4, dtype=torch.uint8)
    k(x, torch.ones(3), torch.full((3,), 5.0), y1, y2)
    assert y1.tolist() == [[1, -2, 3, -4]] * 3
    # The page's y2 ([6, 3, 8, 1]) is x + 5 rounded: x * scale + zero_points with zp = 5.
    assert y2.tolist() == [[6, 3, 8, 1]] * 3


def test_quantize_refuses_other_types_and_a_bad_zero_points():
    @pypto.frontend.jit(runtime_options=SIM)
    def k16(x: pypto.Tensor([4, 8], F32), s: pypto.Tensor([4], F32), q: pypto.Tensor([4, 8], I16)):
        pypto.set_vec_tile_shapes(4, 8)
        q[:] = pypto.quantize(x, s, pypto.DT_INT16, -1)

    with pytest.raises(pypto.PyptoTypeError, match="otype must be DT_INT8 .* or DT_UINT8"):
        k16(torch.zeros(4, 8), torch.ones(4), torch.zeros(4, 8, dtype=torch.int16))

    @pypto.frontend.jit(runtime_options=SIM)
    def kzp(x: pypto.Tensor([4, 8], F32), s: pypto.Tensor([4], F32), zp: pypto.Tensor([8], F32),
            q: pypto.Tensor([4, 8], pypto.DT_UINT8)):
        pypto.set_vec_tile_shapes(4, 8)
        q[:] = pypto.quantize(x, s, pypto.DT_UINT8, -1, zp)

    with pytest.raises(pypto.PyptoValueError, match=r"zero_points must be DT_FP32 of scale's"):
        kzp(torch.zeros(4, 8), torch.ones(4), torch.ones(8), torch.zeros(4, 8, dtype=torch.uint8))


@pytest.mark.parametrize("pt", [F32, F16, BF16, I8, I16, I32, I64])
def test_indexput(pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([5, 6, 16], pt), i0: pypto.Tensor([7], I32),
          i1: pypto.Tensor([7], I64), v: pypto.Tensor([7, 16], pt),
          u0: pypto.Tensor([3], I32), v1: pypto.Tensor([3, 6, 16], pt)):
        pypto.set_vec_tile_shapes(7, 6, 16)
        pypto.indexput_(x, (i0, i1), v, True)  # duplicates (2, 1) add up
        pypto.indexput_(x, (u0,), v1)

    x = values(pt, (5, 6, 16), 10)
    i0 = torch.tensor([0, 4, 2, 2, 1, 3, 0], dtype=torch.int32)
    i1 = torch.tensor([5, 0, 1, 1, 3, 2, 4], dtype=torch.int64)
    u0 = torch.tensor([4, 1, 3], dtype=torch.int32)
    v, v1 = values(pt, (7, 16), 11), values(pt, (3, 6, 16), 12)
    want = x.clone()
    if tt in (torch.float16, torch.bfloat16):  # torch 1.13: no CPU half index_put accumulate
        w = want.float()
        w.index_put_((i0.long(), i1), v.float(), accumulate=True)
        # per-update rounding: each of the two (2, 1) updates rounds to the dtype
        want = want.index_put_((i0.long()[:3], i1[:3]), v[:3], accumulate=True)
        want[2, 1] = (want[2, 1].float() + v[3].float()).to(tt)
        want = want.index_put_((i0.long()[4:], i1[4:]), v[4:], accumulate=True)
    else:
        want.index_put_((i0.long(), i1), v, accumulate=True)
    want.index_put_((u0.long(),), v1)
    k(x, i0, i1, v, u0, v1)
    assert torch.equal(x, want)


def test_index_put_is_indexput_under_pyptos_current_name():
    # PyPTO's reference example: rows 1 and 2 of a [3, 3] tensor, accumulated, then written.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 3], I32), y: pypto.Tensor([3, 3], I32), i: pypto.Tensor([2], I32),
          v: pypto.Tensor([2, 3], I32)):
        pypto.set_vec_tile_shapes(2, 3)
        pypto.index_put_(x, (i,), v, True)
        pypto.index_put_(y, (i,), v)

    x = torch.tensor([[1, 1, 1], [1, 1, 1], [0, 0, 0]], dtype=torch.int32)
    y = x.clone()
    k(x, y, torch.tensor([1, 2], dtype=torch.int32),
      torch.tensor([[0, 1, 0], [0, 2, 0]], dtype=torch.int32))
    assert x.tolist() == [[1, 1, 1], [1, 2, 1], [0, 2, 0]]
    assert y.tolist() == [[1, 1, 1], [0, 1, 0], [0, 2, 0]]


@pytest.mark.parametrize("pt", [F32, F16, BF16, I32])
def test_atomic_add_overlapping_regions(pt):
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], pt), acc: pypto.Tensor([8, 32], pt)):
        pypto.set_vec_tile_shapes(4, 16)
        for i in pypto.loop(4):
            t = pypto.view(x, [4, 8], [i, i * 4])
            pypto.atomic_add(t, [2, 3 + i], acc)

    x, acc = values(pt, (8, 32), 13), values(pt, (8, 32), 14)
    want = acc.clone()
    for i in range(4):
        if tt.is_floating_point:
            want[2:6, 3 + i:11 + i] = (want[2:6, 3 + i:11 + i].float()
                                       + x[i:i + 4, 4 * i:4 * i + 8].float()).to(tt)
        else:
            want[2:6, 3 + i:11 + i] += x[i:i + 4, 4 * i:4 * i + 8]
    k(x, acc)
    assert torch.equal(acc, want)


def test_cast_satmode_on_clamps_to_the_target_range():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), a: pypto.Tensor([4, 8], I8),
          b: pypto.Tensor([4, 8], F16)):
        pypto.set_vec_tile_shapes(4, 8)
        a[:] = pypto.cast(x, pypto.DT_INT8, pypto.CastMode.CAST_RINT, pypto.SaturationMode.ON)
        b[:] = pypto.cast(x * 1000.0, pypto.DT_FP16, satmode=pypto.SaturationMode.ON)

    x = values(F32, (4, 8), 15, -400, 400)
    a, b = torch.zeros(4, 8, dtype=torch.int8), torch.zeros(4, 8, dtype=torch.float16)
    k(x, a, b)
    assert torch.equal(a, torch.round(x).clamp(-128, 127).to(torch.int8))
    assert torch.equal(b, (x * 1000.0).clamp(-65504, 65504).half())


def test_interleave_and_deinterleave_the_doc_examples(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")  # PyPTO offers them on the 950 only

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([2, 4], F32), b: pypto.Tensor([2, 4], F32),
          s: pypto.Tensor([2, 8], F32), o0: pypto.Tensor([2, 4], F32),
          o1: pypto.Tensor([2, 4], F32), d0: pypto.Tensor([2, 4], F32),
          d1: pypto.Tensor([2, 4], F32), e0: pypto.Tensor([2, 4], F32),
          e1: pypto.Tensor([2, 4], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        o0[:], o1[:] = pypto.interleave(a, b)
        d0[:], d1[:] = pypto.deinterleave(o0, o1)
        e0[:], e1[:] = pypto.deinterleave(s)

    a = torch.tensor([[0.0, 1, 2, 3], [4, 5, 6, 7]])
    s = torch.tensor([[0.0, 10, 1, 11, 2, 12, 3, 13], [4, 14, 5, 15, 6, 16, 7, 17]])
    outs = [torch.zeros(2, 4) for _ in range(6)]
    k(a, a + 10, s, *outs)
    assert outs[0].tolist() == [[0, 10, 1, 11], [4, 14, 5, 15]]
    assert outs[1].tolist() == [[2, 12, 3, 13], [6, 16, 7, 17]]
    for o, want in zip(outs[2:], [a, a + 10, a, a + 10]):
        assert torch.equal(o, want)


@pytest.mark.parametrize("pt", [BF16, I16])
def test_interleave_3d_round_trips(pt, monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")
    tt = TORCH[pt]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([2, 3, 16], pt), b: pypto.Tensor([2, 3, 16], pt),
          o0: pypto.Tensor([2, 3, 16], pt), o1: pypto.Tensor([2, 3, 16], pt),
          e: pypto.Tensor([2, 3, 16], pt), f: pypto.Tensor([2, 3, 16], pt)):
        pypto.set_vec_tile_shapes(1, 3, 16)
        o0[:], o1[:] = pypto.interleave(a, b)
        e[:], f[:] = pypto.deinterleave(o0, o1)

    a, b = values(pt, (2, 3, 16), seed=20), values(pt, (2, 3, 16), seed=21)
    outs = [torch.zeros(2, 3, 16, dtype=tt) for _ in range(4)]
    k(a, b, *outs)
    stream = torch.stack([a, b], -1).reshape(2, 3, 32)
    assert torch.equal(outs[0], stream[..., :16]) and torch.equal(outs[1], stream[..., 16:])
    assert torch.equal(outs[2], a) and torch.equal(outs[3], b)


def test_interleave_rules(monkeypatch):
    def kern(n):
        @pypto.frontend.jit(runtime_options=SIM)
        def k(a: pypto.Tensor([2, n], F32), o: pypto.Tensor([2, n], F32)):
            pypto.set_vec_tile_shapes(2, 16)
            o[:], _ = pypto.interleave(a, a)
        return k

    with pytest.raises(pypto.PyptoValueError, match=r"interleave: is an Ascend 950 operation "
                       r"\(interleaving\), but the simulated chip is 'a2'"):
        kern(4)(torch.zeros(2, 4), torch.zeros(2, 4))
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")
    with pytest.raises(pypto.PyptoValueError, match=r"interleave: input's last size must be "
                       r"even, got \[2, 5\]"):
        kern(5)(torch.zeros(2, 5), torch.zeros(2, 5))
