# SPDX-License-Identifier: Apache-2.0
"""Kernels for the PyPTO operation and Tensor-method pages no earlier ML kernel ran: the
comparisons eq, ne, ge and le, clone, floor, axpy_, index_add_, and the Tensor methods that
forward to an op, each written from its page's signature and example and compared with
torch within PyPTO's tolerances."""

import pytest
import torch

import pypto
from ml_kernels import (F16, F32, I32, SIM, check, rand,
                        native_and_output)  # noqa: F401 (an autouse fixture)

BOOL = pypto.DT_BOOL


# -- eq, ne, ge, le: a tensor, a float and an [m, 1] column as other ---------------------------

CMP = {"eq": torch.eq, "ne": torch.ne, "ge": torch.ge, "le": torch.le}


@pytest.mark.parametrize("name", sorted(CMP))
def test_comparison_pages_example_of_three_elements(name):
    # the pages' example: a, b of shape [3], out a DT_BOOL tensor of the same shape
    op = getattr(pypto, name)

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([3], F32), b: pypto.Tensor([3], F32), out: pypto.Tensor([3], BOOL)):
        pypto.set_vec_tile_shapes(16)
        out[:] = op(a, b)

    a, b, out = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 2.0, 2.0]), torch.zeros(
        3, dtype=torch.bool)
    k(a, b, out)
    assert torch.equal(out, CMP[name](a, b))


@pytest.mark.parametrize("name", sorted(CMP))
@pytest.mark.parametrize("pt", [F32, F16])
def test_comparison_with_a_float_and_a_broadcast_column(name, pt):
    op = getattr(pypto, name)
    tt = torch.float32 if pt == F32 else torch.float16

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], pt), c: pypto.Tensor([8, 1], pt),
          o1: pypto.Tensor([8, 32], BOOL), o2: pypto.Tensor([8, 32], BOOL)):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = op(x, 0.25)
        o2[:] = op(x, c)

    # rounded to quarters so that equality occurs
    x = (rand((8, 32), seed=1) * 4).round().div(4).to(tt)
    c = (rand((8, 1), seed=2) * 4).round().div(4).to(tt)
    o1, o2 = torch.zeros(8, 32, dtype=torch.bool), torch.zeros(8, 32, dtype=torch.bool)
    k(x, c, o1, o2)
    assert torch.equal(o1, CMP[name](x, torch.tensor(0.25, dtype=tt)))
    assert torch.equal(o2, CMP[name](x, c))


# -- clone, floor ------------------------------------------------------------------------------


def test_clone_pages_example_and_its_independence_from_later_writes():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 2], F32), out: pypto.Tensor([2, 2], F32)):
        pypto.set_vec_tile_shapes(2, 2)
        y = pypto.clone(x)
        out[:] = y

    x, out = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.zeros(2, 2)
    k(x, out)
    assert torch.equal(out, x)


@pytest.mark.parametrize("pt,tt", [(F32, torch.float32), (F16, torch.float16),
                                   (pypto.DT_BF16, torch.bfloat16)])
def test_floor_of_floats(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([5], pt), y: pypto.Tensor([5], pt), z: pypto.Tensor([4, 16], pt),
          w: pypto.Tensor([4, 16], pt)):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.floor(x)
        pypto.set_vec_tile_shapes(4, 16)
        w[:] = z.floor()

    x = torch.tensor([1.2, 4.3, 9.8, 16.5, 25.4], dtype=tt)
    z = rand((4, 16), tt, seed=3, scale=5.0)
    y, w = torch.zeros(5, dtype=tt), torch.zeros(4, 16, dtype=tt)
    k(x, y, z, w)
    # torch has no fp16 floor on the CPU; floor is exact in fp32
    assert torch.equal(y, torch.floor(x.float()).to(tt))
    assert torch.equal(w, torch.floor(z.float()).to(tt))


def test_floor_of_int32_is_the_input():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 16], I32), y: pypto.Tensor([4, 16], I32)):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.floor(x)

    x = torch.arange(-32, 32, dtype=torch.int32).reshape(4, 16)
    y = torch.zeros(4, 16, dtype=torch.int32)
    k(x, y)
    assert torch.equal(y, x)


