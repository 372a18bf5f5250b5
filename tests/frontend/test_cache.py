# SPDX-License-Identifier: Apache-2.0
"""Specialization cache, warmup, hooks and the backend call of @pypto.frontend.jit."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
SCALE = 2.0  # read by global_kernel below; part of its cache key


def make_dynamic_kernel():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), alpha=1.0):
        pypto.set_vec_tile_shapes(8, 16)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 8), idx_name="i"):
            t = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[pypto.min(n - i * 8, 8), 16])
            y[i * 8:, :] = t * alpha
    return k


def test_ten_calls_one_compile(recorder):
    k = make_dynamic_kernel()
    events = []
    pypto.frontend.hooks.append(events.append)
    x, y = torch.zeros(20, 16), torch.zeros(20, 16)
    for _ in range(10):
        assert k(x, y) is None
    assert k.compile_count == 1 and len(k.cache) == 1
    assert len(recorder.calls) == 10
    assert len(events) == 1 and events[0].kernel is k and events[0].warmup is False
    assert events[0].ir is k.function
    call = recorder.calls[0]
    assert call["compiled"] is k.cache.entries()[0].compiled  # compile() returned the IR
    assert call["compiled"] is events[0].ir
    assert call["tensors"][0] is x and call["tensors"][1] is y
    assert call["bindings"] == {"x.shape[0]": 20, "y.shape[0]": 20}
    assert call["options"]["runtime_options"]["run_mode"] == 1
    assert k.last_report == {"run": 10}


def test_new_dynamic_size_does_not_retrace(recorder):
    k = make_dynamic_kernel()
    k(torch.zeros(20, 16), torch.zeros(20, 16))
    k(torch.zeros(300, 16), torch.zeros(7, 16))
    assert k.compile_count == 1
    assert recorder.calls[1]["bindings"] == {"x.shape[0]": 300, "y.shape[0]": 7}


def test_new_non_tensor_value_retraces(recorder):
    k = make_dynamic_kernel()
    x, y = torch.zeros(8, 16), torch.zeros(8, 16)
    k(x, y)
    k(x, y, alpha=1.0)
    assert k.compile_count == 1
    k(x, y, alpha=0.5)
    assert k.compile_count == 2
    scalars = [s.inputs[1].value for s in k.function.ops() if s.op == "mul"]
    assert scalars == [0.5]


def test_new_static_dim_or_dtype_retraces():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.STATIC, 4]), y: pypto.Tensor()):
        pass

    k.warmup(torch.zeros(2, 4), torch.zeros(3))
    k.warmup(torch.zeros(2, 4), torch.zeros(3))
    assert k.compile_count == 1
    k.warmup(torch.zeros(5, 4), torch.zeros(3))            # STATIC axis changed
    assert k.compile_count == 2
    k.warmup(torch.zeros(5, 4), torch.zeros(4))            # Tensor(): every axis static
    assert k.compile_count == 3
    k.warmup(torch.zeros(5, 4), torch.zeros(4, dtype=torch.float16))  # dtype from torch
    assert k.compile_count == 4
    assert k.function.params[1].dtype is pypto.DT_FP16


def test_global_constant_is_part_of_the_key():
    global SCALE

    @pypto.frontend.jit(runtime_options=SIM)
    def global_kernel(x: pypto.Tensor([4], pypto.DT_FP32), y: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4)
        y[:] = x * SCALE

    x, y = torch.zeros(4), torch.zeros(4)
    old = SCALE
    try:
        global_kernel.warmup(x, y)
        global_kernel.warmup(x, y)
        assert global_kernel.compile_count == 1
        SCALE = 3.0
        entry = global_kernel.warmup(x, y)
        assert global_kernel.compile_count == 2
        assert entry.ir.ops()[0].inputs[1].value == 3.0
    finally:
        SCALE = old


def test_closure_value_is_part_of_the_key():
    def factory(factor):
        @pypto.frontend.jit(runtime_options=SIM)
        def k(x: pypto.Tensor([4], pypto.DT_FP32), y: pypto.Tensor([4], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4)
            y[:] = x * factor
        return k

    a, b = factory(2.0), factory(2.0)
    assert a.warmup(torch.zeros(4), torch.zeros(4)).key == b.warmup(torch.zeros(4),
                                                                      torch.zeros(4)).key
    assert factory(3.0).warmup(torch.zeros(4), torch.zeros(4)).key != a.cache.keys()[0]


def test_warmup_compiles_without_running(recorder):
    k = make_dynamic_kernel()
    events = []
    pypto.frontend.hooks.append(events.append)
    entry = k.warmup(torch.zeros(8, 16), torch.zeros(8, 16))
    assert recorder.calls == [] and k.last_report is None
    assert events[0].warmup is True and entry.ir is events[0].ir
    k(torch.zeros(16, 16), torch.zeros(16, 16))
    assert k.compile_count == 1 and len(recorder.calls) == 1


def test_cache_clear_forces_a_new_compile():
    k = make_dynamic_kernel()
    x, y = torch.zeros(8, 16), torch.zeros(8, 16)
    k.warmup(x, y)
    k.cache.clear()
    assert len(k.cache) == 0 and k.compile_count == 0
    k.warmup(x, y)
    assert k.compile_count == 1


def test_each_kernel_has_its_own_cache():
    a, b = make_dynamic_kernel(), make_dynamic_kernel()
    a.warmup(torch.zeros(8, 16), torch.zeros(8, 16))
    assert a.compile_count == 1 and b.compile_count == 0


def test_compile_stage_other_than_all_complete_skips_running(recorder):
    @pypto.frontend.jit(runtime_options=SIM,
                        host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        pass

    assert k(torch.zeros(4)) is None
    assert k.compile_count == 1 and recorder.calls == []


def test_camodel_log_path_forces_sim(recorder, monkeypatch):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        pass

    monkeypatch.setenv("CAMODEL_LOG_PATH", "/tmp/camodel")
    k(torch.zeros(4))
    assert len(recorder.calls) == 1
    assert recorder.calls[0]["options"]["runtime_options"]["run_mode"] == 1


def test_validation_runs_on_cache_hits_too(recorder):
    k = make_dynamic_kernel()
    k(torch.zeros(8, 16), torch.zeros(8, 16))
    with pytest.raises(pypto.PyptoValueError, match="The dtype of 2nd input tensor torch.float16"):
        k(torch.zeros(8, 16), torch.zeros(8, 16, dtype=torch.float16))
    assert len(recorder.calls) == 1


def options_kernel(**options):
    @pypto.frontend.jit(**options)
    def k(x: pypto.Tensor([4], pypto.DT_FP32), y: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4)
        y[:] = x + x
    return k


def test_accepted_only_options_stay_out_of_the_key():
    """The 22 accepted-only options (pypto._options.accepted_only_options()) are checked but
    never acted on: changing one does not make a new specialization."""
    x, y = torch.zeros(4), torch.zeros(4)
    base = options_kernel(runtime_options=SIM).warmup(x, y).key
    for opts in ({"debug_options": {"runtime_debug_mode": 1, "dump_pass_graph": ["all"]}},
                 {"host_options": {"compile_timeout": 30, "compile_monitor_enable": 0}},
                 {"pass_options": {"sg_set_ooo_scope": 5, "enable_slice": True}},
                 {"codegen_options": {"soc_version": "Ascend910B"}},
                 {"verify_options": {"enable_pass_verify": True}}):
        k = options_kernel(runtime_options=SIM, **opts)
        entry = k.warmup(x, y)
        assert entry.key == base, opts
        group, values = next(iter(opts.items()))
        for key, v in values.items():  # still validated and handed to the backend
            assert entry.options[group][key] == v


def test_acted_on_options_are_part_of_the_key():
    x, y = torch.zeros(4), torch.zeros(4)
    base = options_kernel(runtime_options=SIM).warmup(x, y).key
    stitched = options_kernel(runtime_options=dict(SIM, stitch_function_max_num=4))
    assert stitched.warmup(x, y).key != base
    older = options_kernel(runtime_options=dict(SIM, stitch_function_num_initial=4))
    assert older.warmup(x, y).key not in (base, stitched.warmup(x, y).key)
    staged = options_kernel(runtime_options=SIM,
                            host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
    assert staged.warmup(x, y).key != base


@pytest.mark.parametrize("use_cache, compiles", [(True, 1), (False, 3)])
def test_use_cache_false_compiles_on_every_call(recorder, use_cache, compiles):
    # PyPTO: use_cache=False recompiles on each call (and replaces the cached module).
    @pypto.frontend.jit(runtime_options=SIM, use_cache=use_cache)
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), y: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        y[:] = x + 1.0

    events = []
    pypto.frontend.hooks.append(events.append)
    x, y = torch.zeros(4, 8), torch.zeros(4, 8)
    for _ in range(3):
        k(x, y)
    assert k.compile_count == compiles and len(events) == compiles
    assert len(k.cache) == 1 and len(recorder.calls) == 3
    assert k.use_cache is use_cache
    with pytest.raises(pypto.PyptoTypeError, match="use_cache must be a bool"):
        pypto.frontend.jit(use_cache=1)(lambda x: None)
