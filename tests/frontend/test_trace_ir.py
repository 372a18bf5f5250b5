# SPDX-License-Identifier: Apache-2.0
"""Tracing kernels into pypto.ir: structure, symbolic shapes, loops and branch variants."""

import json

import pytest
import torch

import pypto
from pypto import ir
from pypto._symbolic import expr_to_dict

SIM = {"run_mode": pypto.RunMode.SIM}
F32 = pypto.DT_FP32


def trace(fn, *args, **kwargs):
    return pypto.frontend.jit(runtime_options=SIM)(fn).warmup(*args, **kwargs).ir


def body(kernel_ir, variant=0):
    return kernel_ir.variants[variant].body


def roundtrip(kernel_ir):
    d = json.loads(json.dumps(kernel_ir.to_dict()))
    assert d["format"] == "pypto-kernel-ir" and d["version"] == 1
    return d


# --- straight-line code ---------------------------------------------------------------------


def test_elementwise_chain():
    def k(a: pypto.Tensor([4, 8], F32), b: pypto.Tensor([4, 8], F32),
          out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        t = pypto.exp(a + b * 2.0)
        out[:] = pypto.relu(-t) / b

    kir = trace(k, torch.zeros(4, 8), torch.zeros(4, 8), torch.zeros(4, 8))
    ops = body(kir)
    assert [s.op for s in ops[:-1]] == ["mul", "add", "exp", "neg", "relu", "div"]
    mul, add, exp, neg, relu, div, write = ops
    a, b, out = (p.value for p in kir.params)
    assert mul.inputs[0] is b and isinstance(mul.inputs[1], ir.Scalar)
    assert mul.inputs[1].value == 2.0 and mul.inputs[1].dtype is F32
    assert add.inputs == [a, mul.out]
    assert div.inputs == [relu.out, b]
    assert all(s.vec_tile == (4, 8) for s in ops)
    assert all(s.out.shape == (4, 8) and s.out.dtype is F32 for s in ops[:-1])
    assert isinstance(write, ir.Write) and write.dst is out and write.src is div.out
    assert write.offsets == (0, 0)
    assert [p.is_output_written for p in kir.params] == [False, False, True]
    d = roundtrip(kir)
    assert d["variants"][0]["body"][0] == {
        "kind": "op", "op": "mul", "inputs": [{"value": 1}, {"const": 2.0, "dtype": "DT_FP32"}],
        "attrs": {}, "out": {"id": 3, "shape": [4, 8], "dtype": "DT_FP32",
                             "format": "TILEOP_ND", "valid_shape": None},
        "vec_tile": [4, 8], "cube_tile": None, "label": None, "loc": mul.loc}
    assert mul.loc.startswith("test_trace_ir.py:")
    text = str(kir)
    assert text.splitlines()[0] == ("kernel k(a: DT_FP32[4, 8], b: DT_FP32[4, 8], "
                                    "out: DT_FP32[4, 8] (written)):")
    assert "%3: DT_FP32[4, 8] = mul(b, 2.0)  vec=[4, 8]" in text
    assert "out[0, 0] <- %8" in text


def test_reflected_scalar_ops_keep_tensor_first():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = (1.0 - a) + (2.0 / a)

    ops = body(trace(k, torch.zeros(8), torch.zeros(8)))
    assert [s.op for s in ops[:-1]] == ["sub", "neg", "reciprocal", "mul", "add"]
    assert ops[0].inputs[1].value == 1.0 and ops[3].inputs[1].value == 2.0


def test_broadcast_and_comparison_and_where():
    def k(a: pypto.Tensor([4, 8], F32), b: pypto.Tensor([1, 8], F32),
          out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        mask = a > b
        out[:] = pypto.where(mask, a, 0.0)

    ops = body(trace(k, torch.zeros(4, 8), torch.zeros(1, 8), torch.zeros(4, 8)))
    gt, where, _ = ops
    assert gt.op == "gt" and gt.out.dtype is pypto.DT_BOOL and gt.out.shape == (4, 8)
    assert where.inputs[0] is gt.out and where.inputs[2].value == 0.0


def test_where_with_two_scalars_takes_the_conditions_shape():
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32),
          idx: pypto.Tensor([4, 8], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.where(a > 0.0, 1, 0.5)  # PyPTO: plain numbers are DT_FP32 Elements
        idx[:] = pypto.where(a > 0.0, pypto.Element(pypto.DT_INT32, 3),
                             pypto.Element(pypto.DT_INT32, -1))

    ops = body(trace(k, torch.zeros(4, 8), torch.zeros(4, 8),
                     torch.zeros(4, 8, dtype=torch.int32)))
    wf, wi = [s for s in ops if getattr(s, "op", None) == "where"]
    assert wf.out.shape == (4, 8) and wf.out.dtype is F32
    assert [i.value for i in wf.inputs[1:]] == [1, 0.5]
    assert wi.out.dtype is pypto.DT_INT32 and [i.value for i in wi.inputs[1:]] == [3, -1]

    def mixed(a: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.where(a > 0.0, pypto.Element(pypto.DT_INT32, 1), pypto.Element(F32, 0.0))

    with pytest.raises(pypto.PyptoTypeError, match="where: the Elements' dtypes differ: "
                       "DT_INT32 and DT_FP32"):
        trace(mixed, torch.zeros(4, 8))


def test_zeros_and_ones_take_dtype_by_keyword():
    def k(out: pypto.Tensor([2, 3], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(2, 3)
        out[:] = pypto.zeros((2, 3), dtype=pypto.DT_INT32) + pypto.ones(2, 3, dtype=pypto.DT_INT32)

    ops = body(trace(k, torch.zeros(2, 3, dtype=torch.int32)))
    assert [s.out.dtype for s in ops[:2]] == [pypto.DT_INT32, pypto.DT_INT32]

    def positional(out: pypto.Tensor([2, 3], F32)):
        pypto.set_vec_tile_shapes(2, 3)
        out[:] = pypto.zeros([2, 3], F32)

    with pytest.raises(pypto.PyptoTypeError, match=r"pypto.zeros: dtype goes by keyword "
                       r"\(dtype=...\), as in PyPTO"):
        trace(positional, torch.zeros(2, 3))


def test_reductions_cast_and_shape_ops():
    def k(a: pypto.Tensor([4, 8], pypto.DT_FP16), out: pypto.Tensor([8, 4], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        s = pypto.sum(a, dim=1, keepdim=True)               # [4, 1]
        m = pypto.amax(a, -1)                               # [4]
        c = pypto.cast(a, F32, mode=pypto.CastMode.CAST_RINT)
        t = pypto.transpose(c, 0, 1)                        # [8, 4]
        pypto.reshape(t, [2, -1])                           # [2, 16]
        u = pypto.unsqueeze(m, 0)                           # [1, 4]
        e = pypto.expand_clone(u, [8, 4])
        pypto.concat([s, s], dim=1)                         # [4, 2]
        out[:] = t + pypto.cast(e, F32)

    ops = body(trace(k, torch.zeros(4, 8, dtype=torch.float16), torch.zeros(8, 4)))
    by = {}
    for s in ops:
        if isinstance(s, ir.Op):
            by.setdefault(s.op, s)  # the first op of each kind
    assert by["sum"].out.shape == (4, 1) and by["sum"].attrs == {"dims": [1], "keepdim": True}
    assert by["amax"].out.shape == (4,)
    assert by["cast"].attrs["mode"] is pypto.CastMode.CAST_RINT
    assert by["transpose"].out.shape == (8, 4) and by["transpose"].attrs == {"dims": [0, 1]}
    assert [s.out.shape for s in ops if isinstance(s, ir.Op) and s.op == "reshape"] == [
        (2, 16), (1, 4)]
    assert by["expand_clone"].out.shape == (8, 4)
    assert by["concat"].out.shape == (4, 2) and by["concat"].attrs == {"dim": 1}


def test_local_tensor_allocation_inside_kernel():
    def k(a: pypto.Tensor([4], F32), out: pypto.Tensor([4], F32)):
        pypto.set_vec_tile_shapes(4)
        tmp = pypto.Tensor([4], F32)
        tmp[:] = a * 3.0
        out[:] = tmp

    ops = body(trace(k, torch.zeros(4), torch.zeros(4)))
    assert ops[0].op == "alloc" and ops[0].inputs == [] and ops[0].out.shape == (4,)
    assert isinstance(ops[2], ir.Write) and ops[2].dst is ops[0].out
    assert ops[3].dst.name == "out" and ops[3].src is ops[0].out


def test_softmax_composite():
    def k(a: pypto.Tensor([16, 32], pypto.DT_FP16), out: pypto.Tensor([16, 32], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pypto.softmax(a, dim=-1)

    ops = body(trace(k, torch.zeros(16, 32, dtype=torch.float16),
                     torch.zeros(16, 32, dtype=torch.float16)))
    assert [s.op for s in ops[:-1]] == ["cast", "amax", "sub", "exp", "sum", "div", "cast"]
    cast_in, amax, sub, exp, total, div, cast_out = ops[:-1]
    assert all(s.attrs["composite"] == "softmax" for s in ops[:-1])
    assert cast_in.out.dtype is F32 and cast_out.out.dtype is pypto.DT_FP16
    assert amax.attrs["dims"] == [1] and amax.attrs["keepdim"] is True
    assert amax.out.shape == (16, 1) and sub.inputs == [cast_in.out, amax.out]
    assert div.inputs == [exp.out, total.out]
    assert ops[-1].src is cast_out.out


def test_matmul_2d_and_batched():
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP16), b: pypto.Tensor([128, 64], pypto.DT_FP16),
          c: pypto.Tensor([2, 32, 64], pypto.DT_INT8), d: pypto.Tensor([1, 64, 16], pypto.DT_INT8),
          out: pypto.Tensor([32, 128], F32), out2: pypto.Tensor([2, 32, 16], pypto.DT_INT32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 128])
        out[:] = pypto.matmul(a, b, F32, b_trans=True)
        out2[:] = c @ d

    kir = trace(k, torch.zeros(32, 64, dtype=torch.float16), torch.zeros(128, 64,
                dtype=torch.float16), torch.zeros(2, 32, 64, dtype=torch.int8),
                torch.zeros(1, 64, 16, dtype=torch.int8), torch.zeros(32, 128),
                torch.zeros(2, 32, 16, dtype=torch.int32))
    mm, _, bmm, _ = body(kir)
    assert mm.op == "matmul" and mm.out.shape == (32, 128) and mm.out.dtype is F32
    assert mm.attrs == {"a_trans": False, "b_trans": True, "c_matrix_nz": False}
    assert mm.cube_tile == ir.CubeTile(m=(32, 32), k=(64, 64, 64), n=(64, 128))
    assert bmm.out.shape == (2, 32, 16) and bmm.out.dtype is pypto.DT_INT32
    d = roundtrip(kir)
    assert d["variants"][0]["body"][0]["cube_tile"] == {
        "m": [32, 32], "k": [64, 64, 64], "n": [64, 128], "enable_split_k": False}


def test_slicing_reads_and_writes():
    def k(a: pypto.Tensor([8, 16], F32), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        top = a[0:4, :]
        row = a[5]                      # int index drops the axis
        out[4:8, :] = top * 2.0
        out[0:4] = top
        out[7, :] = row
        out[..., 8:16] = a[:, 0:8]
        out[:] = 0.0

    kir = trace(k, torch.zeros(8, 16), torch.zeros(8, 16))
    stmts = body(kir)
    views = [s for s in stmts if isinstance(s, ir.Op) and s.op == "view"]
    assert [(v.out.shape, v.attrs["offsets"]) for v in views] == [
        ((4, 16), [0, 0]), ((1, 16), [5, 0]), ((8, 8), [0, 0])]
    writes = [s for s in stmts if isinstance(s, ir.Write)]
    assert [w.offsets for w in writes] == [(4, 0), (0, 0), (7, 0), (0, 8), (0, 0)]
    row_write = writes[2]
    assert row_write.src.shape == (1, 16)      # reshaped back to rank 2 for the write
    full = [s for s in stmts if isinstance(s, ir.Op) and s.op == "full"]
    assert full[0].out.shape == (8, 16) and full[0].inputs[0].value == 0.0
    assert all(w.dst.name == "out" for w in writes)


def test_full_slice_read_is_the_same_tensor():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = a[:] + a[...]

    ops = body(trace(k, torch.zeros(8), torch.zeros(8)))
    assert ops[0].op == "add" and ops[0].inputs[0].name == "a" and ops[0].inputs[1].name == "a"


def test_assemble_forms():
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.assemble(a, [0, 0], out)
        pypto.assemble([(a, [4, 0]), (a * 2.0, [4, 0])], out, parallel=True)

    stmts = body(trace(k, torch.zeros(4, 8), torch.zeros(8, 8)))
    writes = [s for s in stmts if isinstance(s, ir.Write)]
    assert [(w.offsets, w.attrs) for w in writes] == [
        ((0, 0), {}), ((4, 0), {"parallel": True}), ((4, 0), {"parallel": True})]


def test_tile_shapes_and_labels_recorded_per_op():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        x = a + 1.0
        pypto.set_vec_tile_shapes(4)
        pypto.set_semantic_label("tail")
        out[:] = x * 2.0

    ops = body(trace(k, torch.zeros(8), torch.zeros(8)))
    assert [(s.vec_tile, s.label) for s in ops] == [((8,), None), ((4,), "tail"), ((4,), "tail")]


# --- loops and branch variants ---------------------------------------------------------------


def test_loop_with_is_loop_begin_has_two_root_variants():
    def k(a: pypto.Tensor([4, 64], F32), out: pypto.Tensor([1, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(4, name="rows"):
            row = a[i:i + 1, :]
            if pypto.is_loop_begin(i):
                out[:] = row
            else:
                out[:] = out + row

    kir = trace(k, torch.zeros(4, 64), torch.zeros(1, 64))
    (loop,) = body(kir)
    assert isinstance(loop, ir.Loop) and loop.name == "rows"
    assert (loop.start, loop.stop, loop.step) == (0, 4, 1)
    assert len(loop.variants) == 2
    first, rest = loop.variants
    assert str(first.guard) == f"RUNTIME_Eq({loop.index}, 0)"
    assert str(rest.guard) == f"RUNTIME_Ne({loop.index}, 0)"
    assert [(str(c), v) for c, v in first.conds] == [(f"RUNTIME_Eq({loop.index}, 0)", True)]
    assert [type(s).__name__ for s in first.body] == ["Op", "Write"]
    assert [s.op if isinstance(s, ir.Op) else "write" for s in rest.body] == [
        "view", "add", "write"]
    view = first.body[0]
    assert expr_to_dict(view.attrs["offsets"][0]) == {"sym": loop.index}
    d = roundtrip(kir)["variants"][0]["body"][0]
    assert d["kind"] == "loop" and len(d["variants"]) == 2
    assert d["variants"][0]["guard"] == {"op": "eq", "args": [{"sym": loop.index}, 0]}
    assert d["variants"][1]["guard"] == {"op": "ne", "args": [{"sym": loop.index}, 0]}


def test_begin_and_end_with_static_bounds_give_three_variants():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        for i in pypto.loop(1, 9, 2, idx_name="i"):
            if pypto.is_loop_begin(i):
                out[:] = a
            if pypto.is_loop_end(i):
                out[:] = out * 2.0

    (loop,) = body(trace(k, torch.zeros(8), torch.zeros(8)))
    # Under i == 1 the end test 1 + 2 >= 9 is decidable (false), so no fourth path.
    assert [str(v.guard) for v in loop.variants] == [
        "RUNTIME_Eq(i, 1)", "(((i+2)>=9)&&RUNTIME_Ne(i, 1))", "(((i+2)<9)&&RUNTIME_Ne(i, 1))"]
    assert [len(v.body) for v in loop.variants] == [1, 2, 0]
    for value in (1, 3, 5, 7):
        assert sum(bool(v.guard.eval({"i": value})) for v in loop.variants) == 1


def test_begin_and_end_with_dynamic_bound_give_four_exclusive_variants():
    def k(x: pypto.Tensor([pypto.DYNAMIC], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        for i in pypto.loop(1, x.shape[0], 2, idx_name="i"):
            if pypto.is_loop_begin(i):
                out[:] = out + 1.0
            if pypto.is_loop_end(i):
                out[:] = out * 2.0

    (loop,) = body(trace(k, torch.zeros(8), torch.zeros(8)))
    assert len(loop.variants) == 4
    assert [len(v.body) for v in loop.variants] == [4, 2, 2, 0]
    for n in (2, 3, 9):
        for value in range(1, n, 2):
            env = {"i": value, "x.shape[0]": n}
            assert sum(bool(v.guard.eval(env)) for v in loop.variants) == 1, (n, value)


def test_equal_conditions_do_not_multiply_paths():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        for i in pypto.loop(16, idx_name="i"):
            for b in range(4):            # a static Python loop unrolls at trace time
                if i == b:
                    out[:] = a * float(b)
            if pypto.is_loop_begin(i):    # same as i == 0: reuses the decision
                out[:] = out + 1.0

    (loop,) = body(trace(k, torch.zeros(8), torch.zeros(8)))
    assert len(loop.variants) == 5
    assert [str(v.guard) for v in loop.variants][0] == "RUNTIME_Eq(i, 0)"
    for value in range(16):
        assert sum(bool(v.guard.eval({"i": value})) for v in loop.variants) == 1


def test_continue_ends_the_iteration_on_that_path():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        for i in pypto.loop(4, idx_name="i"):
            if i == 2:
                continue
            out[:] = out + a

    (loop,) = body(trace(k, torch.zeros(8), torch.zeros(8)))
    assert [len(v.body) for v in loop.variants] == [0, 2]


def test_nested_loops():
    def k(a: pypto.Tensor([4, 8, 16], F32), out: pypto.Tensor([4, 8, 16], F32)):
        pypto.set_vec_tile_shapes(1, 1, 16)
        for b in pypto.loop(4, idx_name="b", parallel=True):
            pypto.set_vec_tile_shapes(1, 2, 16)
            for r in pypto.loop(0, 8, 2, idx_name="r", unroll_list=[4, 2]):
                t = a[b:b + 1, r:r + 2, :]
                out[b:b + 1, r:r + 2, :] = pypto.sqrt(t)
        out[0:1, 0:2, :] = out[0:1, 0:2, :] * 2.0

    kir = trace(k, torch.zeros(4, 8, 16), torch.zeros(4, 8, 16))
    outer, view, mul, write = body(kir)
    assert outer.parallel and outer.index == "b" and len(outer.variants) == 1
    (inner,) = outer.variants[0].body
    assert inner.index == "r" and (inner.start, inner.stop, inner.step) == (0, 8, 2)
    assert inner.unroll_list == (4, 2, 1)
    v, sq, w = inner.variants[0].body
    assert [str(o) for o in v.attrs["offsets"]] == ["b", "r", "0"]
    assert sq.vec_tile == (1, 2, 16)
    assert [str(o) for o in w.offsets] == ["b", "r", "0"]
    assert mul.vec_tile == (1, 1, 16)  # the tile set inside the loop does not leak out
    text = str(kir)
    assert "loop b in range(0, 4, 1) parallel:" in text
    assert "loop r in range(0, 8, 2) unroll=[4, 2, 1]:" in text
    assert len(kir.loops()) == 2


def test_dynamic_dims_give_symbolic_shapes_and_tails():
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], F32), y: pypto.Tensor([pypto.DYNAMIC, 64], F32)):
        pypto.set_vec_tile_shapes(32, 64)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 32), idx_name="i"):
            rows = pypto.min(n - i * 32, 32)
            t = pypto.view(x, [32, 64], [i * 32, 0], valid_shape=[rows, 64])
            y[i * 32:, :] = pypto.exp(t)

    kir = trace(k, torch.zeros(100, 64), torch.zeros(100, 64))
    xp, yp = kir.params
    assert str(xp.shape[0]) == "x.shape[0]" and xp.shape[1] == 64
    assert [s.to_dict() for s in kir.symbols] == [
        {"name": "x.shape[0]", "sources": [{"param": "x", "axis": 0}]},
        {"name": "y.shape[0]", "sources": [{"param": "y", "axis": 0}]}]
    (loop,) = body(kir)
    assert str(loop.stop) == "((x.shape[0]+31)/32)"
    view, exp, write = loop.variants[0].body
    assert view.out.shape == (32, 64)
    assert str(view.out.valid_shape[0]) == "RUNTIME_Min(32, (x.shape[0]-(i*32)))"
    assert exp.out.valid_shape == view.out.valid_shape
    assert [str(o) for o in write.offsets] == ["(i*32)", "0"]
    assert loop.stop.eval({"x.shape[0]": 100}) == 4
    d = roundtrip(kir)
    assert d["params"][0]["shape"] == [{"sym": "x.shape[0]"}, 64]
    assert d["params"][0]["dynamic_axes"] == [0]


def test_symbolic_condition_outside_loops_makes_kernel_variants():
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), y: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        if x.shape[0] >= 8:
            y[:] = x[0:8, :]
        else:
            y[:] = 0.0

    kir = trace(k, torch.zeros(9, 8), torch.zeros(8, 8))
    assert [str(v.guard) for v in kir.variants] == ["(x.shape[0]>=8)", "(x.shape[0]<8)"]
    assert "when (x.shape[0]>=8):" in str(kir)


def test_element_read_of_int_input_is_a_runtime_scalar():
    def k(lens: pypto.Tensor([4], pypto.DT_INT32), x: pypto.Tensor([4, 64], F32),
          y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for b in pypto.loop(4, idx_name="b"):
            n = lens[b]
            t = pypto.view(x, [1, 64], [b, 0], valid_shape=[1, n])
            y[b:b + 1, :] = t

    kir = trace(k, torch.zeros(4, dtype=torch.int32), torch.zeros(4, 64), torch.zeros(4, 64))
    view = kir.loops()[0].variants[0].body[0]
    assert expr_to_dict(view.out.valid_shape[1]) == {"op": "load", "param": "lens",
                                                     "args": [{"sym": "b"}]}


# --- errors while tracing -------------------------------------------------------------------


def trace_error(fn, *tensors):
    k = pypto.frontend.jit(runtime_options=SIM)(fn)
    with pytest.raises(pypto.PyptoError) as e:
        k.warmup(*tensors)
    return str(e.value)


def test_missing_vec_tile_shapes():
    def k(a: pypto.Tensor([4], F32), out: pypto.Tensor([4], F32)):
        out[:] = pypto.exp(a)

    msg = trace_error(k, torch.zeros(4), torch.zeros(4))
    assert msg.startswith("pypto.exp: needs vector tile shapes: call pypto.set_vec_tile_shapes")
    assert "test_trace_ir.py:" in msg


def test_missing_cube_tile_shapes():
    def k(a: pypto.Tensor([4, 4], F32), out: pypto.Tensor([4, 4], F32)):
        out[:] = a @ a

    assert "pypto.matmul: needs cube tile shapes" in trace_error(k, torch.zeros(4, 4),
                                                                  torch.zeros(4, 4))


def test_shape_and_dtype_errors():
    def bad_broadcast(a: pypto.Tensor([4, 8], F32), b: pypto.Tensor([3, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        a + b

    assert "pypto.add: cannot broadcast shapes [4, 8], [3, 8]" in trace_error(
        bad_broadcast, torch.zeros(4, 8), torch.zeros(3, 8))

    def bad_dtype(a: pypto.Tensor([4], F32), b: pypto.Tensor([4], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(4)
        a * b

    assert "pypto.mul: dtype mismatch: DT_FP32 and DT_FP16; use pypto.cast" in trace_error(
        bad_dtype, torch.zeros(4), torch.zeros(4, dtype=torch.float16))

    def bad_write(a: pypto.Tensor([4], F32), out: pypto.Tensor([8], F32)):
        out[0:2] = a

    assert "the slice has size 2 on axis 0 but the value has shape [4]" in trace_error(
        bad_write, torch.zeros(4), torch.zeros(8))

    def bad_slice(a: pypto.Tensor([4], F32)):
        a[0:8]

    assert "slice 0:8 exceeds size 4 of axis 0" in trace_error(bad_slice, torch.zeros(4))

    def bad_step(a: pypto.Tensor([4], F32)):
        a[0:4:2]

    assert "step must be 1 or None" in trace_error(bad_step, torch.zeros(4))

    def int_exp(a: pypto.Tensor([4], pypto.DT_INT32), out: pypto.Tensor([4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4)
        out[:] = pypto.exp(a)

    assert "pypto.exp: needs a floating-point tensor, got DT_INT32" in trace_error(
        int_exp, torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))

    def bad_mm(a: pypto.Tensor([4, 8], F32), b: pypto.Tensor([4, 8], F32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.matmul(a, b, F32)

    assert "pypto.matmul: inner sizes differ: a is [4, 8], b is [4, 8]" in trace_error(
        bad_mm, torch.zeros(4, 8), torch.zeros(4, 8))


def test_tile_shape_validation():
    def bad_vec(a: pypto.Tensor([4], F32)):
        pypto.set_vec_tile_shapes(4, 0)

    assert "size 1 is 0; every size must be a positive int" in trace_error(bad_vec, torch.zeros(4))

    def bad_cube(a: pypto.Tensor([4], F32)):
        pypto.set_cube_tile_shapes([16, 0], [16, 32], [16, 32])

    # The rules between the sizes need the operands' dtype: the compiler checks them at each
    # matmul (test_sim_tile_rules.py).
    assert "m entries must be positive ints, got [16, 0]" in trace_error(
        bad_cube, torch.zeros(4))


def test_symbolic_slice_size_must_be_static():
    def k(x: pypto.Tensor([pypto.DYNAMIC], F32), y: pypto.Tensor([pypto.DYNAMIC], F32)):
        pypto.set_vec_tile_shapes(8)
        n = x.shape[0]
        y[:] = x[0:n // 2]

    assert "must have a size that simplifies to an int" in trace_error(
        k, torch.zeros(8), torch.zeros(8))


def test_value_leaving_loop_body_gets_a_buffer_before_the_loop():
    # PyPTO's liveness: a tensor the body makes and the code after the loop reads holds the
    # last iteration's value, through a buffer allocated (not filled) before the loop.
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            t = a[i:i + 1, :] * 2.0
        out[:] = t

    kir = trace(k, torch.zeros(4, 8), torch.zeros(1, 8))
    top = kir.variants[0].body
    at = next(n for n, st in enumerate(top) if isinstance(st, ir.Loop))
    before = [getattr(st, "op", type(st).__name__) for st in top[:at]]
    assert before == ["alloc"]
    body = top[at].variants[0].body
    assert isinstance(body[-1], ir.Write)  # the path's value into the buffer


def test_value_leaving_loop_body_unseen_by_liveness_is_rejected():
    # Through a container the bytecode does not show the read: the use is still rejected.
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        kept = []
        for i in pypto.loop(4):
            kept.append(a[i:i + 1, :] * 2.0)
        out[:] = kept[0]

    msg = trace_error(k, torch.zeros(4, 8), torch.zeros(1, 8))
    assert "outside the pypto.loop body path that created it" in msg
    assert "allocate the tensor before the loop" in msg


def test_loop_carried_tensor_gets_a_buffer_before_the_loop():
    # acc = acc + t in a pypto.loop body: Python carries acc, so the loop does too, through a
    # buffer allocated and filled before the loop and written back at the end of the body.
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        acc = pypto.zeros(1, 8)
        for i in pypto.loop(4):
            acc = acc + a[i:i + 1, :]
        out[:] = acc

    kir = trace(k, torch.zeros(4, 8), torch.zeros(1, 8))
    top = kir.variants[0].body
    at = next(n for n, st in enumerate(top) if isinstance(st, ir.Loop))
    before = [getattr(st, "op", type(st).__name__) for st in top[:at]]
    assert "alloc" in before
    body = top[at].variants[0].body
    assert any(isinstance(st, ir.Write) for st in body)  # the write-back into the buffer


def test_loop_carried_tensor_changing_shape_is_rejected():
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        acc = pypto.zeros(1, 8)
        for i in pypto.loop(4):
            acc = pypto.sum(acc + a[i:i + 1, :], dim=-1, keepdim=True)
        out[:] = acc

    msg = trace_error(k, torch.zeros(4, 8), torch.zeros(1, 8))
    assert "variable 'acc' is carried from one iteration to the next" in msg
    assert "a carried tensor keeps its shape and dtype" in msg


def test_loop_carried_counter_becomes_an_expression_of_the_index():
    seen = {}

    def k(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([2, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        off = 1
        for i in pypto.loop(2, 8, 2, idx_name="i"):   # iterations k = (i - 2) // 2
            out[0:1, :] = a[off:off + 1, :]
            off += 3
        seen["after"] = off

    kir = trace(k, torch.zeros(16, 8), torch.zeros(2, 8))
    (loop,) = kir.loops()
    view = loop.variants[0].body[0]
    assert [view.attrs["offsets"][0].eval({"i": i}) for i in (2, 4, 6)] == [1, 4, 7]
    assert seen["after"] == 10
    assert not any("@" in s for s in json.dumps(kir.to_dict()).split('"'))  # no placeholder


def test_symbolic_loop_carried_value_after_the_loop():
    seen = {}

    def k(a: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        n = a.shape[0]
        off = n - 1
        for i in pypto.loop(n // 2):
            off -= 2
        seen["after"] = off
        out[:] = a[off:off + 1, :]

    kir = trace(k, torch.zeros(8, 8), torch.zeros(1, 8))
    assert seen["after"].eval({"a.shape[0]": 9}) == 0
    assert seen["after"].eval({"a.shape[0]": 1}) == 0   # no iteration: the initial value
    assert kir.variants[0].body[-1].kind == "write"


def test_non_affine_loop_carried_update_is_rejected():
    def k(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        off = 1
        for i in pypto.loop(4):
            out[:] = a[off:off + 1, :]
            off = off * 2

    msg = trace_error(k, torch.zeros(16, 8), torch.zeros(1, 8))
    assert "variable 'off' (assigned at test_trace_ir.py:" in msg
    assert "its update `off = (off*2)` is not of the form off + d" in msg
    assert "(off += tile, off -= n)" in msg


def test_loop_carried_update_from_the_index_or_data_is_rejected():
    def by_index(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        off = 0
        for i in pypto.loop(4):
            off += i
            out[:] = a[off:off + 1, :]

    def by_data(lens: pypto.Tensor([4], pypto.DT_INT32), a: pypto.Tensor([16, 8], F32),
                out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        off = 0
        for i in pypto.loop(4):
            out[:] = a[off:off + 1, :]
            off += lens[0]

    def by_path(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        off = 0
        for i in pypto.loop(4):
            if pypto.is_loop_end(i):
                off += 1
            out[:] = a[off:off + 1, :]

    def flag(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        first = True
        for i in pypto.loop(4):
            if first:
                out[:] = a[0:1, :]
            first = False

    z = (torch.zeros(16, 8), torch.zeros(1, 8))
    assert "depends on the loop index, which changes" in trace_error(by_index, *z)
    assert "depends on tensor data" in trace_error(
        by_data, torch.zeros(4, dtype=torch.int32), *z)
    assert "its increment differs between branch paths (`1` and `0`)" in trace_error(by_path, *z)
    assert "use `if pypto.is_loop_begin(i):` instead" in trace_error(flag, *z)


def test_value_computed_from_a_carried_int_does_not_leave_the_loop():
    def k(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        off = 0
        for i in pypto.loop(4):
            end = off + 1
            off += 2
        out[:] = a[end - 1:end, :]

    msg = trace_error(k, torch.zeros(16, 8), torch.zeros(1, 8))
    assert "from the loop-carried variable 'off' of the pypto.loop at test_trace_ir.py:" in msg


def test_in_place_accumulation_is_fine():
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        acc = pypto.zeros(1, 8)
        for i in pypto.loop(4):
            acc[:] = acc + a[i:i + 1, :]
        out[:] = acc

    kir = trace(k, torch.zeros(4, 8), torch.zeros(1, 8))
    full, loop, write = body(kir)
    assert loop.variants[0].body[-1].dst is full.out


def test_break_in_loop_is_rejected():
    def k(a: pypto.Tensor([4], F32)):
        for i in pypto.loop(4):
            break

    assert "'break' inside a pypto.loop body at test_trace_ir.py:" in trace_error(k, torch.zeros(4))


def test_loop_index_used_after_loop():
    def k(a: pypto.Tensor([8, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4, idx_name="i"):
            pass
        out[:] = a[i:i + 1, :]

    assert "loop index 'i' of the pypto.loop at test_trace_ir.py:" in trace_error(
        k, torch.zeros(8, 8), torch.zeros(1, 8))


def test_too_many_paths():
    def k(a: pypto.Tensor([8], F32), out: pypto.Tensor([8], F32)):
        pypto.set_vec_tile_shapes(8)
        for i in pypto.loop(128, idx_name="i"):
            for b in range(7):
                if i % (b + 2) == 0:
                    out[:] = a

    msg = trace_error(k, torch.zeros(8), torch.zeros(8))
    assert "more than 64 branch paths" in msg and "pypto.loop at test_trace_ir.py:" in msg


def test_ops_outside_a_kernel():
    # Tile shapes may be set outside a kernel (they go to the current pypto.options scope,
    # as in PyPTO; see test_config_scopes.py), labels may not.
    with pytest.raises(pypto.PyptoRuntimeError,
                       match="pypto.set_semantic_label can only be used inside a "
                             "@pypto.frontend.jit kernel while it is being traced"):
        pypto.set_semantic_label("x")
    with pytest.raises(pypto.PyptoRuntimeError, match="pypto.loop can only be used inside"):
        for _ in pypto.loop(3):
            pass


def test_tensor_truth_value_is_rejected():
    def k(a: pypto.Tensor([4], F32)):
        pypto.set_vec_tile_shapes(4)
        if a > 0.0:
            pass

    assert "the truth value of a pypto.Tensor is not defined" in trace_error(k, torch.zeros(4))


# --- more of the op surface ------------------------------------------------------------------


def test_clip_logical_full_and_method_forms():
    def k(a: pypto.Tensor([2, 4], F32), m: pypto.Tensor([2, 4], pypto.DT_BOOL),
          out: pypto.Tensor([4, 2], F32)):
        pypto.set_vec_tile_shapes(2, 4)
        assert pypto.get_vec_tile_shapes() == [2, 4]
        c = pypto.clip(a, min=-1.0, max=1.0)
        keep = pypto.cond(m & (a > 0.0)) | ~m
        z = pypto.where(keep, c, pypto.ones(2, 4))
        out[:] = z.permute(1, 0).exp()

    ops = body(trace(k, torch.zeros(2, 4), torch.zeros(2, 4, dtype=torch.bool),
                     torch.zeros(4, 2)))
    names = [s.op for s in ops if isinstance(s, ir.Op)]
    assert names == ["maximum", "minimum", "gt", "logical_and", "logical_not", "logical_or",
                     "full", "where", "permute", "exp"]
    assert [s.attrs.get("composite") for s in ops[:2]] == ["clip", "clip"]
    assert [s.inputs[1].value for s in ops[:2]] == [-1.0, 1.0]
    full = ops[6]
    assert full.inputs[0].value == 1.0 and full.out.shape == (2, 4)
    assert ops[8].attrs == {"dims": [1, 0]} and ops[8].out.shape == (4, 2)


def test_view_and_reshape_errors():
    def out_of_bounds(a: pypto.Tensor([8, 8], F32)):
        pypto.view(a, [4, 8], [8, 0])

    assert ("pypto.view: offset 8 on axis 0 is not inside the shape [8, 8] (PyPTO's view asks "
            "offsets below the input's shape)") in trace_error(out_of_bounds, torch.zeros(8, 8))

    seen = {}

    def overhang(a: pypto.Tensor([8, 8], F32)):
        # a window past the source's end holds the source's part, as in PyPTO
        seen["valid"] = pypto.view(a, [4, 16], [6, 0])._value.valid_shape

    trace(overhang, torch.zeros(8, 8))
    assert [str(v) for v in seen["valid"]] == ["2", "8"]

    def bad_reshape(a: pypto.Tensor([8, 8], F32)):
        pypto.reshape(a, [3, -1])

    assert "cannot infer -1 in [3, -1] from [8, 8]" in trace_error(bad_reshape, torch.zeros(8, 8))

    def dyn_reshape(a: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.reshape(a, [-1])

    # PyPTO's tests match its wording: re.search(r"reshape\(\) requires integer shape when
    # 'inplace=False'", message).
    assert ("reshape() requires integer shape when 'inplace=False'; use inplace=True for "
            "dynamic shapes") in trace_error(dyn_reshape, torch.zeros(8, 8))

    def bad_valid(a: pypto.Tensor([8, 8], F32)):
        pypto.view(a, [4, 8], [0, 0], valid_shape=[5, 8])

    assert "valid_shape [5, 8] exceeds shape [4, 8]" in trace_error(bad_valid, torch.zeros(8, 8))


def test_tail_window_may_pass_the_end_with_valid_shape():
    def k(a: pypto.Tensor([10, 8], F32), out: pypto.Tensor([10, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        for i in pypto.loop(3, idx_name="i"):
            rows = pypto.min(10 - i * 4, 4)
            t = pypto.view(a, [4, 8], [i * 4, 0], valid_shape=[rows, 8])
            pypto.assemble(t, [i * 4, 0], out)

    (loop,) = body(trace(k, torch.zeros(10, 8), torch.zeros(10, 8)))
    view, write = loop.variants[0].body
    assert [view.out.valid_shape[0].eval({"i": i}) for i in range(3)] == [4, 4, 2]
    assert write.src is view.out


def test_matmul_dtype_rules():
    def int8_needs_int32(a: pypto.Tensor([16, 16], pypto.DT_INT8)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.matmul(a, a, pypto.DT_FP16)

    assert "int8 operands need out_dtype DT_INT32, got DT_FP16" in trace_error(
        int8_needs_int32, torch.zeros(16, 16, dtype=torch.int8))

    def mixed(a: pypto.Tensor([16, 16], pypto.DT_FP16), b: pypto.Tensor([16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.matmul(a, b, F32)

    assert "operand dtypes differ: DT_FP16 and DT_FP32" in trace_error(
        mixed, torch.zeros(16, 16, dtype=torch.float16), torch.zeros(16, 16))


def test_scalar_type_rules():
    def float_scalar_int_tensor(a: pypto.Tensor([4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4)
        a * 0.5

    assert "float scalar 0.5 with an integer tensor DT_INT32; cast the tensor first" in \
        trace_error(float_scalar_int_tensor, torch.zeros(4, dtype=torch.int32))

    def loop_index_operand(a: pypto.Tensor([4], pypto.DT_INT32),
                           out: pypto.Tensor([4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4)
        for i in pypto.loop(3, idx_name="i"):
            out[:] = a + i

    (loop,) = body(trace(loop_index_operand, torch.zeros(4, dtype=torch.int32),
                         torch.zeros(4, dtype=torch.int32)))
    add = loop.variants[0].body[0]
    assert add.inputs[1].to_dict() == {"expr": {"sym": "i"}, "dtype": "DT_INT32"}


def test_loop_argument_validation():
    def bad_step(a: pypto.Tensor([4], F32)):
        for _ in pypto.loop(0, 4, 0):
            pass

    assert "pypto.loop: step must be a positive int, got 0" in trace_error(bad_step, torch.zeros(4))

    def bad_stop(a: pypto.Tensor([4], F32)):
        for _ in pypto.loop(2.5):
            pass

    assert "stop must be an int or a symbolic scalar, got float 2.5" in trace_error(
        bad_stop, torch.zeros(4))

    def not_an_index(a: pypto.Tensor([pypto.DYNAMIC], F32)):
        pypto.is_loop_begin(a.shape[0])

    assert "pypto.is_loop_begin expects the index of an enclosing pypto.loop" in trace_error(
        not_an_index, torch.zeros(4))
