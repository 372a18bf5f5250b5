# SPDX-License-Identifier: Apache-2.0
"""``pypto.Tensor``: the parameter annotation and the in-kernel tensor handle.

Outside a kernel trace, ``pypto.Tensor(shape, dtype, format=...)`` and ``pypto.Tensor[[shape],
dtype]`` build a :class:`TensorAnnotation` describing a jit parameter::

    @pypto.frontend.jit
    def k(x: pypto.Tensor[[pypto.DYNAMIC, 128], pypto.DT_FP16],
          y: pypto.Tensor([4, 8], pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_NZ),
          z: pypto.Tensor()):          # any rank/shape/dtype, every axis static
        ...

Shape entries: an int (that exact size), ``pypto.DYNAMIC``/``pypto.DYN`` or ``-1`` (may
change between calls without recompiling), ``pypto.STATIC`` (taken from the tensor; a new size recompiles),
``pypto.frontend.dynamic("N")`` (dynamic, and every axis named N must agree), and a trailing
``...`` (any number of further static axes). Without ``...`` the rank must match exactly.
An empty shape, ``pypto.Tensor([], dtype)``, means "shape taken from the argument": any
rank, every axis static (as PyPTO reads it; it is not a rank-0 tensor: a 0-d torch tensor
is passed as shape ``[1]``). Without a dtype the torch tensor's dtype is used. A kernel that
returns its outputs (a return annotation) traces each input with the argument's own shape, as
PyPTO does (it compares inputs with their annotations only in a debug mode); an in-place
kernel rejects an argument whose rank or fixed sizes differ from its annotation.

The same object is PyPTO's graph tensor outside a kernel: ``t = pypto.Tensor([-1, 10],
pypto.DT_BF16, "t")`` has ``t.shape == [RUNTIME_GetInputShapeDim(ARG_t,0), 10]``, a list whose
DYNAMIC (or -1) axes are symbolic scalars named as PyPTO names them, so shape arithmetic works
(``t.shape[0] + 10 - t.shape[0]`` is the constant 10). It holds no data: a kernel called with it
raises a TypeError asking for a torch tensor. Its ``spec`` keeps the annotation's entries
(markers) for the jit's parameter checks.

Inside a kernel being traced, ``pypto.Tensor(shape, dtype)`` allocates a local tensor, and the
kernel's parameters are :class:`Tensor` handles supporting ``+ - * / @ **``, unary ``-``,
comparisons, ``&``/``|``/``~`` on bool tensors, slicing and slice assignment.
"""

from __future__ import annotations

import numbers
import threading
from typing import Any, Dict, List, Optional, Tuple

from . import _tracer
from ._dtypes import DataType
from ._enums import StatusType, TileOpFormat
from ._errors import PyptoNotImplementedError, PyptoTypeError, PyptoValueError, user_location
from ._symbolic import SymbolicScalar

__all__ = ["Tensor", "TensorAnnotation", "GraphTensor", "HostTensor", "from_torch", "tensor"]


def _fmt_entry(e: Any) -> str:
    if e is Ellipsis:
        return "..."
    if isinstance(e, StatusType):
        return e.name
    return str(e)


class _Rank(int):
    """An int that can also be called, so ``x.dim`` and ``x.dim()`` both give the rank."""

    def __call__(self) -> int:
        return int(self)


