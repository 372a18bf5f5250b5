# SPDX-License-Identifier: Apache-2.0
"""Decoration and call-time validation of @pypto.frontend.jit, with PyPTO's error texts."""

import pytest
import torch

import pypto
from pypto import _jit

SIM = {"run_mode": pypto.RunMode.SIM}


def make_kernel():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([2, 8], pypto.DT_FP32),
          b: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP16),
          out: pypto.Tensor([2, 8], pypto.DT_FP32),
          scale, mode=1, *, flag=False):
        pypto.set_vec_tile_shapes(2, 8)
        out[:] = a * scale
    return k


def tensors():
    return torch.zeros(2, 8), torch.zeros(5, 8, dtype=torch.float16), torch.zeros(2, 8)


# --- decoration -------------------------------------------------------------------------------


def test_decorator_forms():
    def f(x: pypto.Tensor([4], pypto.DT_FP32)):
        pass

    bare = pypto.frontend.jit(f)
    called = pypto.frontend.jit()(f)
    assert isinstance(bare, _jit.JitKernel) and isinstance(called, _jit.JitKernel)
    assert bare.__name__ == "f"
    # pypto.jit also takes PyPTO's older un-annotated tensor parameters (test_sim_legacy_jit).
    assert isinstance(pypto.jit(f), _jit.JitKernel) and pypto.jit is _jit.legacy_jit


def test_rejects_non_functions():
    with pytest.raises(pypto.PyptoTypeError,
                       match="jit decorator can only be used on functions, got int"):
        pypto.frontend.jit(42)
    with pytest.raises(pypto.PyptoTypeError, match="options are keyword-only"):
        pypto.frontend.jit({"run_mode": 1})


def test_tensor_after_non_tensor_is_rejected_at_decoration():
    with pytest.raises(pypto.PyptoValueError) as e:
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4], pypto.DT_FP32), n, y: pypto.Tensor([4], pypto.DT_FP32)):
            pass
    assert ("Non-tensor parameters must come after all tensor parameters. Found tensor "
            "parameter 'y' after non-tensor parameter(s) 'n'") in str(e.value)


def test_varargs_and_keyword_only_tensor_rejected():
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"\*args/\*\*kwargs parameters are not supported"):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4], pypto.DT_FP32), *rest):
            pass
    with pytest.raises(pypto.PyptoValueError, match="tensor parameter 'y' is keyword-only"):
        @pypto.frontend.jit
        def k2(x: pypto.Tensor([4], pypto.DT_FP32), *, y: pypto.Tensor([4], pypto.DT_FP32)):
            pass


def test_param_classification():
    k = make_kernel()
    assert [p.name for p in k._tensor_params] == ["a", "b", "out"]
    assert [p.name for p in k._nontensor_params] == ["scale", "mode", "flag"]


def test_string_annotations_are_evaluated():
    ns = {}
    exec("from __future__ import annotations\n"
         "import pypto\n"
         "def k(x: pypto.Tensor([4], pypto.DT_FP32), n: int):\n"
         "    pass\n", ns)
    k = pypto.frontend.jit(ns["k"])
    assert [p.name for p in k._tensor_params] == ["x"]


# --- argument binding --------------------------------------------------------------------------


def test_too_few_tensors_when_outputs_cannot_be_allocated():
    k = make_kernel()
    a, _, _ = tensors()
    with pytest.raises(pypto.PyptoValueError) as e:
        k.warmup(a, scale=1.0)
    msg = str(e.value)
    assert msg.startswith("Expected at least 3 tensor argument(s), got 1.")
    assert "Missing tensor parameter(s): 'b', 'out'" in msg
    assert "which 'b' does not" in msg


def test_too_many_positional():
    k = make_kernel()
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"Too many positional arguments: expected 3 tensor\(s\) and up to 2 "
                             r"non-tensor\(s\), got 6 total\."):
        k.warmup(*tensors(), 1.0, 2, 3)


def test_unknown_keyword_lists_valid_names():
    k = make_kernel()
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"Unknown keyword argument\(s\): \['scal'\]\. Valid non-tensor "
                             r"parameters: \['scale', 'mode', 'flag'\]\."):
        k.warmup(*tensors(), scal=1.0)