# -- axpy_: the page's five examples -----------------------------------------------------------


def test_axpy_basic_and_function_form():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(y: pypto.Tensor([1, 3], F32), x: pypto.Tensor([1, 3], F32),
          out: pypto.Tensor([1, 3], F32), out2: pypto.Tensor([1, 3], F32)):
        pypto.set_vec_tile_shapes(32, 32)
        y2 = pypto.clone(y)
        y.axpy_(x, alpha=2.0)
        out[:] = y
        out2[:] = pypto.axpy_(y2, x)

    y, x = torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[2.0, 3.0, 4.0]])
    out, out2 = torch.zeros(1, 3), torch.zeros(1, 3)
    k(y.clone(), x, out, out2)
    assert torch.equal(out, torch.tensor([[5.0, 8.0, 11.0]]))
    assert torch.equal(out2, y + x)


def test_axpy_broadcast_column_and_kept_backup():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(y: pypto.Tensor([64, 64], F32), x: pypto.Tensor([64, 1], F32),
          out: pypto.Tensor([64, 64], F32), diff: pypto.Tensor([64, 64], F32)):
        pypto.set_vec_tile_shapes(32, 32)
        y_backup = pypto.clone(y)
        y.axpy_(x, alpha=1.5)
        out[:] = y
        diff[:] = pypto.sub(y, y_backup)

    y, x = rand((64, 64), seed=4), rand((64, 1), seed=5)
    out, diff = torch.zeros(64, 64), torch.zeros(64, 64)
    k(y.clone(), x, out, diff)
    want = y.double() + 1.5 * x.double()
    check(out, want)
    check(diff, want - y.double())


def test_axpy_fp32_y_with_fp16_x_and_one_dimension():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(y: pypto.Tensor([32, 32], F32), x: pypto.Tensor([32, 32], F16),
          y1: pypto.Tensor([128], F32), x1: pypto.Tensor([128], F32),
          out: pypto.Tensor([32, 32], F32), out1: pypto.Tensor([128], F32)):
        pypto.set_vec_tile_shapes(32, 32)
        y.axpy_(x, alpha=1.0)
        out[:] = y
        pypto.set_vec_tile_shapes(64)
        y1.axpy_(x1, alpha=2.0)
        out1[:] = y1

    y, x = rand((32, 32), seed=6), rand((32, 32), torch.float16, seed=7)
    y1, x1 = rand((128,), seed=8), rand((128,), seed=9)
    out, out1 = torch.zeros(32, 32), torch.zeros(128)
    k(y.clone(), x, y1.clone(), x1, out, out1)
    check(out, y.double() + x.double())
    check(out1, y1.double() + 2 * x1.double())


# -- index_add_: the page's example, alpha given and left out, and the method ------------------


def test_index_add_in_place_pages_example():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 3], I32), source: pypto.Tensor([3, 3], I32),
          index: pypto.Tensor([3], I32), o1: pypto.Tensor([2, 3], I32),
          o2: pypto.Tensor([2, 3], I32)):
        pypto.set_vec_tile_shapes(4, 16)
        x2 = pypto.clone(x)
        y = pypto.index_add_(x, 0, index, source, alpha=1)
        o1[:] = y
        y2 = pypto.index_add_(x2, 0, index, source)
        o2[:] = y2

    x, source = torch.zeros(2, 3, dtype=torch.int32), torch.ones(3, 3, dtype=torch.int32)
    index = torch.tensor([0, 1, 0], dtype=torch.int32)
    o1, o2 = torch.zeros(2, 3, dtype=torch.int32), torch.zeros(2, 3, dtype=torch.int32)
    k(x.clone(), source, index, o1, o2)
    want = torch.tensor([[2, 2, 2], [1, 1, 1]], dtype=torch.int32)
    assert torch.equal(o1, want)
    assert torch.equal(o2, want)