class TensorAnnotation:
    """Describes a tensor parameter of a jit kernel, and is PyPTO's graph tensor outside a
    kernel (see the module docstring). ``spec`` holds the annotation's shape entries (ints,
    StatusType markers, symbols; None when no shape was given); ``shape`` is the graph tensor's
    shape, with a symbolic scalar per dynamic axis."""

    __slots__ = ("spec", "dtype", "format", "name", "has_ellipsis")

    def __init__(self, shape: Any = None, dtype: Optional[DataType] = None,
                 format: Optional[TileOpFormat] = None, name: str = ""):
        if dtype is not None and not isinstance(dtype, DataType):
            raise PyptoTypeError(
                f"pypto.Tensor: dtype must be a pypto DataType such as pypto.DT_FP32, got "
                f"{type(dtype).__name__} {dtype!r}")
        if format is not None and format not in (TileOpFormat.TILEOP_ND, TileOpFormat.TILEOP_NZ):
            raise PyptoTypeError(
                f"pypto.Tensor: format must be pypto.TileOpFormat.TILEOP_ND or TILEOP_NZ, got "
                f"{type(format).__name__} {format!r} (the other formats name transdata's "
                "conversions)")
        if not isinstance(name, str):
            raise PyptoTypeError(f"pypto.Tensor: name must be a str, got {name!r}")
        self.dtype = dtype
        self.format = format
        self.name = name
        self.has_ellipsis = False
        self.spec: Optional[Tuple[Any, ...]] = None
        if shape is None or shape is Ellipsis:
            return
        if not isinstance(shape, (list, tuple)):
            raise PyptoTypeError(
                f"pypto.Tensor: shape must be a list such as [pypto.DYNAMIC, 128], got "
                f"{type(shape).__name__} {shape!r}")
        if len(shape) == 0:
            # PyPTO: an empty shape list is a status shape with no fixed axis, i.e. any rank.
            self.spec = ()
            self.has_ellipsis = True
            return
        entries = []
        for i, e in enumerate(shape):
            if e is Ellipsis:
                if i != len(shape) - 1:
                    raise PyptoValueError(
                        f"pypto.Tensor: '...' may only be the last entry of a shape, got "
                        f"{list(map(_fmt_entry, shape))}")
                self.has_ellipsis = True
                continue
            if isinstance(e, bool) or not isinstance(e, (numbers.Integral, StatusType,
                                                         SymbolicScalar)):
                raise PyptoTypeError(
                    f"pypto.Tensor: shape entry {i} is {type(e).__name__} {e!r}; expected an int, "
                    "pypto.DYNAMIC, pypto.DYN, pypto.STATIC, pypto.frontend.dynamic(name) or a "
                    "trailing '...'")
            if isinstance(e, SymbolicScalar) and e.op != "sym":
                raise PyptoValueError(
                    f"pypto.Tensor: shape entry {i} is the expression {e}; a dynamic axis must "
                    "be a plain symbol such as pypto.frontend.dynamic('N')")
            if isinstance(e, numbers.Integral) and e == -1:
                # PyPTO: -1 is the size of an axis known only at run time (pypto.DYNAMIC).
                entries.append(StatusType.DYNAMIC)
                continue
            if isinstance(e, numbers.Integral) and e < 1:
                raise PyptoValueError(
                    f"pypto.Tensor: shape entry {i} is {e}; sizes must be >= 1 (or -1, "
                    "pypto.DYNAMIC, for a dynamic axis)")
            entries.append(int(e) if isinstance(e, numbers.Integral) else e)
        self.spec = tuple(entries)

    @classmethod
    def from_subscript(cls, params: Any) -> "TensorAnnotation":
        """``Tensor[[shape], dtype, format, "name", {"format": ...}]`` in any order."""
        if not isinstance(params, tuple):
            params = (params,)
        if not params:
            raise PyptoValueError(
                "pypto.Tensor[]: give at least a shape, e.g. pypto.Tensor[[16, 32], pypto.DT_FP32]")
        kw: dict = {}

        def put(key, value):
            if key in kw:
                raise PyptoValueError(f"pypto.Tensor[...]: {key} given twice")
            kw[key] = value

        for item in params:
            if isinstance(item, (list, tuple)) or item is Ellipsis:
                put("shape", item)
            elif isinstance(item, DataType):
                put("dtype", item)
            elif isinstance(item, TileOpFormat):
                put("format", item)
            elif isinstance(item, str):
                put("name", item)
            elif isinstance(item, dict):
                for k, v in item.items():
                    if k not in ("shape", "dtype", "format", "name"):
                        raise PyptoValueError(
                            f"pypto.Tensor[...]: unknown key {k!r} in dict; valid keys are "
                            "'shape', 'dtype', 'format', 'name'")
                    put(k, v)
            else:
                raise PyptoTypeError(
                    f"pypto.Tensor[...]: item {item!r} is not a shape list, a DataType, a "
                    "TileOpFormat, a name or a dict")
        return cls(**kw)

    @property
    def id(self) -> int:
        """PyPTO's ``Tensor.id`` of a graph tensor outside a kernel: unique while it lives."""
        return id(self)

    @property
    def dim(self) -> int:
        """Number of axes the annotation fixes (PyPTO's ``Tensor.dim``)."""
        return 0 if self.spec is None else len(self.spec)

    @property
    def shape(self) -> List[Any]:
        """The graph tensor's shape (PyPTO's ``Tensor.shape`` outside a kernel): an int per
        static axis; per DYNAMIC (or -1) axis ``k`` the symbolic scalar PyPTO prints as
        ``RUNTIME_GetInputShapeDim(ARG_<name>,k)``; a ``pypto.frontend.dynamic`` symbol as
        itself and a STATIC marker as the marker (PyPTO's status shape). ``[]`` when the
        annotation gives no shape (``pypto.Tensor([], dtype)``: "shape from the argument")."""
        if self.spec is None:
            return []
        tensor = self.name or f"TENSOR_{id(self):x}"
        return [SymbolicScalar(f"RUNTIME_GetInputShapeDim(ARG_{tensor},{k})")
                if e is StatusType.DYNAMIC else e for k, e in enumerate(self.spec)]

    def to_tensor(self, name: str = "") -> "TensorAnnotation":
        """PyPTO's marker of a tensor annotation; returns the annotation (named ``name``)."""
        if name and not self.name:
            self.name = name
        return self

    @property
    def is_fully_static(self) -> bool:
        """True when the shape is a list of ints only (a full static shape)."""
        return (self.spec is not None and not self.has_ellipsis
                and all(isinstance(e, int) for e in self.spec))

    def __repr__(self) -> str:
        parts = []
        if self.spec is not None:
            entries = [_fmt_entry(e) for e in self.spec] + (["..."] if self.has_ellipsis else [])
            parts.append("[" + ", ".join(entries) + "]")
        if self.dtype is not None:
            parts.append(self.dtype.name)
        if self.format is not None:
            parts.append(f"format={self.format.name}")
        if self.name:
            parts.append(f"name={self.name!r}")
        return f"pypto.Tensor({', '.join(parts)})"


