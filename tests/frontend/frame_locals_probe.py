# SPDX-License-Identifier: Apache-2.0
"""Checks ``write_locals`` of frontend/pypto/_ops/frame_locals.py on the interpreter running
this file, the ways pypto.loop uses it. Imported by test_frame_locals.py for the running
interpreter; run as a script for another CPython version (it loads frame_locals.py by path,
without pypto or its native module, and prints the module's METHOD):

    python3.13 tests/frontend/frame_locals_probe.py frontend/pypto/_ops/frame_locals.py
"""

import importlib.util
import sys


def load(path: str):
    """frame_locals.py as a standalone module."""
    spec = importlib.util.spec_from_file_location("frame_locals_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(write_locals) -> None:
    """Raises AssertionError, naming the case, when ``write_locals`` does not rebind a local."""

    def own_frame():
        x = 1
        write_locals(sys._getframe(), {"x": 2})
        return x

    assert own_frame() == 2, "a local of the running function was not rebound"

    def body(frame):  # as pypto.loop's generator: writes while the caller is suspended
        for k in range(3):
            write_locals(frame, {"n": 10 * k, "t": f"buffer{k}"})
            yield k

    def kernel():
        n, t = -1, None
        seen = []
        for _ in body(sys._getframe()):
            seen.append((n, t))
            n, t = n + 1, "rebound by the body"  # the next write replaces these
        return seen, n

    assert kernel() == ([(0, "buffer0"), (10, "buffer1"), (20, "buffer2")], 21), \
        "locals of a function suspended in its for statement were not rebound"

    def captured():
        c = 1

        def inner():
            return c

        write_locals(sys._getframe(), {"c": 5})
        return c, inner()

    assert captured() == (5, 5), "a local captured by a closure (a cell) was not rebound"

    def untouched():
        y = 3
        write_locals(sys._getframe(), {})
        return y

    assert untouched() == 3, "an empty write changed a local"


if __name__ == "__main__":
    module = load(sys.argv[1])
    check(module.write_locals)
    print(module.METHOD)
