# SPDX-License-Identifier: Apache-2.0
"""PyPTO's tiling of reductions and its tile rules: sum/amax/amin/prod cut the reduced axis by
the vector tile and combine the partial results in PyPTO's order (TileReduceNew: pairs of
chunks, a power-of-two tree with the chunks past it folded in level by level, then one
in-tile reduction); the 64 KB page limit on a reduction's tile (warned); the 32-byte rule on the last axis of
a reduction over it; a scan's tiles in UB; and set_cube_tile_shapes' rules (L1/L0 relation,
alignment, L0A/L0B/L0C/L1 space) at each matmul. Numbers against torch."""

import logging
import math

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16, I32 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def rand(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def reduce_kernel(op, pt, shape, tile, dim, out_pt=None):
    oshape = list(shape)
    oshape[dim] = 1

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor(list(shape), pt), out: pypto.Tensor(oshape, out_pt or pt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = op(x, dim, keepdim=True)

    return k, oshape


PAIRS = {"sum": (pypto.sum, torch.add, 0.0), "amax": (pypto.amax, torch.maximum, -math.inf),
         "amin": (pypto.amin, torch.minimum, math.inf), "prod": (pypto.prod, torch.mul, 1.0)}
FINAL = {"sum": lambda c, d: c.double().sum(d, keepdim=True),
         "amax": lambda c, d: c.amax(d, keepdim=True), "amin": lambda c, d: c.amin(d, keepdim=True),
         "prod": lambda c, d: c.double().prod(d, keepdim=True)}


def pypto_order(name, x, dim, t, compute=torch.float32):
    """What PyPTO computes: chunks of t along dim (the tail padded with the op's identity),
    paired in a power-of-two tree with the chunks past it folded in level by level, each pair
    rounded to `compute`; then one in-tile reduction, rounded once."""
    _, pair, ident = PAIRS[name]
    x = x.to(compute)
    n = x.shape[dim]
    w = -(-n // t)
    chunks = []
    for i in range(w):
        c = x.narrow(dim, i * t, min(t, n - i * t))
        if c.shape[dim] < t:
            pad = list(c.shape)
            pad[dim] = t - c.shape[dim]
            c = torch.cat([c, torch.full(pad, ident, dtype=compute)], dim)
        chunks.append(c)
    p2 = 1
    while p2 * 2 <= w:
        p2 *= 2
    cur, nxt, rest, width = chunks[:p2], p2, w - p2, p2
    while width >= 2:
        width //= 2
        cur = [pair(cur[i], cur[i + width]) for i in range(width)]
        if rest >= width:
            cur = [pair(cur[i], chunks[nxt + i]) for i in range(width)]
            nxt, rest = nxt + width, rest - width
    if w == 1:  # one chunk: the in-tile reduction over the valid part only
        cur = [x]
    return FINAL[name](cur[0], dim)


@pytest.mark.parametrize("name", ["sum", "amax", "amin"])
def test_a_long_axis_is_cut_by_the_vec_tile(name):
    # The failing case: a 4x16384 fp32 tile did not fit UB; PyPTO cuts it into 4x4096 tiles.
    op, _, _ = PAIRS[name]
    k, oshape = reduce_kernel(op, F32, (8, 16384), (4, 4096), -1)
    x = rand((8, 16384))
    out = torch.zeros(oshape)
    k(x, out)
    assert torch.equal(out, pypto_order(name, x, -1, 4096).float())
    torch.testing.assert_close(out, getattr(torch, name)(x, -1, keepdim=True), rtol=1e-5,
                               atol=1e-4)


@pytest.mark.parametrize("n,t", [(256, 64), (200, 64), (96, 32), (448, 64), (70, 8), (64, 64),
                                 (17, 8)])
def test_sum_combines_partial_results_in_pyptos_order(n, t):
    # n/t tiles: 4 (a power of two), 4 with a tail, 3, 7 (2 + 1 folded in), 9 with a tail,
    # one, 3 with a tail.
    k, oshape = reduce_kernel(pypto.sum, F32, (1, 16, n), (1, 16, t), 2)
    x = rand((1, 16, n), seed=n)
    out = torch.zeros(oshape)
    k(x, out)
    assert torch.equal(out, pypto_order("sum", x, 2, t).float())
    torch.testing.assert_close(out, x.sum(2, keepdim=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim,tile", [(0, (16, 8, 24)), (1, (2, 16, 8)), (2, (2, 8, 8))])
def test_every_axis_is_cut(dim, tile):
    shape = (40, 50, 36)
    k, oshape = reduce_kernel(pypto.sum, F32, shape, tile, dim)
    x = rand(shape, seed=dim)
    out = torch.zeros(oshape)
    k(x, out)
    assert torch.equal(out, pypto_order("sum", x, dim, tile[dim]).float())


def test_amax_amin_prod_cut_with_nan_and_integers():
    x = rand((6, 100)) * 0.1 + 1.0
    x[2, 77] = float("nan")  # in the tail chunk
    for name in ("amax", "amin", "prod"):
        k, oshape = reduce_kernel(PAIRS[name][0], F32, (6, 100), (2, 16), -1)
        out = torch.zeros(oshape)
        k(x, out)
        ref = pypto_order(name, x, -1, 16).float()
        assert torch.equal(out.isnan(), ref.isnan())
        assert torch.equal(out.nan_to_num(), ref.nan_to_num())
    i = torch.randint(-1000, 1000, (6, 100), dtype=torch.int32)
    k, oshape = reduce_kernel(pypto.sum, I32, (6, 100), (2, 16), -1)
    out = torch.zeros(oshape, dtype=torch.int32)
    k(i, out)
    assert torch.equal(out, i.sum(-1, keepdim=True).int())


@pytest.mark.parametrize("pt,tt,compute", [(BF16, torch.bfloat16, torch.float32),
                                           (F16, torch.float16, torch.float16)])
def test_half_sums_pair_in_the_dtype_the_op_computes_in(pt, tt, compute):
    # bf16 sums compute in fp32 (the op table's AutoCast), fp16 ones in fp16.
    k, oshape = reduce_kernel(pypto.sum, pt, (4, 300), (4, 64), -1)
    x = rand((4, 300), tt)
    out = torch.zeros(oshape, dtype=tt)
    k(x, out)
    ref = pypto_order("sum", x, -1, 64, compute).to(tt)
    assert torch.equal(out, ref)


def test_softmax_and_keepdim_false_over_a_cut_axis():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 5000], F32), y: pypto.Tensor([16, 5000], F32),
          s: pypto.Tensor([16], F32)):
        pypto.set_vec_tile_shapes(8, 1024)
        y[:] = pypto.softmax(x, -1)
        s[:] = pypto.sum(x, -1)

    x = rand((16, 5000))
    y, s = torch.zeros(16, 5000), torch.zeros(16)
    k(x, y, s)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    assert torch.equal(s, pypto_order("sum", x, -1, 1024).float().squeeze(-1))


def test_two_axes_cut():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([30, 40, 24], F32), y: pypto.Tensor([40], F32)):
        pypto.set_vec_tile_shapes(8, 8, 8)
        y[:] = pypto.sum(x, [0, 2])

    x = rand((30, 40, 24))
    y = torch.zeros(40)
    k(x, y)
    torch.testing.assert_close(y, x.sum((0, 2)))


def run_error(fn, *tensors):
    k = pypto.frontend.jit(runtime_options=SIM)(fn)
    with pytest.raises(pypto.PyptoError) as e:
        k(*tensors)
    return str(e.value)


def test_the_64_kb_rule_warns_naming_the_op_the_tile_and_the_limit(caplog):
    # PyPTO's operation pages give 64 KB for a reduction's tile; its own flash-attention model
    # runs an amax over 64 x 320 fp32 (80 KiB): a warning, and the kernel runs.
    @pypto.frontend.jit(runtime_options=SIM)
    def big(x: pypto.Tensor([8, 32768], F32), y: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(4, 8192)
        y[:] = pypto.sum(x, -1)

    @pypto.frontend.jit(runtime_options=SIM)
    def arg(x: pypto.Tensor([8, 32768], F32), y: pypto.Tensor([8], I32)):
        pypto.set_vec_tile_shapes(1, 1024)
        y[:] = pypto.argmax(x, -1)

    x = rand((8, 32768))
    y, i = torch.zeros(8), torch.zeros(8, dtype=torch.int32)
    with caplog.at_level(logging.WARNING, logger="pypto"):
        big(x, y)
        arg(x, i)
    torch.testing.assert_close(y, x.sum(-1), rtol=1e-5, atol=1e-3)
    assert torch.equal(i, torch.argmax(x, -1).to(torch.int32))
    msg = "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "sum: the reduction tile 4x8192 fp32 is 131072 bytes (128 KiB)" in msg
    assert "above the 65536 bytes (64 KiB) PyPTO's operation pages give" in msg
    # argmax/argmin keep the reduced axis whole (PyPTO cuts only the other axes).
    assert "argmax: the reduction tile 1x32768 fp32 is 131072 bytes" in msg
    assert "argmax keeps the reduced axis whole" in msg


def test_a_reduction_over_the_last_axis_needs_a_32_byte_tile_there():
    def odd(x: pypto.Tensor([4, 24], F32), y: pypto.Tensor([4], F32)):
        pypto.set_vec_tile_shapes(4, 12)
        y[:] = pypto.amax(x, -1)

    msg = run_error(odd, torch.zeros(4, 24), torch.zeros(4))
    assert "amax: the vec tile's last size 12 x 4 bytes (fp32) = 48 bytes is not a multiple " \
           "of 32" in msg

    # Over another axis the last size is free.
    @pypto.frontend.jit(runtime_options=SIM)
    def ok(x: pypto.Tensor([4, 24], F32), y: pypto.Tensor([24], F32)):
        pypto.set_vec_tile_shapes(4, 12)
        y[:] = pypto.amax(x, 0)

    x, y = rand((4, 24)), torch.zeros(24)
    ok(x, y)
    assert torch.equal(y, x.amax(0))


def test_a_scan_keeps_its_input_and_output_tiles_in_ub():
    def long_scan(x: pypto.Tensor([4, 16384], F32), y: pypto.Tensor([4, 16384], F32)):
        pypto.set_vec_tile_shapes(4, 1024)
        y[:] = pypto.cumsum(x, 1)

    msg = run_error(long_scan, torch.zeros(4, 16384), torch.zeros(4, 16384))
    assert "cumsum: the input and output tiles of a 4x16384 fp32 scan take 524288 bytes " \
           "together, UB holds 196608 bytes" in msg


def mm_kernel(cube, m=64, k=128, n=96, pt=F16):
    @pypto.frontend.jit(runtime_options=SIM)
    def mm(a: pypto.Tensor([m, k], pt), b: pypto.Tensor([k, n], pt), c: pypto.Tensor([m, n], F32)):
        pypto.set_cube_tile_shapes(*cube)
        c[:] = pypto.matmul(a, b, F32)

    return mm


@pytest.mark.parametrize("cube", [
    ([128, 256], [32, 32], [128, 256]),  # L0C holds mL0 x nL0 (the tiles)
    ([1, 1], [64, 128], [32, 96]),       # mL0 = 1: rounded up to 16 rows in the space rules
    ([16, 32], [32, 64, 128], [32, 96]),
])
def test_cube_tiles_within_pyptos_rules_run(cube):
    a, b = rand((64, 128), torch.float16), rand((128, 96), torch.float16, seed=1)
    c = torch.zeros(64, 96)
    mm_kernel(cube)(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


def test_fp32_cube_tiles_need_32_bytes_not_16_elements():
    # PyPTO's own tiling example (tiling_config.py) runs k=[8, 64] on fp32 operands: 8 fp32
    # elements are 32 bytes. 4 (16 bytes) breaks the 32-byte rule.
    a, b = rand((2, 2, 2)), rand((2, 2, 2), seed=1)

    @pypto.frontend.jit(runtime_options=SIM)
    def bmm(x: pypto.Tensor([2, 2, 2], F32), y: pypto.Tensor([2, 2, 2], F32),
            out: pypto.Tensor([2, 2, 2], F32)):
        pypto.set_cube_tile_shapes([32, 32], [8, 64], [32, 128])
        out[:] = pypto.matmul(x, y, F32)

    c = torch.zeros(2, 2, 2)
    bmm(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-6, atol=1e-6)
    with pytest.raises(pypto.PyptoValueError) as e:
        mm_kernel(([16, 16], [4, 32], [16, 16]), pt=F32)(
            torch.zeros(64, 128), torch.zeros(128, 96), torch.zeros(64, 96))
    assert "kL0 x sizeof(fp32) % 32 == 0 and kL0 % 8 == 0 (32-byte aligned): " \
           "kL0 = 4 fp32 elements = 16 bytes" in str(e.value)


@pytest.mark.parametrize("cube,text", [
    (([16, 24], [32, 32], [16, 16]), "mL0 <= mL1 and mL1 % mL0 == 0: mL0 = 16, mL1 = 24"),
    (([16, 16], [24, 48], [16, 16]), "kL0 x sizeof(fp16) % 32 == 0 and kL0 % 16 == 0"),
    (([256, 256], [16, 16], [256, 256]),
     "CeilAlign(mL0 = 256, 16) x CeilAlign(nL0 = 256, 16) x sizeof(fp32) <= L0C size: "
     "256 x 256 x 4 = 262144 bytes (256 KiB), L0C holds 131072 bytes (128 KiB) "
     "(cores.l0c_kib of chip a2)"),
])
def test_cube_tiles_breaking_pyptos_rules_name_the_rule(cube, text):
    # Operands as large as the tiles: a tile is measured at most at its operand's size.
    a, b = torch.zeros(256, 128, dtype=torch.float16), torch.zeros(128, 256, dtype=torch.float16)
    with pytest.raises(pypto.PyptoValueError) as e:
        mm_kernel(cube, 256, 128, 256)(a, b, torch.zeros(256, 256))
    assert "matmul: the cube tile" in str(e.value) and text in str(e.value)


def test_cube_tile_larger_than_its_operand_is_measured_at_the_operand():
    # PyPTO's flash attention model: m=[128, 512], k=[256, 512] on a 320 x 320 bf16 operand
    # (512 x 512 + 64 x 512 elements would exceed L1; 320 x 320 + 64 x 320 do not).
    a, b = rand((320, 320), torch.bfloat16), rand((320, 64), torch.bfloat16, seed=1)
    c = torch.zeros(320, 64)
    mm_kernel(([128, 512], [256, 512], [64, 64]), 320, 320, 64, pt=pypto.DT_BF16)(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


def test_a_tile_longer_than_an_ops_rank_gives_axis_k_its_kth_size():
    # DeepSeek-V3.2's MLA prolog sets (1, 64, 128, 128) before 3-D and 2-D ops; PyPTO's tilers
    # read vecTile[k] for axis k. x * c + 1 on [8, 128, 64]: [1, 64, 64] tiles, 8 x 2 = 16;
    # its sum over the last axis the same 16; a * 2 on [16, 256]: [1, 64] tiles, 16 x 4 = 64.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 128, 64], F32), c: pypto.Tensor([8, 1, 64], F32),
          a: pypto.Tensor([16, 256], F32), y: pypto.Tensor([8, 128, 64], F32),
          s: pypto.Tensor([8, 128, 1], F32), z: pypto.Tensor([16, 256], F32)):
        pypto.set_vec_tile_shapes(1, 64, 128, 128)
        y[:] = x * c + 1.0
        s[:] = pypto.sum(x, -1, keepdim=True)
        z[:] = a * 2.0

    x, c, a = rand((8, 128, 64)), rand((8, 1, 64), seed=1), rand((16, 256), seed=2)
    y, s, z = torch.zeros(8, 128, 64), torch.zeros(8, 128, 1), torch.zeros(16, 256)
    k(x, c, a, y, s, z)
    torch.testing.assert_close(y, x * c + 1.0)
    torch.testing.assert_close(s, x.sum(-1, keepdim=True), rtol=1e-5, atol=1e-5)
    assert torch.equal(z, a * 2.0)
    assert k.last_report.tasks == 96
