# SPDX-License-Identifier: Apache-2.0
"""pypto.conv_backward_input (the input gradient of a 2-D convolution on the cube) against
torch.nn.grad.conv2d_input, its tile shapes set_convbp_input_tile_shapes with
pypto_impl.ConvBpTileL1Info/ConvBpTileL0Info and PyPTO's rules."""

import pytest
import torch

import pypto
from pypto import pypto_impl

SIM = {"run_mode": pypto.RunMode.SIM}
F16, BF16 = pypto.DT_FP16, pypto.DT_BF16
TORCH = {F16: torch.float16, BF16: torch.bfloat16}


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def tiles(ml1=16, nl1=16, kl1=144, ml0=16, nl0=16, kl0=16):
    return (pypto_impl.ConvBpTileL1Info(tileML1=ml1, tileNL1=nl1, tileKL1=kl1),
            pypto_impl.ConvBpTileL0Info(tileML0=ml0, tileNL0=nl0, tileKL0=kl0))


def run_bp(grad_shape, weight_shape, input_size, dtype, strides, pads, dilations,
           tile=None, seed=0):
    """Runs pypto.conv_backward_input in SIM; returns (result, torch's gradient in fp32 of
    the same inputs)."""
    tt = TORCH[dtype]
    g = torch.Generator().manual_seed(seed)
    grad = (torch.rand(grad_shape, generator=g) - 0.5).to(tt)
    w = (torch.rand(weight_shape, generator=g) - 0.5).to(tt)
    l1, l0 = tile or tiles()

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(grad_t: pypto.Tensor(list(grad_shape), dtype),
             weight: pypto.Tensor(list(weight_shape), dtype),
             out: pypto.Tensor(list(input_size), dtype)):
        pypto.set_convbp_input_tile_shapes(l1, l0)
        out.move(pypto.conv_backward_input(grad_t, input_size, weight, dtype, strides, pads,
                                           dilations))

    out = torch.zeros(input_size, dtype=tt)
    kern(grad, w, out)
    # After the kernel: torch refuses some of the sizes whose errors the tests check.
    gold = torch.nn.grad.conv2d_input(list(input_size), w.float(), grad.float(),
                                      stride=strides, padding=[pads[0], pads[2]],
                                      dilation=dilations)
    return out.float(), gold


TOL = {F16: 2e-3, BF16: 1.6e-2}


def assert_close(out, gold, dtype):
    err = (out - gold).abs().max().item()
    assert err <= TOL[dtype] * max(1.0, gold.abs().max().item()), err


def test_pyptos_example():
    # PyPTO's page: grad (1, 16, 5, 32), a 3x3 kernel, padding 1, stride 1.
    out, gold = run_bp((1, 16, 5, 32), (16, 16, 3, 3), (1, 16, 5, 32), F16, [1, 1],
                       [1, 1, 1, 1], [1, 1])
    assert_close(out, gold, F16)


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_strides_dilations_and_a_wider_input(dtype):
    # Stride 2 on both axes, dilation 2 on W; Hin one past HinMin (PyPTO's range allows
    # up to HinMin + stride - 1); two batches, Cin 32 as two L1 tiles of 16, M tiles of two
    # input rows.
    hout, wout = 4, 6
    hin_min = (hout - 1) * 2 - 2 + 2 + 1
    win = (wout - 1) * 2 - 0 + 4 + 1
    out, gold = run_bp((2, 16, hout, wout), (16, 32, 3, 3), (2, 32, hin_min + 1, win), dtype,
                       [2, 2], [1, 1, 0, 0], [1, 2], tile=tiles(ml1=30, ml0=32))
    assert out.shape == (2, 32, hin_min + 1, win)
    assert_close(out, gold, dtype)


def test_a_two_by_three_kernel_and_several_cout_tiles():
    # Cout 48 over three L1 K tiles of 16 x Kh x Kw = 96; L0's K depth 48.
    out, gold = run_bp((1, 48, 3, 20), (48, 16, 2, 3), (1, 16, 4, 20), F16, [1, 1],
                       [0, 0, 1, 1], [1, 1], tile=tiles(ml1=20, kl1=96, ml0=32, kl0=48))
    assert_close(out, gold, F16)


