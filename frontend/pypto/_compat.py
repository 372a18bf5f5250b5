# SPDX-License-Identifier: Apache-2.0
"""The one place that says which of PyPTO's public names pypto-sim ignores or lacks, and why.

A PyPTO name (tools/compat/pypto_names.json) is

* **supported** when this package has it and it is not in :data:`IGNORED`;
* **accepted but ignored** when it is in :data:`IGNORED` (functions: they check their
  arguments, then have no effect on the simulator), or, for option keys, when
  ``pypto._options`` marks it accepted-only (the reason per group: :data:`IGNORED_OPTION_GROUPS`);
* **not supported** when this package lacks it; it must then be in :data:`UNSUPPORTED` with
  the reason. ``pypto.<name>`` raises :class:`PyptoUnsupportedError` with that reason (it is
  also an ``AttributeError``, so ``hasattr`` and ``getattr(pypto, name, default)`` keep working).

``tools/compat_table.py`` writes docs/compatibility.md from these tables and the live package;
tests/frontend/test_compat.py fails when a PyPTO name is in neither, when a name listed here as
unsupported has since been added (remove the entry), and when the checked-in table is stale.
"""

from __future__ import annotations

from typing import Dict

from ._errors import PyptoNotImplementedError
from ._limits import RANK_LIMIT_TEXT

__all__ = ["IGNORED", "IGNORED_OPTION_GROUPS", "IGNORED_OPTIONS", "LIMITED", "UNSUPPORTED",
           "PyptoUnsupportedError",
           "unsupported_reason", "module_getattr"]


class PyptoUnsupportedError(PyptoNotImplementedError, AttributeError):
    """A PyPTO name that pypto-sim does not provide; the message says why."""

    err_code = "F00005"


# ---- accepted but ignored: present, validated, no effect on SIM -----------------------------
IGNORED: Dict[str, str] = {
    "set_matrix_size": "the original m, k, n that PyPTO's matmul/scaled_mm needs to address "
                       "the fractal blocks of an NZ operand that was reshaped or is 3-D/4-D; "
                       "pypto-sim keeps NZ data as ND and times an NZ operand's loads from its "
                       "parameter's own shape, so neither numbers nor timing depend on it (the "
                       "value is checked and kept, get_matrix_size returns it)",
    "set_verify_golden_data": "PyPTO's per-pass golden verification; SIM computes real "
                              "numbers (the data is checked and kept), compare them with torch",
    "SymbolicScalar.as_variable": "a hint to PyPTO's code generator (the expression becomes "
                                  "an intermediate variable); the value is the same",
    **{n: "PyPTO's per-pass dump/print/check/skip switches; pypto-sim runs none of PyPTO's "
          "graph passes (the values are checked and kept, the getters return them)"
       for n in ("set_pass_config", "get_pass_config", "get_pass_configs",
                 "set_pass_default_config", "get_pass_default_config")},
    **{n: "a dump of intermediate tensors during PyPTO's pass verification, which pypto-sim "
          "does not run (it computes the real numbers: compare them with torch); the "
          "arguments are checked"
       for n in ("pass_verify_print", "pass_verify_save")},
}

_950_ONLY = ("a pass of the 950 (DAV_3510) only: on A2/A3 PyPTO skips it, so it changes nothing "
             "there; pypto-sim does not model the 950's CV MIX leaves, so it changes nothing "
             "on the 950 presets either")

_MIX_ONLY = ("the instruction order inside a CV MIX leaf (OoOSchedule), which PyPTO documents "
             "for the 950 only (A2/A3 have no MIX leaves, so it changes nothing there); "
             "pypto-sim does not model the 950's MIX leaves, so it changes nothing on the 950 "
             "presets either")

_OLD_POOL = ("PyPTO's older workspace pools (replaced by stitch_function_max_num), sized in "
             "multiples of the largest root's workspace; its runtime submits a device task when "
             "a root does not fit and gets memory back as device tasks finish, which depends on "
             "run timing; pypto-sim lays each root's workspace out exactly instead (the older "
             "num_initial / num_step / size act: docs/python.md)")