def test_tensor_passed_by_keyword_gets_a_hint():
    k = make_kernel()
    a, b, out = tensors()
    with pytest.raises(pypto.PyptoTypeError, match="Tensor parameters \\(out\\) must be passed "
                                                   "positionally"):
        k.warmup(a, b, 1.0, out=out)


def test_torch_tensor_for_non_tensor_param():
    k = make_kernel()
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"Non-tensor parameter 'scale' must not be a torch.Tensor\. Use "
                             r"positional arguments for tensors\."):
        k.warmup(*tensors(), torch.zeros(1))


def test_missing_required_non_tensor():
    k = make_kernel()
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"Missing required non-tensor argument 'scale'\."):
        k.warmup(*tensors())


def test_non_tensor_given_twice():
    k = make_kernel()
    with pytest.raises(pypto.PyptoTypeError, match="'scale' was given both positionally and by"):
        k.warmup(*tensors(), 1.0, scale=2.0)


def test_non_tensor_by_keyword_and_default():
    k = make_kernel()
    entry = k.warmup(*tensors(), scale=2.0, flag=True)
    assert entry.key[1] == (("scale", ("float", 2.0)), ("mode", ("int", 1)),
                            ("flag", ("bool", True)))


# --- tensor validation ---------------------------------------------------------------------------


def test_not_a_torch_tensor():
    k = make_kernel()
    a, b, out = tensors()
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"Input 2 \(index 1, parameter 'b'\) must be a torch.Tensor, "
                             r"got list"):
        k.warmup(a, [1, 2], out, 1.0)


def test_not_contiguous():
    k = make_kernel()
    a, b, out = tensors()
    bt = torch.zeros(8, 5, dtype=torch.float16).t()
    with pytest.raises(pypto.PyptoValueError,
                       match=r"The 2nd input tensor \(parameter 'b'\) is not contiguous"):
        k.warmup(a, bt, out, 1.0)


def test_rank_mismatch():
    k = make_kernel()
    a, b, out = tensors()
    with pytest.raises(pypto.PyptoValueError) as e:
        k.warmup(torch.zeros(2, 8, 1), b, out, 1.0)
    assert ("The number of dimensions of 1st input tensor 3 does not match the number of "
            "dimensions of input tensor definition 2 (parameter 'a').") in str(e.value)


def test_static_dim_mismatch():
    k = make_kernel()
    a, b, out = tensors()
    with pytest.raises(pypto.PyptoValueError) as e:
        k.warmup(a, b, torch.zeros(2, 9), 1.0)
    assert ("The shape of 3rd input tensor [2, 9] does not match the shape of input tensor "
            "definition pypto.Tensor([2, 8], DT_FP32) at axis 1 (expected 8, got 9) "
            "(parameter 'out').") in str(e.value)


def test_dynamic_dim_accepts_any_size_but_static_axis_checked():
    k = make_kernel()
    a, _, out = tensors()
    k.warmup(a, torch.zeros(1, 8, dtype=torch.float16), out, 1.0)
    with pytest.raises(pypto.PyptoValueError, match=r"shape of 2nd input tensor \[5, 4\]"):
        k.warmup(a, torch.zeros(5, 4, dtype=torch.float16), out, 1.0)


def test_dtype_mismatch():
    k = make_kernel()
    a, b, out = tensors()
    with pytest.raises(pypto.PyptoValueError) as e:
        k.warmup(a, b.float(), out, 1.0)
    assert ("The dtype of 2nd input tensor torch.float32 does not match the dtype of input tensor "
            "definition DT_FP16 (parameter 'b').") in str(e.value)


@pytest.mark.parametrize("dt", [pypto.DT_UINT16, pypto.DT_UINT32, pypto.DT_UINT64])
def test_a_dtype_torch_lacks_says_so(dt):
    @pypto.frontend.jit(runtime_options=SIM)
    def ann(x: pypto.Tensor([4], dt)):
        pass

    if getattr(torch, dt.name[3:].lower(), None) is not None:
        pytest.skip(f"torch {torch.__version__} has {dt}'s type")
    with pytest.raises(pypto.PyptoValueError,
                       match=f"torch {torch.__version__} has no dtype for {dt}, so no "
                             "tensor can be passed for it"):
        ann.warmup(torch.zeros(4, dtype=torch.int32))


