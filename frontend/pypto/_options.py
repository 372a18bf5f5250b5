# SPDX-License-Identifier: Apache-2.0
"""Validation of the option dicts of ``@pypto.frontend.jit``.

Every key of every dict is checked for name, exact type and range when the kernel is
decorated, so a typo fails at once instead of at the first call (PyPTO checks most of them
only when the first call applies them). Types are strict: a Python ``bool`` is not accepted
where an int is expected, and an ``IntEnum`` member (``pypto.RunMode.SIM``) counts as its int.
``None`` values are dropped, as in PyPTO.

Owners: the ``runtime_options`` schema is not written here. It is the table
``sched::kRuntimeOptionSpecs`` (sched/include/pypto/sched/runtime_options.h), read through
``pypto._C.runtime_option_schema()``, so Python, the C++ validation and the ``pypto-sim``
flags share one set of names, ranges, defaults and out-of-range rules. The other groups are
Python-only; all of their options except ``host_options['compile_stage']`` are *accepted
only*: checked like PyPTO checks them, then ignored by pypto-sim, so they are left out of
the compile-cache key (:func:`key_options`).

Example messages::

    runtime_options['device_sched_mode']: 7 is out of range [0, 3]
    runtime_options: unknown key 'device_sched_mod'; did you mean 'device_sched_mode'? ...
    runtime_options['ready_on_host_tensors'][1]: expected str, got int 3
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from ._enums import RunMode
from ._errors import PyptoTypeError, PyptoValueError

__all__ = ["OPTION_GROUPS", "SCHEMAS", "Option", "validate_group", "resolve_options",
           "default_run_mode", "key_options", "accepted_only_options"]

INT32_MAX = 2147483647

OPTION_GROUPS = ("host_options", "runtime_options", "codegen_options", "pass_options",
                 "verify_options", "debug_options")


@dataclass(frozen=True)
class Option:
    """One accepted key: its type (int, bool, str, list[str], or custom), inclusive range for
    ints, allowed strings, default (None: no default / decided elsewhere) and meaning.

    ``out_of_range`` is "error" (an int outside ``range`` is rejected) or "automatic" (every
    int is accepted; outside the range the backend picks its automatic value).
    ``auto_value`` is an int outside ``range`` that is accepted all the same and means the
    backend's default. ``accepted_only``: checked, then ignored by pypto-sim (kept out of the
    compile-cache key). ``unit`` and ``acts_on`` (which parts act on it: "frontend", "sim",
    "replay") come with the runtime options."""

    type: str
    default: Any = None
    range: Optional[Tuple[int, int]] = None
    choices: Optional[Tuple[str, ...]] = None
    check: Optional[Callable[[str, Any], Any]] = None
    doc: str = ""
    out_of_range: str = "error"
    auto_value: Optional[int] = None
    accepted_only: bool = False
    unit: str = ""
    acts_on: Tuple[str, ...] = ()


def _where(group: str, key: str) -> str:
    return f"{group}[{key!r}]"


def _type_name(v: Any) -> str:
    return type(v).__name__


def _expect(where: str, expected: str, v: Any) -> None:
    extra = " (bools are not accepted as ints here)" if isinstance(v, bool) else ""
    raise PyptoTypeError(f"{where}: expected {expected}, got {_type_name(v)} {v!r}{extra}")


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_int(where: str, v: Any, rng: Optional[Tuple[int, int]],
               opt: Optional[Option] = None) -> int:
    if not _is_int(v):
        _expect(where, "int", v)
    v = int(v)
    if opt is not None and (opt.out_of_range == "automatic" or v == opt.auto_value):
        return v
    if rng is not None and not rng[0] <= v <= rng[1]:
        extra = ""
        if opt is not None and opt.auto_value is not None:
            extra = f" (or {opt.auto_value} for the default)"
        raise PyptoValueError(f"{where}: {v} is out of range [{rng[0]}, {rng[1]}]{extra}")
    return v


def _check_str_list(where: str, v: Any) -> list:
    if not isinstance(v, (list, tuple)):
        _expect(where, "list of str", v)
    for i, e in enumerate(v):
        if not isinstance(e, str):
            raise PyptoTypeError(f"{where}[{i}]: expected str, got {_type_name(e)} {e!r}")
    return list(v)


def _check_buffer_setting(where: str, v: Any, pair_ok: bool = False) -> dict:
    """{int: n} or {"func<magic>_<order>" | "DEFAULT" | semantic label: n}; n an int (or an
    (int, int) pair for cube_l1_reuse_setting). Int keys cannot be mixed with func keys."""
    if not isinstance(v, dict):
        _expect(where, "dict", v)
    kinds = set()
    out = {}
    for k, n in v.items():
        if _is_int(k):
            kinds.add("int")
        elif isinstance(k, str):
            if k == "DEFAULT" or re.fullmatch(r"func\d+_\d+", k):
                kinds.add("func")
        else:
            raise PyptoTypeError(f"{where}: key {k!r} must be an int or a str")
        if pair_ok and isinstance(n, tuple):
            if len(n) != 2 or not all(_is_int(x) for x in n):
                raise PyptoTypeError(f"{where}[{k!r}]: expected an int or an (int, int) pair, "
                                     f"got {n!r}")
        elif not _is_int(n):
            _expect(f"{where}[{k!r}]", "int" + (" or (int, int)" if pair_ok else ""), n)
        elif n < 0:
            raise PyptoValueError(f"{where}[{k!r}]: {n} must be >= 0")
        out[k] = n
    if kinds == {"int", "func"}:
        raise PyptoValueError(f"{where}: int keys cannot be mixed with 'func<magic>_<order>' or "
                              "'DEFAULT' keys")
    return out


def _check_sg_set_scope(where: str, v: Any) -> Any:
    if _is_int(v):
        return int(v)
    if (isinstance(v, tuple) and len(v) == 3 and _is_int(v[0])
            and isinstance(v[1], bool) and isinstance(v[2], bool)):
        return v
    _expect(where, "int or (int, bool, bool)", v)


def _check_ooo_scope(where: str, v: Any) -> int:
    if not _is_int(v):
        _expect(where, "int", v)
    if v != -1 and not 1 <= v <= 100000:
        raise PyptoValueError(f"{where}: {v} is out of range: expected -1 or [1, 100000]")
    return int(v)


def _check_error_tol(where: str, v: Any) -> list:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        _expect(where, "[atol, rtol] (two numbers)", v)
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise PyptoTypeError(f"{where}[{i}]: expected a number, got {_type_name(x)} {x!r}")
        if x < 0:
            raise PyptoValueError(f"{where}[{i}]: {x} must be >= 0")
    return [float(x) for x in v]


def _native_schema() -> list:
    """The runtime_options table of sched/, from the native module (pypto._C is imported
    directly: the schema does not depend on which backend runs kernels)."""
    try:
        from . import _C
    except ImportError as e:
        raise ImportError(
            "pypto needs its native module pypto._C, which holds the runtime_options schema "
            "(sched/include/pypto/sched/runtime_options.h); build it with tools/setup.sh") from e
    return _C.runtime_option_schema()


def _runtime_schema(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Option]:
    out: Dict[str, Option] = {}
    for r in rows:
        # A policy is a mode number in Python (names are a pypto-sim CLI extension).
        typ = "int" if r["type"] == "policy" else r["type"]
        default = r["default"]
        if isinstance(default, list):
            default = tuple(default)
        out[r["name"]] = Option(
            typ, default, None if typ == "list[str]" else (r["min"], r["max"]), doc=r["doc"],
            out_of_range=r["out_of_range"], auto_value=r["auto_value"], unit=r["unit"],
            acts_on=tuple(r["acts_on"]))
    return out


SCHEMAS: Dict[str, Dict[str, Option]] = {
    "runtime_options": _runtime_schema(_native_schema()),
    "host_options": {
        "compile_stage": Option("int", 0, (0, 5),
                                doc="pypto.CompStage; anything but ALL_COMPLETE skips running"),
        "compile_monitor_enable": Option("int", 1, (0, 2)),
        "compile_timeout": Option("int", 600, (0, INT32_MAX), doc="seconds"),
        "compile_timeout_stage": Option("int", 0, (0, INT32_MAX)),
        "compile_monitor_print_interval": Option("int", 60, (1, INT32_MAX), doc="seconds"),
    },
    "codegen_options": {
        "support_dynamic_aligned": Option("bool", False),
        "soc_version": Option("str", None),
        "enable_pmu_trace": Option("bool", False),
        "vf_options": Option("str", None),
    },
    "pass_options": {
        "vec_nbuffer_setting": Option("custom", check=_check_buffer_setting),
        "cube_l1_reuse_setting": Option(
            "custom", check=lambda w, v: _check_buffer_setting(w, v, pair_ok=True)),
        "cube_nbuffer_setting": Option("custom", check=_check_buffer_setting),
        "sg_set_scope": Option("custom", check=_check_sg_set_scope),
        "sg_set_ooo_scope": Option("custom", check=_check_ooo_scope),
        "ooo_sched_mode": Option("str", None, choices=("", "GAPMIN", "HLF")),
        "auto_mix_partition": Option("bool", None),
        "sg_set_tunevf_mode": Option("int", None, (0, 2)),
        "enable_slice": Option("bool", None),
    },
    "verify_options": {
        "enable_pass_verify": Option("bool", False),
        "pass_verify_save_tensor": Option("bool", False),
        "pass_verify_save_tensor_dir": Option("str", None),
        "pass_verify_pass_filter": Option("list[str]", ()),
        "pass_verify_error_tol": Option("custom", (1e-3, 1e-3), check=_check_error_tol),
    },
    "debug_options": {
        "compile_debug_mode": Option("int", 0, (0, 2)),
        "runtime_debug_mode": Option("int", 0, (0, 4),
                                     doc="1 swimlane dumps, 2 AICORE model, 3 dependency dump, "
                                         "4 GM out-of-bounds check"),
        "dump_pass_graph": Option("list[str]", ()),
    },
}

#: The options of the Python-only groups that pypto-sim acts on; every other option of
#: those groups is accepted only (validated, passed to the backend, otherwise ignored).
_ACTED_ON = {("host_options", "compile_stage")}

for _group, _schema in SCHEMAS.items():
    if _group == "runtime_options":
        continue
    for _key, _opt in _schema.items():
        if (_group, _key) not in _ACTED_ON:
            _schema[_key] = dataclasses.replace(_opt, accepted_only=True)


def accepted_only_options() -> Dict[str, Tuple[str, ...]]:
    """Group -> the keys that are accepted and checked but not acted on."""
    return {g: tuple(k for k, o in schema.items() if o.accepted_only)
            for g, schema in SCHEMAS.items()
            if any(o.accepted_only for o in schema.values())}


def key_options(resolved: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The part of resolved option dicts that belongs in the compile-cache key: everything
    but the accepted-only options (changing one of those never recompiles)."""
    return {g: {k: v for k, v in vals.items()
                if not (k in SCHEMAS.get(g, {}) and SCHEMAS[g][k].accepted_only)}
            for g, vals in resolved.items()}


