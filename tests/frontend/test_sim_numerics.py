# SPDX-License-Identifier: Apache-2.0
"""SIM end to end: kernels compiled by pypto._C, timed by the SystemC model, and executed
tile op by tile op in simulated order. Every result is compared with torch."""

import json
import os

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16
FLOATS = [(F32, torch.float32, 1e-5), (F16, torch.float16, 2e-3), (BF16, torch.bfloat16, 1.6e-2)]


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    # The native module is part of the build: its absence is a failure, never a skip.
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def close(got, want, tol):
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


def rand(shape, dtype, lo=-2.0, hi=2.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


# ---- element-wise ops, divisible and non-divisible shapes, each float dtype -----------------
BINARY = {
    "add": (pypto.add, torch.add), "sub": (pypto.sub, torch.sub), "mul": (pypto.mul, torch.mul),
    "div": (pypto.div, torch.div), "maximum": (pypto.maximum, torch.maximum),
    "minimum": (pypto.minimum, torch.minimum),
}
UNARY = {
    "neg": (pypto.neg, torch.neg, -2, 2), "abs": (pypto.abs, torch.abs, -2, 2),
    "exp": (pypto.exp, torch.exp, -2, 2), "log": (pypto.log, torch.log, 0.1, 3),
    "sqrt": (pypto.sqrt, torch.sqrt, 0.1, 3), "rsqrt": (pypto.rsqrt, torch.rsqrt, 0.1, 3),
    "reciprocal": (pypto.reciprocal, torch.reciprocal, 0.5, 3),
    "relu": (pypto.relu, torch.relu, -2, 2), "sigmoid": (pypto.sigmoid, torch.sigmoid, -3, 3),
    "tanh": (pypto.tanh, torch.tanh, -3, 3),
}
SHAPES = [((64, 64), (32, 32)), ((50, 70), (16, 32))]  # divisible, and with tails


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("pt,tt,tol", FLOATS)
@pytest.mark.parametrize("shape,tile", SHAPES)
def test_binary_ops(name, pt, tt, tol, shape, tile):
    pop, top = BINARY[name]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor(list(shape), pt), b: pypto.Tensor(list(shape), pt),
          out: pypto.Tensor(list(shape), pt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pop(a, b)

    a, b = rand(shape, tt, seed=1), rand(shape, tt, 0.5, 2.0, seed=2)
    out = torch.zeros(shape, dtype=tt)
    k(a, b, out)
    close(out, top(a.float(), b.float()).to(tt), tol)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("pt,tt,tol", FLOATS)
def test_unary_ops(name, pt, tt, tol):
    pop, top, lo, hi = UNARY[name]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([40, 72], pt), out: pypto.Tensor([40, 72], pt)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pop(a)

    a = rand((40, 72), tt, lo, hi, seed=3)
    out = torch.zeros(40, 72, dtype=tt)
    k(a, out)
    # torch 1.13 lacks most half-precision kernels on CPU: compute in fp32, round once (what
    # an fp16 vector unit returns).
    close(out, top(a.float()).to(tt), tol)


@pytest.mark.parametrize("pt,tt", [(F32, torch.float32), (BF16, torch.bfloat16)])
def test_bf16_and_fp32_elementwise_bits_equal_torch(pt, tt):
    # torch computes a bf16 op in fp32 and rounds once: the same bits, including sigmoid's 0
    # where exp(-x) overflows fp32 (below -88.72), not the exact subnormal.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 64], pt), b: pypto.Tensor([8, 64], pt),
          s: pypto.Tensor([8, 64], pt), q: pypto.Tensor([8, 64], pt),
          e: pypto.Tensor([8, 64], pt)):
        pypto.set_vec_tile_shapes(8, 64)
        s[:] = pypto.sigmoid(a)
        q[:] = pypto.div(a, b)
        e[:] = pypto.exp(pypto.mul(b, 0.5))

    a = torch.cat([torch.linspace(-104.0, -86.0, 256), torch.randn(256) * 4]).reshape(8, 64)
    a, b = a.to(tt), (torch.randn(8, 64) * 3).to(tt)
    s, q, e = (torch.zeros(8, 64, dtype=tt) for _ in range(3))
    k(a, b, s, q, e)
    under = a < -88.73
    assert under.sum() > 100 and not torch.sigmoid(a)[under].any() and not s[under].any()
    if tt is torch.bfloat16:  # torch's fp32 exp/sigmoid are not correctly rounded; bf16 is
        assert torch.equal(s, torch.sigmoid(a))
        assert torch.equal(q, a / b) and torch.equal(e, torch.exp(b * 0.5))


def test_integer_dtypes_add_and_wrap():
    for pt, tt in [(pypto.DT_INT8, torch.int8), (pypto.DT_INT16, torch.int16),
                   (pypto.DT_INT32, torch.int32), (pypto.DT_INT64, torch.int64)]:
        @pypto.frontend.jit(runtime_options=SIM)
        def k(a: pypto.Tensor([33, 17], pt), b: pypto.Tensor([33, 17], pt),
              out: pypto.Tensor([33, 17], pt)):
            pypto.set_vec_tile_shapes(8, 8)
            out[:] = a * b + a

        g = torch.Generator().manual_seed(4)
        a = torch.randint(-100, 100, (33, 17), generator=g, dtype=tt)
        b = torch.randint(-100, 100, (33, 17), generator=g, dtype=tt)
        out = torch.zeros(33, 17, dtype=tt)
        k(a, b, out)
        assert torch.equal(out, a * b + a), pt


def test_operators_scalars_broadcast_compare_where():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([48, 40], F32), b: pypto.Tensor([1, 40], F32),
          out: pypto.Tensor([48, 40], F32), mask: pypto.Tensor([48, 40], pypto.DT_BOOL)):
        pypto.set_vec_tile_shapes(16, 16)
        t = (a + 1.5) * b - a / 2.0
        out[:] = pypto.where(t > b, t, -t) ** 2
        mask[:] = a >= b

    a, b = rand((48, 40), torch.float32, seed=5), rand((1, 40), torch.float32, seed=6)
    out, mask = torch.zeros(48, 40), torch.zeros(48, 40, dtype=torch.bool)
    k(a, b, out, mask)
    t = (a + 1.5) * b - a / 2.0
    close(out, torch.where(t > b, t, -t) ** 2, 1e-5)
    assert torch.equal(mask, a >= b)


