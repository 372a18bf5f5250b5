#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs PyPTO's own public examples and frontend tests against this package in SIM mode, with
device edits only, and reports the pass rate.

    .venv/bin/python tools/pypto_examples.py /path/to/pypto-checkout [--json out.json]

The checkout is a copy of (part of) the hicann/pypto repository: its ``examples/`` tree and
``python/tests/st/{frontend,interface}/`` (with the helper modules those tests import from
``python/tests/st/``, which the runner puts on the import path as ``st``), and its ``tools/``
when it has one (helper libraries that examples import from there). Nothing of it is
part of this repository: the runner copies it to a temporary folder, edits the copies and
runs them there.

Device edits (the only changes made to PyPTO's files, so that a script written for a board
runs on a CPU-only machine in SIM):

* ``import torch_npu`` / ``from torch_npu ... import ...`` become ``pass``;
* ``torch_npu.npu_format_cast(x, fmt)`` becomes ``(x)``: a CPU tensor passed for an NZ
  parameter is taken as the logical (ND) data, so the cast has nothing to do;
* calls ``torch.npu.X(...)``, ``torch_npu.npu.X(...)``, ``torch_npu.X(...)`` become no-ops;
* assignments to a ``torch_npu`` attribute (``torch_npu.npu.config.X = ...``) become ``pass``;
* ``.npu()`` becomes ``.cpu().contiguous()`` (a copy to the board is dense, so a strided
  slice arrives contiguous there); device strings ``"npu"``, ``"npu:N"``, ``f"npu:{...}"`` and
  ``device=<device id variable>`` become ``"cpu"``;
* ``pypto.RunMode.NPU`` becomes ``pypto.RunMode.SIM``;
* ``"npu" in <device>`` (an example's "are we on a board, so check the numbers" test) becomes
  ``True``, so the numbers are checked;
* an NPU graph (``torch.npu.NPUGraph()``, ``with torch.npu.graph(g):``) runs the captured
  calls where the block is, once, and ``g.replay()`` does nothing (the board runs them once
  per replay);
* ``torch_npu.npu_format_cast(t, fmt)`` becomes a dense copy of ``t`` that remembers ``fmt``,
  which ``torch_npu.get_npu_format`` answers (2, ND, when never cast), and
  ``t.device.type == "npu"`` holds for the CPU tensors that stand for the board's.

By default (``--mode checked``) an example whose numeric checks are guarded by
``run_mode == "npu"`` runs its board path (``TILE_FWK_DEVICE_ID=0``, default
``--run_mode npu``), the path that compares the result with the expected numbers; the edits
above make that path run on CPU tensors in SIM. An example that checks in both modes runs
with ``--run_mode sim``. ``--mode sim`` passes
``--run_mode sim`` instead, as a user without a board would; most examples then skip their
numeric checks.

Cases: every entry of an example's ``examples = {...}`` table (run as ``script.py <id>`` or
``script.py -t <id>``, whichever the script's argparse takes), a script without a table as one
case, and every pytest test id of the test files. The checkout's ``models/`` tree, when it
has one, is a group of its own (``--no-models`` leaves it out): every pytest id of its
``test_*.py`` files and of the scripts that define tests, collected and run from the file's
folder, and the other scripts' entry points (a ``test_*.py`` script without pytest tests
too) run as the examples' are. In ``models/`` a
golden computed with a torch_npu operator (``torch_npu.npu_<op>``, other than the format
cast) raises naming the operator instead of becoming a no-op. Each case runs in its own
subprocess with a timeout and is classified as

* ``pass``;
* ``fail`` with the first line of the error (its exception type says whether it is a
  ``pypto.error`` class);