def test_tensor_index_add_method_along_dim_1_with_alpha():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8, 16], F32), source: pypto.Tensor([4, 3, 16], F32),
          index: pypto.Tensor([3], I32), out: pypto.Tensor([4, 8, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16, 32)
        out[:] = x.index_add_(1, index, source, alpha=0.5)

    x, source = rand((4, 8, 16), seed=10), rand((4, 3, 16), seed=11)
    index = torch.tensor([5, 0, 5], dtype=torch.int32)
    out = torch.zeros(4, 8, 16)
    k(x.clone(), source, index, out)
    check(out, x.double().index_add(1, index.long(), source.double(), alpha=0.5))


# -- Tensor methods that forward to an op ------------------------------------------------------

UNARY_METHODS = {
    "ceil": (torch.ceil, 3.0), "cos": (torch.cos, 3.0), "sin": (torch.sin, 3.0),
    "exp2": (torch.exp2, 2.0), "expm1": (torch.expm1, 1.0), "trunc": (torch.trunc, 3.0),
    "sigmoid": (torch.sigmoid, 3.0), "floor": (torch.floor, 3.0),
    "log": (torch.log, None), "log10": (torch.log10, None), "log2": (torch.log2, None),
    "sqrt": (torch.sqrt, None), "rsqrt": (torch.rsqrt, None),
    "reciprocal": (torch.reciprocal, None),
}


@pytest.mark.parametrize("name", sorted(UNARY_METHODS))
def test_unary_tensor_methods(name):
    fn, scale = UNARY_METHODS[name]

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = getattr(x, name)()

    # the logs and roots get positive inputs
    x = rand((8, 32), seed=12, scale=scale) if scale else rand((8, 32), seed=12).abs() + 0.1
    out = torch.zeros(8, 32)
    k(x, out)
    check(out, fn(x.double()))


def test_tensor_fmod_remainder_gcd_logical_not_methods():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([8, 16], F32), b: pypto.Tensor([8, 16], F32),
          i: pypto.Tensor([8, 16], I32), j: pypto.Tensor([8, 16], I32),
          o1: pypto.Tensor([8, 16], F32), o2: pypto.Tensor([8, 16], F32),
          o3: pypto.Tensor([8, 16], I32), o4: pypto.Tensor([8, 16], I32),
          o5: pypto.Tensor([8, 16], BOOL)):
        pypto.set_vec_tile_shapes(8, 16)
        o1[:] = a.fmod(b)
        o2[:] = a.remainder(b)
        o3[:] = i.gcd(j)
        o4[:] = i.gcd(6)
        o5[:] = (a > 0.0).logical_not()

    a = rand((8, 16), seed=13, scale=4.0)
    b = rand((8, 16), seed=14).abs() + 0.5
    b = torch.where(rand((8, 16), seed=15) > 0, b, -b)
    i = torch.randint(-60, 60, (8, 16), generator=torch.Generator().manual_seed(1)).int()
    j = torch.randint(1, 40, (8, 16), generator=torch.Generator().manual_seed(2)).int()
    o1, o2 = torch.zeros(8, 16), torch.zeros(8, 16)
    o3, o4 = torch.zeros(8, 16, dtype=torch.int32), torch.zeros(8, 16, dtype=torch.int32)
    o5 = torch.zeros(8, 16, dtype=torch.bool)
    k(a, b, i, j, o1, o2, o3, o4, o5)
    check(o1, torch.fmod(a.double(), b.double()))
    check(o2, torch.remainder(a.double(), b.double()))
    assert torch.equal(o3, torch.gcd(i, j))
    assert torch.equal(o4, torch.gcd(i, torch.tensor(6, dtype=torch.int32)))
    assert torch.equal(o5, ~(a > 0))