def test_unsupported_torch_dtype_without_annotation():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor()):
        pass

    with pytest.raises(pypto.PyptoValueError,
                       match=r"The dtype of 1st input tensor torch.complex64 is not supported"):
        k.warmup(torch.zeros(2, dtype=torch.complex64))


def test_format_mismatch_on_npu_tensor(monkeypatch):
    # CPU tensors have no NZ storage; on an NPU tensor the storage format is checked. Pretend
    # torch_npu reports ND storage for every tensor.
    monkeypatch.setattr(_jit, "_actual_format", lambda t, device_type: pypto.TileOpFormat.TILEOP_ND)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4], pypto.DT_FP32),
          b: pypto.Tensor([4], pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_NZ)):
        pass

    with pytest.raises(pypto.PyptoValueError) as e:
        k.warmup(torch.zeros(4), torch.zeros(4))
    assert ("The format of 2nd input tensor TILEOP_ND does not match the format of input tensor "
            "definition TILEOP_NZ (parameter 'b').") in str(e.value)


def test_nz_annotation_accepts_cpu_tensor_and_records_format():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(b: pypto.Tensor([4], pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_NZ)):
        pass

    entry = k.warmup(torch.zeros(4))
    assert entry.ir.params[0].format is pypto.TileOpFormat.TILEOP_NZ


def test_status_shapes_and_ellipsis():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.STATIC, 5, ...], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYN, 4], pypto.DT_FP32)):
        pass

    entry = k.warmup(torch.zeros(3, 5, 6), torch.zeros(7, 4))
    assert entry.ir.params[0].shape == (3, 5, 6)
    assert [str(d) for d in entry.ir.params[1].shape] == ["y.shape[0]", "4"]
    assert entry.ir.params[1].dynamic_axes == [0]
    k.warmup(torch.zeros(3, 5), torch.zeros(7, 4))  # '...' may also stand for no axis
    with pytest.raises(pypto.PyptoValueError,
                       match=r"1st input tensor 1 does not .* definition at least 2 "
                             r"\(parameter 'x'\)"):
        k.warmup(torch.zeros(3), torch.zeros(7, 4))
    with pytest.raises(pypto.PyptoValueError, match=r"definition 2 \(parameter 'y'\)"):
        k.warmup(torch.zeros(3, 5), torch.zeros(7, 4, 1))


def test_named_dynamic_dims_must_agree():
    n = pypto.frontend.dynamic("N")

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([n, 4], pypto.DT_FP32), y: pypto.Tensor([n], pypto.DT_FP32)):
        pass

    entry = k.warmup(torch.zeros(5, 4), torch.zeros(5))
    assert [s.to_dict() for s in entry.ir.symbols] == [
        {"name": "N", "sources": [{"param": "x", "axis": 0}, {"param": "y", "axis": 0}]}]
    with pytest.raises(pypto.PyptoValueError) as e:
        k.warmup(torch.zeros(5, 4), torch.zeros(6))
    assert ("Dynamic dimension 'N' is 5 in the 1st input tensor (parameter 'x', axis 0) but 6 in "
            "the 2nd input tensor (parameter 'y'), axis 0.") in str(e.value)


def test_bare_tensor_class_annotation_accepts_any_tensor():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor):
        pass

    entry = k.warmup(torch.zeros(2, 3, dtype=torch.int32))
    assert entry.ir.params[0].dtype is pypto.DT_INT32
    assert entry.ir.params[0].shape == (2, 3)


def test_fp4_annotation_doubles_last_dim_of_uint8_storage():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP4_E2M1X2)):
        pass

    entry = k.warmup(torch.zeros(4, 8, dtype=torch.uint8))
    assert entry.ir.params[0].shape == (4, 16)


def test_ordinals():
    assert [_jit._ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
        "111th"]


# --- kernel body problems found at trace time ------------------------------------------------


