# SPDX-License-Identifier: Apache-2.0
"""Read-only source checks of kernels (the tracer never rewrites source).

Tracing runs the kernel as Python, so some mistakes are invisible at run time: a ``break`` or
``return`` in a ``pypto.loop`` body, or a variable that a loop body reads and then
reassigns (``off += 64``), which Python carries into the next iteration while the body is
traced only once (``_ops.loop`` makes such ints functions of the loop index). ``scan_kernel``
finds the first two in the source with ``ast`` (when the source is not available they are still
caught at run time); ``loop_carried_names`` reads the bytecode, so loop-carried variables are
found whether or not the source can be read.
"""

from __future__ import annotations

import ast
import dis
import inspect
import os
import sys
import textwrap
import types
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

__all__ = ["scan_kernel", "analyze_loops", "loop_carried_names", "loop_live_out_names",
           "assignment_lines", "stored_names", "call_with_final_locals"]


def _is_pypto_loop(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "loop") or (
        isinstance(f, ast.Attribute) and f.attr == "loop")


def _parse(obj) -> Optional[Tuple[ast.AST, int]]:
    """(function AST, first line number) of a function or code object, or None."""
    try:
        lines, start = inspect.getsourcelines(obj)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fdef = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                None)
    return None if fdef is None else (fdef, start)


class _Scanner(ast.NodeVisitor):
    """Visits one function body without entering nested functions, lambdas or classes."""

    def __init__(self, fname: str, where: str, start: int):
        self.fname = fname
        self.where = where
        self.start = start
        self.loops: List[str] = []  # "pypto" or "plain", innermost last
        self.problems: List[str] = []

    def _line(self, node: ast.AST) -> int:
        return self.start + node.lineno - 1

    def _skip(self, node: ast.AST) -> None:
        pass

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip

    def visit_Return(self, node: ast.Return) -> None:
        # A returned value at the top level becomes the kernel's output (see _jit); any
        # return inside a device loop would leave the traced body early.
        if "pypto" in self.loops:
            self.problems.append(
                f"kernel '{self.fname}': 'return' inside a pypto.loop body at "
                f"{self.where}:{self._line(node)} is not supported; use `continue` or a "
                "condition instead")

    def visit_Break(self, node: ast.Break) -> None:
        if self.loops and self.loops[-1] == "pypto":
            self.problems.append(
                f"kernel '{self.fname}': 'break' inside a pypto.loop body at "
                f"{self.where}:{self._line(node)} is not supported; a device loop always runs "
                "all its iterations (use a condition, or bound the loop instead)")

    def _loop(self, node, kind: str) -> None:
        for f in ("target", "iter", "test"):
            if hasattr(node, f):
                self.visit(getattr(node, f))
        self.loops.append(kind)
        for s in node.body:
            self.visit(s)
        self.loops.pop()
        for s in node.orelse:
            self.visit(s)

    def visit_For(self, node: ast.For) -> None:
        self._loop(node, "pypto" if _is_pypto_loop(node.iter) else "plain")

    def visit_While(self, node: ast.While) -> None:
        self._loop(node, "plain")


def scan_kernel(fn: types.FunctionType) -> List[str]:
    """Messages for break/return in a pypto.loop body."""
    parsed = _parse(fn)
    if parsed is None:
        return []
    fdef, start = parsed
    scanner = _Scanner(fn.__name__, os.path.basename(fn.__code__.co_filename), start)
    for stmt in fdef.body:
        scanner.visit(stmt)
    return scanner.problems


#: Leading instructions of a loop body that bind the loop target (``for i, j in ...``).
_TARGET_OPS = {"STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL", "UNPACK_SEQUENCE",
               "UNPACK_EX"}


def _names(ins: dis.Instruction) -> Tuple[List[str], List[str]]:
    """(loaded, stored) local names of one instruction, in execution order."""
    op = ins.opname
    vals = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
    vals = [v for v in vals if isinstance(v, str)]
    if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_NAME",
              "LOAD_FAST_LOAD_FAST", "LOAD_CLASSDEREF"):
        return vals, []
    if op in ("STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_FAST_STORE_FAST"):
        return [], vals
    if op == "STORE_FAST_LOAD_FAST" and len(vals) == 2:
        return [vals[1]], [vals[0]]
    return [], []


def _body_of(instrs: List[dis.Instruction], at: int) -> List[dis.Instruction]:
    """Instructions of the body of the ``for`` whose FOR_ITER is ``instrs[at]`` (the leading
    stores of the loop target skipped)."""
    end = instrs[at].argval
    body = [ins for ins in instrs[at + 1:] if ins.offset < end]
    j = 0
    while j < len(body) and body[j].opname in _TARGET_OPS:
        j += 1
    return body[j:]