class _TensorType(type):
    """Tensor's metaclass: a graph tensor that a ``pypto.function`` block took as an argument
    (:class:`GraphTensor`) is a ``pypto.Tensor`` too, as PyPTO's graph tensors are."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or (cls is Tensor and type(obj) is GraphTensor)


class Tensor(metaclass=_TensorType):
    """In-kernel tensor handle; calling ``Tensor(...)`` outside a trace gives an annotation.

    Inside a kernel being traced, ``pypto.Tensor([64, 64], pypto.DT_FP32)`` allocates an
    uninitialized local tensor (write it before reading).
    """

    __slots__ = ("_value", "__weakref__")

    # numpy scalars on the left (np.float32(2) * t) defer to our reflected operators.
    __array_ufunc__ = None

    def __new__(cls, shape: Any = None, dtype: Optional[DataType] = None, name: str = "",
                format: Optional[TileOpFormat] = None):
        if _tracer.current() is None:
            return TensorAnnotation(shape, dtype, format, name)
        return _ops.alloc(shape, dtype, format=format)

    def __init__(self, *args: Any, **kwargs: Any):
        pass  # construction happens in __new__ / _wrap

    def __class_getitem__(cls, params: Any) -> TensorAnnotation:
        return TensorAnnotation.from_subscript(params)

    @classmethod
    def _wrap(cls, value: Any) -> "Tensor":
        obj = object.__new__(cls)
        obj._value = value
        return obj

    # -- properties -----------------------------------------------------------------------

    @property
    def shape(self) -> List[Any]:
        """Sizes per axis: ints, or SymbolicScalars for dynamic axes (a list, as in PyPTO)."""
        return [d if isinstance(d, SymbolicScalar) else int(d) for d in self._value.shape]

    @property
    def valid_shape(self) -> Optional[Tuple[Any, ...]]:
        return self._value.valid_shape

    @property
    def dtype(self) -> DataType:
        return self._value.dtype

    @property
    def format(self) -> TileOpFormat:
        return self._value.format

    @property
    def ndim(self) -> int:
        return len(self._value.shape)

    @property
    def dim(self) -> int:
        """Number of axes. A property in PyPTO (``range(x.dim)``); ``x.dim()`` (torch's
        spelling) works too."""
        return _Rank(len(self._value.shape))

    @property
    def id(self) -> int:
        return self._value.id

    @property
    def name(self) -> str:
        # PyPTO's Tensor.name page: an unnamed tensor's name is ""
        return self._value.name or ""

    @name.setter
    def name(self, value: str) -> None:
        if not isinstance(value, str):
            raise PyptoTypeError(f"Tensor.name must be a str, got {value!r}")
        self._value.name = value

    @property
    def value(self):
        """The IR Value this handle refers to."""
        return self._value

    def __repr__(self) -> str:
        return f"pypto.Tensor({self._value.ref()}: {self._value.type_str()})"

    def __bool__(self) -> bool:
        raise PyptoTypeError(
            f"the truth value of a pypto.Tensor is not defined ({user_location()}); use "
            "pypto.where(cond, a, b) for element-wise selection")

    def __iter__(self):
        raise PyptoTypeError(
            f"a pypto.Tensor cannot be iterated ({user_location()}); use pypto.loop with "
            "pypto.view or slicing")

    __hash__ = object.__hash__

    # -- operators ------------------------------------------------------------------------

    def __add__(self, o):
        return _ops._binary_operator("add", self, o)

    def __radd__(self, o):
        return _ops._binary_operator("add", self, o)

    def __sub__(self, o):
        return _ops._binary_operator("sub", self, o)

    def __rsub__(self, o):
        return _ops._reflected_sub(o, self)

    def __mul__(self, o):
        return _ops._binary_operator("mul", self, o)

    def __rmul__(self, o):
        return _ops._binary_operator("mul", self, o)

    def __truediv__(self, o):
        return _ops._binary_operator("div", self, o)

    def __rtruediv__(self, o):
        return _ops._reflected_div(o, self)

    def __floordiv__(self, o):
        return _ops.floor(_ops._binary_operator("div", self, o))

    def __mod__(self, o):
        return _ops._binary_operator("remainder", self, o)

    def __pow__(self, o):
        return _ops.pow(self, o)

    def __matmul__(self, o):
        return _ops._matmul_operator(self, o)

    def __rmatmul__(self, o):
        return _ops._matmul_operator(o, self)

    def __neg__(self):
        return _ops.neg(self)

    def __abs__(self):
        return _ops.abs(self)

    def __pos__(self):
        return self

    def __eq__(self, o):  # type: ignore[override]
        return _ops._compare_operator("eq", self, o)

    def __ne__(self, o):  # type: ignore[override]
        return _ops._compare_operator("ne", self, o)

    def __lt__(self, o):
        return _ops._compare_operator("lt", self, o)

    def __le__(self, o):
        return _ops._compare_operator("le", self, o)

    def __gt__(self, o):
        return _ops._compare_operator("gt", self, o)

    def __ge__(self, o):
        return _ops._compare_operator("ge", self, o)

    def __and__(self, o):
        return _ops.logical_and(self, o)

    def __or__(self, o):
        return _ops.logical_or(self, o)

    def __invert__(self):
        return _ops.logical_not(self)

    def __getitem__(self, key):
        return _ops._getitem(self, key)

    def __setitem__(self, key, value):
        _ops._setitem(self, key, value)

    # -- method forms of common ops ---------------------------------------------------------

    def view(self, shape=None, offsets=None, valid_shape=None, *, dtype=None):
        return _ops.view(self, shape, offsets, valid_shape, dtype=dtype)

    def reshape(self, *shape, valid_shape=None, inplace=False):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return _ops.reshape(self, list(shape), valid_shape=valid_shape, inplace=inplace)

    def transpose(self, dim0, dim1):
        return _ops.transpose(self, dim0, dim1)

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = dims[0]
        return _ops.permute(self, list(dims))

    def unsqueeze(self, dim):
        return _ops.unsqueeze(self, dim)

    def cast(self, dtype, mode=None, satmode=None):
        return _ops.cast(self, dtype, mode=mode, satmode=satmode)

    def sum(self, dim=-1, keepdim=False):
        return _ops.sum(self, dim, keepdim)

    def amax(self, dim=-1, keepdim=False):
        return _ops.amax(self, dim, keepdim)

    def amin(self, dim=-1, keepdim=False):
        return _ops.amin(self, dim, keepdim)

    def exp(self, precision_type=None):
        # precision_type picks an NPU instruction variant; SIM computes in fp32 (ignored).
        return _ops.exp(self)

    def log(self, precision_type=None):
        # precision_type picks an NPU instruction variant; SIM computes in fp32 (ignored).
        return _ops.log(self)

    def sqrt(self, precision_type=None):
        # precision_type picks an NPU instruction variant; SIM computes in fp32 (ignored).
        return _ops.sqrt(self)

    def rsqrt(self, precision_type=None):
        # precision_type picks an NPU instruction variant; SIM computes in fp32 (ignored).
        return _ops.rsqrt(self)

    def abs(self):
        return _ops.abs(self)

    def neg(self):
        return _ops.neg(self)

    def sigmoid(self):
        return _ops.sigmoid(self)

    def relu(self):
        return _ops.relu(self)

    def tanh(self):
        return _ops.tanh(self)

    def reciprocal(self, precision_type=None):
        # precision_type picks an NPU instruction variant; SIM computes in fp32 (ignored).
        return _ops.reciprocal(self)

    def clone(self):
        return _ops.clone(self)

    def where(self, condition, y):
        # PyPTO's Tensor.where page: where(self, condition, y), self where condition holds.
        return _ops.where(condition, self, y)

    # -- PyPTO's other Tensor methods -----------------------------------------------------
    # Each one forwards to the op of the same name; an op pypto-sim lacks says so, with the
    # kernel line that used it.

    def move(self, other: "Tensor") -> None:
        """``out.move(x)``: ``out`` takes the value of ``x`` (the same as ``out[:] = x``)."""
        if not isinstance(other, Tensor):
            raise PyptoTypeError(f"'{type(other).__name__}' type cannot be moved to Tensor "
                                 f"({user_location()})")
        _ops._setitem(self, (slice(None),) * max(1, self.ndim), other)

    @staticmethod
    def concat(tensors, dim: int = 0) -> "Tensor":
        """``pypto.Tensor.concat(tensors, dim)``: PyPTO's spelling of :func:`pypto.concat`."""
        return _ops.concat(tensors, dim)

    def to_tensor(self, name: str = "") -> "Tensor":
        if name:
            self.name = name
        return self

    def add(self, other):
        return _ops.add(self, other)

    def sub(self, other):
        return _ops.sub(self, other)

    def mul(self, other):
        return _ops.mul(self, other)

    def div(self, other, precision_type=None):
        return _ops.div(self, other, precision_type)

    def remainder(self, other, precision_type=None):
        return _ops.remainder(self, other)

    def fmod(self, other, precision_type=None):
        return _op("fmod", self, other)

    def maximum(self, other):
        return _ops.maximum(self, other)

    def minimum(self, other):
        return _ops.minimum(self, other)

    def greater(self, other):
        return _ops.gt(self, other)

    def floor(self):
        return _ops.floor(self)

    def logical_not(self):
        return _ops.logical_not(self)

    def softmax(self, dim=-1):
        return _ops.softmax(self, dim)

    def matmul(self, mat2, out_dtype, *, a_trans=False, b_trans=False, c_matrix_nz=False,
               extend_params=None):
        kw = {"a_trans": a_trans, "b_trans": b_trans}
        if c_matrix_nz:
            kw["c_matrix_nz"] = c_matrix_nz
        if extend_params is not None:
            kw["extend_params"] = extend_params
        return _ops.matmul(self, mat2, out_dtype, **kw)

    def assemble(self, input, offsets) -> None:  # noqa: A002 - PyPTO's name
        """``big.assemble(tile, offsets)``: writes ``tile`` into this tensor at ``offsets``."""
        _ops.assemble(input, offsets, self)

    def expand_clone(self, shape, *, valid_shape=None):
        return _ops.expand_clone(self, shape, valid_shape=valid_shape or None)

    def fill_(self, value) -> "Tensor":
        self.move(_ops.full(self.shape, value, self.dtype))
        return self

    def triu_(self, diagonal=0) -> "Tensor":
        self.move(_op("triu", self, diagonal))
        return self

    def tril_(self, diagonal=0) -> "Tensor":
        self.move(_op("tril", self, diagonal))
        return self

    def set_cache_policy(self, policy, value: bool) -> None:
        """``CachePolicy.NONE_CACHEABLE``, True: this tensor's memory traffic goes to HBM past
        L2, neither filling nor evicting lines (PyPTO's hint for data read once, such as
        weights, or for outputs too large to stay in L2). Applies to every access of the
        tensor in the kernel, wherever the call stands."""
        from ._enums import CachePolicy
        if not isinstance(policy, CachePolicy):
            raise PyptoTypeError(f"Tensor.set_cache_policy at {user_location()}: policy must "
                                 f"be a pypto.CachePolicy, got {policy!r}")
        if not isinstance(value, bool):
            raise PyptoTypeError(f"Tensor.set_cache_policy at {user_location()}: value must "
                                 f"be a bool, got {value!r}")
        if policy is CachePolicy.NONE_CACHEABLE:
            self._value.no_l2_cache = value

    def get_cache_policy(self, policy) -> bool:
        """Whether ``policy`` is set on this tensor (``set_cache_policy``)."""
        from ._enums import CachePolicy
        if not isinstance(policy, CachePolicy):
            raise PyptoTypeError(f"Tensor.get_cache_policy at {user_location()}: policy must "
                                 f"be a pypto.CachePolicy, got {policy!r}")
        return policy is CachePolicy.NONE_CACHEABLE and self._value.no_l2_cache