* ``env``: the failure is in the host environment, not in pypto (the installed torch lacks an
  attribute the script's own host code uses, e.g. ``torch.uint16`` in torch < 2.3; a model's
  golden needs a board-only torch_npu operator, torchair or HCCL; a script imports a helper
  library from PyPTO's repo-level ``tools/``, which the checkout lacks);
* ``crash`` (killed by a signal), ``timeout``, ``skip`` (pytest skip marks; not counted).

The pass rate is pass / (cases − skipped), overall and per group (examples, each test
folder, models); the rate without the environment cases is printed too. ``--torch-dtype-shim`` makes an older CPU torch compute the scripts' host code as the
board's torch would: placeholder attributes for the dtypes it lacks (``torch.uint16`` …), so
that a script which only names them in a host-side table runs, and fp16/bf16 matmuls with fp32
accumulation, as torch_npu computes the references the scripts compare with (torch 1.13 on
CPU accumulates bf16 in bf16, which is off by an ulp now and then, and has no fp16 matmul),
and fp16 relu (torch 1.13 has no CPU kernel for it; relu only selects, so going through fp32
gives the same bits), and torch.library's ``FRAGMENT`` kind (torch < 2.0 takes only ``DEF``
and ``IMPL``; the model kernels register their torch ops with it), and a bare device index
(``device=0``: the board's NPU under torch_npu, CUDA on a CPU-only torch) as the CPU, and
fp16 sigmoid and trunc, ``dtype.itemsize``, ``torch.rand`` of an integer dtype,
``topk(sorted=False)`` in the board's descending order and int32 index tensors; it shows
which environment cases pass once the host torch behaves as the board's.

``--backend aten`` (or ``tile``) runs every kernel on the hardware backend instead of the
simulator: the sitecustomize shim registers ``pypto.backends.DeviceBackend("cpu", <executor>)``
for both run modes (``register_backend(..., replace=True)``), so each call dispatches its
compiled tasks on the wall-clock runtime's host threads and executes their tile ops with the
ATen executor (or the tile executor). Cases that read the simulator's own reports (the
cost-model examples reading ``./output``) have no such reports on the device backend.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TEST_DIRS = ("python/tests/st/frontend", "python/tests/st/interface")

# ---------------------------------------------------------------------------------------------
# Device edits
# ---------------------------------------------------------------------------------------------

_NOOP = "(lambda *_a, **_k: None)"
# torch_npu.Format's values (ACL's storage format codes) for the formats model scripts name.
_ACL_FORMATS = {"NCHW": 0, "NHWC": 1, "ND": 2, "NC1HWC0": 3, "FRACTAL_Z": 4, "NDHWC": 27,
                "FRACTAL_NZ": 29, "NCDHW": 30}
_EDITS: List[Tuple[re.Pattern, str]] = [
    (re.compile(r"^([ \t]*)import[ \t]+torch_npu\b[^\n]*$", re.M), r"\1pass  # device edit"),
    (re.compile(r"^([ \t]*)from[ \t]+torch_npu\b[^\n]*$", re.M), r"\1pass  # device edit"),
    (re.compile(r"^([ \t]*)torch_npu(?:\.\w+)+[ \t]*=(?!=)[^\n]*$", re.M),
     r"\1pass  # device edit"),
    # An NPU graph captures the calls in its ``with`` block and runs them at ``replay()``
    # (once per replay); on the CPU the captured calls run where the block is, and a replay
    # does nothing: the outputs match the board's after one replay (a script that replays
    # again would rerun the capture there).
    (re.compile(r"\b(?:torch|torch_npu)\.npu\.NPUGraph\("),
     'type("NPUGraph", (), {"__init__": ' + _NOOP + ', "replay": ' + _NOOP + '})('),
    (re.compile(r"\b(?:torch|torch_npu)\.npu\.graph\("),
     '(lambda *_a, **_k: __import__("contextlib").nullcontext())('),
    # torch_npu's format query answers what the format cast remembered (2 is ND), and an NPU
    # tensor is a CPU one here, so ``t.device.type == "npu"`` guards the query as on the board.
    # The board's format cast returns a dense copy in the format asked for; here the copy keeps
    # the ND data and remembers the format, which torch_npu's format query below answers.
    (re.compile(r"\btorch_npu\.npu_format_cast\("),
     '(lambda _t, _f=2, *_a, **_k: (lambda _c: setattr(_c, "_npu_format", _f) or _c)('
     '_t.contiguous().clone()))('),
    (re.compile(r"\btorch_npu\.Format\.(\w+)\b"),
     lambda m: str(_ACL_FORMATS.get(m.group(1), m.group(0)))),
    (re.compile(r"\btorch_npu\.get_npu_format\("),
     '(lambda _t, *_a, **_k: getattr(_t, "_npu_format", 2))('),
    (re.compile(r"""(\.device\.type)\s*==\s*(["'])npu\2"""), r'\1 in ("npu", "cpu")'),
    (re.compile(r"\btorch_npu\.npu\.\w+\("), _NOOP + "("),
    (re.compile(r"\btorch\.npu\.\w+\("), _NOOP + "("),
    (re.compile(r"\btorch_npu\.\w+\("), _NOOP + "("),
    (re.compile(r"\.npu\(\)"), ".cpu().contiguous()"),
    (re.compile(r"""\bf(["'])npu:\{[^}"']*\}\1"""), '"cpu"'),
    (re.compile(r"""(["'])npu:\d+\1"""), '"cpu"'),
    (re.compile(r"""\bdevice\s*=\s*(["'])npu\1"""), 'device="cpu"'),
    (re.compile(r"""\.to\(\s*(["'])npu\1"""), '.to("cpu"'),
    (re.compile(r"\bdevice\s*=\s*(device_id|DEVICE_ID|dev_id)\b(?!\s*[=(])"), 'device="cpu"'),
    (re.compile(r"\bpypto\.RunMode\.NPU\b"), "pypto.RunMode.SIM"),
    (re.compile(r"""(["'])npu\1\s+in\s+device\b"""), "True"),
]


