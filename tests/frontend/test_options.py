# SPDX-License-Identifier: Apache-2.0
"""Option dicts of @pypto.frontend.jit: every runtime_options key, plus the other groups."""

import importlib

import pytest
import torch

import pypto
from pypto import _backend
from pypto._options import (SCHEMAS, accepted_only_options, key_options, resolve_options,
                            validate_group)

RANGES = {
    "device_sched_mode": (0, 3),
    "stitch_function_max_num": (1, 1024),
    "max_workspace_kb": (0, 2147483647),
    "run_mode": (0, 1),
    "valid_shape_optimize": (0, 1),
    "device_sched_parallelism": (1, 8),
    "launch_sched_aicpu_num": (1, 7),
    "launch_early_mode": (0, 2),
    # PyPTO's older stitching knobs (inner/outcast memory accepted only) and its
    # control-flow cache (accepted only)
    "stitch_function_inner_memory": (1, 2147483647),
    "stitch_function_outcast_memory": (1, 2147483647),
    "stitch_function_num_initial": (1, 1024),
    "stitch_function_num_step": (0, 1024),
    "stitch_function_size": (1, 65535),
    "stitch_cfgcache_size": (0, 100000000),
    "cfgcache_device_task_num": (0, 2147483647),
    "cfgcache_root_task_num": (0, 2147483647),
    "cfgcache_leaf_task_num": (0, 2147483647),
}
RUNTIME_ACCEPTED_ONLY = ("stitch_function_inner_memory", "stitch_function_outcast_memory",
                         "stitch_cfgcache_size",
                         "cfgcache_device_task_num", "cfgcache_root_task_num",
                         "cfgcache_leaf_task_num", "triple_stream_sched")


def kernel(x: pypto.Tensor([4], pypto.DT_FP32)):
    pass


def decorate(**opts):
    return pypto.frontend.jit(**opts)(kernel)


def test_every_runtime_key_is_covered():
    assert set(SCHEMAS["runtime_options"]) == set(RANGES) | {"ready_on_host_tensors",
                                                             "triple_stream_sched"}


def test_triple_stream_sched_is_an_accepted_only_bool():
    # PyPTO's board launch over three streams: published kernels pass True.
    for v in (True, False):
        assert decorate(runtime_options={"triple_stream_sched": v}).options[
            "runtime_options"]["triple_stream_sched"] is v
    with pytest.raises(pypto.error.FeError, match="triple_stream_sched.*expected bool"):
        decorate(runtime_options={"triple_stream_sched": 1})
    assert "triple_stream_sched" in pypto._options.accepted_only_options()["runtime_options"]


@pytest.mark.parametrize("key", sorted(RANGES))
def test_runtime_int_bounds_accepted(key):
    lo, hi = RANGES[key]
    for v in (lo, hi):
        k = decorate(runtime_options={key: v})
        assert k.options["runtime_options"][key] == v


# Integers outside the range that are accepted: every int for launch_sched_aicpu_num
# (automatic count), -1 for launch_early_mode (the chip's default).
ACCEPTED_OUTSIDE = {"launch_sched_aicpu_num": (0, -1, 8, 99), "launch_early_mode": (-1,)}


@pytest.mark.parametrize("key", sorted(set(RANGES) - {"launch_sched_aicpu_num"}))
def test_runtime_int_out_of_range_names_key_value_range(key):
    lo, hi = RANGES[key]
    below = lo - 2 if key == "launch_early_mode" else lo - 1
    for v in (below, hi + 1):
        with pytest.raises(pypto.PyptoValueError) as e:
            decorate(runtime_options={key: v})
        assert f"runtime_options['{key}']: {v} is out of range [{lo}, {hi}]" in str(e.value)


@pytest.mark.parametrize("key", sorted(ACCEPTED_OUTSIDE))
def test_runtime_int_accepted_outside_the_range(key):
    for v in ACCEPTED_OUTSIDE[key]:
        assert decorate(runtime_options={key: v}).options["runtime_options"][key] == v


def test_launch_early_mode_message_mentions_the_default_value():
    with pytest.raises(pypto.PyptoValueError,
                       match=r"\['launch_early_mode'\]: 3 is out of range \[0, 2\] "
                             r"\(or -1 for the default\)"):
        decorate(runtime_options={"launch_early_mode": 3})


