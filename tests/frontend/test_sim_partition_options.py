# SPDX-License-Identifier: Apache-2.0
"""The partition's pass options from Python, as a kernel author writes them: PyPTO's merge
settings change the leaf-task count as PyPTO's rules say (docs/partition.md), never the numbers,
and the merged swimlane carries PyPTO's hashOrder hints for merged leaves."""

import json
import os

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
ROWS = 400  # 100 consumer tiles of 4 x 8 reading one producer task


def fan(pass_options=None):
    kw = {"pass_options": pass_options} if pass_options is not None else {}

    @pypto.frontend.jit(runtime_options=SIM, **kw)
    def k(x: pypto.Tensor([ROWS, 8], pypto.DT_FP32), b: pypto.Tensor([1, 8], pypto.DT_FP32),
          y: pypto.Tensor([ROWS, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        c = b * 2.0
        y[:, :] = x + c

    return k


@pytest.fixture(autouse=True)
def _out(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("PYPTO_SIM_REPORTS", "wait")


def run(kernel):
    x = torch.randn(ROWS, 8)
    b = torch.randn(1, 8)
    y = torch.empty(ROWS, 8)
    kernel(x, b, y)
    torch.testing.assert_close(y, x + b * 2.0)
    return kernel.last_report


@pytest.mark.parametrize("options,tasks", [
    (None, 51),                                   # auto: 100 -> k = 2 -> 50, + the producer
    ({"vec_nbuffer_setting": {-1: 4}}, 26),       # manual, grouped: runs of 4
    ({"vec_nbuffer_setting": {-1: 1}}, 101),      # {-1: 1}: off
    ({"vec_nbuffer_setting": {"DEFAULT": 5}}, 21),  # whole class, runs of 5
    # Older kernels' keys, mapped to what replaced them: at least 20 leaves (k = 5, 20 + 1);
    # the mode key 0 turns the merge off.
    ({"mg_vec_parallel_lb": 20}, 21),
    ({"vec_nbuffer_mode": 0}, 101),
    # PyPTO's mode 2 (DeepSeek-V3.2's sparse attention): the merge by vec_nbuffer_setting.
    ({"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {-1: 4}}, 26),
])
def test_vec_nbuffer_setting_sets_the_leaf_count(options, tasks):
    assert run(fan(options)).stats["tasks"] == tasks


def test_merged_leaves_carry_pyptos_hash_order_hint():
    report = run(fan())
    path = os.path.join(report.path, "CostModelSimulationOutput", "merged_swimlane.json")
    with open(path, encoding="utf-8") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    merged = [e for e in events if "hashOrder-hint" in e["args"]]
    assert len(merged) == 50
    hint = merged[0]["args"]["hashOrder-hint"]
    assert hint.startswith("vecMergeInfo hashOrder: func0_")
    assert "subGraphCount: 100" in hint
    assert merged[0]["args"]["vecNBufferHashOrder"] >= 0
    assert merged[0]["args"]["l1ReuseHashOrder"] == -1


def test_pg_upper_bound_is_accepted_and_checked():
    # A cycle budget too small for any growth leaves the fan's 101 tasks merged only by the
    # vector merge (the budget caps lock-step growth, not breadth merges): 51.
    assert run(fan({"pg_upper_bound": 1})).stats["tasks"] == 51
    with pytest.raises(ValueError, match="pg_upper_bound"):
        fan({"pg_upper_bound": 0})(torch.zeros(ROWS, 8), torch.zeros(1, 8), torch.zeros(ROWS, 8))


def test_semantic_label_keys_set_the_factor_of_the_labelled_class():
    # PyPTO's label keys: {"fan_add": 4} merges the class holding the labelled add 4 at a time
    # (25 + the producer); a label no op carries changes nothing (auto: 51).
    def labelled(options):
        @pypto.frontend.jit(runtime_options=SIM, pass_options=options)
        def k(x: pypto.Tensor([ROWS, 8], pypto.DT_FP32), b: pypto.Tensor([1, 8], pypto.DT_FP32),
              y: pypto.Tensor([ROWS, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 8)
            c = b * 2.0
            pypto.set_semantic_label("fan_add")
            y[:, :] = x + c

        return k

    assert run(labelled({"vec_nbuffer_setting": {"fan_add": 4}})).stats["tasks"] == 26
    assert run(labelled({"vec_nbuffer_setting": {"other": 4}})).stats["tasks"] == 51


def test_scatter_update_writes_rows_in_place_into_a_dynamic_cache():
    # PyPTO's paged-KV update: the cache's first axis is dynamic and only the 8 rows move
    # (one task: the source tile and its rows), not a copy of the 16 x 128-row cache.
    @pypto.frontend.jit(runtime_options=SIM)
    def update(cache: pypto.Tensor([pypto.DYNAMIC, 128, 1, 64], pypto.DT_BF16),
               idx: pypto.Tensor([1, 8], pypto.DT_INT64),
               src: pypto.Tensor([1, 8, 1, 64], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(1, 8, 1, 64)
        cache[:] = pypto.scatter_update(cache, -2, idx, src)

    cache = torch.randn(16, 128, 1, 64).bfloat16()
    want = cache.clone()
    idx = torch.tensor([[3, 40, 41, 200, 1000, 2047, 7, 128]])
    src = torch.randn(1, 8, 1, 64).bfloat16()
    want.view(-1, 64)[idx.view(-1)] = src.view(8, 64)
    update(cache, idx, src)
    torch.testing.assert_close(cache, want, rtol=0, atol=0)
    assert update.last_report.stats["tasks"] == 1


def test_pass_options_set_in_the_body_apply_to_the_kernel_and_stay_in_it():
    # PyPTO's kernels set their merge settings inside the body: the first call already uses
    # them, and they do not leak into the caller's options.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([ROWS, 8], pypto.DT_FP32), b: pypto.Tensor([1, 8], pypto.DT_FP32),
          y: pypto.Tensor([ROWS, 8], pypto.DT_FP32)):
        pypto.set_pass_options(vec_nbuffer_setting={-1: 1})
        pypto.set_vec_tile_shapes(4, 8)
        y[:, :] = x + b * 2.0

    assert run(k).stats["tasks"] == 101
    assert run(k).stats["tasks"] == 101
    assert "vec_nbuffer_setting" not in pypto.get_pass_options()


def run_scale_center(k):
    """Runs a kernel computing y = a - sum(a) + 1 with a = 2x on 64 x 64 (row tiles of 16),
    checks y against torch and returns the leaf count."""
    x = torch.randn(64, 64)
    y = torch.empty(64, 64)
    k(x, y)
    torch.testing.assert_close(y, x * 2 - (x * 2).sum(-1, keepdim=True) + 1, rtol=1e-5, atol=1e-4)
    return k.last_report.stats["tasks"]


@pytest.mark.parametrize("scope,tasks", [
    (None, 4), (1, 12), ((1, False, False), 12),
    # allow_parallel_merge: the four tiles' {sum, sub} leaves (parallel branches) are one.
    ((1, True, False), 9),
    # allow_cross_scope_merge: the scoped class takes part in the group merges: the mul and
    # the add tiles join each tile's scope leaf one to one, as unscoped (4).
    ((1, False, True), 4),
    ((1, True, True), 1),
])
def test_sg_set_scope_merges_its_connected_ops_and_nothing_else(scope, tasks):
    # a = x * 2, b = sum(a), c = a - b, y = c + 1 on 4 row tiles. Unscoped, the four per-tile
    # tasks (mul, sum, sub, add) grow in lock-step into 4 leaves. With sum and sub in scope 1,
    # each tile's sum and sub are one leaf and scoped tasks merge with nothing else: the mul
    # tiles and the add tiles stay apart, 3 x 4 = 12 leaves. The tuple form is PyPTO's
    # (scope_id, allow_parallel_merge, allow_cross_scope_merge).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        a = x * 2.0
        if scope is not None:
            pypto.set_pass_options(sg_set_scope=scope)
        b = pypto.sum(a, -1, keepdim=True)
        c = a - b
        if scope is not None:
            pypto.set_pass_options(sg_set_scope=-1)
        y[:] = c + 1.0

    assert run_scale_center(k) == tasks


def test_sg_set_scope_flags_are_checked_as_pypto_does():
    with pytest.raises(pypto.PyptoValueError, match=r"scope id -1 \(no scope\) takes"):
        pypto.set_pass_options(sg_set_scope=(-1, True, False))
    with pytest.raises(pypto.PyptoValueError, match="out of range"):
        pypto.set_pass_options(sg_set_scope=2 ** 31)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.set_pass_options(sg_set_scope=(3, True, False))
        a = x * 2.0
        pypto.set_pass_options(sg_set_scope=3)
        y[:] = a + 1.0

    with pytest.raises(pypto.PyptoValueError, match=r"scope 3 is set with .* every op of one "
                                                     r"scope id must use the same flags"):
        k(torch.randn(16, 64), torch.empty(16, 64))


def test_sg_set_scope_absorbs_the_ops_on_a_path_between_its_ops():
    # a = x * 2 and c = a - b in scope 1, b = sum(a) outside it: merging a with c alone would
    # close the path a -> b -> c, so (as PyPTO does) the scope takes b in. Per row tile: one
    # leaf {a, b, c} and the unscoped add (y = c + 1): 4 x 2 = 8 leaves (without the
    # absorption, 4 x 4 = 16).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.set_pass_options(sg_set_scope=1)
        a = x * 2.0
        pypto.set_pass_options(sg_set_scope=-1)
        b = pypto.sum(a, -1, keepdim=True)
        pypto.set_pass_options(sg_set_scope=1)
        c = a - b
        pypto.set_pass_options(sg_set_scope=-1)
        y[:] = c + 1.0

    assert run_scale_center(k) == 8


def test_a_scope_whose_iterations_connect_through_another_scope_takes_it_in():
    # Two unrolled iterations of u = exp(w) (scope 1), then v = sum(u), w = u - v + w (scope 2).
    # Scope 2's last task of the first iteration feeds the second's (w), so (as PyPTO does:
    # sequential scope merge, then AvoidLoop) its two iterations are one leaf, which takes in
    # the second exp on the path between them whatever its scope: the first exp and
    # {sum, sub, add, exp, sum, sub, add} = 2 leaves (4 when merged iteration by iteration).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        w = x
        for _ in range(2):
            pypto.set_pass_options(sg_set_scope=1)
            u = pypto.exp(w)
            pypto.set_pass_options(sg_set_scope=2)
            v = pypto.sum(u, -1, keepdim=True)
            w = (u - v) + w
            pypto.set_pass_options(sg_set_scope=-1)
        y[:] = w

    x = torch.randn(16, 64) * 0.1
    y = torch.empty(16, 64)
    k(x, y)
    w = x
    for _ in range(2):
        u = torch.exp(w)
        w = (u - u.sum(-1, keepdim=True)) + w
    torch.testing.assert_close(y, w, rtol=1e-4, atol=1e-4)
    assert k.last_report.stats["tasks"] == 2


def test_a_concat_is_one_task_per_output_tile():
    # PyPTO tiles a concat by its output: four [16, 16] pieces side by side in one [16, 64]
    # tile are one task (not one per piece, 8 here), and the two tiles of a [16, 128] output
    # are two. Merges off, so the count is the emitted one.
    @pypto.frontend.jit(runtime_options=SIM, pass_options={"vec_nbuffer_setting": {-1: 1}})
    def k(a: pypto.Tensor([16, 16], pypto.DT_FP32), b: pypto.Tensor([16, 16], pypto.DT_FP32),
          y: pypto.Tensor([16, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:, :] = pypto.concat([a, b, b, a, b, a, a, b], 1)

    a, b = torch.randn(16, 16), torch.randn(16, 16)
    y = torch.empty(16, 128)
    k(a, b, y)
    torch.testing.assert_close(y, torch.cat([a, b, b, a, b, a, a, b], 1))
    assert k.last_report.stats["tasks"] == 2


def online_max_kernel():
    # The online softmax's running max and sum over two column blocks of x (glm_attention's
    # s2 loop, two steps): block 0 unscoped, block 1 as scope 1 (V1) and scope 2 (V2).
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 128], pypto.DT_FP32), y: pypto.Tensor([16, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        m = pypto.tensor([16, 1], pypto.DT_FP32, "m")
        x0 = pypto.view(x, [16, 64], [0, 0])
        a = pypto.amax(x0, -1, keepdim=True)
        s = pypto.sum(pypto.exp(x0 - a), -1, keepdim=True)
        m[:] = a
        x1 = pypto.view(x, [16, 64], [0, 64])
        pypto.set_pass_options(sg_set_scope=1)
        mn = pypto.maximum(m, pypto.amax(x1, -1, keepdim=True))
        s1 = pypto.sum(pypto.exp(x1 - mn), -1, keepdim=True)
        pypto.set_pass_options(sg_set_scope=2)
        d = pypto.exp(m - mn)
        m[:] = mn
        y[:] = s * d + s1
        pypto.set_pass_options(sg_set_scope=-1)

    return k


def test_a_write_joins_its_scope_and_its_producers_task():
    # PyPTO's assemble is an op of the scope it is traced in, and a copy-out assemble is glued
    # to its producer. Block 0's m[:] = a is stored by amax's leaf (sum's ops in between touch
    # no m); block 1's m[:] = mn is in scope 2's leaf (it cannot move up to maximum's: scope 2's
    # m - mn reads the old m). Leaves: block 0, scope 1, scope 2 = 3 (5 with each write a copy).
    k = online_max_kernel()
    x = torch.randn(16, 128)
    y = torch.empty(16, 1)
    k(x, y)
    x0, x1 = x[:, :64], x[:, 64:]
    a = x0.amax(-1, keepdim=True)
    mn = torch.maximum(a, x1.amax(-1, keepdim=True))
    want = torch.exp(x0 - a).sum(-1, keepdim=True) * torch.exp(a - mn) + \
        torch.exp(x1 - mn).sum(-1, keepdim=True)
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    assert k.last_report.stats["tasks"] == 3
