# SPDX-License-Identifier: Apache-2.0
"""Where the bytes of a kernel's parameters lie: a TILEOP_NZ weight moves in the fractal
layout's runs (not in ND rows), and a tensor passed for two parameters (a cache updated in
place) is one buffer, so scatter_update copies nothing onto itself. Numbers against torch."""

import json

import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
M, K, N = 16, 4096, 256


def _matmul(fmt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([M, K], pypto.DT_BF16), w: pypto.Tensor([K, N], pypto.DT_BF16, format=fmt),
          y: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [32, 32])
        y[:, :] = pypto.matmul(a, w, pypto.DT_FP32)

    return k


def _weight_ranges(kernel, tmp_path, args):
    path = str(tmp_path / "t.ndjson")
    kernel.dump_trace(path, *args)
    with open(path, encoding="utf-8") as f:
        tasks = [json.loads(line) for line in f if '"core":"AIC"' in line]
    w_buffer = 2 << 40  # parameter 1 (w): buffers start at (index + 1) << 40
    return tasks, [m for m in tasks[0]["mem"] if m[0] >> 40 == w_buffer >> 40]


def test_an_nz_weight_moves_in_fractal_runs(tmp_path):
    a = torch.randn(M, K, dtype=torch.bfloat16)
    w = torch.randn(K, N, dtype=torch.bfloat16)
    ref = a.float() @ w.float()
    nd, nz = _matmul(pypto.TileOpFormat.TILEOP_ND), _matmul(pypto.TileOpFormat.TILEOP_NZ)
    tasks, ranges = _weight_ranges(nd, tmp_path, (a, w, torch.empty(M, N)))
    # ND: the 32-column tile of w is 4096 rows of 64 bytes, each a burst of its own.
    assert len(tasks) == N // 32
    assert len(ranges) == K and all(m[1] == 64 and m[3] == 64 for m in ranges)
    tasks, ranges = _weight_ranges(nz, tmp_path, (a, w, torch.empty(M, N)))
    # NZ: the tile covers two column blocks of C0 = 16 bf16 elements, each laid out over all
    # K rows: two contiguous runs of 4096 x 32 bytes, the second one K x 16 elements later.
    assert [m[1] for m in ranges] == [K * 32, K * 32]
    assert ranges[1][0] - ranges[0][0] == K * 16 * 2
    for kernel in (nd, nz):
        y = torch.empty(M, N)
        kernel(a, w, y)
        torch.testing.assert_close(y, ref, rtol=2e-2, atol=2e-1)
    assert nz.last_report.aicore_end_to_end_ns < nd.last_report.aicore_end_to_end_ns


def _cache_update():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(cache_in: pypto.Tensor([64, 16], pypto.DT_FP16), idx: pypto.Tensor([1, 8], pypto.DT_INT64),
          src: pypto.Tensor([8, 16], pypto.DT_FP16), cache_out: pypto.Tensor([64, 16], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 16)
        cache_out.move(pypto.scatter_update(cache_in, -2, idx, src))

    return k


def test_a_cache_passed_as_input_and_output_is_updated_in_place(tmp_path):
    idx = torch.tensor([[3, 9, 0, 63, 17, 5, 6, 22]])
    src = torch.randn(8, 16).half()
    cache = torch.randn(64, 16).half()
    ref = cache.clone()
    ref[idx.flatten()] = src
    k = _cache_update()

    def moved(*args):  # (bytes read, bytes written) by the launch's tasks
        path = str(tmp_path / "t.ndjson")
        k.dump_trace(path, *args)
        with open(path, encoding="utf-8") as f:
            mem = [m for line in f if '"mem"' in line for m in json.loads(line)["mem"]]
        return (sum(m[1] for m in mem if m[2] == "r"), sum(m[1] for m in mem if m[2] == "w"))

    # Two tensors: the whole cache (64 x 16 fp16 = 2048 bytes) is copied, then the 8 source
    # rows (256 bytes, with the 64-byte index) are scattered into the copy.
    out = torch.zeros(64, 16, dtype=torch.float16)
    assert moved(cache, idx, src, out) == (2048 + 256 + 64, 2048 + 256)
    k(cache, idx, src, out)
    assert torch.equal(out, ref)
    # One tensor for both (how PyPTO's models call it): only the rows are written.
    assert moved(cache, idx, src, cache) == (256 + 64, 256)
    k(cache, idx, src, cache)
    assert torch.equal(cache, ref)