@pytest.mark.parametrize("pt,tt,tol", FLOATS)
def test_reductions_and_cast(pt, tt, tol):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([24, 80], pt), s: pypto.Tensor([24, 1], pt),
          mx: pypto.Tensor([80], pt), mn: pypto.Tensor([24], F32)):
        pypto.set_vec_tile_shapes(8, 80)
        s[:] = pypto.sum(a, 1, keepdim=True)
        mn[:] = pypto.cast(pypto.amin(a, 1), F32)
        pypto.set_vec_tile_shapes(24, 16)
        mx[:] = pypto.amax(a, 0)

    a = rand((24, 80), tt, seed=7)
    s, mx, mn = torch.zeros(24, 1, dtype=tt), torch.zeros(80, dtype=tt), torch.zeros(24)
    k(a, s, mx, mn)
    close(s, a.sum(1, keepdim=True), tol * 10)
    close(mx, a.amax(0), 0)
    close(mn, a.amin(1).float(), 0)


# ---- matmul -----------------------------------------------------------------------------------
@pytest.mark.parametrize("pt,tt,tol", FLOATS)
@pytest.mark.parametrize("m,k_,n", [(64, 96, 64), (50, 70, 30)])
def test_matmul_2d(pt, tt, tol, m, k_, n):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([m, k_], pt), b: pypto.Tensor([k_, n], pt), c: pypto.Tensor([m, n], F32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        c[:] = pypto.matmul(a, b, F32)

    a, b = rand((m, k_), tt, seed=8), rand((k_, n), tt, seed=9)
    c = torch.zeros(m, n)
    k(a, b, c)
    close(c, a.float() @ b.float(), 1e-4)


def test_matmul_batched_and_transposed():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([2, 48, 32], F16), b: pypto.Tensor([2, 40, 48], F16),
          c: pypto.Tensor([2, 32, 40], F16)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        c[:] = pypto.matmul(a, b, F16, a_trans=True, b_trans=True)

    a, b = rand((2, 48, 32), torch.float16, seed=10), rand((2, 40, 48), torch.float16, seed=11)
    c = torch.zeros(2, 32, 40, dtype=torch.float16)
    k(a, b, c)
    want = (a.float().transpose(1, 2) @ b.float().transpose(1, 2)).half()
    close(c, want, 2e-3)


# ---- composites -----------------------------------------------------------------------------
@pytest.mark.parametrize("pt,tt,tol", FLOATS)
def test_softmax(pt, tt, tol):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([32, 64], pt), y: pypto.Tensor([32, 64], pt)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.softmax(x, -1)

    x = rand((32, 64), tt, -4, 4, seed=12)
    y = torch.zeros(32, 64, dtype=tt)
    k(x, y)
    close(y, torch.softmax(x.float(), -1).to(tt), tol)


@pytest.mark.parametrize("pt,tt,tol", FLOATS)
def test_layernorm(pt, tt, tol):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([40, 96], pt), g: pypto.Tensor([1, 96], pt), b: pypto.Tensor([1, 96], pt),
          y: pypto.Tensor([40, 96], pt)):
        pypto.set_vec_tile_shapes(8, 96)
        xf = pypto.cast(x, F32)
        mean = pypto.sum(xf, -1, keepdim=True) / 96.0
        d = xf - mean
        var = pypto.sum(d * d, -1, keepdim=True) / 96.0
        yf = d * pypto.rsqrt(var + 1e-5) * pypto.cast(g, F32) + pypto.cast(b, F32)
        y[:] = pypto.cast(yf, pt)

    x, g, b = rand((40, 96), tt, seed=13), rand((1, 96), tt, seed=14), rand((1, 96), tt, seed=15)
    y = torch.zeros(40, 96, dtype=tt)
    k(x, g, b, y)
    want = torch.nn.functional.layer_norm(x.float(), (96,), g.float()[0], b.float()[0], 1e-5)
    close(y, want.to(tt), max(tol, 1e-4) * 4)