_MULTI_IMPORT = re.compile(r"^([ \t]*)import[ \t]+([\w., \t]*\btorch_npu\b[\w., \t]*)$", re.M)


def _drop_torch_npu(m: "re.Match") -> str:
    names = [n.strip() for n in m.group(2).split(",")]
    keep = [n for n in names if n.split()[0] != "torch_npu"]
    return f"{m.group(1)}import {', '.join(keep)}" if keep else f"{m.group(1)}pass  # device edit"


def device_edit(source: str) -> Tuple[str, int]:
    """The source with the device edits applied, and how many places changed."""
    source, count = _MULTI_IMPORT.subn(_drop_torch_npu, source)
    for pattern, repl in _EDITS:
        source, n = pattern.subn(repl, source)
        count += n
    return source, count


# A model's golden computed with a torch_npu operator (torch_npu.npu_<op>, other than the
# format cast) has no CPU form: the call raises a named error instead of becoming a no-op, so
# that the case is classified as environment with the operator as its reason.
_BOARD_OP = re.compile(r"\btorch_npu\.(npu_(?!format_cast\b)\w+)\(")
_BOARD_OP_ERROR = "board-only operator torch_npu."


def board_op_edit(source: str) -> Tuple[str, int]:
    """``torch_npu.npu_<op>(...)`` -> a call that raises naming the operator."""
    return _BOARD_OP.subn(
        lambda m: ("(lambda *_a, **_k: (_ for _ in ()).throw(RuntimeError("
                   f"'{_BOARD_OP_ERROR}{m.group(1)} (no CPU form of the golden)')))("), source)


def edit_tree(root: str, board_ops: bool = False) -> int:
    edits = 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            new, m = board_op_edit(text) if board_ops else (text, 0)
            new, n = device_edit(new)
            n += m
            if n:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
                edits += n
    return edits


# ---------------------------------------------------------------------------------------------
# Case discovery
# ---------------------------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    kind: str  # "example" or "test"
    cwd: str
    argv: List[str]
    status: str = ""
    error: str = ""
    seconds: float = 0.0
    group: str = ""  # "examples", "<folder> tests" or "models": the report's groups
    detail: str = field(default="", repr=False)


