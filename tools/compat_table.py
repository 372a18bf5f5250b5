#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/compatibility.md: every public name of PyPTO's ``pypto`` package
(tools/compat/pypto_names.json) marked supported / accepted but ignored (why) / not supported
(why, and the error the user gets), classified against the live ``pypto`` package and the
tables of frontend/pypto/_compat.py.

    .venv/bin/python tools/compat_table.py           # rewrite docs/compatibility.md
    .venv/bin/python tools/compat_table.py --check   # exit 1 if it is stale or a name is unclassified

The output depends only on the package and the two tables (deterministic), so the test
tests/frontend/test_compat.py can compare it with the checked-in file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = os.path.join(ROOT, "tools", "compat", "pypto_names.json")
TABLE = os.path.join(ROOT, "docs", "compatibility.md")
sys.path.insert(0, os.path.join(ROOT, "frontend"))

import pypto  # noqa: E402
from pypto import _compat, _options  # noqa: E402

SUPPORTED, IGNORED, UNSUPPORTED = "supported", "accepted, ignored", "not supported"
_MISSING = object()


@dataclass(frozen=True)
class Row:
    name: str
    kind: str
    defined_in: str
    status: str  # SUPPORTED / IGNORED / UNSUPPORTED, or "" when unclassified
    note: str    # why ignored / why unsupported and the error
    problem: str = ""  # set when the name needs a table edit (the test reports it)


def load_names(path: str = NAMES) -> List[Dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)["names"]


def _lookup(name: str) -> Tuple[object, str]:
    """The object a PyPTO name refers to in our package, or (_MISSING, the error message)."""
    obj: object = pypto
    path = "pypto"
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except Exception as e:  # noqa: BLE001 - the message is what the user sees
            return _MISSING, f"{type(e).__name__}: {e}"
        path += "." + part
    return obj, ""


def _option_error(group: str, key: str) -> str:
    try:
        _options.validate_group(group, {key: 0})
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"
    return ""


def classify(entry: Dict[str, str]) -> Row:
    name, kind, src = entry["name"], entry["kind"], entry["defined_in"]
    listed = _compat.UNSUPPORTED.get(name)
    if kind == "option":
        group, key = name.split(".", 1)
        schema = _options.SCHEMAS.get(group, {})
        if key in schema:
            if listed is not None:
                return Row(name, kind, src, SUPPORTED, "",
                           f"{name} is now accepted by pypto._options: remove its entry from "
                           "UNSUPPORTED in frontend/pypto/_compat.py")
            if schema[key].accepted_only:
                return Row(name, kind, src, IGNORED,
                           _compat.IGNORED_OPTIONS.get(
                               f"{group}.{key}",
                               _compat.IGNORED_OPTION_GROUPS.get(group, "accepted only")))
            return Row(name, kind, src, SUPPORTED, "")
        err = _option_error(group, key)
        if listed is None:
            return Row(name, kind, src, "", err,
                       f"{name} is not accepted by pypto._options and not listed: add it to "
                       "UNSUPPORTED in frontend/pypto/_compat.py (with the reason) or support it")
        return Row(name, kind, src, UNSUPPORTED, _unsupported_note(listed, err))
    obj, err = _lookup(name)
    stub = _compat.stub_reason(obj) if obj is not _MISSING else ""
    if stub:
        if listed is not None:
            return Row(name, kind, src, UNSUPPORTED, "",
                       f"pypto.{name} is a stub that says why it is unsupported: remove its "
                       "entry from UNSUPPORTED in frontend/pypto/_compat.py")
        return Row(name, kind, src, UNSUPPORTED, f"{stub}; calling it raises "
                   "PyptoNotImplementedError naming the kernel line")
    if obj is not _MISSING:
        if listed is not None:
            return Row(name, kind, src, SUPPORTED, "",
                       f"pypto.{name} exists now: remove its stale entry from UNSUPPORTED in "
                       "frontend/pypto/_compat.py (then regenerate with tools/compat_table.py)")
        if name in _compat.IGNORED:
            return Row(name, kind, src, IGNORED, _compat.IGNORED[name])
        return Row(name, kind, src, SUPPORTED, _compat.LIMITED.get(name, ""))
    if listed is None:
        return Row(name, kind, src, "", err,
                   f"pypto.{name} is missing and not listed: add it to UNSUPPORTED in "
                   "frontend/pypto/_compat.py (with the reason) or implement it")
    return Row(name, kind, src, UNSUPPORTED, _unsupported_note(listed, err))


def _unsupported_note(reason: str, err: str) -> str:
    # Our own error already carries the reason; other errors (AttributeError of a class,
    # an option's unknown-key error) get it in front.
    return f"`{err}`" if reason in err else f"{reason}. Error: `{err}`"


def classify_all(names: List[Dict[str, str]]) -> List[Row]:
    return [classify(e) for e in names]


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


_SECTIONS = [
    ("Module functions, classes and constants",
     lambda r: r.kind in ("function", "class", "constant", "module")),
    ("Tensor methods and properties", lambda r: r.kind.startswith("tensor")),
    ("SymbolicScalar and Element", lambda r: r.kind in ("method", "property")),
    ("Option keys of `@pypto.frontend.jit`", lambda r: r.kind == "option"),
]


def render(rows: List[Row]) -> str:
    counts = {s: sum(r.status == s for r in rows) for s in (SUPPORTED, IGNORED, UNSUPPORTED)}
    out = [
        "<!-- Generated by tools/compat_table.py from tools/compat/pypto_names.json, the live",
        "     pypto package and frontend/pypto/_compat.py. Do not edit: regenerate. -->",
        "# PyPTO compatibility",
        "",
        "Every public name of PyPTO's `pypto` package (its `__init__.py`, the pages of its API",
        "reference and the option keys of `@pypto.frontend.jit`), as pypto-sim's `pypto` has it:",
        "",
        f"* **{SUPPORTED}** ({counts[SUPPORTED]}): present and acting as in PyPTO (a note, "
        "where there is one, names the part pypto-sim refuses and why);",
        f"* **{IGNORED}** ({counts[IGNORED]}): present and validated like PyPTO validates it, "
        "with no effect on the simulator (why: in the note);",
        f"* **{UNSUPPORTED}** ({counts[UNSUPPORTED]}): absent, or a stub that raises "
        "PyptoNotImplementedError; the note gives the reason and the error the user gets.",
        "",
    ]
    for title, pred in _SECTIONS:
        sel = [r for r in rows if pred(r)]
        if not sel:
            continue
        out += [f"## {title}", "", "| name | kind | status | note | PyPTO source |",
                "|---|---|---|---|---|"]
        for r in sel:
            out.append(f"| `{_cell(r.name)}` | {r.kind} | {r.status or '**unclassified**'} | "
                       f"{_cell(r.note)} | {_cell(r.defined_in)} |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the table is stale or a name needs an entry")
    ap.add_argument("-o", "--output", default=TABLE)
    args = ap.parse_args(argv)
    rows = classify_all(load_names())
    text = render(rows)
    problems = [r.problem for r in rows if r.problem]
    for p in problems:
        print("compat_table:", p, file=sys.stderr)
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            print(f"compat_table: {os.path.relpath(args.output, ROOT)} is stale; run "
                  "tools/compat_table.py", file=sys.stderr)
            return 1
        return 1 if problems else 0
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
