# SPDX-License-Identifier: Apache-2.0
"""pypto.experimental's ops against torch: load (discrete reads of a tensor's elements),
gather_in_ub / gather_in_l1 (PagedAttention rows through a page table, PyPTO's doc example
among them), transposed_batchmatmul and the 950's online_softmax / online_softmax_update."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32, F16, BF16, I32, I64 = (pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32,
                            pypto.DT_INT64)


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def paged_rows(indices, block_table, block_size):
    """PagedAttention: token t lives in row block_table[t // bs] * bs + t % bs."""
    t = indices[0].long()
    return block_table[0].long()[t // block_size] * block_size + t % block_size


def test_gather_in_ub_the_doc_example():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(param: pypto.Tensor([6, 4], F32), idx: pypto.Tensor([1, 3], I32),
          bt: pypto.Tensor([1, 3], I32), out: pypto.Tensor([3, 4], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.experimental.gather_in_ub(param, idx, bt, 2, -2)

    param = torch.tensor([[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33],
                          [40, 41, 42, 43], [50, 51, 52, 53]], dtype=torch.float32)
    out = torch.zeros(3, 4)
    k(param, torch.tensor([[0, 4, 3]], dtype=torch.int32),
      torch.tensor([[0, 2, 1]], dtype=torch.int32), out)
    assert out.tolist() == [[0, 1, 2, 3], [20, 21, 22, 23], [50, 51, 52, 53]]


def test_gather_in_ub_bf16_rows_in_a_tile_sized_for_the_data():
    # DeepSeek-V4's sparse attention gathers its top-512 bf16 rows under a [128, 512] vec
    # tile: 128 KiB of data, within UB. The row offsets this IR computes for the gather are
    # int32 and tiled so that they take no more than the data tile does.
    tokens, hidden, k, bs = 1024, 512, 256, 128

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(kv: pypto.Tensor([tokens, hidden], BF16), idx: pypto.Tensor([1, k], I32),
             bt: pypto.Tensor([1, tokens // bs], I32), out: pypto.Tensor([k, hidden], BF16)):
        pypto.set_vec_tile_shapes(128, 512)
        rows = pypto.experimental.gather_in_ub(kv, idx, bt, bs, -2)
        assert pypto.get_vec_tile_shapes() == [128, 512]  # the kernel's tile is back
        out[:] = rows

    g = torch.Generator().manual_seed(0)
    kv = torch.randn(tokens, hidden, generator=g).to(torch.bfloat16)
    idx = torch.randint(0, tokens, (1, k), generator=g, dtype=torch.int32)
    bt = torch.randperm(tokens // bs, generator=g).to(torch.int32).unsqueeze(0)
    out = torch.zeros(k, hidden, dtype=torch.bfloat16)
    kern(kv, idx, bt, out)
    assert torch.equal(out, kv[paged_rows(idx, bt, bs)])


def test_gather_in_ub_counts_rows_from_a_views_start_and_reads_past_its_end():
    # DeepSeek-V4's sparse attention passes a view of the first top-k rows of its compressed
    # cache; the page table sends the gather to rows anywhere in the cache, counted from the
    # view's first row.
    tokens, hidden, k, bs = 1024, 64, 32, 16

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(kv: pypto.Tensor([tokens, hidden], F32), idx: pypto.Tensor([1, k], I32),
             bt: pypto.Tensor([1, 32], I32), out: pypto.Tensor([2 * k, hidden], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(2):
            head = pypto.view(kv, [k, hidden], [i * 256, 0])
            rows = pypto.experimental.gather_in_ub(head, idx, bt, bs, -2)
            pypto.assemble(rows, [i * k, 0], out)

    g = torch.Generator().manual_seed(0)
    kv = torch.randn(tokens, hidden, generator=g)
    idx = torch.randint(0, 512, (1, k), generator=g, dtype=torch.int32)
    bt = torch.randperm(32, generator=g).to(torch.int32).unsqueeze(0)
    out = torch.zeros(2 * k, hidden)
    kern(kv, idx, bt, out)
    rows = paged_rows(idx, bt, bs)
    assert max(rows) >= k  # past the view's own [k, hidden] extent
    assert torch.equal(out, torch.cat([kv[[r + 256 * i for r in rows]] for i in range(2)]))


@pytest.mark.parametrize("pt,tt", [(F16, torch.float16), (F32, torch.float32)])
def test_gather_in_ub_a_large_kv_cache_stays_in_global_memory(pt, tt):
    # 16384 x 128 fp16 is 4 MiB: only the result tiles go through UB.
    tokens, hidden, k, bs = 16384, 128, 256, 128

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(kv: pypto.Tensor([tokens, hidden], pt), idx: pypto.Tensor([1, k], I32),
             bt: pypto.Tensor([1, tokens // bs], I32), out: pypto.Tensor([k, hidden], pt)):
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = pypto.experimental.gather_in_ub(kv, idx, bt, bs, -2)

    g = torch.Generator().manual_seed(0)
    kv = torch.randn(tokens, hidden, generator=g).to(tt)
    idx = torch.randint(0, tokens, (1, k), generator=g, dtype=torch.int32)
    bt = torch.randperm(tokens // bs, generator=g).to(torch.int32).unsqueeze(0)
    out = torch.zeros(k, hidden, dtype=tt)
    kern(kv, idx, bt, out)
    assert torch.equal(out, kv[paged_rows(idx, bt, bs)])


@pytest.mark.parametrize("is_b,is_trans", [(False, False), (True, True)])
def test_gather_in_l1_takes_the_first_size_columns(is_b, is_trans):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(src: pypto.Tensor([64, 48], F16), idx: pypto.Tensor([1, 32], I64),
          bt: pypto.Tensor([1, 16], I32), out: pypto.Tensor([32, 16], F16)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = pypto.experimental.gather_in_l1(src, idx, bt, 4, 16, is_b, is_trans)

    g = torch.Generator().manual_seed(1)
    src = torch.randn(64, 48, generator=g).half()
    idx = torch.randint(0, 64, (1, 32), generator=g)
    bt = torch.randperm(16, generator=g).to(torch.int32).unsqueeze(0)
    out = torch.zeros(32, 16, dtype=torch.float16)
    k(src, idx, bt, out)
    assert torch.equal(out, src[paged_rows(idx, bt, 4), :16])


def test_load_reads_elements_of_the_flat_view():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(src: pypto.Tensor([4, 6, 5], F32), off: pypto.Tensor([3, 10], I32),
          out: pypto.Tensor([3, 10], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        out[:] = pypto.experimental.load(src, off)

    src = torch.randn(4, 6, 5)
    off = torch.randint(0, 120, (3, 10), dtype=torch.int32)
    out = torch.zeros(3, 10)
    k(src, off, out)
    assert torch.equal(out, src.reshape(-1)[off.long()])


def test_load_out_of_range_raises():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(src: pypto.Tensor([4, 5], F32), off: pypto.Tensor([1, 2], I32),
          out: pypto.Tensor([1, 2], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        out[:] = pypto.experimental.load(src, off)

    with pytest.raises(Exception, match=r"load element index 20 is outside \[0, 20\)"):
        k(torch.zeros(4, 5), torch.tensor([[3, 20]], dtype=torch.int32), torch.zeros(1, 2))


@pytest.mark.parametrize("pt,tt", [(F16, torch.float16), (BF16, torch.bfloat16)])
def test_transposed_batchmatmul(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([16, 2, 32], pt), b: pypto.Tensor([2, 32, 64], pt),
          c: pypto.Tensor([16, 2, 64], pt)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        pypto.set_vec_tile_shapes(16, 2, 64)
        c[:] = pypto.experimental.transposed_batchmatmul(a, b, pt)

    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(16, 2, 32, generator=g).to(tt), torch.randn(2, 32, 64, generator=g).to(tt)
    c = torch.zeros(16, 2, 64, dtype=tt)
    k(a, b, c)
    ref = (a.float().transpose(0, 1) @ b.float()).transpose(0, 1)
    tol = 2e-3 if tt is torch.float16 else 1e-2
    torch.testing.assert_close(c.float(), ref, rtol=tol, atol=tol)


def test_experimental_ops_check_their_arguments():
    def bad(param: pypto.Tensor([6, 4], F32), idx: pypto.Tensor([1, 3], I32),
            bt: pypto.Tensor([1, 3], I32), out: pypto.Tensor([3, 4], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.experimental.gather_in_ub(param, idx, bt, 2, 0)

    with pytest.raises(pypto.PyptoValueError, match="experimental.gather_in_ub: axis must be -2"):
        pypto.frontend.jit(runtime_options=SIM)(bad).warmup(
            torch.zeros(6, 4), torch.zeros(1, 3, dtype=torch.int32),
            torch.zeros(1, 3, dtype=torch.int32), torch.zeros(3, 4))

    def bad_tb(a: pypto.Tensor([16, 2, 32], F32), b: pypto.Tensor([2, 32, 64], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        pypto.experimental.transposed_batchmatmul(a, b, F32)

    with pytest.raises(pypto.PyptoTypeError, match="tensor_a must be DT_FP16 or DT_BF16"):
        pypto.frontend.jit(runtime_options=SIM)(bad_tb).warmup(
            torch.zeros(16, 2, 32), torch.zeros(2, 32, 64))


@pytest.fixture
def chip_950(monkeypatch):
    # PyPTO offers the block-wise online softmax on the 950PR/950DT only.
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")


def test_online_softmax_block_statistics(chip_950):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(scores: pypto.Tensor([128, 64], F32), e: pypto.Tensor([128, 64], BF16),
          m: pypto.Tensor([1, 64], F32), l: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(128, 32)
        e[:], m[:], l[:] = pypto.experimental.online_softmax(scores, 0.125)

    scores = torch.randn(128, 64, generator=torch.Generator().manual_seed(1)) * 4
    e, m, l = torch.zeros(128, 64, dtype=torch.bfloat16), torch.zeros(1, 64), torch.zeros(1, 64)
    k(scores, e, m, l)
    s = scores * 0.125
    assert torch.equal(m, s.amax(0, keepdim=True))
    ref = torch.exp(s - m)
    torch.testing.assert_close(e.float(), ref.bfloat16().float(), rtol=8e-3, atol=0)
    torch.testing.assert_close(l, ref.sum(0, keepdim=True), rtol=1e-5, atol=0)


def test_online_softmax_update_merges_two_states(chip_950):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(pm: pypto.Tensor([1, 64], F32), ps: pypto.Tensor([1, 64], F32),
          po: pypto.Tensor([32, 64], F32), cm: pypto.Tensor([1, 64], F32),
          cs: pypto.Tensor([1, 64], F32), co: pypto.Tensor([32, 64], F32),
          m: pypto.Tensor([1, 64], F32), l: pypto.Tensor([1, 64], F32),
          o: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(32, 32)
        m[:], l[:], o[:] = pypto.experimental.online_softmax_update(pm, ps, po, cm, cs, co)

    g = torch.Generator().manual_seed(2)
    pm, cm = torch.randn(1, 64, generator=g), torch.randn(1, 64, generator=g)
    ps, cs = torch.rand(1, 64, generator=g) * 9 + 1, torch.rand(1, 64, generator=g) * 9 + 1
    po, co = torch.randn(32, 64, generator=g), torch.randn(32, 64, generator=g)
    m, l, o = torch.zeros(1, 64), torch.zeros(1, 64), torch.zeros(32, 64)
    k(pm, ps, po, cm, cs, co, m, l, o)
    wm = torch.maximum(pm, cm)
    a, b = torch.exp(pm - wm), torch.exp(cm - wm)
    assert torch.equal(m, wm)
    torch.testing.assert_close(l, ps * a + cs * b, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(o, po * a + co * b, rtol=1e-6, atol=1e-6)


def test_online_softmax_over_two_blocks_is_the_column_softmax(chip_950):
    # The use PyPTO documents: block statistics, the blocks' unnormalized outputs on the cube,
    # the states merged, then one division.
    @pypto.frontend.jit(runtime_options=SIM)
    def attn(s1: pypto.Tensor([128, 64], F32), s2: pypto.Tensor([128, 64], F32),
             v: pypto.Tensor([32, 256], BF16), out: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(128, 32)
        e1, m1, l1 = pypto.experimental.online_softmax(s1, 0.125)
        e2, m2, l2 = pypto.experimental.online_softmax(s2, 0.125)
        pypto.set_cube_tile_shapes([32, 32], [128, 128], [32, 64])
        o1 = pypto.matmul(v[:, :128], e1, F32)
        o2 = pypto.matmul(v[:, 128:], e2, F32)
        pypto.set_vec_tile_shapes(32, 32)
        _, l, o = pypto.experimental.online_softmax_update(m1, l1, o1, m2, l2, o2)
        out[:] = o / l

    g = torch.Generator().manual_seed(3)
    s1, s2 = torch.randn(128, 64, generator=g), torch.randn(128, 64, generator=g)
    v = torch.randn(32, 256, generator=g).bfloat16()
    out = torch.zeros(32, 64)
    attn(s1, s2, v, out)
    want = v.double() @ torch.softmax(torch.cat([s1, s2]).double() * 0.125, 0)
    torch.testing.assert_close(out.double(), want, rtol=1e-2, atol=1e-2)


def test_online_softmax_rules():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(scores: pypto.Tensor([128, 64], F32), e: pypto.Tensor([128, 64], BF16)):
        pypto.set_vec_tile_shapes(64, 32)
        e[:], _, _ = pypto.experimental.online_softmax(scores, 0.125)

    args = torch.zeros(128, 64), torch.zeros(128, 64, dtype=torch.bfloat16)
    with pytest.raises(pypto.PyptoValueError, match=r"experimental.online_softmax: is an Ascend "
                       r"950 operation \(block-wise online softmax\), but the simulated chip is "
                       r"'a2'"):
        k(*args)


def test_online_softmax_keeps_axis_0_in_one_tile(chip_950):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(scores: pypto.Tensor([128, 64], F32), e: pypto.Tensor([128, 64], BF16)):
        pypto.set_vec_tile_shapes(64, 32)
        e[:], _, _ = pypto.experimental.online_softmax(scores, 0.125)

    with pytest.raises(pypto.PyptoValueError, match=r"PyPTO's rule scores.shape\[0\] <= "
                       r"vec_tile\[0\] \(axis 0 is not cut\): scores.shape\[0\] = 128, "
                       r"vec_tile\[0\] = 64"):
        k(torch.zeros(128, 64), torch.zeros(128, 64, dtype=torch.bfloat16))