def _example_table(tree: ast.AST) -> Optional[List[str]]:
    """The string keys of a dict literal assigned to ``examples`` anywhere in the script."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            if any(isinstance(t, ast.Name) and t.id == "examples" for t in node.targets):
                keys = [k.value for k in node.value.keys
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                if keys:
                    return keys
    return None


def _argparse_flags(tree: ast.AST) -> Tuple[bool, bool, bool]:
    """(takes -t/--tests, takes a positional example id, takes --run_mode)."""
    tests = positional = run_mode = False
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            names = [a.value for a in node.args
                     if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if "--tests" in names or "-t" in names:
                tests = True
            if any(not n.startswith("-") for n in names):
                positional = True
            if "--run_mode" in names or "--run-mode" in names:
                run_mode = True
    return tests, positional, run_mode


def _is_script(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            left = node.test.left
            if isinstance(left, ast.Name) and left.id == "__name__":
                return True
    return False


_NPU_GUARD = re.compile(r"""run_mode\s*==\s*["']npu["']""")


def _script_cases(path: str, work: str, mode: str, tree: ast.AST, group: str) -> List[Case]:
    """The cases of one script run the way a user runs it: an entry of its ``examples``
    table each, or the whole script."""
    dirpath, name = os.path.split(path)
    rel = os.path.relpath(path, work)
    takes_tests, positional, takes_run_mode = _argparse_flags(tree)
    # A script whose numeric checks are guarded by `run_mode == "npu"` runs its board
    # path (checked mode); one that checks in both modes runs its own SIM path.
    with open(path, encoding="utf-8") as f:
        board_checks = bool(_NPU_GUARD.search(f.read()))
    use_sim = mode == "sim" or not board_checks
    extra = ["--run_mode", "sim"] if (use_sim and takes_run_mode) else []
    keys = _example_table(tree)
    if keys and (takes_tests or positional):
        return [Case(f"{rel}::{key}", "example", dirpath,
                     [name] + (["-t", key] if takes_tests else [key]) + extra, group=group)
                for key in keys]
    return [Case(rel, "example", dirpath, [name] + extra, group=group)]


def _parse(path: str) -> Optional[ast.AST]:
    with open(path, encoding="utf-8") as f:
        try:
            return ast.parse(f.read())
        except SyntaxError:
            return None


def example_cases(work: str, mode: str) -> List[Case]:
    cases: List[Case] = []
    base = os.path.join(work, "examples")
    for dirpath, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            path = os.path.join(dirpath, name)
            tree = _parse(path)
            if tree is None or not _is_script(tree):
                continue  # a module the examples import
            cases += _script_cases(path, work, mode, tree, "examples")
    return cases


def _pytest_cases(cwd: str, target: str, rel: str, python: str, env: dict, timeout: float,
                  group: str) -> List[Case]:
    """One case per pytest id of ``target`` (a path relative to ``cwd``), each named by
    ``rel`` (the file's path inside the checkout) and its test name."""
    try:
        out = subprocess.run(
            [python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
             target], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [Case(rel, "test", cwd, [], "timeout", "collection timed out", group=group)]
    ids = [line.strip() for line in out.stdout.splitlines() if line.startswith(target + "::")]
    if not ids:
        case = Case(rel, "test", cwd, [], group=group)
        case.status = "fail"
        case.detail = out.stdout + out.stderr
        case.error = "collection: " + first_error(case.detail, pytest=True)
        classify_env(case)
        return [case]
    return [Case(rel + tid[len(target):], "test", cwd,
                 ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", tid], group=group)
            for tid in ids]


def test_cases(work: str, test_dirs: List[str], python: str, env: dict,
               timeout: float) -> List[Case]:
    cases: List[Case] = []
    for d in test_dirs:
        base = os.path.join(work, d)
        if not os.path.isdir(base):
            continue
        group = f"{os.path.basename(d.rstrip('/'))} tests"
        for name in sorted(os.listdir(base)):
            if not (name.startswith("test_") and name.endswith(".py")):
                continue
            rel = os.path.join(d, name)
            cases += _pytest_cases(work, rel, rel, python, env, timeout, group)
    return cases


def _defines_tests(tree: ast.AST) -> bool:
    """Whether a module defines pytest tests (a top-level ``test_*`` function or ``Test*``
    class), so that pytest runs it."""
    return any((isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name.startswith("test"))
               or (isinstance(n, ast.ClassDef) and n.name.startswith("Test"))
               for n in getattr(tree, "body", []))


def model_cases(work: str, mode: str, python: str, env: dict, timeout: float) -> List[Case]:
    """The ``models/`` tree as a kernel author runs it: every pytest id of a ``test_*.py``
    file or of a script that defines tests (collected and run from the file's own folder,
    which its imports of sibling modules and ``utils/`` need), and every other script's
    entry point the way the examples' are run."""
    cases: List[Case] = []
    for dirpath, dirs, files in os.walk(os.path.join(work, "models")):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, work)
            tree = _parse(path)
            if tree is None:
                continue
            # A test_*.py script that defines no pytest test (its main() marked skip for
            # pytest) runs as its author runs it: as a script.
            if _defines_tests(tree) or (name.startswith("test_") and not _is_script(tree)):
                cases += _pytest_cases(dirpath, name, rel, python, env, timeout, "models")
            elif _is_script(tree):
                cases += _script_cases(path, work, mode, tree, "models")
    return cases


# ---------------------------------------------------------------------------------------------
# Running and classifying
# ---------------------------------------------------------------------------------------------

_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|error)"
                       r"[\w.]*)(: .*)?$")


