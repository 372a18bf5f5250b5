# SPDX-License-Identifier: Apache-2.0
"""PyPTO compatibility, end to end in SIM (numbers checked): pypto.options scopes around jit
kernels, tile shapes outside a kernel, runtime_options held by reference, Tensor([], dtype)
and PyPTO's Tensor methods. The API-only checks are in test_compat_api.py."""

import pytest
import torch

import pypto

F32 = pypto.DT_FP32
SIM = {"run_mode": pypto.RunMode.SIM}


# The eager form and the option setters change the global scope.
pytestmark = pytest.mark.usefixtures("options_reset")


def add_rows(x: pypto.Tensor([16, 16], F32), out: pypto.Tensor([16, 16], F32)):
    out[:] = x + 1.0


def test_scope_tile_shapes_start_the_trace_and_key_the_cache():
    k = pypto.frontend.jit(runtime_options=SIM)(add_rows)
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    with pypto.options(vec_tile_shapes=[8, 16]):
        k(x, out)
    assert torch.allclose(out, x + 1.0)
    assert k.function.variants[0].body[0].vec_tile == (8, 16)
    with pypto.options(vec_tile_shapes=[4, 16]):
        k(x, out)
    assert k.compile_count == 2 and k.function.variants[0].body[0].vec_tile == (4, 16)


@pytest.mark.parametrize("order", ["options_outside", "options_inside"])
def test_options_decorator_on_a_jit_kernel(order):
    deco = pypto.options(vec_tile_shapes=[2, 16], runtime_options={"device_sched_mode": 1})
    jit = pypto.frontend.jit(runtime_options=SIM)
    k = deco(jit(add_rows)) if order == "options_outside" else jit(deco(add_rows))
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    k(x, out)
    assert torch.allclose(out, x + 1.0)
    assert k.function.variants[0].body[0].vec_tile == (2, 16)
    assert k.options["runtime_options"]["device_sched_mode"] == 1
    assert k.last_report is not None and k.compile_count == 1  # attributes stay reachable


def test_jit_dicts_win_over_scopes_and_scopes_cannot_change_run_mode():
    k = pypto.frontend.jit(runtime_options={"run_mode": 1, "device_sched_mode": 2})(add_rows)
    with pypto.options(runtime_options={"device_sched_mode": 3, "run_mode": 0,
                                        "stitch_function_max_num": 4},
                       vec_tile_shapes=[16, 16]):
        k(torch.zeros(16, 16), torch.zeros(16, 16))
    rt = k.options["runtime_options"]
    assert rt["device_sched_mode"] == 2 and rt["run_mode"] == 1
    assert rt["stitch_function_max_num"] == 4  # a key the kernel does not set comes through


def test_tile_shapes_outside_a_kernel():
    assert pypto.get_vec_tile_shapes() == [] and pypto.get_cube_tile_shapes() == (
        [], [], [], False)
    pypto.set_vec_tile_shapes(1, 2, 8, 8)
    assert pypto.get_vec_tile_shapes() == [1, 2, 8, 8]
    pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128], True)
    assert pypto.get_cube_tile_shapes() == ([16, 16], [256, 512, 512], [128, 128], True)
    pypto.set_matrix_size([64, 128, 256])
    assert pypto.get_matrix_size() == [64, 128, 256]
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([16, 16], F32), out: pypto.Tensor([16, 16], F32)):
        seen["outer"] = pypto.get_cube_tile_shapes()
        pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
        seen["inner"] = pypto.get_cube_tile_shapes()
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = x * 2.0

    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    k(x, out)
    assert torch.allclose(out, x * 2.0)
    assert seen["outer"] == ([16, 16], [256, 512, 512], [128, 128], True)
    assert seen["inner"] == ([32, 32], [32, 64, 64], [32, 32], False)
    assert pypto.get_vec_tile_shapes() == [1, 2, 8, 8]  # the kernel's settings do not leak


def test_runtime_options_held_by_reference_like_hello_world():
    runtime_options = {}   # PyPTO's hello_world fills it after decorating

    @pypto.jit(runtime_options=runtime_options)
    def add_kernel(x: pypto.Tensor[...], y: pypto.Tensor[...], out: pypto.Tensor[...]):
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = x + y

    runtime_options["run_mode"] = pypto.RunMode.NPU
    x, y, out = torch.randn(64, 64), torch.randn(64, 64), torch.empty(64, 64)
    with pytest.raises(pypto.PyptoRuntimeError):
        add_kernel(x, y, out)   # no NPU here: the switch to NPU was seen
    runtime_options["run_mode"] = pypto.RunMode.SIM
    add_kernel(x, y, out)
    assert add_kernel.run_mode is pypto.RunMode.SIM
    torch.testing.assert_close(out, x + y)


def test_changed_runtime_options_are_revalidated_at_the_next_call():
    rt = {"run_mode": pypto.RunMode.SIM}
    k = pypto.frontend.jit(runtime_options=rt)(add_rows)
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    pypto.set_vec_tile_shapes(16, 16)
    k(x, out)
    rt["device_sched_mode"] = 9
    with pytest.raises(pypto.PyptoValueError, match=r"device_sched_mode'\]: 9 is out of range"
                                                    r".*changed after decoration"):
        k(x, out)
    with pytest.raises(pypto.PyptoValueError):   # still wrong: still rejected
        k(x, out)
    rt["device_sched_mode"] = 1
    k(x, out)
    assert k.options["runtime_options"]["device_sched_mode"] == 1


