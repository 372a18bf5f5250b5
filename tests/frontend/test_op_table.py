# SPDX-License-Identifier: Apache-2.0
"""The op table (pypto._C.op_table(), from the compiler's op_table.h) is what the kernel
language checks names, arity, vec tiles and dtype rules against."""

import importlib

import pytest
import torch

import pypto
from pypto import _ops

F32, I32, BOOL = pypto.DT_FP32, pypto.DT_INT32, pypto.DT_BOOL
SIM = {"run_mode": pypto.RunMode.SIM}
TORCH = {F32: torch.float32, I32: torch.int32, BOOL: torch.bool, pypto.DT_INT64: torch.int64}


def table():
    return importlib.import_module("pypto._C").op_table()


def trace_error(body, dtype):
    """The error of tracing ``body(x)`` for a [4, 8] input of ``dtype``, or None."""

    def k(x: pypto.Tensor([4, 8], dtype), out: pypto.Tensor([4, 8], dtype)):
        pypto.set_vec_tile_shapes(4, 8)
        body(x)

    try:
        pypto.frontend.jit(runtime_options=SIM)(k).warmup(
            torch.zeros(4, 8, dtype=TORCH[dtype]), torch.zeros(4, 8, dtype=TORCH[dtype]))
    except pypto.PyptoError as e:
        return str(e)
    return None


def test_rows_name_every_op_once_with_its_rules():
    rows = table()
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names))
    assert {"alloc", "add", "exp", "where", "sum", "view", "concat", "matmul"} <= set(names)
    for r in rows:
        assert set(r) == {"name", "family", "form", "arity", "dtype_rule", "needs_vec_tile"}
    by = {r["name"]: r for r in rows}
    assert by["add"]["arity"] == 2 and by["where"]["arity"] == 3 and by["concat"]["arity"] == -1
    assert by["exp"]["dtype_rule"] == "float" and by["lt"]["dtype_rule"] == "compare"
    assert by["matmul"]["family"] == "matmul" and not by["matmul"]["needs_vec_tile"]
    assert _ops._OPS == by  # what the kernel language reads


def test_every_table_op_but_alloc_is_a_pypto_function():
    # alloc is pypto.Tensor(shape, dtype) inside a kernel; load is pypto.experimental.load.
    experimental = {"load"}
    for r in table():
        if r["name"] in experimental:
            assert callable(getattr(pypto.experimental, r["name"])), r["name"]
            assert not hasattr(pypto, r["name"]), r["name"]
        elif r["name"] != "alloc":
            assert callable(getattr(pypto, r["name"])), r["name"]


@pytest.mark.parametrize("row", [r for r in table()
                                 if r["family"] == "elementwise" and r["form"] == "unary"
                                 and r["dtype_rule"] in ("numeric", "float", "logical",
                                                         "integer", "test")],
                         ids=lambda r: r["name"])
def test_unary_ops_follow_their_dtype_rule(row):
    name, rule = row["name"], row["dtype_rule"]
    fn = getattr(pypto, name)
    if name in ("floor", "ceil", "trunc"):
        # Python-only sugar: a non-float tensor is returned unchanged, so no dtype is rejected.
        assert trace_error(fn, I32) is None and trace_error(fn, BOOL) is None
        return
    if rule == "float":
        assert f"pypto.{name}: needs a floating-point tensor" in trace_error(fn, I32)
    if rule in ("numeric", "float"):
        assert f"pypto.{name}: does not accept DT_BOOL tensors" in trace_error(fn, BOOL)
        assert trace_error(fn, F32) is None
    if rule == "logical":
        # PyPTO's logical ops take numbers too (not 0 is True) and give DT_BOOL.
        assert trace_error(fn, F32) is None and trace_error(fn, BOOL) is None
        assert f"pypto.{name}: needs DT_BOOL or numeric tensors" in \
            trace_error(fn, pypto.DT_INT64)
    if rule == "integer":
        assert f"pypto.{name}: needs an integer tensor, got DT_FP32" in trace_error(fn, F32)
        assert f"pypto.{name}: needs an integer tensor, got DT_BOOL" in trace_error(fn, BOOL)
        assert trace_error(fn, I32) is None
    if rule == "test":
        assert f"pypto.{name}: does not accept DT_BOOL tensors" in trace_error(fn, BOOL)
        assert trace_error(fn, F32) is None and trace_error(fn, I32) is None


@pytest.mark.parametrize("row", [r for r in table()
                                 if r["family"] == "elementwise" and r["form"] == "binary"],
                         ids=lambda r: r["name"])
def test_binary_ops_follow_their_dtype_rule(row):
    name, rule = row["name"], row["dtype_rule"]
    fn = getattr(pypto, name)
    results = []
    ok = {"numeric": (F32, I32), "compare": (F32, I32, BOOL), "logical": (F32, I32, BOOL),
          "float": (F32,), "integer": (I32,)}[rule]
    if name == "copysign":
        ok = (F32, I32)  # PyPTO's copysign page: DT_INT32 and DT_INT16 too, a composite here
    for dt in (F32, I32, BOOL):
        err = trace_error(lambda x: results.append((dt, fn(x, x)._value.dtype)), dt)
        assert (err is None) == (dt in ok), (dt, err)
    assert [dt for dt, _ in results] == list(ok)
    for dt, out in results:
        want = BOOL if rule in ("compare", "logical") else dt
        if name == "div" and dt is I32:
            want = F32  # PyPTO's div page: integer operands divide in fp32
        assert out is want
