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
import functools
import itertools
import math
import numbers
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ._enums import RunMode
from ._errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from ._limits import MAX_RANK
from .error import short_repr

__all__ = ["OPTION_GROUPS", "SCHEMAS", "Option", "validate_group", "resolve_options",
           "default_run_mode", "key_options", "accepted_only_options", "options", "set_options",
           "set_host_options", "set_runtime_options", "set_codegen_options",
           "set_pass_options", "set_verify_options", "set_debug_options", "get_options",
           "get_host_options", "get_runtime_options", "get_codegen_options",
           "get_pass_options", "get_verify_options", "get_debug_options",
           "get_operation_options", "reset_options", "set_matrix_size", "get_matrix_size",
           "get_cube_tile_shapes", "set_verify_golden_data", "get_verify_golden_data",
           "CubeTile", "effective_config"]

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
    return f"{group}[{short_repr(key)}]"


def _type_name(v: Any) -> str:
    return type(v).__name__


def _expect(where: str, expected: str, v: Any) -> None:
    extra = " (bools are not accepted as ints here)" if isinstance(v, bool) else ""
    raise PyptoTypeError(f"{where}: expected {expected}, got {_type_name(v)} {short_repr(v)}{extra}")


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_int(where: str, v: Any, rng: Optional[Tuple[int, int]],
               opt: Optional[Option] = None) -> int:
    if not _is_int(v):
        _expect(where, "int", v)
    v = int(v)
    if not -2**63 <= v < 2**63:  # even an "automatic" value reaches C++ as a 64-bit int
        raise PyptoValueError(f"{where}: {v} is out of range (it does not fit 64 bits)")
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
            raise PyptoTypeError(f"{where}[{i}]: expected str, got {_type_name(e)} {short_repr(e)}")
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
            raise PyptoTypeError(f"{where}: key {short_repr(k)} must be an int or a str")
        if pair_ok and isinstance(n, tuple):
            if len(n) != 2 or not all(_is_int(x) for x in n):
                raise PyptoTypeError(f"{where}[{short_repr(k)}]: expected an int or an (int, int) pair, "
                                     f"got {short_repr(n)}")
        elif not _is_int(n):
            _expect(f"{where}[{short_repr(k)}]", "int" + (" or (int, int)" if pair_ok else ""), n)
        elif n < 0:
            raise PyptoValueError(f"{where}[{short_repr(k)}]: {n} must be >= 0")
        out[k] = n
    if kinds == {"int", "func"}:
        raise PyptoValueError(f"{where}: int keys cannot be mixed with 'func<magic>_<order>' or "
                              "'DEFAULT' keys")
    return out


def _check_sg_set_scope(where: str, v: Any) -> Any:
    # PyPTO: (scope_id, allow_parallel_merge, allow_cross_scope_merge), an int meaning
    # (id, False, False); ids -1..2^31-1, and -1 (no scope) takes no merge flags.
    if _is_int(v):
        sid, flags = int(v), None
    elif (isinstance(v, tuple) and len(v) == 3 and _is_int(v[0])
            and isinstance(v[1], bool) and isinstance(v[2], bool)):
        sid, flags = int(v[0]), (v[1], v[2])
    else:
        _expect(where, "int or (int, bool, bool)", v)
    if not -1 <= sid <= 0x7FFFFFFF:
        raise PyptoValueError(f"{where}: scope id {sid} is out of range: expected -1..2147483647")
    if sid == -1 and flags is not None and any(flags):
        raise PyptoValueError(f"{where}: {short_repr(v)}: scope id -1 (no scope) takes "
                              "allow_parallel_merge and allow_cross_scope_merge False")
    return sid if flags is None else (sid, flags[0], flags[1])


def _check_ooo_scope(where: str, v: Any) -> int:
    if not _is_int(v):
        _expect(where, "int", v)
    if v != -1 and not 1 <= v <= 100000:
        raise PyptoValueError(f"{where}: {v} is out of range: expected -1 or [1, 100000]")
    return int(v)


def _check_error_tol(where: str, v: Any) -> list:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        _expect(where, "[rtol, atol] (two numbers)", v)
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise PyptoTypeError(f"{where}[{i}]: expected a number, got {_type_name(x)} {short_repr(x)}")
        if not math.isfinite(x):
            raise PyptoValueError(f"{where}[{i}]: {x} must be a finite number >= 0")
        if x < 0:
            raise PyptoValueError(f"{where}[{i}]: {x} must be >= 0")
    return [float(x) for x in v]