def first_error(text: str, pytest: bool = False) -> str:
    """The first line of the error a user sees: the final exception line of a traceback, or
    pytest's first ``E`` line."""
    lines = text.splitlines()
    if pytest:
        for line in lines:
            if line.startswith("E   "):
                return line[4:].strip()[:300]
    for line in reversed(lines):
        s = line.strip()
        if _EXC_LINE.match(s):
            return s[:300]
    tail = [s.strip() for s in lines if s.strip()]
    return (tail[-1] if tail else "(no output)")[:300]


_SHIM = """# written by tools/pypto_examples.py --torch-dtype-shim
import functools as _functools
import torch as _torch
# (fp8 names too: qat's test keys a host tolerance table by torch.float8_e4m3fn.)
for _name in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
    if not hasattr(_torch, _name):
        setattr(_torch, _name, type("missing_torch_dtype", (), {"__repr__": lambda s, n=_name:
                f"torch.{n} (placeholder: not in torch {_torch.__version__})"})())

# The device edits move a script's reference computation from the board to the CPU. The
# board's torch (torch_npu) multiplies fp16/bf16 matrices with fp32 accumulation; an older
# CPU torch accumulates bf16 in bf16 and has no fp16 matmul. It also has no CPU fp16 relu,
# sigmoid or trunc (relu and trunc are exact in any precision). Each such call computes
# through fp32 and rounds once, as the board does; other dtypes and call forms go to torch
# unchanged.
def _through_fp32(fn, dtypes, arity):
    @_functools.wraps(fn)
    def call(*args, **kwargs):
        if (len(args) == arity and not kwargs
                and all(isinstance(a, _torch.Tensor) and a.device.type == "cpu"
                        and a.dtype == args[0].dtype for a in args)
                and args[0].dtype in dtypes):
            return fn(*(a.float() for a in args)).to(args[0].dtype)
        return fn(*args, **kwargs)
    return call
_HALF = (_torch.float16, _torch.bfloat16)
for _owner, _fn in ((_torch, "matmul"), (_torch, "mm"), (_torch, "bmm"),
                    (_torch.Tensor, "__matmul__"), (_torch.Tensor, "matmul")):
    setattr(_owner, _fn, _through_fp32(getattr(_owner, _fn), _HALF, 2))
for _owner, _fn in ((_torch, "relu"), (_torch.Tensor, "relu"), (_torch.nn.functional, "relu"),
                    (_torch, "sigmoid"), (_torch.Tensor, "sigmoid"),
                    (_torch, "trunc"), (_torch.Tensor, "trunc")):
    setattr(_owner, _fn, _through_fp32(getattr(_owner, _fn), (_torch.float16,), 1))

# torch < 2.1 has no dtype.itemsize (model scripts size their host layouts with it); torch.dtype
# is an immutable extension type, so the property goes into its dict through the C API.
if not hasattr(_torch.float32, "itemsize"):
    import ctypes as _ctypes, gc as _gc
    _gc.get_referents(_torch.dtype.__dict__)[0]["itemsize"] = property(
        lambda d: _torch.empty((), dtype=d).element_size())
    _ctypes.pythonapi.PyType_Modified(_ctypes.py_object(_torch.dtype))

# The board's torch.rand fills any dtype (torch_npu's uniform_ runs StatelessRandomUniformV2 in
# the tensor's dtype: an integer tensor of U(0, 1) is zeros); CPU torch refuses integer dtypes.
_rand = _torch.rand
@_functools.wraps(_rand)
def _rand_any(*args, **kwargs):
    dtype = kwargs.get("dtype")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        return _rand(*args, **dict(kwargs, dtype=_torch.float32)).to(dtype)
    return _rand(*args, **kwargs)
_torch.rand = _rand_any

# topk(sorted=False) leaves the order open: the board's kernel returns it descending, as
# sorted=True does, while CPU torch returns another order, which goldens compare by position.
def _topk_sorted(fn):
    @_functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs.get("sorted") is False:
            kwargs["sorted"] = True
        return fn(*args, **kwargs)
    return call
_torch.topk = _topk_sorted(_torch.topk)
_torch.Tensor.topk = _topk_sorted(_torch.Tensor.topk)

# torch < 2.0 has no torch._dynamo: model scripts only use its allow_in_graph decorator, the
# identity outside torch.compile.
import sys as _sys, types as _types
try:
    import torch._dynamo  # noqa: F401
except ImportError:
    _dynamo = _types.ModuleType("torch._dynamo")
    _dynamo.allow_in_graph = lambda fn: fn
    _sys.modules["torch._dynamo"] = _dynamo
    _torch._dynamo = _dynamo

# torch < 2.0's torch.library takes only "DEF" and "IMPL" kinds; the model kernels register
# their torch ops into the shared "pypto" namespace with "FRAGMENT", which its C++ side has.
import torch.library as _library
_library_init = _library.Library.__init__
def _fragment_init(self, ns, kind, dispatch_key=""):
    if kind != "FRAGMENT":
        return _library_init(self, ns, kind, dispatch_key)
    self.m = _torch._C._dispatch_library(kind, ns, dispatch_key, __file__, 0)
    self.ns, self._op_impls, self.kind, self.dispatch_key = ns, set(), kind, dispatch_key
_library.Library.__init__ = _fragment_init

# A device given as a bare index (``device=device_id``, passed through a helper's argument
# where the device edits cannot see it) is the board's NPU under torch_npu; on a CPU-only
# torch it would mean CUDA. The edits move every NPU tensor to the CPU, so this one goes too.
def _index_to_cpu(fn):
    @_functools.wraps(fn)
    def call(*args, **kwargs):
        d = kwargs.get("device")
        if isinstance(d, int) and not isinstance(d, bool):
            kwargs["device"] = "cpu"
        return fn(*args, **kwargs)
    return call
for _fn in ("zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint", "randperm",
            "tensor", "as_tensor", "eye", "linspace", "zeros_like", "ones_like", "empty_like",
            "full_like", "rand_like", "randn_like"):
    setattr(_torch, _fn, _index_to_cpu(getattr(_torch, _fn)))

# torch >= 2.0 indexes with int32 tensors (a block table's entries); torch 1.13 takes only int64.
if int(_torch.__version__.split(".")[0]) < 2:
    def _long_index(idx):
        if isinstance(idx, _torch.Tensor) and idx.dtype == _torch.int32:
            return idx.long()
        return tuple(_long_index(i) for i in idx) if isinstance(idx, tuple) else idx
    _getitem, _setitem = _torch.Tensor.__getitem__, _torch.Tensor.__setitem__
    _torch.Tensor.__getitem__ = lambda self, idx: _getitem(self, _long_index(idx))
    _torch.Tensor.__setitem__ = lambda self, idx, v: _setitem(self, _long_index(idx), v)

# torch.unravel_index arrived in torch 2.2; PyPTO's compare helpers call it on host tensors.
if not hasattr(_torch, "unravel_index"):
    def _unravel_index(indices, shape):
        idx, out = _torch.as_tensor(indices), []
        for dim in reversed(tuple(shape)):
            out.append(idx % dim)
            idx = _torch.div(idx, dim, rounding_mode="floor")
        return tuple(reversed(out))
    _torch.unravel_index = _unravel_index
"""

