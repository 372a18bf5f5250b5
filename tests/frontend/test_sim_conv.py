# SPDX-License-Identifier: Apache-2.0
"""pypto.conv (1-D, 2-D, 3-D; strides, paddings, dilations, groups, bias) on the cube against
torch.nn.functional.conv1d/conv2d/conv3d, and its tile shapes: set_conv_tile_shapes with
pypto_impl.TileL1Info/TileL0Info, get_conv_tile_shapes, and PyPTO's tile rules."""

import pytest
import torch
import torch.nn.functional as F

import pypto
from pypto import pypto_impl

SIM = {"run_mode": pypto.RunMode.SIM}
F16, BF16, F32 = pypto.DT_FP16, pypto.DT_BF16, pypto.DT_FP32
TORCH = {F16: torch.float16, BF16: torch.bfloat16, F32: torch.float32}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def l1_info(tile_cin=16, tile_n=16, tile_wout=16, tile_hout=1, tile_win=32):
    return pypto_impl.TileL1Info(tileHin=1, tileHout=tile_hout, tileWin=tile_win,
                                 tileWout=tile_wout, tileCinFmap=tile_cin,
                                 tileCinWeight=tile_cin, tileN=tile_n, tileBatch=1)


def l0_info(tile_k=16, tile_n=16, tile_w=16):
    return pypto_impl.TileL0Info(tileH=1, tileW=tile_w, tileK=tile_k, tileN=tile_n)


def run_conv(fmap_shape, weight_shape, dtype, strides, pads, dilations, groups=1, bias=True,
             l1=None, l0="default", bias_dtype=None, seed=0):
    """Runs pypto.conv in SIM; returns (result, torch's conv in fp32 of the same inputs)."""
    nd = len(fmap_shape) - 2
    tt = TORCH[dtype]
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(fmap_shape, generator=g) - 0.5).to(tt)
    w = (torch.rand(weight_shape, generator=g) - 0.5).to(tt)
    cout = weight_shape[0]
    bdt = bias_dtype or dtype
    b = (torch.rand(cout, generator=g) - 0.5).to(TORCH[bdt])
    torch_conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    gold = torch_conv(x.float(), w.float(), b.float() if bias else None, stride=strides,
                      padding=[pads[2 * i] for i in range(nd)], dilation=dilations,
                      groups=groups)
    l1 = l1 or l1_info()
    l0 = l0_info() if l0 == "default" else l0

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(fmap: pypto.Tensor(list(fmap_shape), dtype),
             weight: pypto.Tensor(list(weight_shape), dtype),
             bias_t: pypto.Tensor([cout], bdt), out: pypto.Tensor(list(gold.shape), dtype)):
        pypto.set_conv_tile_shapes(l1, l0)
        ep = {"bias_tensor": bias_t} if bias else None
        out.move(pypto.conv(fmap, weight, dtype, strides, pads, dilations, groups=groups,
                            extend_params=ep))

    out = torch.zeros(gold.shape, dtype=tt)
    kern(x, w, b, out)
    return out.float(), gold


TOL = {F16: 2e-3, BF16: 1.6e-2, F32: 1e-5}


def assert_close(out, gold, dtype):
    err = (out - gold).abs().max().item()
    assert err <= TOL[dtype] * max(1.0, gold.abs().max().item()), err


@pytest.fixture
def chip_950(monkeypatch):
    # PyPTO runs its grouped examples on the 950 only: on A2/A3 Cout / groups must be a
    # multiple of C0 (16 fp16 elements), and 16 / 2 is not.
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")


def test_conv2d_pyptos_example_groups_strides_dilations_bias(chip_950):
    # PyPTO's own conv2d test case: fp16, groups 2, stride 2, padding 1, dilation 2.
    out, gold = run_conv((1, 16, 5, 32), (16, 8, 3, 3), F16, [2, 2], [1, 1, 1, 1], [2, 2],
                         groups=2)
    assert out.shape == (1, 16, 2, 15)
    assert_close(out, gold, F16)


def test_conv1d_pyptos_example(chip_950):
    out, gold = run_conv((1, 16, 32), (16, 8, 3), F16, [2], [1, 1], [2], groups=2)
    assert out.shape == (1, 16, 15)
    assert_close(out, gold, F16)


def test_conv3d_ncdhw_against_torch():
    # 5-D NCDHW tensors: strides, paddings and dilations per spatial axis, two batches.
    out, gold = run_conv((2, 16, 4, 5, 16), (32, 16, 3, 3, 3), F16, [1, 2, 1],
                         [1, 1, 0, 0, 1, 1], [1, 1, 2], l1=l1_info(tile_n=32, tile_win=16))
    assert out.shape == (2, 32, 4, 2, 14)
    assert_close(out, gold, F16)
    out, gold = run_conv((1, 8, 3, 4, 8), (16, 8, 2, 2, 2), F32, [1, 1, 1], [0] * 6, [1, 1, 1],
                         bias=False, l1=l1_info(tile_cin=8, tile_win=8))
    assert out.shape == (1, 16, 2, 3, 7)
    assert_close(out, gold, F32)