def test_tensor_matmul_and_assemble_methods():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([32, 64], F16), b: pypto.Tensor([64, 32], F16),
          out: pypto.Tensor([32, 64], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        c = a.matmul(b, F32)
        pypto.set_vec_tile_shapes(16, 32)
        out.assemble(c, [0, 0])
        out.assemble(c * 2.0, [0, 32])

    a, b = rand((32, 64), torch.float16, seed=16), rand((64, 32), torch.float16, seed=17)
    out = torch.zeros(32, 64)
    k(a, b, out)
    want = a.double() @ b.double()
    check(out, torch.cat([want, want * 2], dim=1))


def test_tensor_expand_clone_gather_methods():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([1, 16], F32), y: pypto.Tensor([8, 16], F32),
          i: pypto.Tensor([8, 4], I32), o1: pypto.Tensor([8, 16], F32),
          o2: pypto.Tensor([8, 4], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        o1[:] = x.expand_clone([8, 16])
        o2[:] = y.gather(1, i)

    x, y = rand((1, 16), seed=18), rand((8, 16), seed=19)
    i = torch.randint(0, 16, (8, 4), generator=torch.Generator().manual_seed(3)).int()
    o1, o2 = torch.zeros(8, 16), torch.zeros(8, 4)
    k(x, y, i, o1, o2)
    assert torch.equal(o1, x.expand(8, 16))
    assert torch.equal(o2, torch.gather(y, 1, i.long()))


@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_tensor_scatter_in_place_method_with_a_float(reduce):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 5], F32), y: pypto.Tensor([2, 2], pypto.DT_INT64),
          o: pypto.Tensor([3, 5], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = x.scatter_(0, y, 2.0, reduce=reduce)

    x = rand((3, 5), seed=20)
    y = torch.tensor([[1, 2], [0, 1]])
    o = torch.zeros(3, 5)
    k(x.clone(), y, o)
    kw = {} if reduce is None else {"reduce": reduce}
    check(o, x.double().scatter_(0, y, 2.0, **kw))


def test_tensor_scatter_update_method():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(cache: pypto.Tensor([1, 8, 1, 16], F32), idx: pypto.Tensor([1, 2], I32),
          src: pypto.Tensor([1, 2, 1, 16], F32), out: pypto.Tensor([1, 8, 1, 16], F32)):
        pypto.set_vec_tile_shapes(1, 8, 1, 16)
        out[:] = cache.scatter_update(-2, idx, src)

    cache, src = rand((1, 8, 1, 16), seed=21), rand((1, 2, 1, 16), seed=22)
    idx = torch.tensor([[6, 1]], dtype=torch.int32)
    out = torch.zeros(1, 8, 1, 16)
    k(cache.clone(), idx, src, out)
    want = cache.clone()
    want[0, 6], want[0, 1] = src[0, 0], src[0, 1]
    assert torch.equal(out, want)


def test_tensor_triu_tril_and_their_in_place_forms():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 16], F32), o1: pypto.Tensor([16, 16], F32),
          o2: pypto.Tensor([16, 16], F32), o3: pypto.Tensor([16, 16], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        o1[:] = x.triu(2)
        a = pypto.clone(x)
        a.tril_(-1)
        o2[:] = a
        b = x * 1.0
        o3[:] = b.triu_()

    x = rand((16, 16), seed=23)
    o1, o2, o3 = (torch.zeros(16, 16) for _ in range(3))
    k(x, o1, o2, o3)
    assert torch.equal(o1, torch.triu(x, 2))
    assert torch.equal(o2, torch.tril(x, -1))
    assert torch.equal(o3, torch.triu(x))


# -- the read-only properties a kernel branches on ---------------------------------------------


def test_tensor_dim_format_id_dtype_shape_inside_a_kernel():
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([2, 3, 4], F32), out: pypto.Tensor([2, 3, 4], F32)):
        pypto.set_vec_tile_shapes(2, 3, 4)
        y = x * 2.0
        seen.update(dim=x.dim, format=x.format, dtype=y.dtype, shape=list(y.shape),
                    ids=(x.id, y.id))
        out[:] = y + float(x.dim)

    x, out = rand((2, 3, 4), seed=24), torch.zeros(2, 3, 4)
    k(x, out)
    check(out, x.double() * 2 + 3)
    assert seen["dim"] == 3 and seen["format"] == pypto.TileOpFormat.TILEOP_ND
    assert seen["dtype"] == F32 and seen["shape"] == [2, 3, 4]
    assert isinstance(seen["ids"][0], int) and seen["ids"][0] != seen["ids"][1]


