# SPDX-License-Identifier: Apache-2.0
"""SymbolicScalar: canonical simplification, evaluation, serialization, misuse errors."""

import pytest

import pypto
from pypto import SymbolicScalar
from pypto._symbolic import expr_from_dict, expr_to_dict

i = SymbolicScalar("i")
n = SymbolicScalar("n")


def test_linear_terms_cancel():
    e = (i * 64 + 64) - i * 64
    assert e.is_const() and e.args[0] == 64
    assert str(i * 64 + 64) == "i*64 + 64"
    assert str(64 - i) == "64 - i"
    assert str((i + 1) * 64) == "i*64 + 64"


def test_floordiv_mod_fold_divisible_terms():
    assert str((i * 64 + 128) // 64) == "i + 2"
    assert ((i * 64 + 3) % 64).args[0] == 3
    assert str((i * 64 + 5) // 64) == "i"  # floor((64 i + 5) / 64) == i
    assert str(pypto.ceildiv(n, 64)) == "(n + 63) // 64"
    assert pypto.ceildiv(100, 64) == 2


def test_min_max():
    assert str(pypto.min(n - i * 64, 64)) == "min(64, n - i*64)"
    assert pypto.min(i + 3, i + 5).key == (i + 3).key
    assert pypto.max(i + 3, i + 5).key == (i + 5).key
    nested = pypto.min(64, pypto.min(64, n))
    assert str(nested) == "min(64, n)"
    assert (n - 64).min(64).eval({"n": 100}) == 36
    assert pypto.min(3, 5) == 3


def test_comparisons_and_logic():
    c = i < n
    assert c.is_bool and str(c) == "i < n"
    assert str(~c) == "i >= n"
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