#: Per-key reasons that are more precise than their group's.
IGNORED_OPTIONS: Dict[str, str] = {
    "pass_options.auto_mix_partition": _950_ONLY,
    "pass_options.sg_set_tunevf_mode": _950_ONLY,
    "pass_options.sg_set_ooo_scope": _MIX_ONLY,
    "pass_options.ooo_sched_mode": _MIX_ONLY,
    "codegen_options.support_dynamic_aligned": (
        "device code for dynamic shapes whose trailing axes are aligned; PyPTO documents a "
        "possible speed-up, which pypto-sim's cost model does not price (numbers are the same)"),
    "codegen_options.soc_version": (
        "the target chip of PyPTO's code generator; SIM's chip is PYPTO_SIM_CHIP's preset "
        "(default A2), and a soc_version naming another chip is not followed"),
    "codegen_options.enable_pmu_trace": (
        "PMU stamps at each leaf's start and end for msprof (950 only); pypto-sim does not "
        "add their few instructions"),
    "verify_options.enable_pass_verify": (
        "a kernel's run does no golden verification here (compare its outputs with torch); "
        "pypto.verify reads it: False runs the graph without comparing"),
    "verify_options.pass_verify_error_tol": (
        "a kernel's run does no golden verification here (compare its outputs with torch); "
        "pypto.verify compares its outputs with the goldens under this [rtol, atol]"),
    "runtime_options.stitch_function_inner_memory": _OLD_POOL,
    "runtime_options.stitch_function_outcast_memory": _OLD_POOL,
    "runtime_options.stitch_cfgcache_size": (
        "PyPTO's control-flow cache (bytes, 0 off): a launch whose control flow is cached "
        "skips building its device tasks; pypto-sim builds them on every launch, so where "
        "PyPTO hits the cache its control-flow time is shorter than SIM's"),
}

IGNORED_OPTION_GROUPS: Dict[str, str] = {
    "host_options": "compile monitoring and timeouts of PyPTO's host compiler, which "
                    "pypto-sim does not run",
    "codegen_options": "PyPTO's code generator settings; pypto-sim generates no device code",
    "pass_options": "a PyPTO graph pass pypto-sim's compiler does not run (its partition "
                    "acts on the merge settings and pg_upper_bound: docs/partition.md)",
    "verify_options": "PyPTO's per-pass golden verification, which pypto-sim does not run "
                      "(pypto.verify compares a graph's outputs once, after its run); SIM "
                      "computes real numbers, compare them with torch",
    "debug_options": "PyPTO's debug dumps; SIM always writes its reports (stats.json, "
                     "trace.json, swim.json, CostModelSimulationOutput/merged_swimlane.json)",
}

# ---- supported with a limit: the table's note says which part raises and why --------------
_TRANSDATA_LIMIT = ("NCHW -> NC1HWC0, NCHW -> Fractal_Z (with group), NC1HWC0 -> NCHW "
                    "(TILEOP_ND) and NCDHW -> Fractal_Z_3D are simulated; NCDHW -> NDC1HWC0 "
                    "and back have 6-D tensors and raise PyptoNotImplementedError (pypto-sim's "
                    f"compiler holds tensors of {RANK_LIMIT_TEXT})")

_WIDE_UINT = ("the constant (bytes_of, annotations) only: pypto-sim's compiler and executors "
              "take DT_UINT8 but not the wider unsigned types, so a kernel that declares or "
              "casts to it raises PyptoValueError naming the dtype; torch 1.13 (pypto-sim's "
              "torch) has no uint16/uint32/uint64 either, so no tensor can be passed for it")

LIMITED: Dict[str, str] = {
    "transdata": _TRANSDATA_LIMIT,
    "Tensor.transdata": _TRANSDATA_LIMIT,
    **{n: _WIDE_UINT for n in ("DT_UINT16", "DT_UINT32", "DT_UINT64")},
    "verify": ("the outputs of one SIM run of the graph are compared with the goldens "
               "under PyPTO's verdict rule and pass_verify_error_tol; pypto-sim runs none of "
               "PyPTO's passes, so there is no per-pass verification (pass_verify_pass_filter "
               "and pass_verify_save_tensor are checked, then ignored), and a golden count "
               "other than the output count raises PyptoValueError where PyPTO logs "
               "NO_COMPARE"),
}

# ---- not supported: absent from this package -----------------------------------------------
UNSUPPORTED: Dict[str, str] = {
    "SatStatus": ("PyPTO's __init__.py imports it from symbolic_scalar.py, which takes it from "
                  "the native pypto_impl module; neither the Python sources nor pypto_impl's "
                  "type stubs (pypto_impl/__init__.pyi) nor an API page give its members or "
                  "meaning, so there is nothing to reproduce"),
}


def stub_reason(obj: object) -> str:
    """Why a name that this package defines is still not supported, or '' when it is: a stub
    that raises PyptoNotImplementedError (``__pypto_unsupported__``), or a Tensor method that
    forwards to a ``pypto.<op>`` which is missing or itself a stub."""
    why = getattr(obj, "__pypto_unsupported__", None)
    if why:
        return why
    target = getattr(obj, "__pypto_forwards_to__", None)
    if target is not None:
        from . import _ops

        op = getattr(_ops, target, None)
        if op is None:
            return f"pypto.{target} is not implemented"
        return stub_reason(op)
    return ""


def unsupported_reason(name: str) -> str:
    """The reason a PyPTO name is not supported, or '' when it is not listed."""
    return UNSUPPORTED.get(name, "")


def module_getattr(name: str):
    """``pypto.__getattr__``: a clear error for PyPTO names this package does not provide."""
    reason = UNSUPPORTED.get(name)
    if reason is None:
        raise AttributeError(f"module 'pypto' has no attribute {name!r}")
    raise PyptoUnsupportedError(f"pypto.{name} is not supported by pypto-sim: {reason}")