@pytest.mark.parametrize("pt,tt,tol", FLOATS)
def test_attention(pt, tt, tol):
    S, D = 64, 32

    @pypto.frontend.jit(runtime_options=SIM)
    def k(q: pypto.Tensor([S, D], pt), kk: pypto.Tensor([S, D], pt), v: pypto.Tensor([S, D], pt),
          o: pypto.Tensor([S, D], pt)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        scores = pypto.matmul(q, kk, F32, b_trans=True)
        pypto.set_vec_tile_shapes(16, S)
        p = pypto.softmax(scores * (1.0 / D ** 0.5), -1)
        o[:] = pypto.matmul(pypto.cast(p, pt), v, pt)

    q, kk, v = (rand((S, D), tt, seed=s) for s in (16, 17, 18))
    o = torch.zeros(S, D, dtype=tt)
    k(q, kk, v, o)
    p = torch.softmax((q.float() @ kk.float().T) / D ** 0.5, -1)
    close(o, (p.to(tt).float() @ v.float()).to(tt), max(tol, 1e-4) * 4)


# ---- loops, tails and dynamic shapes ------------------------------------------------------
def make_row_scale():
    @pypto.frontend.jit(runtime_options=SIM)
    def row_scale(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(32, 64)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 32), idx_name="i"):
            t = pypto.view(x, [32, 64], [i * 32, 0], valid_shape=[pypto.min(n - i * 32, 32), 64])
            if pypto.is_loop_begin(i):
                y[i * 32:, :] = t * 2.0
            else:
                y[i * 32:, :] = t + 1.0
    return row_scale


def test_dynamic_rows_several_sizes_one_compile():
    k = make_row_scale()
    compiles = []
    pypto.frontend.hooks.append(lambda *a, **kw: compiles.append(1))
    for rows in (100, 32, 7, 257):
        x = rand((rows, 64), torch.float32, seed=rows)
        y = torch.full((rows, 64), -7.0)
        k(x, y)
        want = x + 1.0
        want[:32] = x[:32] * 2.0
        close(y, want, 1e-6)
    assert len(compiles) == 1
    assert k.last_report.stats["tasks"] == 9  # ceil(257 / 32) loop iterations