def test_get_operation_options_inside_a_kernel_sees_what_set_operation_options_set():
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], F32), b: pypto.Tensor([8, 1], F32),
          y: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.experimental.set_operation_options(combine_axis=True)
        seen.update(pypto.get_operation_options())
        seen["experimental"] = pypto.experimental.get_operation_options()["combine_axis"]
        y[:] = x + b

    x, b, y = rand((8, 32), seed=25), rand((8, 1), seed=26), torch.zeros(8, 32)
    try:
        k(x, b, y)
    finally:
        pypto.experimental.set_operation_options(combine_axis=False)
    check(y, x.double() + b.double())
    assert seen["combine_axis"] is True and seen["experimental"] is True


# -- log2 and log10 take the precision_type their pages give them ------------------------------


def test_log2_log10_take_a_precision_type_as_their_pages_write_it():
    HP, IN = pypto.PrecisionType.HIGH_PRECISION, pypto.PrecisionType.INTRINSIC

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3], F16), z: pypto.Tensor([4, 16], F32),
          a: pypto.Tensor([3], F16), b: pypto.Tensor([3], F16), c: pypto.Tensor([4, 16], F32),
          d: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(16)
        a[:] = pypto.log2(x, pypto.PrecisionType.HIGH_PRECISION)
        b[:] = pypto.log10(x, pypto.PrecisionType.INTRINSIC)
        pypto.set_vec_tile_shapes(4, 16)
        c[:] = z.log2(precision_type=IN)
        d[:] = z.log10(HP)

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float16)
    z = rand((4, 16), seed=27).abs() + 0.1
    a, b = torch.zeros(3, dtype=torch.float16), torch.zeros(3, dtype=torch.float16)
    c, d = torch.zeros(4, 16), torch.zeros(4, 16)
    k(x, z, a, b, c, d)
    check(a, torch.log2(x.double()))
    check(b, torch.log10(x.double()))
    check(c, torch.log2(z.double()))
    check(d, torch.log10(z.double()))


def test_log2_with_a_precision_that_is_no_precision_type_says_so():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 16], F32), y: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.log2(x, "high")

    with pytest.raises(TypeError, match=r"^pypto\.log2: precision_type must be a "
                       r"pypto\.PrecisionType.*, got 'high' \(test_sim_ml_round4\.py:\d+\)$"):
        k(torch.ones(4, 16), torch.zeros(4, 16))


def test_axpy_misuse_messages_name_the_spelling_the_kernel_called():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(y: pypto.Tensor([8, 1], F32), x: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        y.axpy_(x, alpha=2.0)

    with pytest.raises(ValueError, match=r"^pypto\.axpy_: x \[8, 16\] broadcasts beyond y "
                       r"\[8, 1\] \(test_sim_ml_round4\.py:\d+\)$"):
        k(torch.zeros(8, 1), torch.zeros(8, 16))

    @pypto.frontend.jit(runtime_options=SIM)
    def k2(y: pypto.Tensor([8, 16], F16), x: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        pypto.axpy(y, x)

    with pytest.raises(TypeError, match=r"^pypto\.axpy: y DT_FP16 and x DT_FP32: the dtypes must "
                       r"be equal, or y DT_FP32 and x DT_FP16 \(test_sim_ml_round4\.py:\d+\)$"):
        k2(torch.zeros(8, 16, dtype=torch.float16), torch.zeros(8, 16))


# -- Tensor indexing: the examples of its page -------------------------------------------------

A16 = torch.arange(1, 17, dtype=torch.float32).reshape(4, 4)


def test_getitem_pages_slices_negative_indices_and_ellipsis():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 4], F32), b: pypto.Tensor([2, 2], F32), c: pypto.Tensor([2], F32),
          d: pypto.Tensor([2], F32), e: pypto.Tensor([4, 2], F32)):
        pypto.set_vec_tile_shapes(4, 4)
        b[:] = a[:2, :2]
        e[:] = a[..., 1:3]
        pypto.set_vec_tile_shapes(4)
        c[:] = a[1, 1:3]
        d[:] = a[-1, -3:-1]

    b, c, d, e = torch.zeros(2, 2), torch.zeros(2), torch.zeros(2), torch.zeros(4, 2)
    k(A16, b, c, d, e)
    assert torch.equal(b, A16[:2, :2]) and torch.equal(e, A16[..., 1:3])
    assert torch.equal(c, A16[1, 1:3]) and torch.equal(d, A16[-1, -3:-1])