def test_refused_on_the_950(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_CHIP", "950pr")
    with pytest.raises(pypto.PyptoValueError, match="A2/A3 only, not on the Ascend 950"):
        run_bp((1, 16, 5, 32), (16, 16, 3, 3), (1, 16, 5, 32), F16, [1, 1], [1, 1, 1, 1],
               [1, 1])


@pytest.mark.parametrize("tile,match", [
    (tiles(ml1=20), r"tileML1 <= Wi or tileML1 % Wi == 0: tileML1 = 20, Wi = 16 "
                    r"\(ConvBpTileL1Info\)"),
    (tiles(kl1=96), r"tileKL1 % \(16 x Kh x Kw\) == 0.*tileKL1 = 96, Kh x Kw = 9"),
    (tiles(nl0=32), r"tileNL0 % 16 == 0 and tileNL0 <= tileNL1: tileNL0 = 32, tileNL1 = 16 "
                    r"\(ConvBpTileL0Info\)"),
])
def test_a_tile_rule_names_the_rule_the_values_and_the_info(tile, match):
    with pytest.raises(pypto.PyptoValueError, match=match):
        run_bp((1, 16, 4, 16), (16, 16, 3, 3), (1, 16, 4, 16), F16, [1, 1], [1, 1, 1, 1],
               [1, 1], tile=tile)


def test_a_buffer_rule_names_the_buffer_and_the_chip_size():
    # tileML0 256 x tileKL0 144 fp16 = 72 KiB of L0A (64 KiB on A2).
    with pytest.raises(Exception, match=r"tileML0 x tileKL0 x sizeof\(fp16\) <= L0A size: "
                       r"256 x 144 x 2 = .*cores.l0a_kib of chip"):
        run_bp((1, 16, 8, 32), (16, 16, 3, 3), (1, 16, 8, 32), F16, [1, 1], [1, 1, 1, 1],
               [1, 1], tile=tiles(ml1=256, kl1=144, ml0=256, kl0=144))


@pytest.mark.parametrize("args,err,match", [
    (dict(pads=[1, 0, 1, 1]), pypto.PyptoValueError, "pad both sides alike"),
    (dict(input_size=(1, 16, 7, 32)), pypto.PyptoValueError, r"Hin = 7 must be in \[5, 5\]"),
    (dict(strides=[3, 1]), pypto.PyptoValueError, r"strideH = 3 and paddingH = 1 must be below"),
])
def test_pyptos_parameter_rules(args, err, match):
    kw = dict(grad_shape=(1, 16, 5, 32), weight_shape=(16, 16, 3, 3),
              input_size=(1, 16, 5, 32), dtype=F16, strides=[1, 1], pads=[1, 1, 1, 1],
              dilations=[1, 1])
    kw.update(args)
    with pytest.raises(err, match=match):
        run_bp(**kw)


def test_needs_tile_shapes_and_groups_one():
    @pypto.frontend.jit(runtime_options=SIM)
    def kern(g: pypto.Tensor([1, 16, 4, 16], F16), w: pypto.Tensor([16, 16, 3, 3], F16),
             y: pypto.Tensor([1, 16, 4, 16], F16)):
        y.move(pypto.conv_backward_input(g, [1, 16, 4, 16], w, F16, [1, 1], [1, 1, 1, 1],
                                         [1, 1]))

    args = (torch.zeros(1, 16, 4, 16, dtype=torch.float16),
            torch.zeros(16, 16, 3, 3, dtype=torch.float16),
            torch.zeros(1, 16, 4, 16, dtype=torch.float16))
    with pytest.raises(pypto.PyptoValueError, match="set_convbp_input_tile_shapes"):
        kern(*args)

    @pypto.frontend.jit(runtime_options=SIM)
    def kern2(g: pypto.Tensor([1, 16, 4, 16], F16), w: pypto.Tensor([16, 16, 3, 3], F16),
              y: pypto.Tensor([1, 16, 4, 16], F16)):
        pypto.set_convbp_input_tile_shapes(*tiles())
        y.move(pypto.conv_backward_input(g, [1, 16, 4, 16], w, F16, [1, 1], [1, 1, 1, 1],
                                         [1, 1], groups=2))

    with pytest.raises(pypto.PyptoValueError, match="groups must be 1"):
        kern2(*args)
