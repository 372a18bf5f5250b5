#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SIM against the board on PyPTO's own model kernels, run unmodified apart from device edits:
the cases of PyPTO's tuning docs that publish board times for a model file, each tuning step
applied as the doc describes it (one option edit in the script's copy).

    .venv/bin/python tools/board_models.py /path/to/pypto-checkout [--case C3 ...] [--json F] [--keep DIR]

The checkout is a copy of (part of) hicann/pypto with its ``models/`` tree; nothing of it is
part of this repository: each case copies its model folder to a temporary folder, applies
``tools/pypto_examples.py``'s device edits (and its host-torch shim), applies the step's edit,
runs the script and reads the first report folder of the named kernel. The SIM figure compared
is the AICore end to end, the kernel time PyPTO's swimlane summary prints (as in
``tools/board_cases.py``).

Cases (hicann/pypto ``docs/zh/tutorials/debug/``):

* C3 ``performance.md`` (Stitch 调优): ``models/glm_v4_5/glm_attention.py`` at
  ``stitch_function_max_num`` 1 / 128 / 512: kernel time 1230 / 180 / 150 us. The script's
  first case (ifa_b8_s1_1_s2_16k) is read.
* QIP ``performance_case_quantindexerprolog.md``: ``models/deepseek_v32_exp/
  deepseekv32_lightning_indexer_prolog_quant.py`` (Batch 4, MTP1, 64k cache): 76 us with
  [128,128] cube tiles, 56 us with the tuned cube tiles, 49 us with L1 reuse on as well (the
  file's own settings).
* GDR ``performance_case_GDR.md`` 3.4: GatedDeltaRule's row-by-row inverse of a [128, 128]
  chunk's eight [16, 16] diagonal blocks, ``inverse_pto_min_length`` of
  ``models/qwen3_next/gated_delta_rule_impl.py`` run by a driver of this tool (below) on each
  block alone (GDR-1: "8*28 us", eight leaves) and on the blocks concatenated into one [16, 128]
  tile (GDR-2: 49 us, one leaf). The doc quotes the module's AIV time inside a kernel whose
  vector cores are all busy, so the SIM figure here is the AIV busy time of the module run
  alone (``stats.json`` cores.AIV.busy_ns), not its end to end.

Exit status 0 when every case ran (the comparison is reported, not asserted).
"""
import argparse
import contextlib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from board_report import report  # noqa: E402
from pypto_examples import _SHIM, edit_tree  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")

GLM = ("models/glm_v4_5", "glm_attention.py", "ifa_func_kernel_2")
QIP = ("models/deepseek_v32_exp", "deepseekv32_lightning_indexer_prolog_quant.py", "kernel_")
GDR_BLOCKS = ("models/qwen3_next", "_board_gdr_inverse.py blocks", "inverse_blocks")
GDR_WIDE = ("models/qwen3_next", "_board_gdr_inverse.py wide", "inverse_wide")

# The GDR module alone, as performance_case_GDR.md 3.4 describes its two forms: a [128, 128]
# chunk's eight [16, 16] diagonal blocks (copied into UB by `+ 0.0`, as the model file does)
# inverted row by row by the file's own inverse_pto_min_length, each block on its own or all
# eight side by side in one [16, 128] tile. Zero inputs: the timing does not depend on values.
_GDR_DRIVER = """import inspect
import sys
import torch
import pypto
from gated_delta_rule_impl import inverse_pto_min_length

L, B = 128, 16
F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}
# Published versions differ: the later takes the blocks side by side only, the earlier also
# stacked (attn_dim0, attn_dim1, eye, row_num, col_num).
STACKED_TOO = len(inspect.signature(inverse_pto_min_length).parameters) == 5


def inverse(stacked, side_by_side, eye, rows, cols):
    if STACKED_TOO:
        return inverse_pto_min_length(stacked, side_by_side, eye, rows, cols)
    return inverse_pto_min_length(side_by_side, eye, rows, cols)


