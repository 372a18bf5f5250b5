# SPDX-License-Identifier: Apache-2.0
"""The PyPTO compatibility table (docs/compatibility.md) against the live package.

Fails when a PyPTO name (tools/compat/pypto_names.json) is neither present in ``pypto`` nor
listed in ``pypto._compat.UNSUPPORTED``, when a listed name has since been added (remove the
stale entry), and when the checked-in table differs from what tools/compat_table.py writes
(regenerate it: ``.venv/bin/python tools/compat_table.py``).
"""

import importlib.util
import os
import sys

import pytest

import pypto
from pypto import _compat

_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
_spec = importlib.util.spec_from_file_location(
    "compat_table", os.path.join(_ROOT, "tools", "compat_table.py"))
compat_table = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("compat_table", compat_table)  # dataclasses look their module up
_spec.loader.exec_module(compat_table)

KINDS = {"function", "class", "constant", "module", "tensor-method", "tensor-property",
         "method", "property", "option"}


@pytest.fixture(scope="module")
def names():
    return compat_table.load_names()


def test_names_list_is_well_formed(names):
    seen = set()
    for e in names:
        assert set(e) == {"name", "kind", "defined_in"}, e
        assert e["kind"] in KINDS, e
        assert e["name"] not in seen, f"{e['name']} is listed twice"
        seen.add(e["name"])
    assert len(names) > 250


def test_every_pypto_name_is_supported_or_listed(names):
    problems = [r.problem for r in compat_table.classify_all(names) if r.problem]
    assert not problems, "\n".join(problems)


def test_checked_in_table_is_current(names):
    with open(compat_table.TABLE, encoding="utf-8") as f:
        current = f.read()
    assert current == compat_table.render(compat_table.classify_all(names)), (
        "docs/compatibility.md is stale: regenerate it with .venv/bin/python "
        "tools/compat_table.py and commit the result")


def test_compat_tables_name_only_pypto_names(names):
    known = {e["name"] for e in names}
    stray = sorted((set(_compat.UNSUPPORTED) | set(_compat.IGNORED)) - known)
    assert not stray, f"entries of pypto._compat that are not PyPTO names: {stray}"
    assert set(_compat.IGNORED_OPTION_GROUPS) <= set(pypto._options.SCHEMAS)


def test_unsupported_names_raise_a_clear_error(names):
    module_level = [e["name"] for e in names
                    if "." not in e["name"] and e["name"] in _compat.UNSUPPORTED]
    assert "gather" in module_level or hasattr(pypto, "gather")
    for name in module_level:
        assert not hasattr(pypto, name)
        assert getattr(pypto, name, None) is None
        with pytest.raises(_compat.PyptoUnsupportedError,
                           match=f"pypto.{name} is not supported by pypto-sim: ") as e:
            getattr(pypto, name)
        assert _compat.UNSUPPORTED[name] in str(e.value)
        assert isinstance(e.value, pypto.PyptoNotImplementedError)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'") as e:
        pypto.no_such_name  # noqa: B018
    assert not isinstance(e.value, _compat.PyptoUnsupportedError)


def test_a_stale_entry_and_an_unlisted_name_fail(monkeypatch):
    monkeypatch.setitem(_compat.UNSUPPORTED, "add", "was missing once")
    row = compat_table.classify({"name": "add", "kind": "function", "defined_in": "x"})
    assert row.status == compat_table.SUPPORTED and "remove its stale entry" in row.problem
    row = compat_table.classify({"name": "no_such_op", "kind": "function", "defined_in": "x"})
    assert row.status == "" and "missing and not listed" in row.problem
    row = compat_table.classify({"name": "runtime_options.no_such_key", "kind": "option",
                                 "defined_in": "x"})
    assert "not accepted by pypto._options and not listed" in row.problem


def test_option_keys_follow_the_option_schemas(names):
    rows = {r.name: r for r in compat_table.classify_all(names)}
    for group, keys in pypto._options.accepted_only_options().items():
        for key in keys:
            if f"{group}.{key}" in rows:
                assert rows[f"{group}.{key}"].status == compat_table.IGNORED
    assert rows["runtime_options.device_sched_mode"].status == compat_table.SUPPORTED
