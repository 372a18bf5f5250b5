# SPDX-License-Identifier: Apache-2.0
"""DT_UINT8 through the compiler and the executor (torch.uint8's numbers), pypto.pack (a
tensor's bytes as DT_UINT8) and pypto.transdata's NCHW -> Fractal_Z, against torch; the
errors of both for PyPTO's refused inputs."""

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}
U8, I8, I16, I32, I64 = (pypto.DT_UINT8, pypto.DT_INT8, pypto.DT_INT16, pypto.DT_INT32,
                         pypto.DT_INT64)
F16, BF16, F32 = pypto.DT_FP16, pypto.DT_BF16, pypto.DT_FP32
TORCH = {U8: torch.uint8, I8: torch.int8, I16: torch.int16, I32: torch.int32,
         I64: torch.int64, F16: torch.float16, BF16: torch.bfloat16, F32: torch.float32,
         pypto.DT_BOOL: torch.bool}
FZ = pypto.TileOpFormat.TILEOP_FRACTAL_Z


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def _data(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    tt = TORCH[dtype]
    if tt.is_floating_point:
        return ((torch.rand(shape, generator=g) - 0.5) * 200).to(tt)
    info = torch.iinfo(tt)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(tt)


# ---- DT_UINT8 ----------------------------------------------------------------------------


def test_uint8_arithmetic_wraps_as_torch():
    a = torch.tensor([[200, 100, 3, 0, 255, 17, 128, 1]], dtype=torch.uint8).repeat(4, 1)
    b = torch.tensor([[100, 200, 5, 1, 255, 3, 2, 0]], dtype=torch.uint8).repeat(4, 1)

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([4, 8], U8), y: pypto.Tensor([4, 8], U8),
             s: pypto.Tensor([4, 8], U8), d: pypto.Tensor([4, 8], U8),
             m: pypto.Tensor([4, 8], U8), n: pypto.Tensor([4, 8], U8),
             r: pypto.Tensor([4, 8], U8), c: pypto.Tensor([4, 8], pypto.DT_BOOL)):
        pypto.set_vec_tile_shapes(4, 8)
        s.move(pypto.add(x, y))
        d.move(pypto.sub(x, y))
        m.move(pypto.mul(x, y))
        n.move(pypto.bitwise_not(x))
        r.move(pypto.bitwise_right_shift(x, 1))
        c.move(pypto.gt(x, y))

    outs = [torch.zeros(4, 8, dtype=torch.uint8) for _ in range(5)]
    cmp = torch.zeros(4, 8, dtype=torch.bool)
    kern(a, b, *outs, cmp)
    for got, want in zip(outs + [cmp], [a + b, a - b, a * b, ~a, a >> 1, a > b]):
        assert torch.equal(got, want), (got, want)


@pytest.mark.parametrize("src", [F32, F16, BF16, I32, I8])
def test_casts_to_and_from_uint8_as_torch(src):
    vals = torch.tensor([-1.0, -3.7, 300.0, 255.9, 0.0, 7.5, 128.0, 254.4])
    x = vals.to(TORCH[src]).reshape(1, 8)

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor([1, 8], src), yo: pypto.Tensor([1, 8], U8),
             back: pypto.Tensor([1, 8], src)):
        pypto.set_vec_tile_shapes(1, 8)
        yo.move(pypto.cast(xi, U8))
        back.move(pypto.cast(pypto.cast(xi, U8), src))

    y = torch.zeros(1, 8, dtype=torch.uint8)
    b = torch.zeros(1, 8, dtype=TORCH[src])
    kern(x, y, b)
    assert torch.equal(y, x.to(torch.uint8)), (y, x.to(torch.uint8))
    assert torch.equal(b, x.to(torch.uint8).to(TORCH[src]))