def test_runtime_schema_is_the_sched_table():
    """runtime_options are not restated in Python: the schema is pypto._C's table."""
    native = importlib.import_module("pypto._C")
    rows = native.runtime_option_schema()
    assert [r["name"] for r in rows] == list(SCHEMAS["runtime_options"])
    for r in rows:
        opt = SCHEMAS["runtime_options"][r["name"]]
        if r["type"] not in ("list[str]", "bool"):
            assert opt.range == (r["min"], r["max"]) == RANGES[r["name"]]
        assert opt.doc == r["doc"] and opt.out_of_range == r["out_of_range"]
        assert set(r["acts_on"]) <= {"frontend", "sim", "replay"}
    by_name = {r["name"]: r for r in rows}
    assert by_name["launch_sched_aicpu_num"]["out_of_range"] == "automatic"
    assert by_name["launch_sched_aicpu_num"]["default"] == 7
    assert by_name["launch_early_mode"]["default"] is None
    assert by_name["launch_early_mode"]["auto_value"] == -1
    assert by_name["run_mode"]["acts_on"] == ["frontend"]
    assert by_name["device_sched_mode"]["type"] == "policy"


@pytest.fixture
def sim_backend(monkeypatch):
    """The real SIM backend, undoing the frontend-only patch of conftest (these runs are
    outside test_sim_*, so no golden record: they only read the thread count)."""
    native = importlib.import_module("pypto._C")
    monkeypatch.setattr(_backend, "_native", lambda: native)


def sched_threads(launch_sched_aicpu_num):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM,
                                         "launch_sched_aicpu_num": launch_sched_aicpu_num})
    def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + x

    k(torch.ones(16, 64), torch.zeros(16, 64))
    return k.last_report.stats["aicpu"]["sched_threads"]


@pytest.mark.parametrize("chip, automatic", [("a2", 3), ("950pr", 4)])
def test_launch_sched_aicpu_num_out_of_range_means_automatic(sim_backend, monkeypatch, chip,
                                                             automatic):
    """<=0 or above the chip's maximum (a2: 4, 950pr: 6) -> the automatic count
    min(max, ceil(aic / cores_per_thread)); 1..max is taken as given."""
    monkeypatch.setenv("PYPTO_SIM_CHIP", chip)
    for v in (0, -1, 99, 7):
        assert sched_threads(v) == automatic, v
    assert sched_threads(2) == 2
    assert sched_threads(3) == 3
    if chip == "950pr":
        assert sched_threads(6) == 6


@pytest.mark.parametrize("key", sorted(RANGES))
def test_runtime_int_wrong_type(key):
    with pytest.raises(pypto.PyptoTypeError,
                       match=rf"runtime_options\['{key}'\]: expected int, got str '1'"):
        decorate(runtime_options={key: "1"})
    with pytest.raises(pypto.PyptoTypeError, match=r"expected int, got float 1.0"):
        decorate(runtime_options={key: 1.0})


@pytest.mark.parametrize("key", sorted(RANGES))
def test_bool_is_not_an_int(key):
    with pytest.raises(pypto.PyptoTypeError,
                       match=rf"\['{key}'\]: expected int, got bool True \(bools are not"):
        decorate(runtime_options={key: True})


def test_run_mode_out_of_range_mentions_run_mode_names():
    with pytest.raises(pypto.PyptoValueError,
                       match=r"\['run_mode'\]: 2 is out of range \[0, 1\] \(invalid run mode: "
                             r"it must be RunMode.NPU or RunMode.SIM\)"):
        decorate(runtime_options={"run_mode": 2})


def test_run_mode_enum_stored_as_int():
    k = decorate(runtime_options={"run_mode": pypto.RunMode.SIM})
    assert k.options["runtime_options"]["run_mode"] == 1
    assert k.run_mode is pypto.RunMode.SIM


def test_run_mode_default_from_ascend_home_path(monkeypatch):
    assert decorate().run_mode is pypto.RunMode.SIM
    monkeypatch.setenv("ASCEND_HOME_PATH", "/usr/local/Ascend/ascend-toolkit/latest")
    assert decorate().run_mode is pypto.RunMode.NPU
    assert decorate(runtime_options={"run_mode": 1}).run_mode is pypto.RunMode.SIM


def test_unknown_key_did_you_mean():
    with pytest.raises(pypto.PyptoValueError) as e:
        decorate(runtime_options={"device_sched_mod": 1})
    msg = str(e.value)
    assert ("runtime_options: unknown key 'device_sched_mod'; did you mean "
            "'device_sched_mode'?") in msg
    assert "Valid keys: device_sched_mode, stitch_function_max_num" in msg


def test_unknown_key_without_close_match():
    with pytest.raises(pypto.PyptoValueError, match=r"unknown key 'zzz'\. Valid keys:"):
        decorate(runtime_options={"zzz": 1})


def test_ready_on_host_tensors():
    k = decorate(runtime_options={"ready_on_host_tensors": ["x"]})
    assert k.options["runtime_options"]["ready_on_host_tensors"] == ["x"]
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"\['ready_on_host_tensors'\]\[1\]: expected str, got int 3"):
        decorate(runtime_options={"ready_on_host_tensors": ["x", 3]})
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"\['ready_on_host_tensors'\]: expected list of str, got str 'x'"):
        decorate(runtime_options={"ready_on_host_tensors": "x"})
    with pytest.raises(pypto.PyptoValueError,
                       match=r"\['ready_on_host_tensors'\]\[0\]: 'y' is not a tensor parameter"):
        decorate(runtime_options={"ready_on_host_tensors": ["y"]})


