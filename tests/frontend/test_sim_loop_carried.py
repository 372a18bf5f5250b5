# SPDX-License-Identifier: Apache-2.0
"""Python ints rebound in a pypto.loop body (``off += tile``) are carried from one iteration to
the next as in Python (and in PyPTO's new-IR frontend): iteration k sees ``init + k * d`` and
the variable holds ``init + trip_count * d`` after the loop. End to end in SIM against torch;
the tracing-only checks (IR form, errors, ``python -c``) are in test_trace_ir.py and
test_compat_api.py."""

import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


def test_counter_walks_the_rows_and_holds_its_final_value():
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([18, 8], F32), out: pypto.Tensor([18, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        tile = 2
        off = 0
        for i in pypto.loop(8):
            out[off:off + tile, :] = a[off:off + tile, :] * 2.0 + 1.0
            off += tile
        seen["after"] = off
        out[off:off + 2, :] = a[0:2, :]  # rows 16..17, written after the loop

    a, out = torch.randn(18, 8), torch.zeros(18, 8)
    k(a, out)
    want = a * 2.0 + 1.0
    want[16:18] = a[0:2]
    assert torch.equal(out, want)
    assert seen["after"] == 16 and type(seen["after"]) is int


def test_counters_in_nested_loops_with_start_step_and_branches():
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([24, 8], F32), out: pypto.Tensor([24, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        src = 0
        dst = 23
        for i in pypto.loop(1, 9, 2):          # 4 iterations: i = 1, 3, 5, 7
            for j in pypto.loop(3):
                if pypto.is_loop_begin(j):     # two paths, the same increment on both
                    out[dst:dst + 1, :] = a[src:src + 1, :] + 100.0
                else:
                    out[dst:dst + 1, :] = a[src:src + 1, :] + float(0)
                src += 2
                dst = dst - 1
            src -= 4                           # net +2 per outer iteration
        seen["after"] = (src, dst)

    a, out = torch.randn(24, 8), torch.zeros(24, 8)
    k(a, out)
    want = torch.zeros(24, 8)
    src, dst = 0, 23
    for _ in range(4):
        for j in range(3):
            want[dst] = a[src] + (100.0 if j == 0 else 0.0)
            src += 2
            dst -= 1
        src -= 4
    assert torch.equal(out, want)
    assert seen["after"] == (src, dst) == (8, 11)


def test_counter_over_a_dynamic_trip_count():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = a.shape[0]
        off = 0
        for i in pypto.loop(n // 4):
            out[off:off + 4, :] = pypto.exp(a[off:off + 4, :])
            off += 4
        out[off - 4:off, :] = a[off - 4:off, :] - 1.0  # the last full tile, after the loop

    for n in (8, 20):
        a, out = torch.randn(n, 8), torch.zeros(n, 8)
        k(a, out)
        want = torch.exp(a)
        want[n - 4:n] = a[n - 4:n] - 1.0
        torch.testing.assert_close(out, want)


def test_counter_in_loop_unroll():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        n = a.shape[0]
        off = 0
        for i, f in pypto.loop_unroll(0, n // 2, 1, unroll_list=[2]):
            out[off:off + 2 * f, :] = pypto.view(a, [2 * f, 8], [off, 0]) * 3.0
            off += 2 * f

    a, out = torch.randn(10, 8), torch.zeros(10, 8)
    k(a, out)
    assert torch.equal(out, a * 3.0)


def test_loop_state_object_rebound_in_the_body_keeps_pythons_value():
    # PyPTO's IFA (models/experimental/attention) rebuilds a dataclass of loop state in each
    # body (`ctx = replace(ctx, idx=i)`): an object other than a number keeps Python's value,
    # as PyPTO's tracing of the body leaves it.
    import dataclasses

    @dataclasses.dataclass
    class Ctx:
        scale: float
        row: object = 0

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 16], F32), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(2, 16)
        ctx = Ctx(scale=3.0)
        for i in pypto.loop(4):
            ctx = dataclasses.replace(ctx, row=i * 2)
            out[ctx.row:ctx.row + 2, :] = a[ctx.row:ctx.row + 2, :] * ctx.scale
        assert isinstance(ctx, Ctx) and ctx.scale == 3.0

    a, out = torch.randn(8, 16), torch.zeros(8, 16)
    k(a, out)
    torch.testing.assert_close(out, a * 3.0, rtol=0, atol=0)


def test_inplace_reshape_in_a_loop_is_the_variable_after_it():
    # PyPTO's reshape doc (example 2): a loop's inplace reshape of its input is the loop's
    # output. DeepSeek-V4's compressor reshapes a [128] index to [1, 128] in a pypto.loop(1)
    # inside its batch loop and views it in 2-D after that loop.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([32], F32), b: pypto.Tensor([12, 8], F32),
          out: pypto.Tensor([12, 8], F32), last: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(32)
        flat = a * 1.0
        pypto.set_vec_tile_shapes(4, 8)
        for i in pypto.loop(3):
            for _ in pypto.loop(1):
                flat = pypto.reshape(flat, [4, 8], inplace=True)
            rows = pypto.view(flat, [2, 8], [2, 0])
            blk = pypto.view(b, [4, 8], [i * 4, 0])
            pypto.assemble(blk + flat, [i * 4, 0], out)
            pypto.assemble(rows * 3.0, [0, 0], last)
        last[2:4, :] = flat[0:2, :] * 2.0

    a, b = torch.randn(32), torch.randn(12, 8)
    out, last = torch.zeros(12, 8), torch.zeros(4, 8)
    k(a, b, out, last)
    m = a.reshape(4, 8)
    assert torch.equal(out, b + m.repeat(3, 1))
    assert torch.equal(last, torch.cat([m[2:4] * 3.0, m[0:2] * 2.0]))
