# SPDX-License-Identifier: Apache-2.0
"""Data types of pypto tensors and their mapping to and from torch dtypes.

The member names match PyPTO's ``pypto.DataType`` (reference §5.8) and are exported at module
level as ``pypto.DT_*``. ``str(pypto.DT_FP16)`` is ``"DT_FP16"``, the spelling used in error
messages and in the serialized IR.
"""

from __future__ import annotations

import enum
from typing import Optional

import torch

__all__ = ["DataType", "from_torch_dtype", "to_torch_dtype", "accepts_torch_dtype"]


class DataType(enum.Enum):
    """Element type of a tensor. ``bits`` is the storage size of one element."""

    # value = (code, bits, kind); code keeps every member distinct, kind is "int", "uint",
    # "float", "bool" or "none".
    DT_INT4 = (0, 4, "int")
    DT_INT8 = (1, 8, "int")
    DT_INT16 = (2, 16, "int")
    DT_INT32 = (3, 32, "int")
    DT_INT64 = (4, 64, "int")
    DT_UINT8 = (5, 8, "uint")
    DT_UINT16 = (6, 16, "uint")
    DT_UINT32 = (7, 32, "uint")
    DT_UINT64 = (8, 64, "uint")
    DT_FP8 = (9, 8, "float")
    DT_FP16 = (10, 16, "float")
    DT_FP32 = (11, 32, "float")
    DT_BF16 = (12, 16, "float")
    DT_HF4 = (13, 4, "float")
    DT_HF8 = (14, 8, "float")
    DT_FP8E4M3 = (15, 8, "float")
    DT_FP8E5M2 = (16, 8, "float")
    DT_FP8E8M0 = (17, 8, "float")
    DT_FP4_E2M1X2 = (18, 4, "float")
    DT_FP4_E1M2X2 = (19, 4, "float")
    DT_FP4_E2M1 = (20, 4, "float")
    DT_FP4_E1M2 = (21, 4, "float")
    DT_BOOL = (22, 8, "bool")
    DT_DOUBLE = (23, 64, "float")
    DT_BOTTOM = (24, 0, "none")

    @property
    def bits(self) -> int:
        """Storage bits of one element (4 for the 4-bit types)."""
        return self.value[1]

    @property
    def is_float(self) -> bool:
        return self.value[2] == "float"

    @property
    def is_int(self) -> bool:
        """True for signed and unsigned integer types (not bool)."""
        return self.value[2] in ("int", "uint")

    @property
    def is_fp4(self) -> bool:
        """The FP4 types whose torch storage is uint8 with two elements per byte."""
        return self in _FP4

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"pypto.{self.name}"


_FP4 = frozenset(
    {DataType.DT_FP4_E2M1X2, DataType.DT_FP4_E1M2X2, DataType.DT_FP4_E2M1, DataType.DT_FP4_E1M2}
)

# Annotations whose torch storage is uint8 (PyPTO accepts torch.uint8 for these; the FP8
# types' bits where torch has no float8 dtype).
_UINT8_STORAGE = _FP4 | {DataType.DT_HF8, DataType.DT_FP8E4M3, DataType.DT_FP8E5M2,
                          DataType.DT_FP8E8M0}


def bytes_of(dtype: DataType) -> int:
    """Bytes of one element of ``dtype`` (PyPTO's ``pypto.bytes_of``): 4 for DT_FP32, 2 for
    DT_FP16, 1 for the 8-bit types and for the packed 4-bit ones, 0 for DT_BOTTOM.

    Example: ``n_tile = l0b_bytes // pypto.bytes_of(pypto.DT_FP32) // k_tile``.
    """
    if not isinstance(dtype, DataType):
        from ._errors import PyptoTypeError

        raise PyptoTypeError(f"pypto.bytes_of: expects a pypto.DataType, got {dtype!r}")
    bits = dtype.bits
    return bits // 8 if bits >= 8 else (1 if bits else 0)


def _torch_pairs():
    # torch 1.13 lacks uint16/32/64 and the float8 types; newer torch has them.
    names = [
        ("int8", DataType.DT_INT8),
        ("int16", DataType.DT_INT16),
        ("int32", DataType.DT_INT32),
        ("int64", DataType.DT_INT64),
        ("uint8", DataType.DT_UINT8),
        ("uint16", DataType.DT_UINT16),
        ("uint32", DataType.DT_UINT32),
        ("uint64", DataType.DT_UINT64),
        ("float16", DataType.DT_FP16),
        ("float32", DataType.DT_FP32),
        ("bfloat16", DataType.DT_BF16),
        ("float64", DataType.DT_DOUBLE),
        ("bool", DataType.DT_BOOL),
        ("float8_e4m3fn", DataType.DT_FP8E4M3),
        ("float8_e5m2", DataType.DT_FP8E5M2),
        ("float8_e8m0fnu", DataType.DT_FP8E8M0),
    ]
    for name, dt in names:
        tdt = getattr(torch, name, None)
        if isinstance(tdt, torch.dtype):
            yield tdt, dt


_FROM_TORCH = dict(_torch_pairs())
_TO_TORCH = {dt: tdt for tdt, dt in _FROM_TORCH.items()}


def from_torch_dtype(dtype: torch.dtype) -> Optional[DataType]:
    """The DataType of a torch dtype, or None when pypto has no equivalent (e.g. complex64)."""
    return _FROM_TORCH.get(dtype)


def to_torch_dtype(dtype: DataType) -> Optional[torch.dtype]:
    """The torch dtype that stores ``dtype`` element for element, or None (FP4, HF8, INT4, ...)."""
    return _TO_TORCH.get(dtype)


def accepts_torch_dtype(annotation: DataType, dtype: torch.dtype) -> bool:
    """Whether a torch tensor of ``dtype`` may be passed for a parameter annotated
    ``annotation``."""
    if _FROM_TORCH.get(dtype) is annotation:
        return True
    return dtype == torch.uint8 and annotation in _UINT8_STORAGE