def test_defaults_filled_and_none_dropped():
    k = decorate(runtime_options={"device_sched_mode": None})
    rt = k.options["runtime_options"]
    assert rt["device_sched_mode"] == 0
    assert rt["stitch_function_max_num"] == 128
    assert rt["max_workspace_kb"] == 0
    assert rt["device_sched_parallelism"] == 1
    assert rt["launch_sched_aicpu_num"] == 7
    assert rt["ready_on_host_tensors"] == []
    assert "launch_early_mode" not in rt  # chip default, decided by the backend
    assert k.options["host_options"]["compile_stage"] == 0


def test_older_stitch_pair_without_max_num_leaves_max_num_unset():
    # No defaults for the older options: the backend sees only what was given, and the pair
    # without stitch_function_max_num stands in for it (legacy count mode).
    rt = decorate(runtime_options={"stitch_function_num_initial": 2}).options["runtime_options"]
    assert rt["stitch_function_num_initial"] == 2
    assert "stitch_function_num_step" not in rt and "stitch_function_size" not in rt
    assert "stitch_function_max_num" not in rt
    rt = decorate(runtime_options={"stitch_function_num_step": 1,
                                   "stitch_function_max_num": 128}).options["runtime_options"]
    assert rt["stitch_function_max_num"] == 128
    rt = decorate(runtime_options={"stitch_function_size": 2048}).options["runtime_options"]
    assert rt["stitch_function_max_num"] == 128
    assert SCHEMAS["runtime_options"]["stitch_function_num_initial"].default is None


def test_option_dict_must_be_a_dict():
    with pytest.raises(pypto.PyptoTypeError, match="runtime_options must be a dict, got list"):
        decorate(runtime_options=[("run_mode", 1)])
    with pytest.raises(pypto.PyptoTypeError, match="keys must be str, got int 1"):
        decorate(runtime_options={1: 1})


@pytest.mark.parametrize("group, opts, exc, message", [
    ("host_options", {"compile_stage": 6}, pypto.PyptoValueError,
     r"host_options\['compile_stage'\]: 6 is out of range \[0, 5\]"),
    ("host_options", {"compile_monitor_enable": 3}, pypto.PyptoValueError,
     r"\['compile_monitor_enable'\]: 3 is out of range \[0, 2\]"),
    ("host_options", {"compile_stag": 0}, pypto.PyptoValueError,
     "did you mean 'compile_stage'"),
    ("codegen_options", {"support_dynamic_aligned": 1}, pypto.PyptoTypeError,
     r"codegen_options\['support_dynamic_aligned'\]: expected bool, got int 1"),
    ("codegen_options", {"soc_version": 910}, pypto.PyptoTypeError,
     r"\['soc_version'\]: expected str, got int 910"),
    ("pass_options", {"ooo_sched_mode": "FAST"}, pypto.PyptoValueError,
     r"\['ooo_sched_mode'\]: 'FAST' is not one of '', 'GAPMIN', 'HLF'"),
    ("pass_options", {"sg_set_ooo_scope": 0}, pypto.PyptoValueError,
     r"\['sg_set_ooo_scope'\]: 0 is out of range: expected -1 or \[1, 100000\]"),
    ("pass_options", {"sg_set_tunevf_mode": 3}, pypto.PyptoValueError,
     r"\['sg_set_tunevf_mode'\]: 3 is out of range \[0, 2\]"),
    ("pass_options", {"vec_nbuffer_setting": {0: 2, "DEFAULT": 1}}, pypto.PyptoValueError,
     "int keys cannot be mixed"),
    ("pass_options", {"cube_l1_reuse_setting": {0: (1, "a")}}, pypto.PyptoTypeError,
     r"expected an int or an \(int, int\) pair"),
    ("pass_options", {"sg_set_scope": 1.5}, pypto.PyptoTypeError,
     r"expected int or \(int, bool, bool\)"),
    ("verify_options", {"pass_verify_error_tol": [1e-3]}, pypto.PyptoTypeError,
     r"expected \[rtol, atol\]"),
    ("verify_options", {"pass_verify_error_tol": [1e-3, -1]}, pypto.PyptoValueError,
     r"\['pass_verify_error_tol'\]\[1\]: -1 must be >= 0"),
    ("verify_options", {"pass_verify_pass_filter": ["all", 1]}, pypto.PyptoTypeError,
     r"\['pass_verify_pass_filter'\]\[1\]: expected str, got int 1"),
    ("debug_options", {"runtime_debug_mode": 5}, pypto.PyptoValueError,
     r"debug_options\['runtime_debug_mode'\]: 5 is out of range \[0, 4\]"),
    ("debug_options", {"compile_debug_mode": 3}, pypto.PyptoValueError,
     r"\['compile_debug_mode'\]: 3 is out of range \[0, 2\]"),
    ("debug_options", {"dump_pass_graph": "all"}, pypto.PyptoTypeError,
     r"expected list of str, got str 'all'"),
])
def test_other_groups(group, opts, exc, message):
    with pytest.raises(exc, match=message):
        decorate(**{group: opts})