def _check_experimental(where: str, v: Any) -> dict:
    if not isinstance(v, dict):
        _expect(where, "dict", v)
    for k, n in v.items():
        if k != "sg_set_atomic_scope":
            raise PyptoValueError(f"{where}: unknown key {short_repr(k)}; the only experimental pass "
                                  "option is 'sg_set_atomic_scope'")
        _check_ooo_scope(f"{where}[{short_repr(k)}]", n)
    return dict(v)


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
        # A policy is a mode number (PyPTO's) or a registered policy name (pypto.sim.policies()).
        typ = r["type"]
        default = r["default"]
        if isinstance(default, list):
            default = tuple(default)
        if typ == "bool" and default is not None:
            default = bool(default)
        out[r["name"]] = Option(
            typ, default, None if typ in ("list[str]", "bool") else (r["min"], r["max"]),
            doc=r["doc"],
            out_of_range=r["out_of_range"], auto_value=r["auto_value"], unit=r["unit"],
            acts_on=tuple(r["acts_on"]), accepted_only=not r["acts_on"])
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
        # PyPTO's host config ONLY_CODEGEN (once the jit default): generate the device code
        # without the static launch flow; kernels still run (dynamically), so it is accepted
        # only here (not a compile_stage).
        "only_codegen": Option("bool", False, doc="device code without the static launch flow"),
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
        # The partition's cycle budget before PyPTO made it automatic (its default was
        # 10000); published kernels still pass it, and it still caps a leaf's estimate here.
        "pg_upper_bound": Option("int", None, (1, INT32_MAX),
                                 doc="cycle budget of a leaf task (default: automatic)"),
        # PyPTO's pass config keys that older kernels pass as options (defaults in
        # tile_fwk_config.json); the *_mode keys predate the settings' own forms (0: off).
        "pg_parallel_lower_bound": Option("int", None, (1, INT32_MAX)),
        "pg_lower_bound": Option("int", None, (0, INT32_MAX)),
        "mg_vec_parallel_lb": Option("int", None, (1, INT32_MAX)),
        "mg_copyin_upper_bound": Option("int", None, (1, 2 ** 62), doc="bytes"),
        # PyPTO's 2: every class by vec_nbuffer_setting, what a non-zero mode leaves it to.
        "vec_nbuffer_mode": Option("int", None, (0, 2)),
        "cube_l1_reuse_mode": Option("int", None, (0, 1)),
        "cube_nbuffer_mode": Option("int", None, (0, 1)),
        "sg_set_ooo_scope": Option("custom", check=_check_ooo_scope),
        "ooo_sched_mode": Option("str", None, choices=("", "GAPMIN", "HLF")),
        "auto_mix_partition": Option("bool", None),
        "sg_set_tunevf_mode": Option("int", None, (0, 2)),
        "enable_slice": Option("bool", None),
        "experimental": Option("custom", check=lambda w, v: _check_experimental(w, v)),
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

#: ``pypto.options(operation_options=...)`` / ``experimental.set_operation_options``; not a
#: jit keyword (PyPTO's jit has no such dict).
SCHEMAS["operation_options"] = {
    "combine_axis": Option("bool", False),
    "force_combine_axis": Option("bool", False),
}

#: The options of the Python-only groups that pypto-sim acts on; every other option of
#: those groups is accepted only (validated, passed to the backend, otherwise ignored).
_ACTED_ON = {("host_options", "compile_stage")} | {
    # The partition's options (frontend/compiler/src/partition.cpp).
    ("pass_options", k) for k in ("vec_nbuffer_setting", "cube_l1_reuse_setting",
                                  "cube_nbuffer_setting", "pg_upper_bound", "sg_set_scope",
                                  "pg_parallel_lower_bound", "pg_lower_bound",
                                  "mg_vec_parallel_lb", "mg_copyin_upper_bound",
                                  "vec_nbuffer_mode", "cube_l1_reuse_mode",
                                  "cube_nbuffer_mode")} | {
    # A trailing-axis broadcast's vector expand pass (frontend/compiler/src/emit_elementwise.cpp).
    ("operation_options", "combine_axis")}

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
            raise PyptoValueError(f"{where}: {short_repr(v)} is not one of "
                                  f"{', '.join(repr(c) for c in opt.choices)}")
        return v
    if opt.type == "list[str]":
        return _check_str_list(where, v)
    if opt.type == "policy":
        return _check_policy(where, v, opt)
    return opt.check(where, v)


