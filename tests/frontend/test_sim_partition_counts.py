# SPDX-License-Identifier: Apache-2.0
"""Leaf-task counts of kernels from PyPTO's tuning docs (tools/board_cases.py), worked out by
hand from PyPTO's partition rules (docs/partition.md). The traces are dumped (timing only), so
the large shapes cost no arithmetic."""

import collections
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import board_cases  # noqa: E402


def leaves(name, tmp_path):
    kernel, tensors = board_cases.CASES[name][0]()
    path = str(tmp_path / (name + ".ndjson"))
    kernel.dump_trace(path, *tensors)
    kinds = collections.Counter()
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "kernel" in rec:
                kinds[(rec["kernel"], rec.get("tiles", 1))] += 1
    return kinds


def l1_reuse_reference(m_tiles, n_tiles, tile_bytes, max_merge):
    """PyPTO's L1-reuse scan (l1_copy_reuse.cpp, as docs/partition.md states it) over the
    output tiles of one matmul, visited N outer, M inner: each loaded panel (A row m, B column
    n) names the leaf that registered it last; a tile tries its A then its B panel and joins
    the leaf named if it has room under the 100 MiB copy-in bound and fewer than max_merge
    members, else starts a leaf; then both its panels name the leaf it is in."""
    named = {}
    sizes = []
    for n in range(n_tiles):
        for m in range(m_tiles):
            into = None
            for panel in (("a", m), ("b", n)):
                leaf = named.get(panel)
                if leaf is not None and (sizes[leaf] + 1) * tile_bytes <= 100 * 1024 * 1024 \
                        and sizes[leaf] < max_merge:
                    into = leaf
                    break
            if into is None:
                into = len(sizes)
                sizes.append(0)
            sizes[into] += 1
            named[("a", m)] = named[("b", n)] = into
    return collections.Counter(sizes)


def test_square_matmul_l1_reuse(tmp_path):
    # C1: 48 (M) x 24 (N) = 1,152 output tiles of 128 x 256, one class; each loads a 128 x 6144
    # A panel (1.5 MiB) and a 6144 x 256 B panel (3 MiB). Auto L1 reuse: maxMerge = 1152 / 48
    # = 24, and an anchor holds at most floor(100 MiB / 4.5 MiB) = 22 tiles. Each column's
    # tiles 0-21 and 22-43 fill two leaves through their shared B panel (48 of 22); the
    # leftovers 44-47 chain across columns through their A rows: 53 leaves in all.
    want = l1_reuse_reference(48, 24, 4718592, 24)
    assert want[22] == 51 and sum(want.values()) == 53
    kinds = leaves("C1", tmp_path)
    assert kinds == {("matmul_f16", 24 * size): count for size, count in want.items()}


def test_blocked_matmul_has_one_wave_per_root(tmp_path):
    # C2: 8 x 6 roots of 6 x 4 = 24 tiles; a class of 24 < 2 x 24 AIC is not merged.
    assert leaves("C2", tmp_path) == {("matmul_f16", 24): 1152}


def test_block_diagonal_matmul_reuse_nine(tmp_path):
    # C4b: [221184, 64] x [64, 64] with 512-row tiles: 432 tiles; cube_l1_reuse_setting
    # {"DEFAULT": 9} merges runs sharing the diagonal matrix into 432 / 9 = 48 leaves (PyPTO's
    # doc: 2 per AIC). The reshape back and the assemble into the output copy nothing.
    kinds = leaves("C4b", tmp_path)
    assert kinds[("matmul_bf16", 9)] == 48
    assert not [k for k in kinds if k[0].startswith("copy")]
