# SPDX-License-Identifier: Apache-2.0
"""PyPTO's ``pypto.pypto_impl`` names that kernels use directly: the convolution tile infos
``TileL1Info`` and ``TileL0Info`` of ``pypto.set_conv_tile_shapes``, ``ConvBpTileL1Info``
and ``ConvBpTileL0Info`` of ``pypto.set_convbp_input_tile_shapes``, ``Element`` and
``ScalarDivS`` (a model kernel's ``@op_wrapper`` scalar division).

Example::

    q = pypto_impl.ScalarDivS(amax, pypto_impl.Element(amax.dtype, 127.0), True)  # 127 / amax
"""

from ._dtypes import DataType
from ._element import Element
from ._errors import PyptoTypeError
from ._ops.conv import TileL0Info, TileL1Info
from ._ops.conv_bp import ConvBpTileL0Info, ConvBpTileL1Info
from ._ops.elementwise import div
from ._tensor import Tensor

__all__ = ["TileL1Info", "TileL0Info", "ConvBpTileL1Info", "ConvBpTileL0Info", "Element",
           "ScalarDivS"]

_SCALAR_DIV_DTYPES = (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)


def ScalarDivS(operand: Tensor, value: Element,  # noqa: N802  (PyPTO's name)
               reverse_operand: bool = False) -> Tensor:
    """PyPTO's ``ScalarDivS``: every element of ``operand`` divided by the scalar ``value``, or
    ``value`` divided by every element when ``reverse_operand`` is true; FP16, BF16 and FP32
    operands, as PyPTO checks (its S_DIV)."""
    if not isinstance(operand, Tensor):
        raise PyptoTypeError(f"pypto_impl.ScalarDivS: operand must be a pypto.Tensor, got "
                             f"{type(operand).__name__}")
    if operand.dtype not in _SCALAR_DIV_DTYPES:
        raise PyptoTypeError(f"pypto_impl.ScalarDivS: operand dtype {operand.dtype} is not "
                             f"supported; S_DIV takes DT_FP16, DT_BF16 or DT_FP32")
    if not isinstance(value, Element):
        raise PyptoTypeError(f"pypto_impl.ScalarDivS: value must be a pypto_impl.Element, got "
                             f"{type(value).__name__}")
    return div(value, operand) if reverse_operand else div(operand, value)