def _op(name: str, *args: Any, **kwargs: Any) -> Any:
    fn = getattr(_ops, name, None)
    if fn is None:
        raise PyptoNotImplementedError(
            f"Tensor.{name} at {user_location()}: pypto.{name} is not available in pypto-sim "
            "yet")
    return fn(*args, **kwargs)


def _forward(name: str):
    def method(self, *args: Any, **kwargs: Any) -> Any:
        return _op(name, self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``x.{name}(...)`` is ``pypto.{name}(x, ...)``."
    method.__pypto_forwards_to__ = name  # supported exactly when pypto.<name> is (pypto._compat)
    return method


#: PyPTO Tensor methods that are ``pypto.<name>(self, *args)``.
_FORWARDED = ("axpy_", "hypot", "prelu", "sin", "cos", "lrelu", "topk", "quant_mx",
              "sort32", "mrgsort", "sign", "signbit", "exp2", "expm1", "log1p", "log10", "log2",
              "argmax", "argmin", "round", "ceil", "trunc", "gather", "gathermask", "index_add",
              "cumsum", "cumprod", "gcd", "triu", "tril", "pad", "fillpad", "scatter_update",
              "scatter_", "scatter", "var", "prod", "transdata")
for _name in _FORWARDED:
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _forward(_name))