def test_getitem_of_one_int32_element_is_a_scalar_for_later_ops():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 4], I32), o: pypto.Tensor([4, 4], I32)):
        pypto.set_vec_tile_shapes(4, 4)
        o[:] = a + a[0, 1]

    a, o = A16.int(), torch.zeros(4, 4, dtype=torch.int32)
    k(a, o)
    assert torch.equal(o, a + 2)


def test_setitem_pages_examples():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(b: pypto.Tensor([2, 2], F32), c: pypto.Tensor([2], F32), a1: pypto.Tensor([4, 4], F32),
          a2: pypto.Tensor([4, 4], F32), a3: pypto.Tensor([4, 4], F32),
          a4: pypto.Tensor([4, 4], F32), a5: pypto.Tensor([4, 4], I32)):
        pypto.set_vec_tile_shapes(4, 4)
        a1[0:, 0:] = b
        a2[0, 1:3] = c
        a3[-1, -3:-1] = c
        a4[..., 2:4] = b  # the page: the same as a[0:2, 2:4] = b
        a5[2, 3] = 5

    b, c = torch.full((2, 2), 10.0), torch.full((2,), 10.0)
    a = [torch.zeros(4, 4) for _ in range(4)] + [torch.zeros(4, 4, dtype=torch.int32)]
    k(b, c, *a)
    w = [torch.zeros(4, 4) for _ in range(4)] + [torch.zeros(4, 4, dtype=torch.int32)]
    w[0][:2, :2] = 10
    w[1][0, 1:3] = 10
    w[2][3, 1:3] = 10
    w[3][0:2, 2:4] = 10
    w[4][2, 3] = 5
    for got, want in zip(a, w):
        assert torch.equal(got, want)


def test_tensor_topk_with_its_default_dim_and_smallest():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 32], F32), v1: pypto.Tensor([4, 8], F32),
          i1: pypto.Tensor([4, 8], I32), v2: pypto.Tensor([4, 8], F32),
          i2: pypto.Tensor([4, 8], I32)):
        pypto.set_vec_tile_shapes(4, 32)
        v1[:], i1[:] = x.topk(8)
        v2[:], i2[:] = x.topk(8, -1, False)

    x = rand((4, 32), seed=28)
    v1, v2 = torch.zeros(4, 8), torch.zeros(4, 8)
    i1, i2 = torch.zeros(4, 8, dtype=torch.int32), torch.zeros(4, 8, dtype=torch.int32)
    k(x, v1, i1, v2, i2)
    tv, ti = x.topk(8)
    sv, si = x.topk(8, largest=False)
    assert torch.equal(v1, tv) and torch.equal(i1.long(), ti)
    assert torch.equal(v2, sv) and torch.equal(i2.long(), si)


# -- copysign of the integer dtypes its page lists ---------------------------------------------


@pytest.mark.parametrize("pt,tt", [(F32, torch.float32), (I32, torch.int32),
                                   (pypto.DT_INT16, torch.int16)])
def test_copysign_pages_example_and_a_broadcast_column(pt, tt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([3, 3], pt), b: pypto.Tensor([3, 3], pt), c: pypto.Tensor([3, 1], pt),
          o: pypto.Tensor([3, 3], pt), o2: pypto.Tensor([3, 3], pt)):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.copysign(a, b)
        o2[:] = pypto.copysign(a, c)

    a = torch.tensor([[1, -2, 3], [4, 5, -6], [-7, 8, 9]]).to(tt)
    b = torch.tensor([[-1, 6, -8], [1, -1, 0], [7, -8, 9]]).to(tt)
    c = torch.tensor([[-1], [0], [2]]).to(tt)
    o, o2 = torch.zeros(3, 3, dtype=tt), torch.zeros(3, 3, dtype=tt)
    k(a, b, c, o, o2)
    assert torch.equal(o, torch.tensor([[-1, 2, -3], [4, -5, 6], [7, -8, 9]]).to(tt))
    assert torch.equal(o2, torch.copysign(a.double(), c.double()).to(tt))


