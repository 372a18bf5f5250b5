# SPDX-License-Identifier: Apache-2.0
"""``pypto.Element``: a scalar with a data type (PyPTO's typed constant). Ops that take a
number take an Element too, as its value."""

from __future__ import annotations

import numbers
from typing import Union

from ._dtypes import DataType
from ._errors import PyptoTypeError


class Element:
    """``pypto.Element(dtype, value)``: ``value`` (an int or a float) held as ``dtype``
    (an integer dtype keeps an int, a float dtype a float; DT_BOOL a bool)."""

    __slots__ = ("_dtype", "_value")

    def __init__(self, dtype: DataType, value: Union[int, float]):
        if not isinstance(dtype, DataType):
            raise PyptoTypeError(f"pypto.Element: dtype must be a pypto.DataType, got {dtype!r}")
        if not isinstance(value, numbers.Real):
            raise PyptoTypeError(f"pypto.Element: value must be an int or a float, got "
                                 f"{type(value).__name__}")
        if dtype is DataType.DT_BOOL:
            value = bool(value)
        elif dtype.is_float:
            value = float(value)
        else:
            if not float(value).is_integer():
                raise PyptoTypeError(f"pypto.Element: value {value!r} is not an integer, as "
                                     f"{dtype} needs")
            value = int(value)
        self._dtype = dtype
        self._value = value

    @property
    def dtype(self) -> DataType:
        """The element's data type (read-only)."""
        return self._dtype

    @property
    def value(self) -> Union[int, float, bool]:
        """The element's value (read-only)."""
        return self._value

    def __repr__(self) -> str:
        return f"Element({self._dtype}, {self._value!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Element) and other._dtype is self._dtype and
                other._value == self._value)

    def __hash__(self) -> int:
        return hash((self._dtype, self._value))


#: PyPTO spells the class both ways.
element = Element
