# SPDX-License-Identifier: Apache-2.0
"""The kernel language: tiling, control flow and tensor operations usable in a jit kernel.

Every function records into the kernel being traced (see ``_tracer``) and returns a new
``Tensor`` handle; none computes data. Shapes may hold SymbolicScalars (dynamic axes, tails).

Example::

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 128)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 64)):
            rows = pypto.min(n - i * 64, 64)
            t = pypto.view(x, [64, 128], [i * 64, 0], valid_shape=[rows, 128])
            y[i * 64:, :] = pypto.exp(t)

The package's modules follow the language's sections; each ``pypto.<op>`` is defined in one
of them and re-exported here (``pypto`` re-exports this package's ``__all__``):

* ``common``: the compiler's op table and the helpers every op records through (``_emit``);
* ``tiling``: vector and cube tile shapes, semantic labels;
* ``control``: ``loop``, ``loop_unroll``, ``is_loop_begin``/``is_loop_end``, ``cond``,
  ``min``, ``max``, ``ceildiv``; with ``carried`` (the variables a loop body carries from
  one iteration to the next), ``not_carried`` (what an int the loop could not carry holds
  after it) and ``frame_locals`` (the one place that writes a caller's local variables, in
  the way of the running CPython version);
* ``creation``: local tensors, ``full``, ``zeros``, ``ones``, ``arange``;
* ``elementwise``: arithmetic, math functions, comparisons, logical ops, ``where``, ``clip``;
* ``reductions``: reductions, scans and sorting along an axis;
* ``gather_scatter``: ``gather``, ``index_select``, ``index_add``, ``one_hot``, ``scatter``,
  ``scatter_update``;
* ``movement``: ``cast``, ``clone``, ``view``, ``reshape``, ``permute``, ``transpose``,
  ``unsqueeze``, ``expand_clone``, ``concat``, ``assemble``;
* ``subscript``: ``Tensor.__getitem__`` and ``__setitem__``;
* ``composites``: ops recorded as sequences of the others (``softmax``, ``rms_norm``, ...);
* ``layout``: ``pack`` (a tensor's bytes as DT_UINT8) and ``transdata`` (Fractal_Z weights);
* ``mx``: the Ascend 950's MX ops ``quant_mx`` and ``scaled_mm``;
* ``cube``: ``matmul`` and the ``@`` operator; ``conv``: convolution on the cube and its
  tile shapes; ``conv_bp``: its input gradient (``conv_backward_input``) and tile shapes.
"""

from .._enums import ReLuType, ScatterMode, TopKAlgo, TransMode
from .common import _OPS, _emit
from .tiling import (_tile_pair, get_vec_tile_shapes, set_cube_tile_shapes, set_semantic_label,
                     set_vec_tile_shapes)
from .control import ceildiv, cond, is_loop_begin, is_loop_end, loop, loop_unroll, max, min
from .creation import alloc, arange, full, ones, zeros
from .elementwise import (_binary_operator, _compare_operator, _reflected_div, _reflected_sub, abs,
                          acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and,
                          bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,
                          bitwise_xor, cbrt, ceil,
                          ceil_div, clip, copysign, cos, cosh, div, eq, erf, erfc, exp, exp2, expm1,
                          floor, floor_div, fmod, gcd, ge, gt, hypot, isfinite, isinf, isnan, le,
                          log, log10, log1p, log2, logical_and, logical_not, logical_or, lrelu, lt,
                          maximum, minimum, mul, ne, neg, pow, reciprocal, relu, remainder, round,
                          rsqrt, sigmoid, sign, signbit, sin, sinh, sqrt, sub, tan, tanh, tril,
                          triu, trunc, where)
from .reductions import (amax, amin, argmax, argmin, argsort, cumprod, cumsum, prod, sort, sum,
                         topk)
from .gather_scatter import (gather, index_add, index_add_, index_add__ub, index_add_ub,
                             index_select, one_hot, scatter, scatter_, scatter_update)
from .movement import (assemble, cast, clone, concat, expand_clone, permute, reshape, transpose,
                       unsqueeze, view)
from .subscript import _getitem, _setitem
from .composites import (LReLU, atomic_add, axpy, axpy_, deinterleave, dequantize,
                         expand_exp_dif, fillpad, gathermask, index_put_, indexput_, interleave,
                         pad, prelu, quantize, rms_norm, softmax, std, var)
from .layout import pack, transdata
from .cube import _matmul_operator, matmul
from .random import normal
from .mx import quant_mx, scaled_mm
from .conv import TileL0Info, TileL1Info, conv, get_conv_tile_shapes, set_conv_tile_shapes
from .conv_bp import (ConvBpTileL0Info, ConvBpTileL1Info, conv_backward_input,
                      set_convbp_input_tile_shapes)

__all__ = [
    "set_vec_tile_shapes", "get_vec_tile_shapes", "set_cube_tile_shapes", "set_semantic_label",
    "loop", "is_loop_begin", "is_loop_end", "cond", "min", "max", "ceildiv",
    "view", "assemble", "reshape", "transpose", "permute", "unsqueeze", "expand_clone",
    "concat", "cast", "clone", "full", "zeros", "ones",
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal",
    "relu", "sigmoid", "tanh", "floor", "maximum", "minimum", "remainder", "clip", "where", "pow",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not",
    "sum", "amax", "amin", "softmax", "matmul",
    "ceil", "trunc", "round", "sign", "erf", "erfc", "sin", "cos", "log1p", "expm1", "lrelu",
    "triu", "tril", "prod", "argmax", "argmin", "cumsum", "cumprod", "loop_unroll",
    "gather", "scatter", "scatter_", "scatter_update", "ReLuType", "TransMode", "TopKAlgo", "ScatterMode",
    "exp2", "log2", "log10", "cbrt", "cosh", "sinh",
    "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "copysign", "hypot",
    "fmod", "isfinite", "isnan",
    "isinf", "signbit", "gcd", "floor_div", "ceil_div", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "arange",
    "one_hot", "index_select", "index_add", "index_add_", "index_add_ub", "index_add__ub",
    "topk", "argsort", "sort",
    "LReLU", "axpy", "axpy_", "prelu", "rms_norm", "pad", "var", "std",
    "expand_exp_dif", "fillpad", "gathermask", "quantize", "dequantize", "indexput_",
    "index_put_", "interleave", "deinterleave",
    "atomic_add", "conv", "set_conv_tile_shapes", "get_conv_tile_shapes", "normal",
    "conv_backward_input", "set_convbp_input_tile_shapes",
    "quant_mx", "scaled_mm", "pack", "transdata",
]
