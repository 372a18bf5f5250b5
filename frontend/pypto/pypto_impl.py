# SPDX-License-Identifier: Apache-2.0
"""PyPTO's ``pypto.pypto_impl`` names that kernels use directly: the convolution tile infos
``TileL1Info`` and ``TileL0Info`` of ``pypto.set_conv_tile_shapes``, and ``ConvBpTileL1Info``
and ``ConvBpTileL0Info`` of ``pypto.set_convbp_input_tile_shapes``."""

from ._ops.conv import TileL0Info, TileL1Info
from ._ops.conv_bp import ConvBpTileL0Info, ConvBpTileL1Info

__all__ = ["TileL1Info", "TileL0Info", "ConvBpTileL1Info", "ConvBpTileL0Info"]
