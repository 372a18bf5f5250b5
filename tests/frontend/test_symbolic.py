# SPDX-License-Identifier: Apache-2.0
"""SymbolicScalar: canonical simplification, evaluation, serialization, misuse errors."""

import pytest
import torch

import pypto
from pypto import SymbolicScalar
from pypto._symbolic import expr_from_dict, expr_to_dict

i = SymbolicScalar("i")
n = SymbolicScalar("n")


def test_linear_terms_cancel():
    e = (i * 64 + 64) - i * 64
    assert e.is_const() and e.args[0] == 64
    assert str(i * 64 + 64) == "((i*64)+64)"
    assert str(64 - i) == "(64-i)"
    assert str((i + 1) * 64) == "((i*64)+64)"


def test_floordiv_mod_fold_divisible_terms():
    assert str((i * 64 + 128) // 64) == "(i+2)"
    assert ((i * 64 + 3) % 64).args[0] == 3
    assert str((i * 64 + 5) // 64) == "i"  # floor((64 i + 5) / 64) == i
    assert str(pypto.ceildiv(n, 64)) == "((n+63)/64)"
    assert pypto.ceildiv(100, 64) == 2


def test_min_max():
    assert str(pypto.min(n - i * 64, 64)) == "RUNTIME_Min(64, (n-(i*64)))"
    assert pypto.min(i + 3, i + 5).key == (i + 3).key
    assert pypto.max(i + 3, i + 5).key == (i + 5).key
    nested = pypto.min(64, pypto.min(64, n))
    assert str(nested) == "RUNTIME_Min(64, n)"
    assert (n - 64).min(64).eval({"n": 100}) == 36
    assert pypto.min(3, 5) == 3


def test_comparisons_and_logic():
    c = i < n
    assert c.is_bool and str(c) == "(i<n)"
    assert str(~c) == "(i>=n)"
    assert (i + 1 > i).args[0] is True
    both = (i == 0) & (n > 3)
    assert both.eval({"i": 0, "n": 4}) is True
    assert both.eval({"i": 1, "n": 4}) is False


def test_eval_python_floor_semantics():
    e = (i - 7) // 2
    assert e.eval({"i": 0}) == -4
    assert ((i - 7) % 2).eval({"i": 0}) == 1


def test_eval_unbound_symbol_is_named():
    with pytest.raises(pypto.PyptoValueError, match="symbol 'n' has no value"):
        (i + n).eval({"i": 1})


def test_round_trip_through_dict():
    e = pypto.min(n - i * 64, 64)
    d = expr_to_dict(e)
    assert d == {"op": "min", "args": [64, {"op": "sub", "args": [
        {"sym": "n"}, {"op": "mul", "args": [{"sym": "i"}, 64]}]}]}
    assert expr_from_dict(d).key == e.key


def test_misuse_errors():
    with pytest.raises(pypto.PyptoTypeError, match="use // "):
        i / 2
    with pytest.raises(pypto.PyptoTypeError, match="cannot be used as a Python int"):
        range(n)
    with pytest.raises(pypto.PyptoTypeError, match="only known at run time"):
        bool(i < n)  # no kernel is being traced
    with pytest.raises(pypto.PyptoTypeError, match="symbol name \\(str\\) or an int"):
        SymbolicScalar(1.5)


def test_constant_conversion():
    assert int(SymbolicScalar(7)) == 7
    assert bool(SymbolicScalar(0)) is False
    assert (i - i).args[0] == 0


# --- PyPTO compatibility (issue 8) ---------------------------------------------------------


def test_print_form_is_pyptos_dump():
    # PyPTO's SymbolicScalar::Dump: binary ops fully parenthesized without spaces; min/max, ==
    # and != as RUNTIME_ calls; unary minus and ! in parentheses; repr wraps it.
    b = pypto.symbolic_scalar("b")
    assert str((b >= 2) * (b < 8)) == "((b>=2)*(b<8))"
    assert repr(b + 1) == "SymbolicScalar((b+1))"
    assert str(pypto.max(b, n)) == "RUNTIME_Max(b, n)"
    assert str(b == n) == "RUNTIME_Eq(b, n)" and str(b != n) == "RUNTIME_Ne(b, n)"
    assert str(-b) == "(-b)" and str(b - 3) == "(b-3)" and str(b * -2) == "(b*-2)"
    assert str(~b) == "RUNTIME_Eq(b, 0)"  # PyPTO's ! on an integer: b == 0
    assert str((b > 1) & (n > 1)) == "((b>1)&&(n>1))"  # pypto-sim's own logic ops
    assert str(SymbolicScalar(10) < 2) == "0" and str(SymbolicScalar(-4)) == "-4"
    assert f"{b // 2}" == "(b/2)"  # the one form: format() and messages print it too


def test_comparison_is_an_integer_in_arithmetic():
    b = pypto.symbolic_scalar("b")
    a = (b >= 2) * (b < 8)
    assert not a.is_bool and a.op == "mul"
    assert [a.eval({"b": v}) for v in (1, 2, 7, 8)] == [0, 1, 1, 0]
    assert ((b > 0) + (b > 5) + 1).eval({"b": 9}) == 3
    assert ((b < 3) < (n < 3)).eval({"b": 5, "n": 1}) is True   # ordered as 0 < 1
    assert ((b < 3) == 1).eval({"b": 2}) is True                # bool against int: as 0/1
    c = SymbolicScalar(10) < 2
    assert c.is_immediate() and c.concrete() == 0 and int(c) == 0 and (c + 5).concrete() == 5
    assert expr_from_dict(expr_to_dict(a)).key == a.key


def test_graph_tensor_outside_a_kernel_has_symbolic_dynamic_axes():
    t = pypto.Tensor([-1, 10], pypto.DT_BF16, "t")
    s0, s1 = t.shape
    assert isinstance(s0, pypto.symbolic_scalar) and s0.is_symbol() and s1 == 10
    assert str(s0) == "RUNTIME_GetInputShapeDim(ARG_t,0)"  # PyPTO's name for the axis
    y = t.shape[0] + 10 - t.shape[0]
    assert isinstance(y, pypto.symbolic_scalar) and y.concrete() == 10
    assert pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_FP32, "u").shape[0].is_symbol()
    assert pypto.Tensor([], pypto.DT_FP32).shape == []  # "shape from the argument"
    # The annotation side is unchanged: the spec keeps the markers.
    assert t.spec == (pypto.DYNAMIC, 10)


def test_graph_tensor_is_no_kernel_argument():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([-1, 10], pypto.DT_FP32)):
        pass

    t = pypto.Tensor([-1, 10], pypto.DT_FP32, "t")
    with pytest.raises(pypto.PyptoTypeError, match="built outside a kernel.*pass a torch.Tensor"):
        k(t)


def test_min_max_simplify_against_an_offset_of_the_same_expression():
    a = SymbolicScalar("a")
    assert a.min(a + 1) == a and a.min(a + 1).key == a.key
    assert a.max(a + 1) == a + 1
    assert str(a.min(a + 1)) == "a" and str(a.max(a - 1)) == "a"


@pytest.mark.parametrize("api,reduction,elementwise", [("max", "amax", "maximum"),
                                                       ("min", "amin", "minimum")])
def test_max_and_min_of_a_tensor_name_the_tensor_ops(api, reduction, elementwise):
    # PyPTO's max/min take two ints or symbolic scalars; a reduction's arguments get told
    # which tensor op reduces and which compares element by element
    fn = getattr(pypto, api)

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(a: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = fn(a, -1, True)

    with pytest.raises(pypto.error.PyptoError,
                       match=rf"pypto\.{api}: takes two ints or symbolic scalars.*"
                             rf"pypto\.{reduction}\(x, dim, keepdim\).*pypto\.{elementwise}"):
        k(torch.zeros(8, 32), torch.zeros(8, 1))
    assert fn(3, 5) == (5 if api == "max" else 3)