def test_copysign_of_an_int32_input_and_a_float_other_says_what_other_must_be():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 16], I32), b: pypto.Tensor([4, 16], F32),
          o: pypto.Tensor([4, 16], I32)):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.copysign(a, b)

    with pytest.raises(TypeError, match=r"^pypto\.copysign: a DT_INT32 input needs other a "
                       r"DT_INT32 tensor, got DT_FP32 \(test_sim_ml_round4\.py:\d+\)$"):
        k(torch.zeros(4, 16, dtype=torch.int32), torch.zeros(4, 16),
          torch.zeros(4, 16, dtype=torch.int32))


# -- div of an integer input: an int scalar divides in fp32, a float scalar is refused ---------


def test_div_of_int32_by_an_int_gives_fp32_and_by_a_float_is_refused_as_its_page_says():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([4, 16], I32), o: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.div(a, 3)

    a, o = torch.arange(-32, 32, dtype=torch.int32).reshape(4, 16), torch.zeros(4, 16)
    k(a, o)
    check(o, a.double() / 3)

    @pypto.frontend.jit(runtime_options=SIM)
    def k2(a: pypto.Tensor([4, 16], I32), o: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = a / 2.5

    with pytest.raises(TypeError, match=r"^pypto\.div: a DT_INT32 input divides by an int or a "
                       r"DT_INT32 tensor, not the float 2\.5; cast the input to a float dtype "
                       r"first \(test_sim_ml_round4\.py:\d+\)$"):
        k2(a, o)


# -- var over a list or tuple of axes, and over all of them ------------------------------------


def test_var_over_several_axes_and_all_axes_with_keyword_correction():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([3, 4, 16], F32), a: pypto.Tensor([4], F32),
          b: pypto.Tensor([1, 4, 1], F32), c: pypto.Tensor([1, 1, 1], F32),
          d: pypto.Tensor([3, 4, 1], F32)):
        pypto.set_vec_tile_shapes(3, 4, 16)
        a[:] = pypto.var(x, [0, 2], correction=0)
        b[:] = pypto.var(x, (0, -1), keepdim=True)
        c[:] = pypto.var(x, keepdim=True)
        d[:] = x.var(2, correction=1, keepdim=True)

    x = rand((3, 4, 16), seed=29)
    a, b, c, d = torch.zeros(4), torch.zeros(1, 4, 1), torch.zeros(1, 1, 1), torch.zeros(3, 4, 1)
    k(x, a, b, c, d)
    xd = x.double()
    check(a, xd.var((0, 2), correction=0))
    check(b, xd.var((0, -1), keepdim=True))
    check(c, xd.var().reshape(1, 1, 1))
    check(d, xd.var(2, keepdim=True))


def test_tensor_name_and_id_pages_examples_inside_and_outside_a_kernel():
    t, u = pypto.tensor((2, 3), F32), pypto.tensor((4, 4), F32)
    n1 = t.name
    t.name = "my_tensor"
    assert (n1, t.name) == ("", "my_tensor")
    assert isinstance(t.id, int) and t.id != u.id
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 16], F32), o: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        y = x * 2.0
        seen["n1"] = y.name
        y.name = "doubled"
        seen["n2"], seen["x"] = y.name, x.name
        o[:] = y

    x, o = rand((4, 16), seed=30), torch.zeros(4, 16)
    k(x, o)
    assert torch.equal(o, x * 2)
    assert seen == {"n1": "", "n2": "doubled", "x": "x"}


def test_tril_and_triu_in_place_with_a_symbolic_diagonal_read_from_a_tensor():
    # the tril_/triu_ pages: diagonal is an int or a SymbolicScalar
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 16], F32), d: pypto.Tensor([1, 8], I32),
          o1: pypto.Tensor([16, 16], F32), o2: pypto.Tensor([16, 16], F32)):
        pypto.set_vec_tile_shapes(16, 16)
        diag = d[0, 0]
        o1[:] = pypto.tril(x, diag)
        y = x * 1.0
        y.triu_(diag)
        o2[:] = y

    x = rand((16, 16), seed=31)
    for dv in (-2, 3):
        d = torch.full((1, 8), dv, dtype=torch.int32)
        o1, o2 = torch.zeros(16, 16), torch.zeros(16, 16)
        k(x, d, o1, o2)
        assert torch.equal(o1, torch.tril(x, dv))
        assert torch.equal(o2, torch.triu(x, dv))