def _loop_body(code: types.CodeType, lasti: int) -> Optional[List[dis.Instruction]]:
    """Instructions of the body of the ``for`` whose FOR_ITER is at offset ``lasti`` (the
    leading stores of the loop target skipped), or None when ``lasti`` is not a FOR_ITER."""
    instrs = list(dis.get_instructions(code))
    at = next((n for n, ins in enumerate(instrs) if ins.offset == lasti), None)
    if at is None or instrs[at].opname != "FOR_ITER":
        return None
    return _body_of(instrs, at)


def assignment_lines(code: types.CodeType, lasti: int, name: str) -> List[int]:
    """Source lines (from the bytecode's line table) where the body of the ``for`` at
    ``lasti`` assigns local ``name``; for error messages."""
    lines: Set[int] = set()
    line = None
    for ins in _loop_body(code, lasti) or ():
        pos = getattr(ins, "positions", None)
        line = (pos.lineno if pos is not None and pos.lineno is not None
                else ins.starts_line or line)
        if name in _names(ins)[1] and line is not None:
            lines.add(line)
    return sorted(lines)


_CARRIED_CACHE: Dict[Tuple[types.CodeType, int], FrozenSet[str]] = {}
_LIVE_OUT_CACHE: Dict[Tuple[types.CodeType, int], FrozenSet[str]] = {}
_ANALYZED: Set[types.CodeType] = set()


def analyze_loops(code: types.CodeType) -> None:
    """Finds loop_carried_names and loop_live_out_names of every ``for`` of ``code`` from one
    reading of its bytecode (the jit does it when a kernel is declared, so that its first
    trace does not); later calls return at once."""
    if code in _ANALYZED:
        return
    instrs = list(dis.get_instructions(code))
    for at, head in enumerate(instrs):
        if head.opname != "FOR_ITER":
            continue
        body = _body_of(instrs, at)
        assigned: Set[str] = set()
        read_first: Set[str] = set()
        for ins in body:
            loads, stores = _names(ins)
            read_first.update(n for n in loads if n not in assigned)
            assigned.update(stores)
        key = (code, head.offset)
        _CARRIED_CACHE[key] = frozenset(read_first & assigned)
        # Live out: a name the body stores that the code after the loop reads before it
        # assigns it again (in instruction order).
        end = head.argval
        live: Set[str] = set()
        rebound: Set[str] = set()
        for ins in instrs:
            if ins.offset < end:
                continue
            loads, stores = _names(ins)
            live.update(n for n in loads if n in assigned and n not in rebound)
            rebound.update(stores)
        _LIVE_OUT_CACHE[key] = frozenset(live)
    _ANALYZED.add(code)


def loop_carried_names(code: types.CodeType, lasti: int) -> FrozenSet[str]:
    """Names the body of the ``for`` statement whose FOR_ITER instruction is at byte offset
    ``lasti`` of ``code`` reads before assigning them (so Python would carry them across
    iterations). Found from the bytecode, not the source, so the answer is the same for
    kernels whose source cannot be read (``python -c``, ``exec``). Empty when ``lasti`` is
    not a FOR_ITER (the loop object was iterated some other way)."""
    analyze_loops(code)
    return _CARRIED_CACHE.get((code, lasti), frozenset())


def loop_live_out_names(code: types.CodeType, lasti: int) -> FrozenSet[str]:
    """Names the body of the ``for`` statement at ``lasti`` assigns that the code after the
    loop reads before assigning them again (in instruction order), so a value made in the
    body is used after the loop. Empty when ``lasti`` is not a FOR_ITER."""
    analyze_loops(code)
    return _LIVE_OUT_CACHE.get((code, lasti), frozenset())


def stored_names(code: types.CodeType) -> FrozenSet[str]:
    """Local names the function body of ``code`` assigns anywhere (nested functions not
    included), from the bytecode."""
    out: Set[str] = set()
    for ins in dis.get_instructions(code):
        out.update(_names(ins)[1])
    return frozenset(out)


def call_with_final_locals(fn: Callable, args: Sequence[Any],
                           kwargs: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """``fn(*args, **kwargs)`` and the local variables of that call as they were when it
    returned (read through a profile hook on that one frame). A Python profile function
    already installed keeps receiving every event; a C profiler (``cProfile.Profile``, whose
    ``sys.getprofile()`` object is not callable) misses the call's events and is enabled
    again after it."""
    code = getattr(fn, "__code__", None)
    final: Dict[str, Any] = {}
    previous = sys.getprofile()
    chained = previous if callable(previous) else None

    def hook(frame, event, arg):
        if event == "return" and frame.f_code is code and not final:
            final.update(frame.f_locals)
        if chained is not None:
            chained(frame, event, arg)

    sys.setprofile(hook)
    try:
        ret = fn(*args, **kwargs)
    finally:
        _restore_profile(previous)
    return ret, final


def _restore_profile(previous: Any) -> None:
    """Puts back the profiler that call_with_final_locals found installed."""
    if previous is None or callable(previous):
        sys.setprofile(previous)
        return
    sys.setprofile(None)
    enable = getattr(previous, "enable", None)
    if callable(enable):
        enable()  # _lsprof re-installs its C profile function on this thread