def test_uint8_saturating_cast_and_sum():
    x = torch.tensor([[-5.0, 300.0, 12.6, 255.0]])

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor([1, 4], F32), yo: pypto.Tensor([1, 4], U8),
             mx: pypto.Tensor([1, 1], U8)):
        pypto.set_vec_tile_shapes(1, 32)  # a reduction's last tile size is 32-byte aligned
        q = pypto.cast(xi, U8, pypto.CastMode.CAST_RINT, pypto.SaturationMode.ON)
        yo.move(q)
        mx.move(pypto.amax(q, -1, keepdim=True))

    y = torch.zeros(1, 4, dtype=torch.uint8)
    m = torch.zeros(1, 1, dtype=torch.uint8)
    kern(x, y, m)
    assert y.tolist() == [[0, 255, 13, 255]]
    assert m.tolist() == [[255]]


@pytest.mark.parametrize("dt", [pypto.DT_UINT16, pypto.DT_UINT32, pypto.DT_UINT64])
def test_wider_unsigned_types_are_refused_by_name(dt):
    @pypto.frontend.jit(runtime_options=SIM)
    def k(x: pypto.Tensor([4], I32), y: pypto.Tensor([4], I32)):
        pypto.set_vec_tile_shapes(4)
        y[:] = pypto.cast(pypto.cast(x, dt), I32)

    with pytest.raises(pypto.PyptoValueError, match=f"dtype {dt} is not supported by the "
                                                    "compiler"):
        k(torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32))


# ---- pack ----------------------------------------------------------------------------------


def run_pack(shape, dtype, tile, seed=0):
    x = _data(shape, dtype, seed)
    n = x.numel() * x.element_size()

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor(list(shape), dtype), yo: pypto.Tensor([n], U8)):
        pypto.set_vec_tile_shapes(*tile)
        yo.move(pypto.pack(xi))

    y = torch.zeros(n, dtype=torch.uint8)
    kern(x, y)
    return y, x.contiguous().view(-1).view(torch.uint8)


def test_pack_pyptos_example():
    # PyPTO's page: [1, 2] DT_INT32 0x03040506, 0x01050608 -> bytes low first.
    x = torch.tensor([[0x03040506, 0x01050608]], dtype=torch.int32)

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor([1, 2], I32), yo: pypto.Tensor([8], U8)):
        pypto.set_vec_tile_shapes(4, 16)
        yo.move(pypto.pack(xi))

    y = torch.zeros(8, dtype=torch.uint8)
    kern(x, y)
    assert y.tolist() == [6, 5, 4, 3, 8, 6, 5, 1]


@pytest.mark.parametrize("shape,dtype,tile", [
    ((4, 16), F32, (4, 16)),
    ((2, 3, 8), F16, (2, 3, 8)),
    ((2, 2, 2, 16), BF16, (1, 2, 2, 16)),
    ((64,), I64, (32,)),
    ((8, 8), I16, (8, 8)),
    ((3, 32), I8, (3, 32)),
    ((5, 32), U8, (5, 32)),
])
def test_pack_bytes_match_torch(shape, dtype, tile):
    y, want = run_pack(shape, dtype, tile)
    assert torch.equal(y, want)


def _pack_error(shape, dtype, tile, fmt=None, exc=pypto.PyptoError):
    kw = {} if fmt is None else {"format": fmt}

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor(list(shape), dtype, **kw), yo: pypto.Tensor([64], U8)):
        if tile is not None:
            pypto.set_vec_tile_shapes(*tile)
        yo.move(pypto.pack(xi))

    x = torch.zeros(shape, dtype=TORCH[dtype])
    with pytest.raises(exc) as e:
        kern(x, torch.zeros(64, dtype=torch.uint8))
    return str(e.value)


def test_pack_refuses_bool_nz_and_a_wrong_tile():
    msg = _pack_error((2, 8), pypto.DT_BOOL, (2, 8), exc=pypto.PyptoTypeError)
    assert "pypto.pack" in msg and "DT_BOOL" in msg and "DT_UINT8" in msg
    msg = _pack_error((16, 16), F16, (16, 16), fmt=pypto.TileOpFormat.TILEOP_NZ,
                      exc=pypto.PyptoValueError)
    assert "TILEOP_NZ" in msg
    msg = _pack_error((2, 8), F32, (16,), exc=pypto.PyptoValueError)
    assert "vec tile shape [16]" in msg and "2 axes" in msg
    msg = _pack_error((2, 8), F32, None, exc=pypto.PyptoValueError)
    assert "set_vec_tile_shapes" in msg