def _index_add_(self, dim, index, source, *, alpha=1):
    _op("index_add_", self, dim, index, source, alpha=alpha)
    return self


Tensor.index_add_ = _index_add_


#: PyPTO's lower-case alias.
tensor = Tensor

# The graph tensors of the pypto.function block being recorded on this thread, by id, mapped
# to the block's parameter handles (set by pypto._eager while the block runs).
_bound = threading.local()


def bind_graph_tensors(binds: Optional[Dict[int, Tensor]]) -> Optional[Dict[int, Tensor]]:
    """Makes ``binds`` (id of a GraphTensor -> its handle in the block being recorded) the
    bindings in force on this thread; returns the previous ones (None: no block open)."""
    prev = getattr(_bound, "binds", None)
    _bound.binds = binds
    return prev


class GraphTensor(TensorAnnotation):
    """A graph tensor (``pypto.tensor(shape, dtype, name)`` built outside a kernel) that a
    ``with pypto.function(name, *tensors):`` block took as an argument, PyPTO's older eager
    form. Inside the block it stands for the block's parameter: ops take it, and its methods
    and operators (``b.move(x)``, ``a + b``, ``b[0:8, :]``) act on the parameter. It is a
    ``pypto.Tensor`` (``isinstance(b, pypto.tensor)``) before, in and after the block."""

    __slots__ = ()
    __array_ufunc__ = None

    def _handle(self, what: str) -> Tensor:
        binds = getattr(_bound, "binds", None)
        h = None if binds is None else binds.get(id(self))
        if h is None:
            raise PyptoTypeError(
                f"graph tensor {self.name or repr(self)} is used ({what}) outside the "
                f"pypto.function block that takes it ({user_location()}); use it inside that "
                "block, or pass torch tensors to pypto.runtime._device_run_once_data_from_host")
        return h

    @property
    def _value(self) -> Any:
        return self._handle("as an op input")._value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._handle(f".{name}"), name)


