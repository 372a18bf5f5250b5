# SPDX-License-Identifier: Apache-2.0
"""Behaviour PyPTO's own examples rely on (found with tools/pypto_examples.py): the
``pypto.symbolic_scalar`` forms and introspection, loop-carried tensors, and windows clipped
at the end of a static axis."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
F32 = pypto.DT_FP32


# -- pypto.symbolic_scalar ------------------------------------------------------------------


def test_symbolic_scalar_is_the_symbolic_scalar_class():
    assert pypto.symbolic_scalar is pypto.SymbolicScalar
    n = pypto.symbolic_scalar("n")
    assert isinstance(n + 1, pypto.symbolic_scalar)
    assert isinstance(n < 2, pypto.symbolic_scalar)


def test_symbolic_scalar_constructor_forms():
    assert pypto.symbolic_scalar(7).concrete() == 7
    copy = pypto.symbolic_scalar(pypto.symbolic_scalar(7))
    assert copy.is_concrete() and copy.concrete() == 7
    named = pypto.symbolic_scalar("seven", 7)  # a named concrete value is that value
    assert named.is_concrete() and named.concrete() == 7
    sym = pypto.symbolic_scalar(pypto.symbolic_scalar("m"))
    assert sym.is_symbol() and str(sym) == "m"
    with pytest.raises(pypto.PyptoTypeError):
        pypto.symbolic_scalar("x", 1.5)
    with pytest.raises(pypto.PyptoTypeError):
        pypto.symbolic_scalar(1, 2, 3)


@pytest.mark.parametrize("make, symbol, expression, immediate", [
    (lambda: pypto.symbolic_scalar(10), False, False, True),
    (lambda: pypto.symbolic_scalar("s"), True, False, False),
    (lambda: pypto.symbolic_scalar(10) < 2, False, False, True),     # folds to a constant
    (lambda: pypto.symbolic_scalar("s") < 2, False, True, False),
    (lambda: pypto.symbolic_scalar("s") * 2 + 1, False, True, False),
])
def test_symbolic_scalar_introspection(make, symbol, expression, immediate):
    s = make()
    assert s.is_symbol() is symbol
    assert s.is_expression() is expression
    assert s.is_immediate() is immediate
    assert s.is_concrete() is immediate


def test_concrete_value_of_folded_comparison_and_error_for_symbols():
    assert (pypto.symbolic_scalar(10) < 2).concrete() == 0
    assert (pypto.symbolic_scalar(1) < 2).concrete() == 1
    with pytest.raises(pypto.PyptoValueError, match="not concrete"):
        (pypto.symbolic_scalar("s") + 1).concrete()


def test_symbolic_scalar_inside_a_kernel():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3,), F32)) -> pypto.Tensor((3,), F32):
        pypto.set_vec_tile_shapes(8)
        s = pypto.symbolic_scalar(128)
        s = s + 1
        assert s.is_concrete() and s.concrete() == 129
        return x + x

    x = torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal(k(x), x + x)


# -- loop-carried tensors -------------------------------------------------------------------


def test_tensor_rebound_in_a_loop_is_carried_like_python():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((3,), F32)) -> pypto.Tensor((3,), F32):
        pypto.set_vec_tile_shapes(8)
        y = pypto.zeros(x.shape)
        for _ in pypto.loop(3):
            y = x + y
        return y

    x = torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal(k(x), 3 * x)


def test_carried_tensor_with_branch_paths_and_a_dynamic_trip_count():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(n_rows: pypto.Tensor([pypto.DYNAMIC, 16], F32), out: pypto.Tensor([1, 16], F32)):
        pypto.set_vec_tile_shapes(1, 16)
        acc = n_rows[0:1, :] * 0.0
        for i in pypto.loop(n_rows.shape[0]):
            row = n_rows[i:i + 1, :]
            if pypto.is_loop_begin(i):
                acc = acc + row * 10.0
            else:
                acc = acc + row   # a path that leaves acc alone would be fine too
        out[:] = acc

    for rows in (1, 5):
        a = torch.randn(rows, 16)
        out = torch.empty(1, 16)
        k(a, out)
        expect = a[0:1] * 10.0 + a[1:].sum(dim=0, keepdim=True)
        assert torch.allclose(out, expect, atol=1e-5)


def test_carried_tensor_is_the_buffer_after_the_loop_and_other_paths_keep_it():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        acc = a[0:1, :] * 1.0
        for i in pypto.loop(1, 4):
            if pypto.is_loop_end(i):
                acc = acc * 2.0
        out[:] = acc + 1.0

    a = torch.randn(4, 8)
    out = torch.empty(1, 8)
    k(a, out)
    assert torch.allclose(out, a[0:1] * 2.0 + 1.0)


# -- windows at the end of a static axis ----------------------------------------------------


def test_window_past_the_end_of_a_static_axis_is_clipped():
    # 72 x 144 walked in 64 x 64 windows: the last row and column blocks are partial.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor((72, 144), F32), y: pypto.Tensor((72, 144), F32)) \
            -> pypto.Tensor((72, 144), F32):
        out = pypto.Tensor((72, 144), F32)
        for b in pypto.loop(2):
            for s in pypto.loop(3):
                t0 = pypto.view(x, (64, 64), [b * 64, s * 64])
                t1 = pypto.view(y, (64, 64), [b * 64, s * 64])
                pypto.set_vec_tile_shapes(32, 32)
                pypto.assemble(t0 * t1 + t1, [b * 64, s * 64], out)
        return out

    x, y = torch.rand(72, 144), torch.rand(72, 144)
    assert torch.allclose(k(x, y), x * y + y)


def test_window_that_divides_the_axis_keeps_its_full_shape():
    def k(x: pypto.Tensor((128, 64), F32), out: pypto.Tensor((128, 64), F32)):
        pypto.set_vec_tile_shapes(64, 64)
        for b in pypto.loop(2):
            t = pypto.view(x, (64, 64), [b * 64, 0])
            assert t.valid_shape is None or list(t.valid_shape) == [64, 64]
            pypto.assemble(t * 2.0, [b * 64, 0], out)

    x = torch.rand(128, 64)
    out = torch.empty(128, 64)
    pypto.frontend.jit(runtime_options=SIM)(k)(x, out)
    assert torch.equal(out, x * 2.0)


# -- counters a loop cannot carry ------------------------------------------------------------


def test_counter_only_printed_in_a_loop_is_not_an_error(capsys):
    # PyPTO's loop example counts branch visits at compile time and only prints the count.
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor((8, 8), F32)) -> pypto.Tensor((8, 8), F32):
        pypto.set_vec_tile_shapes(8, 8)
        out = pypto.Tensor((8, 8), F32)
        seen = 0
        for i in pypto.loop(3):
            for j in pypto.loop(2):
                if i < 2:
                    print(f"count: {seen}")
                    seen = seen + 1
                out[:] = a + a
        print(f"after: {seen}")
        return out

    a = torch.rand(8, 8)
    assert torch.equal(k(a), a + a)
    assert "after: <'seen': not carried by the pypto.loop>" in capsys.readouterr().out


def test_counter_a_loop_cannot_carry_is_an_error_where_it_is_used():
    def k(a: pypto.Tensor((8, 8), F32), out: pypto.Tensor((1, 8), F32)):
        pypto.set_vec_tile_shapes(1, 8)
        row = 0
        for i in pypto.loop(4):
            if pypto.is_loop_end(i):
                row += 1
        out[:] = a[row:row + 1, :]

    with pytest.raises(pypto.PyptoError) as e:
        pypto.frontend.jit(runtime_options=SIM)(k)(torch.rand(8, 8), torch.empty(1, 8))
    msg = str(e.value)
    assert "'row'" in msg and "its increment differs between branch paths" in msg


def test_arithmetic_on_a_shape_marker_says_what_is_missing():
    # Outside a kernel pypto.Tensor is PyPTO's graph tensor: a -1 axis is a symbolic scalar
    # (test_symbolic); a STATIC axis stays a marker, whose arithmetic says what is missing.
    t = pypto.Tensor([pypto.STATIC, 10], pypto.DT_BF16, "t")
    with pytest.raises(pypto.error.FeError, match="pypto.STATIC is a shape marker"):
        t.shape[0] + 10
    with pytest.raises(TypeError):  # still a TypeError for code that catches that
        10 - pypto.DYNAMIC
    assert pypto.DYNAMIC == pypto.StatusType.DYNAMIC and str(pypto.STATIC) == "STATIC"