def test_returned_value_becomes_a_virtual_output_parameter():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        return x

    entry = k.warmup(torch.zeros(4))
    assert [p.name for p in entry.ir.params] == ["x", "ret"]
    assert entry.ir.params[1].is_output_written
    assert len(entry.ir.params) == 2 and entry.ir.params[1].shape == (4,)


def test_returned_param_names_avoid_the_signature():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(ret: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        return ret + 1.0

    assert [p.name for p in k.warmup(torch.zeros(4)).ir.params] == ["ret", "ret_"]


def test_returning_a_non_tensor_is_a_clear_error():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        return 1

    with pytest.raises(pypto.PyptoTypeError,
                       match=r"kernel 'k' returned int: a kernel may return a pypto tensor, a "
                             r"tuple of tensors, or nothing"):
        k.warmup(torch.zeros(4))


def test_returning_a_mixed_tuple_is_a_clear_error_without_source():
    ns = {"pypto": pypto}
    exec("def k(x: pypto.Tensor([4], pypto.DT_FP32)):\n    return x, 2.0\n", ns)
    k = pypto.frontend.jit(runtime_options=SIM)(ns["k"])
    with pytest.raises(pypto.PyptoTypeError, match=r"returned tuple of Tensor, float"):
        k.warmup(torch.zeros(4))


def test_return_annotation_must_match_the_returned_tensors():
    @pypto.frontend.jit(runtime_options=SIM)
    def count(x: pypto.Tensor([4], pypto.DT_FP32)) -> (pypto.Tensor([4], pypto.DT_FP32),
                                                       pypto.Tensor([4], pypto.DT_FP32)):
        return x

    with pytest.raises(pypto.PyptoValueError, match="declares 2 output tensor.s. but the kernel "
                                                    "returned 1"):
        count.warmup(torch.zeros(4))

    @pypto.frontend.jit(runtime_options=SIM)
    def shape(x: pypto.Tensor([4], pypto.DT_FP32)) -> pypto.Tensor([8], pypto.DT_FP32):
        return x

    with pytest.raises(pypto.PyptoValueError, match="does not match the return annotation"):
        shape.warmup(torch.zeros(4))

    @pypto.frontend.jit(runtime_options=SIM)
    def dtype(x: pypto.Tensor([4], pypto.DT_FP32)) -> pypto.Tensor([4], pypto.DT_FP16):
        return x

    with pytest.raises(pypto.PyptoValueError, match=r"dtype DT_FP32 but the return annotation "
                                                    r"says DT_FP16; convert it with pypto.cast"):
        dtype.warmup(torch.zeros(4))


def test_returned_shape_must_be_sizable_at_call_time():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        return pypto.concat([x, x], 0)

    with pytest.raises(pypto.PyptoValueError, match="cannot size an output allocated at call "
                                                    "time"):
        k.warmup(torch.zeros(4))


def test_non_pypto_return_annotations_leave_the_traced_value_in_charge():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)) -> torch.Tensor:
        pypto.set_vec_tile_shapes(8, 8)
        return x * 2.0

    assert k.warmup(torch.zeros(4)).ir.params[1].dtype is pypto.DT_FP32


def test_return_inside_a_pypto_loop_is_still_rejected():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        for i in pypto.loop(2):
            return x

    with pytest.raises(pypto.PyptoValueError, match="'return' inside a pypto.loop body"):
        k.warmup(torch.zeros(4))


def test_returned_outputs_come_back_from_a_recorded_run(recorder):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 8)
        out = pypto.tensor([x.shape[0], 4], pypto.DT_FP16)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = x[i:i + 1, :] + 1.0
        return out

    y = k(torch.zeros(3, 4, dtype=torch.float16))
    assert y.shape == (3, 4) and y.dtype == torch.float16
    assert recorder.calls[-1]["tensors"][1] is y


def test_bare_return_at_top_level_is_fine():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        return

    k.warmup(torch.zeros(4))


def test_user_exception_gets_a_note():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], pypto.DT_FP32)):
        raise KeyError("boom")

    with pytest.raises(KeyError) as e:
        k.warmup(torch.zeros(4))
    assert "(while tracing pypto kernel 'k')" in e.value.__notes__