def _graph_forward(op: str):
    def fwd(self, *args: Any) -> Any:
        return getattr(self._handle(op), op)(*args)
    fwd.__name__ = op
    return fwd


# Equality and hashing stay the object's own (a graph tensor is a dict key); the rest act on
# the block's parameter.
for _op_name in ("__abs__", "__add__", "__and__", "__floordiv__", "__ge__", "__getitem__",
                 "__gt__", "__invert__", "__le__", "__lt__", "__matmul__", "__mod__", "__mul__",
                 "__neg__", "__or__", "__pos__", "__pow__", "__radd__", "__rmatmul__",
                 "__rmul__", "__rsub__", "__rtruediv__", "__setitem__", "__sub__",
                 "__truediv__"):
    setattr(GraphTensor, _op_name, _graph_forward(_op_name))

from . import _ops  # noqa: E402  (cycle: _ops builds Tensor handles)


class HostTensor(TensorAnnotation):
    """What ``pypto.from_torch(t)`` returns outside a kernel: a description of torch tensor
    ``t`` (its shape, with ``dynamic_axis`` marked DYNAMIC, its dtype, a name) that holds
    ``t`` itself as ``data``. A jit kernel called with it computes on ``t`` in place, as it
    would when called with ``t``."""

    __slots__ = ("data",)

    def __init__(self, data: Any, shape: Any, dtype: DataType, format: TileOpFormat, name: str):
        super().__init__(shape, dtype, format, name)
        self.data = data


