# SPDX-License-Identifier: Apache-2.0
"""pypto.normal: PyPTO's documented example output (Philox4x32-10 + Box-Muller, key 1234,
counter [0, 1]), a reference of the same generator for other shapes and keys, and the
samples' moments."""

import math
import struct

import pytest
import torch

import pypto

SIM = {"run_mode": pypto.RunMode.SIM}

# docs/zh/api/operation/pypto-normal.md of PyPTO: shape [4, 4], key [1234], counter [0, 1].
DOC_EXAMPLE = [[-0.32364845, 1.8577391, 0.39556974, 0.2311697],
               [0.24243996, -1.9485782, -0.12983137, 2.7137496],
               [1.6558666, 2.0938187, -0.90338254, 0.8765667],
               [0.86518306, 0.01034508, 0.2893259, 0.01748212]]


@pytest.fixture(autouse=True)
def _native_and_output(tmp_path, monkeypatch):
    import pypto._C  # noqa: F401
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path / "out"))


def reference(n, key, counter1):
    """The generator in plain Python (doubles for the transform)."""
    m32 = 0xFFFFFFFF

    def philox(c, k):
        for r in range(10):
            p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
            c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & m32, (p0 >> 32) ^ c[3] ^ k[1], p0 & m32]
            if r < 9:
                k = [(k[0] + 0x9E3779B9) & m32, (k[1] + 0xBB67AE85) & m32]
        return c

    def unit(x):
        return struct.unpack("<f", struct.pack("<I", (x & 0x7FFFFF) | 0x3F800000))[0] - 1.0

    out = []
    for j in range(-(-n // 4)):
        x = philox([j, 0, counter1 & m32, counter1 >> 32], [key & m32, key >> 32])
        for a, b in ((x[0], x[1]), (x[2], x[3])):
            u1 = max(unit(a), 1e-7)
            r = math.sqrt(-2.0 * math.log(u1))
            out += [math.sin(2 * math.pi * unit(b)) * r, math.cos(2 * math.pi * unit(b)) * r]
    return torch.tensor(out[:n], dtype=torch.float64)


def run(shape, key, counter, dtype=pypto.DT_FP32, alg=(1,), tile=None):
    tt = {pypto.DT_FP32: torch.float32, pypto.DT_FP16: torch.float16,
          pypto.DT_BF16: torch.bfloat16}[dtype]

    @pypto.frontend.jit(runtime_options=SIM)
    def kern(y: pypto.Tensor(list(shape), dtype)):
        pypto.set_vec_tile_shapes(*(tile or shape))
        y.move(pypto.normal(list(shape), list(key), list(counter), list(alg), dtype))

    y = torch.zeros(shape, dtype=tt)
    kern(y)
    return y


def test_the_doc_example():
    y = run([4, 4], [1234], [0, 1])
    assert torch.allclose(y.double(), torch.tensor(DOC_EXAMPLE, dtype=torch.float64),
                          atol=2e-6, rtol=1e-6)


@pytest.mark.parametrize("shape,key,ctr1", [([3, 52], 7, 0), ([2, 3, 8], 2 ** 40 + 3, 2 ** 33 + 9)])
def test_other_shapes_keys_and_counters_follow_the_generator(shape, key, ctr1):
    y = run(shape, [key], [123, ctr1], alg=(3,))  # counter[0] is ignored, as in PyPTO
    n = math.prod(shape)
    assert torch.allclose(y.double().flatten(), reference(n, key, ctr1), atol=1e-5, rtol=1e-5)


def test_the_samples_are_standard_normal_and_fp16_is_their_cast():
    y = run([64, 64], [99], [0, 5])
    assert abs(y.mean().item()) < 0.05 and abs(y.std().item() - 1.0) < 0.05
    h = run([64, 64], [99], [0, 5], dtype=pypto.DT_FP16)
    assert torch.equal(h, y.half())


def test_bad_arguments_are_refused():
    with pytest.raises(pypto.PyptoValueError, match=r"alg must be \[1\]"):
        run([4, 4], [1], [0, 0], alg=(2,))
    with pytest.raises(pypto.PyptoValueError, match="key must be a list of 1"):
        run([4, 4], [1, 2], [0, 0])
    with pytest.raises(pypto.PyptoValueError, match=r"the vec tile equals the shape.*vec tile "
                       r"\[2, 4\], shape \[4, 4\]"):
        run([4, 4], [1], [0, 0], tile=[2, 4])
    with pytest.raises(pypto.PyptoValueError, match="a multiple of 4"):
        run([4, 6], [1], [0, 0])