_BACKEND_SHIM = """# written by tools/pypto_examples.py --backend {executor}
try:
    import pypto as _pypto
    from pypto import _backend as _pypto_backend
    _dev = _pypto.backends.DeviceBackend("cpu", {executor!r})
    for _mode in (_pypto.RunMode.SIM, _pypto.RunMode.NPU):
        _pypto_backend.register_backend(_mode, _dev, replace=True)
except ImportError:  # a case that runs without pypto
    pass
"""

# Host code written for the board's torch (torch_npu) hits what an older CPU torch lacks: a
# dtype, a module or function (torch._dynamo, torch.compile: torch >= 2.0), a half-precision
# CPU kernel (fp16 matmul).
_ENV_ERRORS = [
    re.compile(r"module 'torch' has no attribute "
               r"'(u?int\d+|float8\w*|bits\w*|uint\w*|compile)'"),
    re.compile(r"No module named 'torch\._dynamo'"),
    re.compile(r"\"\w+_cpu_?\" not implemented for '(Half|BFloat16)'"),
    # What only a board has: a torch_npu operator in a model's golden (board_op_edit), the
    # NPU dispatch key (torch_npu registers it; a kernel file's op registered for it without
    # a guard fails at import), the NPU graph compiler, collective communication over HCCL.
    re.compile(re.escape(_BOARD_OP_ERROR) + r"\w+"),
    re.compile(r"could not parse dispatch key: NPU"),
    re.compile(r"No module named '(torchair|torch_npu)\b"),
    re.compile(r"\bHCCL\b|\bhccl\b|backend=['\"]?hccl"),
    # A helper library of PyPTO's repository outside examples/ that the checkout lacks (the
    # runner copies the checkout's tools/ when it has one, so then the import succeeds).
    re.compile(r"No module named 'exported_custom_op_litenpu\b"),
]