def from_torch(tensor: Any, name: str = "", dynamic_axis: Any = None,
               tensor_format: Optional[TileOpFormat] = None) -> HostTensor:
    """PyPTO's ``pypto.from_torch``: wraps a torch tensor to pass to a kernel (PyPTO's older
    ``@pypto.jit`` form). No copy is made; the kernel reads and writes ``tensor``."""
    import torch

    from ._dtypes import from_torch_dtype

    if _tracer.current() is not None:
        raise PyptoNotImplementedError(
            f"pypto.from_torch inside a kernel being traced ({user_location()}): pass the "
            "torch tensor as a kernel argument instead")
    if not isinstance(tensor, torch.Tensor):
        raise PyptoTypeError(f"pypto.from_torch: expected a torch.Tensor, got "
                             f"{type(tensor).__name__}")
    if not isinstance(name, str):
        raise PyptoTypeError(f"pypto.from_torch: name must be a str, got {name!r}")
    dtype = from_torch_dtype(tensor.dtype)
    if dtype is None:
        raise PyptoValueError(f"pypto.from_torch: torch dtype {tensor.dtype} is not supported")
    if not tensor.is_contiguous():
        raise PyptoValueError("pypto.from_torch: the tensor is not contiguous; pass "
                              "tensor.contiguous()")
    shape: List[Any] = list(tensor.shape) or [1]
    for axis in ([] if dynamic_axis is None else list(dynamic_axis)):
        if isinstance(axis, bool) or not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
            raise PyptoValueError(f"pypto.from_torch: dynamic_axis {axis!r} is not an axis of a "
                                  f"{len(shape)}-D tensor")
        shape[axis] = StatusType.DYNAMIC
    return HostTensor(tensor, shape, dtype, tensor_format or TileOpFormat.TILEOP_ND, name)