# ---- transdata -----------------------------------------------------------------------------


def fractal_z(w, group):
    """Fractal_Z of NCHW weights by torch's reshapes: group g's block holds
    [C1*H*W, N1, 16, C0] with out[(c1*H + h)*W + w, n1, n0, c0] = w[g*Ng + n1*16 + n0, c1*C0 + c0, h, w]."""
    n, c, h, wd = w.shape
    c0 = 32 // w.element_size()
    ng = n // group
    blocks = []
    for g in range(group):
        wg = w[g * ng:(g + 1) * ng].reshape(ng // 16, 16, c // c0, c0, h, wd)
        blocks.append(wg.permute(2, 4, 5, 0, 1, 3).reshape(c // c0 * h * wd, ng // 16, 16, c0))
    return torch.cat(blocks, 0)


def run_fz(shape, dtype, tile, group=1, seed=0, method=False):
    x = _data(shape, dtype, seed)
    n, c, h, w = shape
    c0 = 32 // x.element_size()
    oshape = [group * (c // c0) * h * w, n // group // 16, 16, c0]

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor(list(shape), dtype), yo: pypto.Tensor(oshape, dtype)):
        pypto.set_vec_tile_shapes(*tile)
        yo.move(xi.transdata(FZ, group) if method else pypto.transdata(xi, FZ, group=group))

    y = torch.zeros(oshape, dtype=TORCH[dtype])
    kern(x, y)
    return y, fractal_z(x, group)


@pytest.mark.parametrize("shape,dtype,tile,group", [
    ((16, 16, 3, 3), F16, (16, 16, 3, 16), 1),
    ((32, 8, 2, 2), F32, (16, 8, 2, 8), 1),
    ((16, 32, 1, 3), I8, (16, 32, 1, 32), 1),
    ((32, 16, 2, 3), BF16, (16, 16, 2, 16), 2),
    ((48, 8, 1, 1), I32, (16, 8, 1, 8), 3),
])
def test_transdata_fractal_z_matches_torch(shape, dtype, tile, group):
    y, want = run_fz(shape, dtype, tile, group)
    assert torch.equal(y, want)


def test_tensor_transdata_method():
    y, want = run_fz((16, 16, 2, 2), F16, (16, 16, 2, 16), method=True)
    assert torch.equal(y, want)


def _fz_error(shape, dtype, tile, fmt=FZ, group=1, exc=pypto.PyptoError):
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor(list(shape), dtype), yo: pypto.Tensor([16, 16], dtype)):
        pypto.set_vec_tile_shapes(*tile)
        yo.move(pypto.transdata(xi, fmt, group))

    with pytest.raises(exc) as e:
        kern(torch.zeros(shape, dtype=TORCH[dtype]), torch.zeros(16, 16, dtype=TORCH[dtype]))
    return str(e.value)


def test_transdata_refuses_padding_bad_tiles_and_bad_arguments():
    msg = _fz_error((16, 12, 1, 1), F16, (16, 16, 1, 16), exc=pypto.PyptoValueError)
    assert "C = 12" in msg and "C0 = 16" in msg
    msg = _fz_error((24, 16, 1, 1), F16, (16, 16, 1, 16), exc=pypto.PyptoValueError)
    assert "N / group = 24" in msg and "N0 = 16" in msg
    msg = _fz_error((32, 16, 1, 1), F16, (16, 16, 1, 16), group=3, exc=pypto.PyptoValueError)
    assert "group 3" in msg and "N = 32" in msg
    msg = _fz_error((16, 16, 1, 3), F16, (16, 16, 1, 3), exc=pypto.PyptoValueError)
    assert "vec tile shape [16, 16, 1, 3]" in msg and "32 bytes" in msg
    msg = _fz_error((16, 16, 1, 1), I64, (16, 16, 1, 16), exc=pypto.PyptoTypeError)
    assert "DT_INT64" in msg
    msg = _fz_error((16, 16, 1, 1), F16, (16, 16, 1, 16), fmt="FRACTAL_Z",
                    exc=pypto.PyptoTypeError)
    assert "TileOpFormat" in msg
    msg = _fz_error((16, 16, 1, 1), F16, (16, 16, 1, 16), fmt=pypto.TileOpFormat.TILEOP_NZ,
                    exc=pypto.PyptoValueError)
    assert "TILEOP_NZ" in msg


def _run_transdata(x, fmt, oshape, tile, group=1):
    dtype = {v: k for k, v in TORCH.items()}[x.dtype]

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor(list(x.shape), dtype), yo: pypto.Tensor(list(oshape), dtype)):
        pypto.set_vec_tile_shapes(*tile)
        yo.move(pypto.transdata(xi, fmt, group=group))

    y = torch.zeros(oshape, dtype=x.dtype)
    kern(x, y)
    return y


NC1 = pypto.TileOpFormat.TILEOP_NC1HWC0


@pytest.mark.parametrize("shape,dtype,tile,group", [
    ((2, 32, 3, 16), F16, (1, 16, 3, 16), 1),
    ((1, 16, 2, 8), I32, (1, 8, 2, 8), 2),
    ((2, 64, 1, 32), I8, (2, 32, 1, 32), 1),
])
def test_transdata_nc1hwc0_and_back_match_torch(shape, dtype, tile, group):
    # NCHW -> [N, C1, H, W, C0]: out[n, c1, h, w, c0] = x[n, c1*C0 + c0, h, w] (PyPTO's page)
    x = _data(shape, dtype, 3)
    n, c, h, w = shape
    c0 = 32 // x.element_size()
    want = x.reshape(n, c // c0, c0, h, w).permute(0, 1, 3, 4, 2).contiguous()
    y = _run_transdata(x, NC1, want.shape, tile, group)
    assert torch.equal(y, want)
    # and TILEOP_ND takes it back to NCHW (the tile keeps C0 whole, W in 32 bytes)
    back = _run_transdata(want, pypto.TileOpFormat.TILEOP_ND, shape,
                          (tile[0], tile[1] // c0, h, max(w, c0), c0))
    assert torch.equal(back, x)


@pytest.mark.parametrize("shape,dtype,tile,group", [
    ((16, 16, 2, 3, 3), F16, (16, 16, 2, 3, 16), 1),
    ((32, 8, 3, 1, 2), F32, (16, 8, 1, 1, 8), 2),
])
def test_transdata_fractal_z_3d_matches_torch(shape, dtype, tile, group):
    # NCDHW weights -> [group*D*C1*H*W, N1, 16, C0] in CANN's (D, C1, H, W, N1, N0, C0) order
    x = _data(shape, dtype, 4)
    n, c, d, h, w = shape
    c0 = 32 // x.element_size()
    ng = n // group
    blocks = []
    for g in range(group):
        xg = x[g * ng:(g + 1) * ng].reshape(ng // 16, 16, c // c0, c0, d, h, w)
        blocks.append(xg.permute(4, 2, 5, 6, 0, 1, 3).reshape(d * (c // c0) * h * w, ng // 16,
                                                              16, c0))
    want = torch.cat(blocks, 0)
    y = _run_transdata(x, pypto.TileOpFormat.TILEOP_FRACTAL_Z_3D, want.shape, tile, group)
    assert torch.equal(y, want)


def test_transdata_six_d_target_and_layout_mismatches_say_why():
    msg = _fz_error((1, 16, 2, 16), F16, (1, 16, 2, 16), fmt=pypto.TileOpFormat.TILEOP_NDC1HWC0,
                    exc=pypto.PyptoNotImplementedError)
    assert "TILEOP_NDC1HWC0" in msg and "6-D" in msg and "1 to 5 axes" in msg
    msg = _fz_error((1, 16, 2, 16), F16, (1, 16, 2, 16), fmt=pypto.TileOpFormat.TILEOP_ND,
                    exc=pypto.PyptoValueError)
    assert "TILEOP_ND converts a 5-D NC1HWC0 tensor" in msg
    msg = _fz_error((1, 16, 2, 16), F16, (1, 16, 2, 16), fmt=NC1, group=2,
                    exc=pypto.PyptoValueError)
    assert "C / group = 8" in msg and "C0 = 16" in msg
    msg = _fz_error((1, 16, 2, 16), F16, (1, 8, 2, 16), fmt=NC1, exc=pypto.PyptoValueError)
    assert "TILEOP_NC1HWC0: the vec tile shape [1, 8, 2, 16]" in msg and "C0 = 16" in msg


@pytest.mark.parametrize("c0_axis,why", [
    (8, r"last axis is C0 = 16"),                                  # no NC1HWC0 tensor
    (16, r"must not split C0 \(its last size must be 16\)"),       # a tile that splits C0
])
def test_transdata_back_to_nd_keeps_c0_whole(c0_axis, why):
    shape = [1, 2, 2, 16, c0_axis]

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(xi: pypto.Tensor(shape, F16), yo: pypto.Tensor([16, 16], F16)):
        pypto.set_vec_tile_shapes(1, 2, 2, 16, 8)
        yo.move(pypto.transdata(xi, pypto.TileOpFormat.TILEOP_ND))

    with pytest.raises(pypto.PyptoValueError, match=why):
        kern(torch.zeros(shape, dtype=torch.float16), torch.zeros(16, 16, dtype=torch.float16))


def test_transdata_formats_are_not_tensor_formats():
    with pytest.raises(pypto.PyptoTypeError, match="TILEOP_ND or TILEOP_NZ"):
        pypto.Tensor([4, 4], F16, format=FZ)


def _fractal_nz(nd):
    """A host's fractal NZ layout of [..., M, N] (models/experimental's trans_nd_to_fractal_nz):
    [..., N1, M1, 16, C0], C0 = 32 bytes of the dtype, M and N padded up."""
    m, n = nd.shape[-2:]
    c0 = 32 // nd.element_size()
    m1, n1 = -(-m // 16), -(-n // c0)
    pad = torch.zeros(*nd.shape[:-2], m1 * 16, n1 * c0, dtype=nd.dtype)
    pad[..., :m, :n] = nd
    lead = nd.dim() - 2
    tiles = pad.reshape(*nd.shape[:-2], m1, 16, n1, c0)
    return tiles.permute(*range(lead), lead + 2, lead, lead + 1, lead + 3).contiguous()


@pytest.mark.parametrize("n", [64, 40])  # 40: N padded up to the next 32-byte block
def test_nz_parameter_takes_a_host_fractal_nz_tensor(n):
    # PyPTO binds the argument's bytes to the annotated NZ tensor, so a host may pass the
    # fractal layout itself (models/experimental/matmul/quant_matmul_reduce_sum.py).
    nz = pypto.TileOpFormat.TILEOP_NZ

    @pypto.frontend.jit(runtime_options=SIM)
    def k(a: pypto.Tensor([2, 32, 64], I8), b: pypto.Tensor([2, 64, n], I8, format=nz),
          out: pypto.Tensor([2, 32, n], I32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
        pypto.set_matrix_size([32, 64, n])
        out[:] = pypto.matmul(a, b, pypto.DT_INT32)

    a, b = _data((2, 32, 64), I8, seed=1), _data((2, 64, n), I8, seed=2)
    out = torch.zeros(2, 32, n, dtype=torch.int32)
    k(a, _fractal_nz(b), out)
    assert torch.equal(out, torch.matmul(a.int(), b.int()))
    k(a, b, out)  # the logical (ND) data still works
    assert torch.equal(out, torch.matmul(a.int(), b.int()))
    with pytest.raises(pypto.PyptoValueError, match="number of dimensions"):
        k(a, _fractal_nz(b)[..., :16].contiguous(), out)