@pypto.frontend.jit(runtime_options=SIM)
def inverse_blocks(attn: pypto.Tensor([L, L], F32), eye: pypto.Tensor([B, B], F32),
                   out: pypto.Tensor([B, L], F32)):
    pypto.set_vec_tile_shapes(128, 128)
    for i in range(L // B):
        block = attn.view([B, B], [B * i, B * i]) + 0.0
        out[:, B * i:B * (i + 1)] = inverse(block, block, eye, B, B)


@pypto.frontend.jit(runtime_options=SIM)
def inverse_wide(attn: pypto.Tensor([L, L], F32), eye: pypto.Tensor([B, L], F32),
                 out: pypto.Tensor([B, L], F32)):
    pypto.set_vec_tile_shapes(128, 128)
    blocks = [attn.view([B, B], [B * i, B * i]) + 0.0 for i in range(L // B)]
    out[:, :] = inverse(pypto.concat(blocks, dim=0), pypto.concat(blocks, dim=1), eye, B, L)


if sys.argv[1] == "blocks":
    inverse_blocks(torch.zeros(L, L), torch.zeros(B, B), torch.zeros(B, L))
else:
    inverse_wide(torch.zeros(L, L), torch.zeros(B, L), torch.zeros(B, L))
"""
_STITCH = '"stitch_function_max_num": 1024,'
_QIP_TEST = "def test_b4_s1_2_s2_64k():"
_GENERIC = "[128, 128, 128, 128, 128, 128]"


def stitch(n):
    return [("glm_attention.py", _STITCH, f'"stitch_function_max_num": {n},')]


def qip_config(**kv):
    """Edits of the QIP test's config values (key=value lines of test_b4_s1_2_s2_64k)."""
    return [("deepseekv32_lightning_indexer_prolog_quant.py", _QIP_TEST, kv)]


# name: (model, board time in us, the edits of this step, where the doc publishes it)
CASES = {
    "C3-1": (GLM, 1230.0, stitch(1), "performance.md: glm_attention, stitch 1"),
    "C3-128": (GLM, 180.0, stitch(128), "performance.md: glm_attention, stitch 128"),
    "C3-512": (GLM, 150.0, stitch(512), "performance.md: glm_attention, stitch 512"),
    "QIP-1": (QIP, 76.0, qip_config(cube_l1_reuse_setting="{-1: 1}", q_linear=_GENERIC,
                                    k_linear=_GENERIC, w_linear=_GENERIC),
              "performance_case_quantindexerprolog.md: [128,128] cube tiles"),
    "QIP-2": (QIP, 56.0, qip_config(cube_l1_reuse_setting="{-1: 1}"),
              "performance_case_quantindexerprolog.md: tuned cube tiles"),
    "QIP-3": (QIP, 49.0, [], "performance_case_quantindexerprolog.md: tuned tiles, L1 reuse"),
    "GDR-1": (GDR_BLOCKS, 8 * 28.0, [], "performance_case_GDR.md 3.4: inverse, 8 [16,16] blocks"),
    "GDR-2": (GDR_WIDE, 49.0, [], "performance_case_GDR.md 3.4: inverse, one [16,128] tile"),
}
STEPS = [("C3-1", "C3-128", "stitch 1 -> 128"), ("C3-128", "C3-512", "stitch 128 -> 512"),
         ("QIP-1", "QIP-2", "cube tiles"), ("QIP-2", "QIP-3", "L1 reuse"),
         ("GDR-1", "GDR-2", "blocks side by side in one tile")]
# Cases whose figure is the AIV busy time (the doc times a module, not a kernel).
_AIV_TIME = {"GDR-1", "GDR-2"}


class CaseError(Exception):
    pass


def apply_edit(folder, edit):
    name, old, new = edit
    path = os.path.join(folder, name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if isinstance(new, dict):  # key=value lines inside the function that starts at `old`
        start = text.find(old)
        if start < 0:
            raise CaseError(f"{name}: {old!r} not found (another version of the file?)")
        end = text.find("\ndef ", start + len(old))
        end = end if end >= 0 else len(text)
        body = text[start:end]
        for key, value in new.items():
            body, n = re.subn(rf"(\n\s+{key}=)[^\n]*,\n", lambda m: f"{m.group(1)}{value},\n",
                              body)
            if n != 1:
                raise CaseError(f"{name}: {key}= occurs {n} times in {old!r}")
        text = text[:start] + body + text[end:]
    else:
        if text.count(old) != 1:
            raise CaseError(f"{name}: {old!r} occurs {text.count(old)} times")
        text = text.replace(old, new)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run_case(name, checkout, work, timeout_s):
    (folder, script, kernel), board_us, edits, where = CASES[name]
    src = os.path.join(checkout, folder)
    if not os.path.isdir(src):
        raise CaseError(f"{src} is not a folder")
    dst = os.path.join(work, name)
    shutil.copytree(src, dst)
    edit_tree(dst)
    for e in edits:
        apply_edit(dst, e)
    argv = script.split()
    if argv[0] == "_board_gdr_inverse.py":
        with open(os.path.join(dst, argv[0]), "w", encoding="utf-8") as f:
            f.write(_GDR_DRIVER)
    shim = os.path.join(work, "_shim")
    env = dict(os.environ, PYPTO_OUTPUT_DIR=os.path.join(dst, "output"), TILE_FWK_DEVICE_ID="0",
               PYTHONDONTWRITEBYTECODE="1", PYPTO_SIM_REPORTS="wait",
               PYTHONPATH=os.pathsep.join(p for p in (shim, os.environ.get("PYTHONPATH")) if p))
    env.pop("ASCEND_HOME_PATH", None)
    r = subprocess.run([PYTHON, *argv], cwd=dst, env=env, capture_output=True, text=True,
                       timeout=timeout_s)
    reports = sorted(glob.glob(os.path.join(dst, "output", kernel + "*")))
    if not reports:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        raise CaseError(f"{argv[0]} wrote no {kernel}* report (exit {r.returncode}): {tail[0]}")
    with open(os.path.join(reports[0], "stats.json"), encoding="utf-8") as f:
        stats = json.load(f)
    figure = "AIV busy time" if name in _AIV_TIME else "AICore end to end"
    if name in _AIV_TIME:
        sim_us = stats["cores"]["AIV"]["busy_ns"] / 1000.0
    else:
        sim_us = stats["aicore"]["end_to_end_ns"] / 1000.0
    return {"case": name, "where": where, "board_us": board_us, "sim_us": round(sim_us, 1),
            "figure": figure,
            "makespan_us": round(stats["makespan_ns"] / 1000.0, 1),
            "ratio": round(sim_us / board_us, 3), "tasks": stats["tasks"],
            "script_exit": r.returncode}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="a hicann/pypto checkout (its models/ folder)")
    ap.add_argument("--case", action="append", choices=list(CASES),
                    help="run only these cases (repeatable; default: all)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per case")
    ap.add_argument("--keep", help="run in this (new) folder and keep each case's copy and reports")
    a = ap.parse_args()
    if not os.access(PYTHON, os.X_OK):
        sys.exit(f"board_models: {PYTHON} not found; build with tools/setup.sh")
    rows, failed = {}, 0
    with contextlib.nullcontext(a.keep) if a.keep else \
            tempfile.TemporaryDirectory(prefix="board_models_") as work:
        os.makedirs(work, exist_ok=True)
        os.makedirs(os.path.join(work, "_shim"))
        with open(os.path.join(work, "_shim", "sitecustomize.py"), "w", encoding="utf-8") as f:
            f.write(_SHIM)
        for name in a.case or list(CASES):
            print(f"board_models: {name} ...", file=sys.stderr, flush=True)
            try:
                rows[name] = run_case(name, os.path.abspath(a.checkout), work, a.timeout)
            except (CaseError, subprocess.TimeoutExpired) as e:
                print(f"board_models: {name}: {e}", file=sys.stderr)
                failed += 1
    report(rows, STEPS, a.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