def test_seed_example1_returns_the_sum():
    from test_seed_examples import seed_kernels  # the document's kernels, verbatim
    add_kernel, _, kernel_sim = seed_kernels()
    x, y = torch.randn(3), torch.randn(3)
    result = add_kernel(x, y)
    close(result, x + y, 0)
    assert kernel_sim(torch.randn(3)) is None  # example 2's SIM kernel runs (an empty body)


# ---- reports ------------------------------------------------------------------------------------
def test_report_files_and_fields(tmp_path):
    k = make_row_scale()
    x = rand((100, 64), torch.float32)
    k(x, torch.zeros(100, 64))
    r = k.last_report
    assert r.makespan_ns > 0 and r.makespan_ns == r.stats["makespan_ns"]
    assert os.path.dirname(r.path) == str(tmp_path / "out")
    assert os.path.basename(r.path).startswith("row_scale_")
    for f in ("stats.json", "trace.json", "swim.json"):
        assert os.path.getsize(os.path.join(r.path, f)) > 0
    with open(os.path.join(r.path, "stats.json")) as fh:
        assert json.load(fh) == r.stats
    assert r.stats["tasks"] == 4 and r.stats["cores"]["AIV"]["tasks"] == 4


# ---- runtime options: timing changes, numbers do not ---------------------------------------
def tiled_add(runtime_options, rows=512):
    @pypto.frontend.jit(runtime_options=dict(SIM, **runtime_options))
    def tadd(x: pypto.Tensor([rows, 64], F32), y: pypto.Tensor([rows, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(rows // 16, idx_name="i"):
            t = pypto.view(x, [16, 64], [i * 16, 0])
            y[i * 16:, :] = pypto.exp(t) + t
    x = rand((rows, 64), torch.float32)
    y = torch.zeros(rows, 64)
    tadd(x, y)
    close(y, torch.exp(x) + x, 1e-5)
    return tadd.last_report


def test_option_device_sched_mode_picks_the_policy():
    assert tiled_add({}).stats["policy"] == "fifo"
    assert tiled_add({"device_sched_mode": 1}).stats["policy"] == "l2_affinity"
    assert tiled_add({"device_sched_mode": 3}).stats["policy"] == "l2_fair"


def test_option_stitch_function_max_num_shapes_device_tasks():
    assert tiled_add({"stitch_function_max_num": 4}).stats["device_tasks"] == 8
    assert tiled_add({"stitch_function_max_num": 32}).stats["device_tasks"] == 1


def softmax_rows(runtime_options):
    """Softmax over row blocks: the row maxima and sums are intermediates in workspace."""
    @pypto.frontend.jit(runtime_options=dict(SIM, **runtime_options))
    def sm(x: pypto.Tensor([512, 128], F32), y: pypto.Tensor([512, 128], F32)):
        pypto.set_vec_tile_shapes(16, 128)
        for i in pypto.loop(32, idx_name="i"):
            t = pypto.view(x, [16, 128], [i * 16, 0])
            y[i * 16:, :] = pypto.softmax(t, -1)
    x = rand((512, 128), torch.float32, -3, 3)
    y = torch.zeros(512, 128)
    sm(x, y)
    close(y, torch.softmax(x, -1), 1e-5)
    return sm.last_report


def test_option_max_workspace_kb(caplog):
    with caplog.at_level("INFO", logger="pypto"):
        r = softmax_rows({})
    rec = [m for m in caplog.messages if m.startswith("Recommended: set max_workspace_kb near")]
    assert len(rec) == 1 and r.stats["device_tasks"] == 1
    import re
    near, above = map(int, re.search(r"near (\d+)KB and above (\d+)KB", rec[0]).groups())
    assert near > above > 0
    ws = r.stats["workspace"]
    assert 0 < ws["minimum_bytes"] <= above * 1024 < ws["peak_bytes"]
    with pytest.raises(ValueError, match=rf"max_workspace_kb={above}KB must be greater than the "
                                         rf"minimum runnable workspace={above}KB"):
        softmax_rows({"max_workspace_kb": above})
    # Memory-driven mode: room for about four roots per device task.
    r4 = softmax_rows({"max_workspace_kb": above * 4 + 1})
    assert r4.stats["device_tasks"] == 8


def test_option_launch_sched_aicpu_num_sets_threads():
    assert tiled_add({"launch_sched_aicpu_num": 1}).stats["aicpu"]["sched_threads"] == 1
    assert tiled_add({"launch_sched_aicpu_num": 2}).stats["aicpu"]["sched_threads"] == 2


def test_option_ready_on_host_tensors_lets_control_flow_run_ahead():
    def run(ready):
        @pypto.frontend.jit(runtime_options=dict(SIM, ready_on_host_tensors=ready,
                                                 launch_early_mode=1))
        def lk(n: pypto.Tensor([1], pypto.DT_INT32), x: pypto.Tensor([128, 64], F32),
               y: pypto.Tensor([128, 64], F32)):
            pypto.set_vec_tile_shapes(16, 64)
            for i in pypto.loop(n[0], idx_name="i"):
                t = pypto.view(x, [16, 64], [i * 16, 0])
                y[i * 16:, :] = t + 2.0
        x = rand((128, 64), torch.float32)
        y = torch.zeros(128, 64)
        lk(torch.tensor([5], dtype=torch.int32), x, y)
        close(y[:80], x[:80] + 2.0, 1e-6)
        assert torch.equal(y[80:], torch.zeros(48, 64))
        return lk.last_report.makespan_ns
    assert run(["n"]) < run([])


def test_option_launch_early_mode_changes_startup():
    never = tiled_add({"launch_early_mode": 2}).makespan_ns
    always = tiled_add({"launch_early_mode": 1}).makespan_ns
    assert always < never


def test_option_device_sched_parallelism_overlaps_parallel_loops():
    def run(par):
        @pypto.frontend.jit(runtime_options=dict(SIM, device_sched_parallelism=par,
                                                 stitch_function_max_num=1))
        def pk(x: pypto.Tensor([256, 64], F32), y: pypto.Tensor([256, 64], F32)):
            pypto.set_vec_tile_shapes(16, 64)
            for i in pypto.loop(16, idx_name="i", parallel=True):
                t = pypto.view(x, [16, 64], [i * 16, 0])
                y[i * 16:, :] = pypto.sqrt(pypto.abs(t)) * 3.0
        x = rand((256, 64), torch.float32)
        y = torch.zeros(256, 64)
        pk(x, y)
        close(y, torch.sqrt(x.abs()) * 3.0, 1e-5)
        return pk.last_report.makespan_ns
    assert run(4) < run(1)


def test_option_valid_shape_optimize_shortens_main_blocks():
    def run(opt):
        @pypto.frontend.jit(runtime_options=dict(SIM, valid_shape_optimize=opt))
        def vk(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
            pypto.set_vec_tile_shapes(32, 64)
            n = x.shape[0]
            for i in pypto.loop(pypto.ceildiv(n, 32), idx_name="i"):
                t = pypto.view(x, [32, 64], [i * 32, 0], valid_shape=[pypto.min(n - i * 32, 32), 64])
                y[i * 32:, :] = t * t
        x = rand((1000, 64), torch.float32)
        y = torch.zeros(1000, 64)
        vk(x, y)
        close(y, x * x, 1e-6)
        return vk.last_report
    off, on = run(0), run(1)
    busy = lambda r: r.stats["cores"]["AIV"]["busy_ns"]  # noqa: E731
    assert busy(on) < busy(off)


# ---- a compiled kernel as a native trace ---------------------------------------------------
def test_dump_trace_replays_with_the_cli(tmp_path):
    import subprocess
    import sys
    k = make_row_scale()
    x, y = rand((100, 64), torch.float32), torch.zeros(100, 64)
    path = k.dump_trace(tmp_path / "row_scale.ndjson", x, y)
    assert torch.equal(y, torch.zeros(100, 64))  # dumping runs nothing
    cli = os.path.join(sys.prefix, "bin", "pypto-sim")
    res = subprocess.run([cli, "run", path, "-o", str(tmp_path / "replay"), "-q"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    with open(tmp_path / "replay" / "stats.json") as fh:
        replay = json.load(fh)
    k(x, y)
    assert replay["tasks"] == k.last_report.stats["tasks"] == 4
    assert replay["device_tasks"] == k.last_report.stats["device_tasks"]
    # Same tasks, costs and addresses: the replay takes as long as the SIM call.
    assert replay["makespan_ns"] == pytest.approx(k.last_report.makespan_ns, rel=1e-9)


# ---- shape and data-movement ops -----------------------------------------------------------
@pytest.mark.parametrize("pt,tt,tol", FLOATS)
def test_shape_ops_against_torch(pt, tt, tol):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([12, 20], pt), b: pypto.Tensor([12, 20], pt),
          t_out: pypto.Tensor([20, 12], pt), cat: pypto.Tensor([24, 20], pt),
          r_out: pypto.Tensor([20, 12], pt), e_out: pypto.Tensor([2, 12, 20], pt),
          misc: pypto.Tensor([12, 20], pt), asm: pypto.Tensor([16, 24], pt)):
        pypto.set_vec_tile_shapes(8, 8)
        t_out[:] = pypto.transpose(a, 0, 1)
        cat[:] = pypto.concat([a, b], 0)
        r_out[:] = pypto.reshape(a, [20, 12])
        pypto.set_vec_tile_shapes(1, 8, 8)
        e_out[:] = pypto.expand_clone(pypto.unsqueeze(a, 0), [2, 12, 20])
        pypto.set_vec_tile_shapes(8, 8)
        ones = pypto.ones(12, 20, dtype=pt)
        misc[:] = pypto.clip(a, -0.5, 0.5) + pypto.pow(pypto.abs(b) + ones, 2.0) + pypto.zeros(12, 20, dtype=pt)
        asm[:] = pypto.full([16, 24], 3.0, pt)
        pypto.assemble(pypto.view(b, [4, 6], [2, 3]), [5, 7], asm)

    a, b = rand((12, 20), tt, seed=20), rand((12, 20), tt, seed=21)
    outs = [torch.zeros(s, dtype=tt) for s in [(20, 12), (24, 20), (20, 12), (2, 12, 20), (12, 20), (16, 24)]]
    k(a, b, *outs)
    t_out, cat, r_out, e_out, misc, asm = outs
    assert torch.equal(t_out, a.T)
    assert torch.equal(cat, torch.cat([a, b], 0))
    assert torch.equal(r_out, a.reshape(20, 12))
    assert torch.equal(e_out, a.unsqueeze(0).expand(2, 12, 20))
    af, bf = a.float(), b.float()
    want = (af.clamp(-0.5, 0.5).to(tt).float() + ((bf.abs().to(tt).float() + 1).to(tt).float() ** 2).to(tt).float()).to(tt)
    close(misc, want, tol)
    want_asm = torch.full((16, 24), 3.0, dtype=tt)
    want_asm[5:9, 7:13] = b[2:6, 3:9]
    assert torch.equal(asm, want_asm)


def test_permute_and_batched_reduction():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 10, 14], F32), p: pypto.Tensor([14, 3, 10], F32),
          s: pypto.Tensor([3, 14], F32)):
        pypto.set_vec_tile_shapes(4, 4, 4)
        p[:] = pypto.permute(x, [2, 0, 1])
        pypto.set_vec_tile_shapes(2, 10, 8)
        s[:] = pypto.sum(x, 1)

    x = rand((3, 10, 14), torch.float32, seed=22)
    p, s = torch.zeros(14, 3, 10), torch.zeros(3, 14)
    k(x, p, s)
    assert torch.equal(p, x.permute(2, 0, 1))
    close(s, x.sum(1), 1e-5)


def test_pypto_sim_lists_policies_and_chips(monkeypatch):
    import pypto.sim
    assert pypto.sim.policies()[:4] == ["fifo", "l2_affinity", "fair", "l2_fair"]
    assert {"a2", "a3", "950pr", "950dt"} <= set(pypto.sim.chips())


def test_pypto_sim_chip_selects_the_model(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950dt")
    report = tiled_add({})
    assert report.stats["chip"] == "950dt" and report.stats["cores"]["AIC"]["count"] == 32


def test_tensor_concat_is_pypto_concat():
    # PyPTO documents pypto.Tensor.concat(tensors, dim) as pypto.concat under another name.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 16], pypto.DT_FP32), b: pypto.Tensor([8, 16], pypto.DT_FP32),
          out: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.Tensor.concat([a, b], 1)

    a, b = rand((8, 16), torch.float32, seed=30), rand((8, 16), torch.float32, seed=31)
    out = torch.empty(8, 32)
    k(a, b, out)
    assert torch.equal(out, torch.cat([a, b], 1))