def test_empty_shape_means_shape_from_the_argument():
    a = pypto.Tensor([], pypto.DT_FP16)
    assert a.has_ellipsis and a.spec == () and a.shape == []

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([], F32), out: pypto.Tensor((), F32)):
        pypto.set_vec_tile_shapes(*([8] * x.dim))
        out.move(x * 3.0)

    for shape in [(8,), (4, 8), (2, 4, 8)]:
        x, out = torch.randn(shape), torch.zeros(shape)
        k(x, out)
        assert torch.allclose(out, x * 3.0)
        assert k.function.params[0].shape == shape
    with pytest.raises(pypto.PyptoValueError, match="dtype"):
        k(torch.zeros(8, dtype=torch.float16), torch.zeros(8))


def test_tensor_handle_surface():
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 8], F32), y: pypto.Tensor([4, 8], F32),
          out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        seen["dim"], seen["dim()"], seen["shape"] = x.dim, x.dim(), x.shape
        t = x.add(y).sub(1.0).mul(2.0).div(2.0)
        t = t.maximum(y).minimum(x.add(10.0))
        tmp = pypto.Tensor([4, 8], F32)
        tmp.fill_(0.5)
        tmp.name = "tmp"
        seen["name"] = tmp.name
        out.move(t + tmp)

    x, y, out = torch.randn(4, 8), torch.randn(4, 8), torch.zeros(4, 8)
    k(x, y, out)
    want = torch.minimum(torch.maximum((x + y - 1.0) * 2.0 / 2.0, y), x + 10.0) + 0.5
    assert torch.allclose(out, want)
    assert seen == {"dim": 2, "dim()": 2, "shape": [4, 8], "name": "tmp"}


def test_loop_temporaries_are_not_carried():
    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([16, 8], F32), out: pypto.Tensor([16, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        rows = 0
        for i in pypto.loop(4):
            rows = 4          # assigned before it is read: not loop-carried
            off = i * rows
            out[off:, :] = pypto.view(a, [rows, 8], [off, 0]) + 1.0

    a, out = torch.randn(16, 8), torch.zeros(16, 8)
    k(a, out)
    assert torch.allclose(out, a + 1.0)


@pytest.mark.parametrize("algo", [pypto.TopKAlgo.MERGE_SORT, pypto.TopKAlgo.RADIX_SELECT])
def test_topk_algo_and_scatter_mode_enums(algo):
    I32 = pypto.DT_INT32

    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4, 32], F32), v: pypto.Tensor([4, 3], F32),
          i: pypto.Tensor([4, 3], I32), idx: pypto.Tensor([4, 32], I32),
          s: pypto.Tensor([4, 32], F32)):
        pypto.set_vec_tile_shapes(4, 32)
        v[:], i[:] = pypto.topk(x, 3, -1, True, algo)
        s[:] = pypto.scatter(x, 1, idx, 1.0, reduce=pypto.ScatterMode.ADD)

    x = torch.randn(4, 32)
    idx = torch.randint(0, 32, (4, 32), dtype=torch.int32)
    v, i, s = torch.zeros(4, 3), torch.zeros(4, 3, dtype=torch.int32), torch.zeros(4, 32)
    k(x, v, i, idx, s)
    ref = torch.topk(x, 3, -1, True)
    assert torch.equal(v, ref.values) and torch.equal(i.long(), ref.indices)
    assert torch.equal(s, x.scatter_add(1, idx.long(), torch.ones(4, 32)))


# A model kernel's own op over pypto_impl, decorated with pypto.operation.op_wrapper (PyPTO's
# DeepSeek-V3.2 MLA prolog quantizes with 1 / amax this way).
from pypto import pypto_impl  # noqa: E402
from pypto.operation import op_wrapper  # noqa: E402


@op_wrapper
def scalar_div(tensor, other, is_reserve=False):
    return pypto_impl.ScalarDivS(tensor, pypto_impl.Element(tensor.dtype, other), is_reserve)


@pytest.mark.parametrize("dtype,tdtype,tol", [(F32, torch.float32, 0.0),
                                              (pypto.DT_FP16, torch.float16, 1e-3),
                                              (pypto.DT_BF16, torch.bfloat16, 8e-3)])
def test_op_wrapper_scalar_div_both_ways(dtype, tdtype, tol):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([8, 32], dtype), q: pypto.Tensor([8, 32], dtype),
          r: pypto.Tensor([8, 32], dtype)):
        pypto.set_vec_tile_shapes(8, 32)
        q[:] = scalar_div(x, 4.0)
        r[:] = scalar_div(x, 127.0, True)

    x = (torch.rand(8, 32) + 0.5).to(tdtype)
    q, r = torch.zeros(8, 32, dtype=tdtype), torch.zeros(8, 32, dtype=tdtype)
    k(x, q, r)
    torch.testing.assert_close(q.float(), (x.float() / 4.0).to(tdtype).float(), rtol=tol, atol=0)
    torch.testing.assert_close(r.float(), (127.0 / x.float()).to(tdtype).float(), rtol=tol,
                               atol=0)


def test_op_wrapper_returns_lists_and_scalar_div_checks_its_operands():
    assert op_wrapper(lambda: (1, (2, 3)))() == [1, [2, 3]]
    assert op_wrapper(lambda: None)() is None
    assert scalar_div.__name__ == "scalar_div"

    @pypto.frontend.jit(runtime_options=SIM)
    def bad(x: pypto.Tensor([8, 32], pypto.DT_INT32), out: pypto.Tensor([8, 32], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = scalar_div(x, 2)

    with pytest.raises(TypeError, match="ScalarDivS: operand dtype DT_INT32 is not supported"):
        bad(torch.ones(8, 32, dtype=torch.int32), torch.zeros(8, 32, dtype=torch.int32))