# -- cast: each rounding mode its page lists, and its saturation examples ----------------------

CM = pypto.CastMode
ROUNDING = {CM.CAST_RINT: torch.round, CM.CAST_FLOOR: torch.floor, CM.CAST_CEIL: torch.ceil,
            CM.CAST_TRUNC: torch.trunc,
            CM.CAST_ROUND: lambda t: torch.sign(t) * torch.floor(t.abs() + 0.5)}  # half away


@pytest.mark.parametrize("mode", list(ROUNDING), ids=lambda m: m.name)
def test_cast_rounding_modes_to_int32_and_within_fp32(mode):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 32], F32), h: pypto.Tensor([4, 32], F16),
          a: pypto.Tensor([4, 32], I32), b: pypto.Tensor([4, 32], F32),
          c: pypto.Tensor([4, 32], I32)):
        pypto.set_vec_tile_shapes(4, 32)
        a[:] = pypto.cast(x, I32, mode)
        b[:] = pypto.cast(x, F32, mode=mode)
        c[:] = pypto.cast(h, I32, mode)

    x = torch.tensor([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -2.7, 2.7] * 4] * 4)
    a, b, c = torch.zeros(4, 32, dtype=torch.int32), torch.zeros(4, 32), torch.zeros(
        4, 32, dtype=torch.int32)
    k(x, x.half(), a, b, c)
    want = ROUNDING[mode](x.double())
    assert torch.equal(a, want.int())
    assert torch.equal(b, want.float())
    assert torch.equal(c, want.int())


def test_cast_saturation_pages_examples():
    SM = pypto.SaturationMode

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 32], F16), z: pypto.Tensor([4, 32], I32),
          on: pypto.Tensor([4, 32], pypto.DT_INT8), off: pypto.Tensor([4, 32], pypto.DT_INT8),
          z16: pypto.Tensor([4, 32], pypto.DT_INT16)):
        pypto.set_vec_tile_shapes(4, 32)
        on[:] = pypto.cast(x, pypto.DT_INT8, satmode=SM.ON)
        off[:] = pypto.cast(x, pypto.DT_INT8, satmode=SM.OFF)
        z16[:] = pypto.cast(z, pypto.DT_INT16, satmode=SM.ON)

    x = torch.tensor([[300.0, -300.0, 50.0, 1.0] * 8] * 4, dtype=torch.float16)
    z = torch.tensor([[70000, -70000, 5, -5] * 8] * 4, dtype=torch.int32)
    on, off = torch.zeros(4, 32, dtype=torch.int8), torch.zeros(4, 32, dtype=torch.int8)
    z16 = torch.zeros(4, 32, dtype=torch.int16)
    k(x, z, on, off, z16)
    assert torch.equal(on, torch.tensor([[127, -128, 50, 1] * 8] * 4, dtype=torch.int8))
    assert torch.equal(off, torch.tensor([[44, -44, 50, 1] * 8] * 4, dtype=torch.int8))
    assert torch.equal(z16, torch.tensor([[32767, -32768, 5, -5] * 8] * 4, dtype=torch.int16))


def test_operation_options_set_in_a_loop_are_local_to_the_loop():
    # set_operation_options page: local to the jit or loop that sets them, inherited otherwise
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], F32), b: pypto.Tensor([8, 1], F32),
          y: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.experimental.set_operation_options(combine_axis=True)
        for _ in pypto.loop(1):
            seen["loop entry"] = pypto.get_operation_options()["combine_axis"]
            pypto.experimental.set_operation_options(combine_axis=False)
            seen["loop set"] = pypto.get_operation_options()["combine_axis"]
        seen["after loop"] = pypto.get_operation_options()["combine_axis"]
        y[:] = x + b

    x, b, y = rand((8, 32), seed=32), rand((8, 1), seed=33), torch.zeros(8, 32)
    k(x, b, y)
    check(y, x.double() + b.double())
    assert seen == {"loop entry": True, "loop set": False, "after loop": True}
    assert pypto.get_operation_options()["combine_axis"] is False