def classify_env(case: Case) -> None:
    if case.status == "fail" and any(p.search(case.error) or p.search(case.detail)
                                     for p in _ENV_ERRORS):
        # Only when the missing torch attribute is the reason, not a later failure.
        if any(p.search(case.error) for p in _ENV_ERRORS):
            case.status = "env"


def run_case(case: Case, python: str, env: dict, timeout: float) -> Case:
    if case.status:  # decided at discovery (collection error)
        return case
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([python] + case.argv, cwd=case.cwd, env=env,
                              capture_output=True, text=True, timeout=timeout,
                              start_new_session=True)
    except subprocess.TimeoutExpired as e:
        case.seconds = time.perf_counter() - t0
        case.status = "timeout"
        case.error = f"no result after {timeout:.0f} s"
        out = e.stdout or ""
        case.detail = out if isinstance(out, str) else out.decode("utf-8", "replace")
        return case
    case.seconds = time.perf_counter() - t0
    text = proc.stdout + proc.stderr
    case.detail = text[-20000:]
    rc = proc.returncode
    if rc < 0:
        case.status = "crash"
        try:
            case.error = f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            case.error = f"killed by signal {-rc}"
        return case
    if case.kind == "test":
        summary = text.strip().splitlines()[-1] if text.strip() else ""
        if rc == 0 and " skipped" in summary and " passed" not in summary:
            case.status = "skip"
            return case
        if rc == 0:
            case.status = "pass"
            return case
        if rc == 5 and "no tests ran" in summary:
            case.status = "skip"
            return case
        case.status = "fail"
        case.error = first_error(text, pytest=True)
    else:
        if rc == 0:
            case.status = "pass"
            return case
        case.status = "fail"
        case.error = first_error(text)
    classify_env(case)
    return case


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def summarize(cases: List[Case], groups: bool = True) -> dict:
    counts = {k: 0 for k in ("pass", "fail", "env", "crash", "timeout", "skip")}
    for c in cases:
        counts[c.status] = counts.get(c.status, 0) + 1
    counted = len(cases) - counts["skip"]
    rate = counts["pass"] / counted if counted else 0.0
    no_env = counted - counts["env"]
    rate_no_env = counts["pass"] / no_env if no_env else 0.0
    out = {"cases": len(cases), "counted": counted, **counts,
           "pass_rate": round(rate, 4), "pass_rate_without_env": round(rate_no_env, 4)}
    if groups:
        names = list(dict.fromkeys(c.group for c in cases))
        out["groups"] = {g: summarize([c for c in cases if c.group == g], False)
                         for g in names}
    return out