@pytest.mark.parametrize("dtype", [F32, BF16])
def test_conv2d_batches_without_bias_or_l0_info(dtype):
    # fp32: C0 = 8, so tileCin 8 is 32 bytes; the L0 tile comes from the L1 tile.
    cin = 8 if dtype is F32 else 16
    out, gold = run_conv((2, cin, 6, 20), (32, cin, 3, 3), dtype, [1, 1], [0, 0, 1, 1], [1, 1],
                         bias=False, l1=l1_info(tile_cin=cin, tile_n=32, tile_wout=32, tile_win=20),
                         l0=None)
    assert out.shape == (2, 32, 4, 20)
    assert_close(out, gold, dtype)


def test_conv2d_bf16_with_an_fp32_bias():
    out, gold = run_conv((1, 16, 4, 16), (16, 16, 1, 1), BF16, [1, 1], [0, 0, 0, 0], [1, 1],
                         l1=l1_info(tile_win=16), bias_dtype=F32)
    assert_close(out, gold, BF16)


def test_pyptos_chip_rules_on_a2():
    with pytest.raises(pypto.PyptoValueError, match=r"on A2/A3 \(DAV_2201\): Cout / groups is "
                       r"a multiple of C0.*Cout = 16, groups = 2, C0 = 16"):
        run_conv((1, 16, 5, 32), (16, 8, 3, 3), F16, [2, 2], [1, 1, 1, 1], [2, 2], groups=2)
    with pytest.raises(pypto.PyptoTypeError, match="bias_tensor of DT_BF16 inputs must be "
                       "DT_FP32 on DAV_2201"):
        run_conv((1, 16, 4, 16), (16, 16, 1, 1), BF16, [1, 1], [0, 0, 0, 0], [1, 1],
                 l1=l1_info(tile_win=16))


def test_a_bf16_bias_on_the_950(chip_950):
    out, gold = run_conv((1, 16, 4, 16), (16, 16, 1, 1), BF16, [1, 1], [0, 0, 0, 0], [1, 1],
                         l1=l1_info(tile_win=16))
    assert_close(out, gold, BF16)


def test_get_conv_tile_shapes_returns_what_was_set():
    seen = {}

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([4, 4], F32), y: pypto.Tensor([4, 4], F32)):
        seen["before"] = pypto.get_conv_tile_shapes()[2]
        pypto.set_conv_tile_shapes(l1_info(), l0_info(tile_k=32))
        seen["after"] = pypto.get_conv_tile_shapes()
        pypto.set_vec_tile_shapes(4, 4)
        y[:] = pypto.add(x, x)

    kern(torch.ones(4, 4), torch.zeros(4, 4))
    assert seen["before"] is False
    l1, l0, on = seen["after"]
    assert on and l1 == l1_info() and l0.tileK == 32


def test_a_tile_rule_names_the_rule_the_values_and_the_info():
    with pytest.raises(pypto.PyptoValueError, match=r"tileW % 16 == 0.*tileW = 8, "
                       r"tileWout = 16 \(TileL0Info\)"):
        run_conv((1, 16, 4, 16), (16, 16, 1, 1), F16, [1, 1], [0, 0, 0, 0], [1, 1],
                 l1=l1_info(tile_win=16), l0=l0_info(tile_w=8))
    with pytest.raises(pypto.PyptoValueError, match=r"tileCinFmap x sizeof\(dtype\) % 32 == 0"
                       r".*tileCinFmap = 8 \(16 bytes\)"):
        run_conv((1, 16, 4, 16), (16, 16, 1, 1), F16, [1, 1], [0, 0, 0, 0], [1, 1],
                 l1=l1_info(tile_cin=8, tile_win=16), l0=l0_info(tile_k=16))


def test_a_buffer_rule_names_the_buffer_and_the_chip_size():
    # tileK 1024 fp16 x 64 channels = 128 KiB of L0B.
    l1 = l1_info(tile_cin=128, tile_n=64, tile_win=16)
    with pytest.raises(Exception, match=r"CeilAlign\(tileK, C0\) x CeilAlign\(tileN, 16\).*"
                       r"<= L0B size.*cores.l0b_kib of chip"):
        run_conv((1, 128, 3, 16), (64, 128, 3, 3), F16, [1, 1], [0, 0, 1, 1], [1, 1],
                 l1=l1, l0=l0_info(tile_k=1152, tile_n=64))