def test_other_groups_accept_valid_values():
    k = decorate(
        host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH, "compile_timeout": 30},
        codegen_options={"support_dynamic_aligned": True, "soc_version": "Ascend910B"},
        pass_options={"vec_nbuffer_setting": {-1: 2, 0: 1},
                      "cube_l1_reuse_setting": {"DEFAULT": (2, 1)},
                      "sg_set_scope": (1, True, False), "sg_set_ooo_scope": -1,
                      "ooo_sched_mode": "HLF", "enable_slice": True},
        verify_options={"enable_pass_verify": True, "pass_verify_pass_filter": ["all"],
                        "pass_verify_error_tol": [1e-2, 1e-2]},
        debug_options={"runtime_debug_mode": 1, "dump_pass_graph": ["ExpandFunction"]})
    assert k.options["host_options"]["compile_stage"] == 1
    assert k.options["verify_options"]["pass_verify_error_tol"] == [0.01, 0.01]


def test_accepted_only_options_are_marked():
    accepted = accepted_only_options()
    # The runtime options that no part acts on are PyPTO's older workspace pools and its
    # control-flow cache, which real kernels (PyPTO's examples) still pass.
    assert accepted["runtime_options"] == RUNTIME_ACCEPTED_ONLY
    assert "compile_stage" not in accepted["host_options"]  # it stops before running
    # 26 jit keys (only_codegen included), pass_options['experimental'], force_combine_axis,
    # the two older workspace-pool runtime options, the four control-flow cache ones and
    # triple_stream_sched, less the partition's merge settings and pg_upper_bound, which act,
    # as combine_axis does.
    assert sum(len(keys) for keys in accepted.values()) == 31
    for key in ("vec_nbuffer_setting", "cube_l1_reuse_setting", "cube_nbuffer_setting",
                "pg_upper_bound", "sg_set_scope"):
        assert key not in accepted["pass_options"]
    assert accepted["operation_options"] == ("force_combine_axis",)
    assert set(accepted) == {"host_options", "codegen_options", "pass_options",
                             "verify_options", "debug_options", "operation_options",
                             "runtime_options"}
    for group, keys in accepted.items():
        for key in keys:
            assert SCHEMAS[group][key].accepted_only


def test_key_options_drop_accepted_only():
    opts = decorate(host_options={"compile_timeout": 30, "compile_stage": 0},
                    debug_options={"runtime_debug_mode": 1},
                    runtime_options={"stitch_function_max_num": 4}).options
    key = key_options(opts)
    assert key["host_options"] == {"compile_stage": 0}
    assert key["debug_options"] == {} and key["pass_options"] == {}
    assert key["runtime_options"]["stitch_function_max_num"] == 4


def test_validate_group_returns_clean_copy():
    src = {"run_mode": pypto.RunMode.NPU, "device_sched_mode": None}
    out = validate_group("runtime_options", src)
    assert out == {"run_mode": 0} and type(out["run_mode"]) is int
    assert "device_sched_mode" in src  # the caller's dict is not modified


def test_resolve_rejects_unknown_group():
    with pytest.raises(pypto.PyptoValueError, match="unknown option group"):
        resolve_options({"runtime": {}})


def test_only_codegen_is_accepted_and_the_kernel_still_runs(recorder):
    # PyPTO's examples pass host_options={"only_codegen": True} to kernels whose results they
    # check: it selects how device code is generated, not a stop before running.
    @pypto.frontend.jit(host_options={"only_codegen": True},
                        runtime_options={"run_mode": pypto.RunMode.SIM,
                                         "cfgcache_device_task_num": 100,
                                         "cfgcache_root_task_num": 100,
                                         "cfgcache_leaf_task_num": 10000})
    def k(x: pypto.Tensor([4], pypto.DT_FP32), y: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4)
        y[:] = x

    k(torch.zeros(4), torch.zeros(4))
    assert len(recorder.calls) == 1
    assert "only_codegen" in accepted_only_options()["host_options"]
    with pytest.raises(pypto.PyptoTypeError):
        pypto.frontend.jit(host_options={"only_codegen": 1})(kernel)