def _check_value(group: str, key: str, opt: Option, v: Any) -> Any:
    where = _where(group, key)
    if opt.type == "int":
        if key == "run_mode" and _is_int(v) and not 0 <= v <= 1:
            raise PyptoValueError(f"{where}: {int(v)} is out of range [0, 1] (invalid run mode: "
                                  "it must be RunMode.NPU or RunMode.SIM)")
        return _check_int(where, v, opt.range, opt)
    if opt.type == "bool":
        if not isinstance(v, bool):
            _expect(where, "bool", v)
        return v
    if opt.type == "str":
        if not isinstance(v, str):
            _expect(where, "str", v)
        if opt.choices is not None and v not in opt.choices:
            raise PyptoValueError(f"{where}: {v!r} is not one of "
                                  f"{', '.join(repr(c) for c in opt.choices)}")
        return v
    if opt.type == "list[str]":
        return _check_str_list(where, v)
    return opt.check(where, v)


def validate_group(group: str, options: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """Checks one option dict; returns a cleaned copy (None values dropped, enums as ints).

    Raises PyptoTypeError / PyptoValueError naming the key, the value and what is expected.
    """
    if group not in SCHEMAS:
        raise PyptoValueError(f"unknown option group {group!r}")
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise PyptoTypeError(f"{group} must be a dict, got {_type_name(options)} {options!r}")
    schema = SCHEMAS[group]
    out: Dict[str, Any] = {}
    for key, v in options.items():
        if not isinstance(key, str):
            raise PyptoTypeError(f"{group}: keys must be str, got {_type_name(key)} {key!r}")
        opt = schema.get(key)
        if opt is None:
            close = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else "."
            raise PyptoValueError(f"{group}: unknown key {key!r}{hint} Valid keys: "
                                  f"{', '.join(schema)}")
        if v is None:
            continue
        out[key] = _check_value(group, key, opt, v)
    return out


def default_run_mode() -> RunMode:
    """NPU when CANN is set up (``ASCEND_HOME_PATH``), else SIM."""
    return RunMode.NPU if os.environ.get("ASCEND_HOME_PATH") else RunMode.SIM


def resolve_options(groups: Mapping[str, Optional[Mapping[str, Any]]],
                    tensor_names: Sequence[str] = ()) -> Dict[str, Dict[str, Any]]:
    """Validates all groups and fills defaults. ``runtime_options['run_mode']`` becomes an int
    (from the environment when absent); ``ready_on_host_tensors`` must name tensor params."""
    unknown = set(groups) - set(OPTION_GROUPS)
    if unknown:
        raise PyptoValueError(f"unknown option group(s) {sorted(unknown)}")
    out: Dict[str, Dict[str, Any]] = {}
    for group in OPTION_GROUPS:
        given = validate_group(group, groups.get(group))
        full = {k: (list(o.default) if isinstance(o.default, tuple) else o.default)
                for k, o in SCHEMAS[group].items() if o.default is not None}
        full.update(given)
        out[group] = full
    rt = out["runtime_options"]
    if "run_mode" not in rt:
        rt["run_mode"] = int(default_run_mode())
    for i, name in enumerate(rt.get("ready_on_host_tensors", [])):
        if name not in tensor_names:
            close = difflib.get_close_matches(name, list(tensor_names), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise PyptoValueError(
                f"runtime_options['ready_on_host_tensors'][{i}]: {name!r} is not a tensor "
                f"parameter of the kernel{hint} (tensor parameters: {', '.join(tensor_names)})")
    return out