def test_quantization_and_a_fused_relu_are_refused_as_in_pypto():
    for ep, what in (({"relu_type": pypto.ReLuType.RELU}, "fused ReLU"),
                     ({"scale": 0.5}, "quantized")):
        @pypto.frontend.jit(runtime_options=SIM)
        def kern(x: pypto.Tensor([1, 16, 4, 16], F16), w: pypto.Tensor([16, 16, 1, 1], F16),
                 y: pypto.Tensor([1, 16, 4, 16], F16)):
            pypto.set_conv_tile_shapes(l1_info(tile_win=16), l0_info())
            y.move(pypto.conv(x, w, F16, [1, 1], [0, 0, 0, 0], [1, 1], extend_params=ep))

        with pytest.raises(pypto.PyptoValueError, match=what):
            kern(torch.zeros(1, 16, 4, 16, dtype=torch.float16),
                 torch.zeros(16, 16, 1, 1, dtype=torch.float16),
                 torch.zeros(1, 16, 4, 16, dtype=torch.float16))


@pytest.mark.parametrize("tiles,transposed,err,what", [
    (False, False, pypto.PyptoValueError, "set_conv_tile_shapes"),
    (True, True, pypto.PyptoRuntimeError, "transposed=True"),
])
def test_conv_needs_tile_shapes_and_refuses_transposed(tiles, transposed, err, what):
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([1, 16, 4, 16], F16), w: pypto.Tensor([16, 16, 1, 1], F16),
             y: pypto.Tensor([1, 16, 4, 16], F16)):
        if tiles:
            pypto.set_conv_tile_shapes(l1_info(tile_win=16))
        y.move(pypto.conv(x, w, F16, [1, 1], [0, 0, 0, 0], [1, 1], transposed=transposed))

    with pytest.raises(err, match=what):
        kern(torch.zeros(1, 16, 4, 16, dtype=torch.float16),
             torch.zeros(16, 16, 1, 1, dtype=torch.float16),
             torch.zeros(1, 16, 4, 16, dtype=torch.float16))


def test_a_dynamic_batch_looped_over_as_pyptos_doc_says():
    # PyPTO's conv page: tileBatch is 1, a dynamic batch is covered by a front-end loop.
    l1 = pypto_impl.TileL1Info(tileHin=1, tileHout=1, tileWin=16, tileWout=16, tileCinFmap=16,
                               tileCinWeight=16, tileN=32, tileBatch=1)

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([pypto.DYNAMIC, 16, 6, 16], F16),
             w: pypto.Tensor([32, 16, 3, 3], F16),
             y: pypto.Tensor([pypto.DYNAMIC, 32, 4, 14], F16)):
        pypto.set_conv_tile_shapes(l1, l0_info())
        for b in pypto.loop(x.shape[0]):
            xb = pypto.view(x, [1, 16, 6, 16], [b, 0, 0, 0])
            pypto.assemble(pypto.conv(xb, w, F16, [1, 1], [0, 0, 0, 0], [1, 1]), [b, 0, 0, 0], y)

    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 16, 6, 16, generator=g).half()
    w = (torch.randn(32, 16, 3, 3, generator=g) * 0.1).half()
    y = torch.zeros(3, 32, 4, 14, dtype=torch.float16)
    kern(x, w, y)
    assert_close(y.float(), F.conv2d(x.float(), w.float()), F16)


def test_uneven_paddings_pad_each_side_as_given():
    # paddings are (before, after) per spatial axis: top 0, bottom 1, left 1, right 0.
    l1 = pypto_impl.TileL1Info(tileHin=1, tileHout=1, tileWin=12, tileWout=16, tileCinFmap=8,
                               tileCinWeight=8, tileN=16, tileBatch=1)

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(x: pypto.Tensor([1, 8, 5, 12], F32), w: pypto.Tensor([16, 8, 2, 3], F32),
             y: pypto.Tensor([1, 16, 5, 11], F32)):
        pypto.set_conv_tile_shapes(l1, l0_info(tile_k=8))
        y.move(pypto.conv(x, w, F32, [1, 1], [0, 1, 1, 0], [1, 1]))

    g = torch.Generator().manual_seed(5)
    x, w = torch.randn(1, 8, 5, 12, generator=g), torch.randn(16, 8, 2, 3, generator=g)
    y = torch.zeros(1, 16, 5, 11)
    kern(x, w, y)
    assert_close(y, F.conv2d(F.pad(x, (1, 0, 0, 1)), w), F32)


def test_input_channels_split_over_l1_tiles():
    # tileCinFmap 16 of 64 channels, 3x3 kernel: kAL1 = 144, the K loop takes 4 L1 tiles.
    out, gold = run_conv((1, 64, 4, 16), (32, 64, 3, 3), F16, [1, 1], [1, 1, 1, 1], [1, 1],
                         l1=l1_info(tile_cin=16, tile_n=32, tile_win=16),
                         l0=l0_info(tile_k=48, tile_n=32))
    assert_close(out, gold, F16)
