# SPDX-License-Identifier: Apache-2.0
"""Read-only source checks of kernels (the tracer never rewrites source).

Tracing runs the kernel as Python, so some mistakes are invisible at run time: a ``break`` in
a ``pypto.loop`` body, a ``return value``, or a variable that a loop body reads and then
reassigns (``off += 64``), which Python would carry into the next iteration while the body is
traced only once. These helpers find them in the source with ``ast``; when the source is not
available (``exec``'d code) they find nothing and the run-time checks remain.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
import types
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

__all__ = ["scan_kernel", "loop_carried_names"]


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
        returns_value = node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None)
        if returns_value:
            self.problems.append(
                f"kernel '{self.fname}' returns a value at {self.where}:{self._line(node)}: "
                "returning values from a @pypto.frontend.jit kernel is not supported; write the "
                "result into an output tensor instead (e.g. out[:] = result)")
        elif "pypto" in self.loops:
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
    """Messages for a returned value, and for break/return in a pypto.loop body."""
    parsed = _parse(fn)
    if parsed is None:
        return []
    fdef, start = parsed
    scanner = _Scanner(fn.__name__, os.path.basename(fn.__code__.co_filename), start)
    for stmt in fdef.body:
        scanner.visit(stmt)
    return scanner.problems


class _ReadsBeforeWrites(ast.NodeVisitor):
    """Names read before their first assignment, and names assigned, in source order."""

    def __init__(self) -> None:
        self.assigned: Set[str] = set()
        self.read_first: Set[str] = set()

    def _skip(self, node: ast.AST) -> None:
        pass

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            if node.id not in self.assigned:
                self.read_first.add(node.id)
        else:
            self.assigned.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)  # the right side runs first
        for t in node.targets:
            self.visit(t)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            if node.target.id not in self.assigned:
                self.read_first.add(node.target.id)
            self.assigned.add(node.target.id)
        else:
            self.visit(node.target)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for s in node.body + node.orelse:
            self.visit(s)


_CARRIED_CACHE: Dict[types.CodeType, List[Tuple[int, int, FrozenSet[str]]]] = {}


def _carried_table(code: types.CodeType) -> List[Tuple[int, int, FrozenSet[str]]]:
    table = _CARRIED_CACHE.get(code)
    if table is not None:
        return table
    table = []
    parsed = _parse(code)
    if parsed is not None:
        fdef, start = parsed
        for node in ast.walk(fdef):
            if isinstance(node, ast.For) and _is_pypto_loop(node.iter):
                v = _ReadsBeforeWrites()
                v.visit(node.target)  # the index is assigned by the loop itself
                for s in node.body:
                    v.visit(s)
                names = frozenset(v.read_first & v.assigned)
                first = start + node.lineno - 1
                last = start + node.iter.end_lineno - 1
                table.append((first, last, names))
    _CARRIED_CACHE[code] = table
    return table


def loop_carried_names(code: types.CodeType, lineno: int) -> FrozenSet[str]:
    """Names the pypto.loop body starting at ``lineno`` of ``code`` reads before assigning
    them (so Python would carry them across iterations)."""
    best: Optional[Tuple[int, int, FrozenSet[str]]] = None
    for entry in _carried_table(code):
        first, last, _ = entry
        if first <= lineno <= last and (best is None or first > best[0]):
            best = entry
    return frozenset() if best is None else best[2]