def print_table(cases: List[Case], summary: dict, verbose: bool) -> None:
    width = min(max((len(c.id) for c in cases), default=10), 90)
    for c in cases:
        if c.status == "pass" and not verbose:
            continue
        cid = c.id if len(c.id) <= width else "…" + c.id[-(width - 1):]
        print(f"{c.status:7} {c.seconds:6.1f}s  {cid:{width}}  {c.error}")
    s = summary
    print()
    print(f"cases {s['cases']}  (skipped {s['skip']}, counted {s['counted']})")
    print(f"pass {s['pass']}  fail {s['fail']}  env {s['env']}  crash {s['crash']}  "
          f"timeout {s['timeout']}")
    print(f"pass rate {s['pass']}/{s['counted']} = {100 * s['pass_rate']:.1f} %"
          f"   without environment cases: {s['pass']}/{s['counted'] - s['env']} = "
          f"{100 * s['pass_rate_without_env']:.1f} %")
    for name, g in s.get("groups", {}).items():
        print(f"  {name or 'other'}: pass {g['pass']} of {g['counted']}  (fail {g['fail']}, "
              f"env {g['env']}, crash {g['crash']}, timeout {g['timeout']}, "
              f"skipped {g['skip']})")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", help="a PyPTO checkout (its examples/ and python/tests/st/)")
    ap.add_argument("--json", help="write every case and the summary to this file")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per case")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--mode", choices=["checked", "sim"], default="checked",
                    help="checked: run the board path (numbers checked) in SIM; "
                         "sim: pass --run_mode sim as a user without a board")
    ap.add_argument("--tests", action="append", default=None,
                    help="test folder inside the checkout (repeatable; default: "
                         + ", ".join(DEFAULT_TEST_DIRS) + ")")
    ap.add_argument("--no-examples", action="store_true")
    ap.add_argument("--no-tests", action="store_true")
    ap.add_argument("--no-models", action="store_true",
                    help="leave out the checkout's models/ tree")
    ap.add_argument("-k", dest="filter", help="only cases whose id contains this")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--keep", action="store_true", help="keep the edited copy (path printed)")
    ap.add_argument("--torch-dtype-shim", action="store_true",
                    help="make an older CPU torch compute the scripts' host code as the "
                         "board's torch does: placeholders for dtypes it lacks (torch.uint16 "
                         "...), so host code that only names them runs, and fp16/bf16 matmuls "
                         "with fp32 accumulation (torch_npu's)")
    ap.add_argument("--backend", choices=["sim", "aten", "tile"], default="sim",
                    help="sim: the simulator (default); aten/tile: every kernel on "
                         "DeviceBackend('cpu', <executor>) for both run modes")
    ap.add_argument("-v", "--verbose", action="store_true", help="list passing cases too")
    args = ap.parse_args(argv)

    src = os.path.abspath(args.checkout)
    if not os.path.isdir(src):
        ap.error(f"{src} is not a folder")
    work = tempfile.mkdtemp(prefix="pypto_examples_")
    try:
        edits = 0
        # tools/: PyPTO's repo-level helper libraries, which examples put on their import path
        # relative to their own file (the ONNX export demos' exported_custom_op_litenpu).
        for part in ("examples", "python", "tools") + (() if args.no_models else ("models",)):
            if os.path.isdir(os.path.join(src, part)):
                shutil.copytree(os.path.join(src, part), os.path.join(work, part))
                edits += edit_tree(os.path.join(work, part), board_ops=part == "models")
        env = dict(os.environ)
        # Reports go to ./output of each case's folder (inside the copy), where PyPTO's own
        # tooling (the cost-model example) looks for them.
        env.pop("PYPTO_OUTPUT_DIR", None)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        env.pop("ASCEND_HOME_PATH", None)  # SIM is the default without CANN
        if args.mode == "checked":
            env["TILE_FWK_DEVICE_ID"] = "0"
        # PyPTO's st tests import their shared helpers as `st.<module>` (python/tests on
        # the import path, as PyPTO's own test harness sets it).
        tests_root = os.path.join(work, "python", "tests")
        if os.path.isdir(tests_root):
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (tests_root, env.get("PYTHONPATH", "")) if p)
        shim_text = (_SHIM if args.torch_dtype_shim else "") + (
            _BACKEND_SHIM.format(executor=args.backend) if args.backend != "sim" else "")
        if shim_text:
            shim = os.path.join(work, "_shim")
            os.makedirs(shim)
            with open(os.path.join(shim, "sitecustomize.py"), "w", encoding="utf-8") as f:
                f.write(shim_text)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (shim, env.get("PYTHONPATH", "")) if p)
        cases: List[Case] = []
        if not args.no_examples:
            cases += example_cases(work, args.mode)
        if not args.no_tests:
            cases += test_cases(work, args.tests or list(DEFAULT_TEST_DIRS), args.python,
                                env, args.timeout)
        if not args.no_models:
            cases += model_cases(work, args.mode, args.python, env, args.timeout)
        if args.filter:
            cases = [c for c in cases if args.filter in c.id]
        print(f"{len(cases)} cases, {edits} device edits, mode {args.mode}, backend "
              f"{args.backend}, {args.jobs} jobs", file=sys.stderr)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(lambda c: run_case(c, args.python, env, args.timeout), cases))
        summary = summarize(cases)
        print_table(cases, summary, args.verbose)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"summary": summary, "mode": args.mode, "backend": args.backend,
                           "torch_dtype_shim": args.torch_dtype_shim,
                           "cases": [asdict(c) for c in cases]}, f, indent=1)
        bad = summary["crash"] + summary["timeout"]
        return 0 if bad == 0 else 1
    finally:
        if args.keep:
            print(f"edited copy kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
