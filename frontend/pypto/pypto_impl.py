# SPDX-License-Identifier: Apache-2.0
"""PyPTO's ``pypto.pypto_impl`` names that kernels use directly: the convolution tile infos
``TileL1Info`` and ``TileL0Info`` of ``pypto.set_conv_tile_shapes``."""

from ._ops.conv import TileL0Info, TileL1Info

__all__ = ["TileL1Info", "TileL0Info"]
