# SPDX-License-Identifier: Apache-2.0
"""pypto.loop rebinds the kernel function's loop-carried variables through one function,
``pypto._ops.frame_locals.write_locals``, whose way of writing a frame's locals depends on the
CPython version. ``METHODS`` documents the way per version; the running interpreter is checked
in process, every other listed version by running frame_locals_probe.py under it when it is
installed (``pythonX.Y`` on PATH), else that version's test is skipped. Each check fails when
the locals are not written.

(On 3.13 and later, the 3.11/3.12 way also works, as ``f_locals.update`` writes through the
proxy; write_locals avoids the C API there, which PEP 667 makes a no-op.)"""

import os
import shutil
import subprocess
import sys

import pytest

import frame_locals_probe as probe
from pypto._ops import frame_locals

#: CPython version -> frame_locals.METHOD there.
METHODS = {
    # frame.f_locals is a snapshot dict: update it, then ctypes PyFrame_LocalsToFast(frame, 0)
    # copies it into the frame's locals and cells.
    (3, 11): "LocalsToFast",
    (3, 12): "LocalsToFast",
    # PEP 667: frame.f_locals is a write-through proxy (PyFrame_LocalsToFast does nothing).
    (3, 13): "proxy",
    (3, 14): "proxy",
}
HERE = sys.version_info[:2]


def test_write_locals_on_the_running_interpreter():
    assert HERE in METHODS, (f"CPython {HERE[0]}.{HERE[1]} has no row in METHODS: check how it "
                             "writes frame locals, then add it")
    assert frame_locals.METHOD == METHODS[HERE]
    probe.check(frame_locals.write_locals)


@pytest.mark.parametrize("version", sorted(v for v in METHODS if v != HERE),
                         ids=lambda v: f"{v[0]}.{v[1]}")
def test_write_locals_on_other_cpython_versions(version):
    name = f"python{version[0]}.{version[1]}"
    exe = shutil.which(name)
    # A pyenv shim of a version that is not selected is on PATH but does not run.
    if exe is None or subprocess.run([exe, "-c", f"import sys; assert sys.version_info[:2] == "
                                      f"{version}"], capture_output=True).returncode != 0:
        pytest.skip(f"{name} is not installed")
    run = subprocess.run([exe, os.path.abspath(probe.__file__), frame_locals.__file__],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [METHODS[version]]
