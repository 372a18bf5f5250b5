# SPDX-License-Identifier: Apache-2.0
"""pypto.Tensor annotations: both syntaxes, markers, and their validation errors."""

import pytest
import torch

import pypto
from pypto import TensorAnnotation


def test_paren_syntax_records_shape_dtype_format():
    a = pypto.Tensor([3, 4], pypto.DT_FP16, format=pypto.TileOpFormat.TILEOP_NZ)
    assert isinstance(a, TensorAnnotation)
    assert a.spec == (3, 4) and a.shape == [3, 4]
    assert a.dtype is pypto.DT_FP16
    assert a.format is pypto.TileOpFormat.TILEOP_NZ
    assert a.is_fully_static


def test_bracket_syntax_items_in_any_order():
    a = pypto.Tensor[pypto.DT_BF16, [pypto.DYNAMIC, 128], pypto.TileOpFormat.TILEOP_ND, "x"]
    assert a.spec == (pypto.DYNAMIC, 128)
    assert a.dtype is pypto.DT_BF16
    assert a.format is pypto.TileOpFormat.TILEOP_ND
    assert a.name == "x"
    assert not a.is_fully_static


def test_bracket_syntax_shape_only_and_dict():
    a = pypto.Tensor[[8, 8]]
    assert a.spec == (8, 8) and a.dtype is None
    b = pypto.Tensor[[4], {"format": pypto.TileOpFormat.TILEOP_NZ, "dtype": pypto.DT_INT8}]
    assert b.format is pypto.TileOpFormat.TILEOP_NZ and b.dtype is pypto.DT_INT8


def test_markers_ellipsis_and_named_dynamic():
    n = pypto.frontend.dynamic("N")
    a = pypto.Tensor([n, pypto.STATIC, pypto.DYN, ...], pypto.DT_FP32)
    assert a.spec == (n, pypto.STATIC, pypto.DYNAMIC)
    assert a.has_ellipsis
    assert pypto.DYN is pypto.DYNAMIC


def test_empty_tensor_annotation_accepts_anything():
    a = pypto.Tensor()
    assert a.spec is None and a.shape == [] and a.dtype is None and a.format is None


def test_minus_one_is_a_dynamic_axis():
    # PyPTO: a shape entry of -1 is an axis whose size is known only at run time.
    a = pypto.Tensor([-1, 10], pypto.DT_BF16, "t")
    assert a.spec == (pypto.DYNAMIC, 10) and a.name == "t" and not a.is_fully_static
    assert pypto.Tensor[[-1, 4], pypto.DT_FP32].spec == (pypto.DYNAMIC, 4)

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([-1, 4], pypto.DT_FP32)):
        pass

    k.warmup(torch.zeros(3, 4))
    k.warmup(torch.zeros(5, 4))  # the -1 axis changes without recompiling
    assert k.compile_count == 1


def test_empty_bracket_is_rejected():
    with pytest.raises(pypto.PyptoValueError, match=r"pypto.Tensor\[\]: give at least a shape"):
        pypto.Tensor[()]


@pytest.mark.parametrize("shape, message", [
    ([3, 0], "shape entry 1 is 0; sizes must be >= 1"),
    ([-2, 4], r"shape entry 0 is -2; sizes must be >= 1 \(or -1, pypto.DYNAMIC"),
    ([..., 4], r"'...' may only be the last entry"),
])
def test_bad_shape_values(shape, message):
    with pytest.raises(pypto.PyptoValueError, match=message):
        pypto.Tensor(shape, pypto.DT_FP32)


@pytest.mark.parametrize("shape, message", [
    ([3, "4"], r"shape entry 1 is str '4'"),
    ([True, 4], r"shape entry 0 is bool True"),
    (7, r"shape must be a list such as \[pypto.DYNAMIC, 128\], got int 7"),
])
def test_bad_shape_types(shape, message):
    with pytest.raises(pypto.PyptoTypeError, match=message):
        pypto.Tensor(shape, pypto.DT_FP32)


def test_bad_dtype_and_format():
    with pytest.raises(pypto.PyptoTypeError,
                       match=r"dtype must be a pypto DataType.*torch.float32"):
        pypto.Tensor([3], torch.float32)
    with pytest.raises(pypto.PyptoTypeError, match="format must be pypto.TileOpFormat"):
        pypto.Tensor([3], pypto.DT_FP32, format="NZ")


def test_bracket_unknown_item_and_duplicate():
    with pytest.raises(pypto.PyptoTypeError, match="item 3.5 is not a shape list"):
        pypto.Tensor[[3], 3.5]
    with pytest.raises(pypto.PyptoValueError, match="dtype given twice"):
        pypto.Tensor[[3], pypto.DT_FP32, pypto.DT_FP16]
    with pytest.raises(pypto.PyptoValueError, match="unknown key 'device'"):
        pypto.Tensor[[3], {"device": "npu"}]


def test_symbolic_expression_is_not_a_dynamic_marker():
    n = pypto.frontend.dynamic("N")
    with pytest.raises(pypto.PyptoValueError, match="must be a plain symbol"):
        pypto.Tensor([n * 2], pypto.DT_FP32)


def test_repr_is_readable():
    a = pypto.Tensor([pypto.DYNAMIC, 128, ...], pypto.DT_FP16)
    assert repr(a) == "pypto.Tensor([DYNAMIC, 128, ...], DT_FP16)"


def test_dtype_names_and_torch_mapping():
    from pypto._dtypes import accepts_torch_dtype, from_torch_dtype, to_torch_dtype

    assert str(pypto.DT_FP16) == "DT_FP16"
    assert from_torch_dtype(torch.bfloat16) is pypto.DT_BF16
    assert from_torch_dtype(torch.float64) is pypto.DT_DOUBLE
    assert from_torch_dtype(torch.complex64) is None
    assert to_torch_dtype(pypto.DT_INT16) == torch.int16
    assert to_torch_dtype(pypto.DT_FP4_E2M1X2) is None
    assert accepts_torch_dtype(pypto.DT_HF8, torch.uint8)
    assert not accepts_torch_dtype(pypto.DT_FP16, torch.float32)
    for name in ("DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_FP16", "DT_FP32", "DT_BF16",
                 "DT_BOOL", "DT_UINT8", "DT_FP8E4M3", "DT_FP4_E1M2X2", "DT_HF4", "DT_BOTTOM"):
        assert getattr(pypto, name).name == name


def test_enums():
    assert int(pypto.RunMode.NPU) == 0 and int(pypto.RunMode.SIM) == 1
    assert pypto.CastMode.CAST_RINT.name == "CAST_RINT"
    assert int(pypto.CompStage.CODEGEN_BINARY) == 5