def _check_policy(where: str, v: Any, opt: Option) -> Any:
    """A device_sched_mode: PyPTO's mode number, or the name of a registered policy."""
    if not isinstance(v, str) or v.strip().lstrip("+-").isdigit():
        # A number is PyPTO's mode and must be an int, as in PyPTO (also when quoted).
        return _check_int(where, v, opt.range, opt)
    from . import _C
    names = list(_C.policies())
    if v not in names:
        guess = difflib.get_close_matches(v, names, n=1)
        hint = f"; did you mean {guess[0]!r}?" if guess else ""
        raise PyptoValueError(f"{where}: unknown policy {v!r}{hint} (policies: "
                              f"{', '.join(names)}; or a mode in [{opt.range[0]}, "
                              f"{opt.range[1]}])")
    return v


def validate_group(group: str, options: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """Checks one option dict; returns a cleaned copy (None values dropped, enums as ints).

    Raises PyptoTypeError / PyptoValueError naming the key, the value and what is expected.
    """
    if group not in SCHEMAS:
        raise PyptoValueError(f"unknown option group {short_repr(group)}")
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise PyptoTypeError(f"{group} must be a dict, got {_type_name(options)} {short_repr(options)}")
    schema = SCHEMAS[group]
    out: Dict[str, Any] = {}
    for key, v in options.items():
        if not isinstance(key, str):
            raise PyptoTypeError(f"{group}: keys must be str, got {_type_name(key)} {short_repr(key)}")
        opt = schema.get(key)
        if opt is None:
            close = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.6)
            hint = f"; did you mean {short_repr(close[0])}?" if close else "."
            raise PyptoValueError(f"{group}: unknown key {short_repr(key)}{hint} Valid keys: "
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
    given_rt: Dict[str, Any] = {}
    for group in OPTION_GROUPS:
        given = validate_group(group, groups.get(group))
        full = {k: (list(o.default) if isinstance(o.default, tuple) else o.default)
                for k, o in SCHEMAS[group].items() if o.default is not None}
        full.update(given)
        out[group] = full
        if group == "runtime_options":
            given_rt = given
    rt = out["runtime_options"]
    # PyPTO's older count pair, given without stitch_function_max_num, stands in for it (the
    # stitching rule is sched's Stitcher): the backend must see max_num as not given.
    if (set(given_rt) & {"stitch_function_num_initial", "stitch_function_num_step"}
            and "stitch_function_max_num" not in given_rt):
        del rt["stitch_function_max_num"]
    if "run_mode" not in rt:
        rt["run_mode"] = int(default_run_mode())
    for i, name in enumerate(rt.get("ready_on_host_tensors", [])):
        if name not in tensor_names:
            close = difflib.get_close_matches(name, list(tensor_names), n=1, cutoff=0.6)
            hint = f"; did you mean {short_repr(close[0])}?" if close else ""
            raise PyptoValueError(
                f"runtime_options['ready_on_host_tensors'][{i}]: {short_repr(name)} is not a tensor "
                f"parameter of the kernel{hint} (tensor parameters: {', '.join(tensor_names)})")
    return out


# --- configuration scopes: pypto.options(...), set_*_options, tile shapes ---------------------
#
# PyPTO keeps its configuration in a stack of scopes: a global scope, one scope per
# ``with pypto.options(...)`` / ``@pypto.options(...)``, and, during a jit call, a "jit_scope"
# into which the jit option dicts are written last. A value set in an inner scope hides the
# outer one until the scope ends; ``set_options`` and ``set_*_options`` overwrite the
# innermost scope. We keep the same stack. A jit call reads the effective values when it
# runs: per group, the outer scopes' keys overlaid by the inner ones, then the kernel's own
# option dicts on top (so the decorator's dicts always win, as in PyPTO), and the tile shapes
# in force become the initial tile shapes of the trace. Inside a kernel being traced, an
# ``options`` scope also scopes the tracer's tile shapes.

#: The keyword groups of ``pypto.options``.
SCOPE_GROUPS = OPTION_GROUPS + ("operation_options",)


#: Serials of Options objects and revisions of scope values: never reused, so a (serial,
#: revision) pair always names the same values.
_counter = itertools.count(1)


@dataclass
class _Scope:
    name: str
    groups: Dict[str, Dict[str, Any]] = dataclasses.field(default_factory=dict)
    #: vec_tile_shapes (tuple of ints), cube_tile_shapes (ir.CubeTile), matrix_size (tuple),
    #: conv_tile_shapes / convbp_tile_shapes (as given; accepted only).
    tiles: Dict[str, Any] = dataclasses.field(default_factory=dict)
    #: The Options object it was opened from (0: the global scope); its values start as that
    #: object's, which never change.
    serial: int = 0
    #: 0 while the values are the Options object's; a fresh number at each change.
    revision: int = 0


_stack: List[_Scope] = [_Scope("global")]
#: The stack's state: (serial, revision) of each scope, updated at every change. Equal states
#: hold equal values, so a jit call re-resolves its options only when the state differs from
#: the one it resolved under, and a scope opened and closed since (the kernel body's own
#: scope during a trace, or an @pypto.options kernel's scope at each call) costs nothing.
_state: List[Tuple[Tuple[int, int], ...]] = [((0, 0),)]


def config_version() -> Tuple[Tuple[int, int], ...]:
    return _state[0]


def _bump(*changed: _Scope) -> None:
    for scope in changed:
        scope.revision = next(_counter)
    _state[0] = tuple((s.serial, s.revision) for s in _stack)


def CubeTile(m: Sequence[int], k: Sequence[int], n: Sequence[int],
             enable_split_k: bool = False):
    """PyPTO's ``CubeTile(m, k, n, enable_split_k)`` (for ``options(cube_tile_shapes=...)``):
    m and n are ``[L0, L1]``, k is ``[L0, L1]`` or ``[L0, L1a, L1b]``."""
    from . import _ops  # the tile rules live with set_cube_tile_shapes

    mm = _ops._tile_pair(m, "m", (2,))
    kk = _ops._tile_pair(k, "k", (2, 3))
    nn = _ops._tile_pair(n, "n", (2,))
    if len(kk) == 2:
        kk = (kk[0], kk[1], kk[1])
    if not isinstance(enable_split_k, bool):
        raise PyptoTypeError(f"cube tile: enable_split_k must be a bool, got {short_repr(enable_split_k)}")
    from .ir import CubeTile as _CubeTile

    return _CubeTile(m=mm, k=kk, n=nn, enable_split_k=enable_split_k)


def _check_vec_tile(v: Any) -> Tuple[int, ...]:
    if not isinstance(v, (list, tuple)) or not 1 <= len(v) <= MAX_RANK:
        raise PyptoValueError(f"vec_tile_shapes: expected a list of 1 to {MAX_RANK} positive "
                              f"ints (one per axis), got {short_repr(v)}")
    for d in v:
        if not _is_int(d) or d <= 0:
            raise PyptoValueError(f"vec_tile_shapes: every size must be a positive int, got "
                                  f"{short_repr(v)}")
    return tuple(int(d) for d in v)


def _check_cube_tile(v: Any):
    from .ir import CubeTile as _CubeTile

    if isinstance(v, _CubeTile):
        return v
    if not isinstance(v, (list, tuple)) or len(v) not in (3, 4):
        raise PyptoValueError(f"cube_tile_shapes: expected [m, k, n] or [m, k, n, "
                              f"enable_split_k] (each of m, k, n a list [L0, L1]), got {short_repr(v)}")
    return CubeTile(*v)


def _check_matrix_size(v: Any) -> Tuple[int, ...]:
    if not isinstance(v, (list, tuple)) or not all(_is_int(d) and d >= 0 for d in v):
        raise PyptoValueError(f"matrix_size: expected a list of non-negative ints such as "
                              f"[m, k, n], got {short_repr(v)}")
    return tuple(int(d) for d in v)


_TILE_CHECKS: Dict[str, Callable[[Any], Any]] = {
    "vec_tile_shapes": _check_vec_tile,
    "cube_tile_shapes": _check_cube_tile,
    "matrix_size": _check_matrix_size,
    "conv_tile_shapes": lambda v: v,    # accepted only: there is no conv op
    "convbp_tile_shapes": lambda v: v,  # accepted only
}


def _scope_values(kwargs: Mapping[str, Any]) -> Tuple[Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """Validates ``options``/``set_options`` keywords; returns (groups, tiles)."""
    groups: Dict[str, Dict[str, Any]] = {}
    tiles: Dict[str, Any] = {}
    for key, v in kwargs.items():
        if v is None:
            continue
        if key in SCOPE_GROUPS:
            groups[key] = validate_group(key, v)
        elif key in _TILE_CHECKS:
            tiles[key] = _TILE_CHECKS[key](v)
        else:  # only reachable through **kwargs of the set_* helpers
            raise PyptoTypeError(f"unknown option {short_repr(key)}")
    return groups, tiles


def _tracer_top():
    from . import _tracer

    tr = _tracer.current()
    return None if tr is None else tr.top


def _apply_tiles_to_trace(tiles: Mapping[str, Any]) -> None:
    top = _tracer_top()
    if top is None:
        return
    if "vec_tile_shapes" in tiles:
        top.vec_tile = tiles["vec_tile_shapes"]
    if "cube_tile_shapes" in tiles:
        top.cube_tile = tiles["cube_tile_shapes"]


class Options:
    """What ``pypto.options(...)`` returns: a context manager and a decorator.

    ``with pypto.options(pass_options={...}, vec_tile_shapes=[32, 32]):`` opens a scope for
    the block; ``@pypto.options(...)`` opens it around every call of the decorated function
    (a plain function, or a jit kernel: then every call of the kernel runs in the scope).
    """

    def __init__(self, name: str = "", **kwargs: Any):
        if not isinstance(name, str):
            raise PyptoTypeError(f"pypto.options: name must be a str, got {short_repr(name)}")
        self.name = name
        self.groups, self.tiles = _scope_values(kwargs)
        self._serial = next(_counter)
        self._entered: List[Tuple[_Scope, Any]] = []

    def __enter__(self) -> "Options":
        scope = _Scope(self.name or "scope", {g: dict(v) for g, v in self.groups.items()},
                       dict(self.tiles), self._serial)
        _stack.append(scope)
        _bump()
        top = _tracer_top()
        saved = None if top is None else (top, top.vec_tile, top.cube_tile)
        _apply_tiles_to_trace(self.tiles)
        self._entered.append((scope, saved))
        return self

    def __exit__(self, *exc: Any) -> None:
        scope, saved = self._entered.pop()
        if _stack[-1] is not scope:
            raise PyptoRuntimeError(f"pypto.options scope {short_repr(self.name)} closed out of order")
        _stack.pop()
        _bump()
        if saved is not None:
            top, vec, cube = saved
            top.vec_tile, top.cube_tile = vec, cube

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise PyptoTypeError(f"pypto.options(...) decorates a function or a jit kernel, got "
                                 f"{type(func).__name__}")
        if not self.name:
            self.name = getattr(func, "__name__", "")
        return _Scoped(self, func)


class _Scoped:
    """A function or jit kernel whose every call runs in an ``options`` scope. Attributes
    (``last_report``, ``cache``, ...) are the wrapped object's."""

    def __init__(self, opts: Options, func: Callable):
        object.__setattr__(self, "_pypto_options", opts)
        object.__setattr__(self, "__wrapped__", func)
        functools.update_wrapper(self, func, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._pypto_options:
            return self.__wrapped__(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__wrapped__, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:  # methods stay methods
        return self if obj is None else functools.partial(self.__call__, obj)

    def __repr__(self) -> str:
        return f"<pypto.options({short_repr(self._pypto_options.name)}) {short_repr(self.__wrapped__)}>"


def options(name: str = "", codegen_options: Optional[dict] = None,
            host_options: Optional[dict] = None, pass_options: Optional[dict] = None,
            runtime_options: Optional[dict] = None, verify_options: Optional[dict] = None,
            operation_options: Optional[dict] = None, debug_options: Optional[dict] = None,
            vec_tile_shapes: Any = None, cube_tile_shapes: Any = None,
            conv_tile_shapes: Any = None, convbp_tile_shapes: Any = None,
            matrix_size: Any = None) -> Options:
    """A configuration scope (PyPTO's ``pypto.options``), as a context manager or decorator.

    Example::

        @pypto.options(pass_options={"cube_l1_reuse_setting": {-1: 4}})
        @pypto.frontend.jit
        def k(...): ...

        with pypto.options(name="tiles", vec_tile_shapes=[32, 64]):
            k(x, y)       # the kernel starts with vec tile shapes (32, 64)

    Values are validated here (names, types, ranges, as for the jit dicts). Per key, an inner
    scope hides the outer ones; a kernel's own jit option dicts win over every scope.
    """
    return Options(name, codegen_options=codegen_options, host_options=host_options,
                   pass_options=pass_options, runtime_options=runtime_options,
                   verify_options=verify_options, operation_options=operation_options,
                   debug_options=debug_options, vec_tile_shapes=vec_tile_shapes,
                   cube_tile_shapes=cube_tile_shapes, conv_tile_shapes=conv_tile_shapes,
                   convbp_tile_shapes=convbp_tile_shapes, matrix_size=matrix_size)


def scoped_option(group: str, key: str, default: Any = None) -> Any:
    """The value of one option key in force now (innermost scope first), or `default`."""
    for scope in reversed(_stack):
        vals = scope.groups.get(group)
        if vals is not None and key in vals:
            return vals[key]
    return default


def innermost_groups() -> Dict[str, Dict[str, Any]]:
    """The option groups set in the innermost scope itself (not inherited)."""
    return _stack[-1].groups


def set_options(codegen_options: Optional[dict] = None, host_options: Optional[dict] = None,
                pass_options: Optional[dict] = None, runtime_options: Optional[dict] = None,
                verify_options: Optional[dict] = None, debug_options: Optional[dict] = None,
                operation_options: Optional[dict] = None, vec_tile_shapes: Any = None,
                cube_tile_shapes: Any = None, conv_tile_shapes: Any = None,
                convbp_tile_shapes: Any = None, matrix_size: Any = None) -> None:
    """Overwrites keys of the innermost scope (the global one outside any ``options``)."""
    groups, tiles = _scope_values(dict(
        codegen_options=codegen_options, host_options=host_options, pass_options=pass_options,
        runtime_options=runtime_options, verify_options=verify_options,
        debug_options=debug_options, operation_options=operation_options,
        vec_tile_shapes=vec_tile_shapes, cube_tile_shapes=cube_tile_shapes,
        conv_tile_shapes=conv_tile_shapes, convbp_tile_shapes=convbp_tile_shapes,
        matrix_size=matrix_size))
    top = _stack[-1]
    for g, vals in groups.items():
        top.groups.setdefault(g, {}).update(vals)
    top.tiles.update(tiles)
    _apply_tiles_to_trace(tiles)
    _bump(top)


def operation_options_mark() -> Tuple[_Scope, Optional[Dict[str, Any]]]:
    """The innermost scope and its own operation options, for restore_operation_options."""
    top = _stack[-1]
    vals = top.groups.get("operation_options")
    return top, (None if vals is None else dict(vals))


def restore_operation_options(mark: Tuple[_Scope, Optional[Dict[str, Any]]]) -> None:
    """Puts back the operation options of operation_options_mark: PyPTO's
    set_operation_options page makes them local to the jit or loop that sets them, so each
    traced pass of a pypto.loop body starts from, and the loop ends with, the ones at entry."""
    scope, vals = mark
    if scope not in _stack or scope.groups.get("operation_options") == vals:
        return
    if vals is None:
        scope.groups.pop("operation_options", None)
    else:
        scope.groups["operation_options"] = dict(vals)
    _bump(scope)


def _group_setter(group: str) -> Callable[..., None]:
    def setter(**kwargs: Any) -> None:
        set_options(**{group: kwargs})

    setter.__name__ = f"set_{group}"
    setter.__doc__ = (f"``pypto.set_{group}(key=value, ...)``: sets keys of {group} in the "
                      f"innermost scope (validated like the jit dict).")
    return setter


set_host_options = _group_setter("host_options")
set_runtime_options = _group_setter("runtime_options")
set_codegen_options = _group_setter("codegen_options")
set_pass_options = _group_setter("pass_options")
set_verify_options = _group_setter("verify_options")
set_debug_options = _group_setter("debug_options")
set_operation_options = _group_setter("operation_options")


def effective_config() -> Tuple[Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """(groups, tiles) in force: every scope from the global one inward, inner keys winning."""
    groups: Dict[str, Dict[str, Any]] = {}
    tiles: Dict[str, Any] = {}
    for scope in _stack:
        for g, vals in scope.groups.items():
            groups.setdefault(g, {}).update(vals)
        tiles.update(scope.tiles)
    return groups, tiles


def _group_getter(group: str) -> Callable[[], Dict[str, Any]]:
    def getter() -> Dict[str, Any]:
        full = {k: (list(o.default) if isinstance(o.default, tuple) else o.default)
                for k, o in SCHEMAS[group].items() if o.default is not None}
        full.update(effective_config()[0].get(group, {}))
        return full

    getter.__name__ = f"get_{group}"
    getter.__doc__ = f"The {group} in force (defaults, then every scope's keys)."
    return getter


get_host_options = _group_getter("host_options")
get_runtime_options = _group_getter("runtime_options")
get_codegen_options = _group_getter("codegen_options")
get_pass_options = _group_getter("pass_options")
get_verify_options = _group_getter("verify_options")
get_debug_options = _group_getter("debug_options")
get_operation_options = _group_getter("operation_options")


def get_options() -> Dict[str, Any]:
    """Every group and tile shape in force, as one dict (``{"pass_options": {...}, ...,
    "vec_tile_shapes": [...]}``)."""
    groups, tiles = effective_config()
    out: Dict[str, Any] = {g: _group_getter(g)() for g in SCOPE_GROUPS}
    out.update({k: (list(v) if isinstance(v, tuple) else v) for k, v in tiles.items()})
    return out


def reset_options() -> None:
    """Back to the defaults: the global scope is emptied (open ``options`` scopes stay open
    but empty)."""
    for scope in _stack:
        scope.groups.clear()
        scope.tiles.clear()
    _bump(*_stack)


def set_matrix_size(size: Sequence[int]) -> None:
    """PyPTO's matmul size hint ``[m, k, n]`` for the current scope. Accepted and kept
    (``get_matrix_size()``); pypto-sim does not need it (tiling comes from the cube tile
    shapes)."""
    set_options(matrix_size=size)


def get_matrix_size() -> Optional[List[int]]:
    v = effective_config()[1].get("matrix_size")
    return None if v is None else list(v)


def scope_vec_tile() -> Optional[Tuple[int, ...]]:
    return effective_config()[1].get("vec_tile_shapes")


def scope_cube_tile():
    return effective_config()[1].get("cube_tile_shapes")


def get_cube_tile_shapes() -> Tuple[List[int], List[int], List[int], bool]:
    """``(m, k, n, enable_split_k)`` in force, as PyPTO returns it (k has three entries),
    inside a kernel or outside; ``([], [], [], False)`` when none was set."""
    top = _tracer_top()
    cube = top.cube_tile if top is not None else scope_cube_tile()
    if cube is None:
        return ([], [], [], False)
    return (list(cube.m), list(cube.k), list(cube.n), cube.enable_split_k)


# --- golden data for PyPTO's pass verification -------------------------------------------------

_golden: Dict[str, Any] = {"in_out_tensors": None, "goldens": None}


def set_verify_golden_data(in_out_tensors: Optional[Sequence[Any]] = None,
                           goldens: Optional[Sequence[Any]] = None) -> None:
    """PyPTO registers reference outputs for its CPU pass verifier (used with
    ``verify_options={"enable_pass_verify": True}``). Accepted and kept
    (``get_verify_golden_data()``), but pypto-sim has no pass verifier: SIM computes the real
    numbers, so compare the outputs with the goldens directly. Like PyPTO, tensors must be on
    the CPU; ``None`` entries stand for tensors without a golden."""
    import torch

    for kind, seq in (("in_out_tensors", in_out_tensors), ("goldens", goldens)):
        if seq is None:
            continue
        if not isinstance(seq, (list, tuple)):
            raise PyptoTypeError(f"set_verify_golden_data: {kind} must be a list of tensors, "
                                 f"got {type(seq).__name__}")
        for i, t in enumerate(seq):
            if t is None:
                continue
            if not isinstance(t, torch.Tensor):
                raise PyptoTypeError(f"set_verify_golden_data: {kind}[{i}] must be a "
                                     f"torch.Tensor or None, got {type(t).__name__}")
            if t.device.type != "cpu":
                raise PyptoValueError(
                    f"set_verify_golden_data: {kind} must be on CPU, but {kind}[{i}] is on "
                    f"device '{t.device}'. Please call .cpu() before passing.")
        _golden[kind] = list(seq)


def get_verify_golden_data() -> Dict[str, Any]:
    """What ``set_verify_golden_data`` registered: ``{"in_out_tensors": ..., "goldens": ...}``."""
    return dict(_golden)
