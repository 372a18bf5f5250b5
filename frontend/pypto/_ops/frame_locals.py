# SPDX-License-Identifier: Apache-2.0
"""Writing the local variables of a running function from outside it: how a pypto.loop
rebinds the kernel function's loop-carried variables (an int as an expression of the loop
index, a tensor as its loop buffer) while that function is suspended in its ``for``
statement over the loop.

CPython has no public API for this, and the way differs by version (``METHOD``):

* 3.13 and later, ``"proxy"``: ``frame.f_locals`` of a function frame is a write-through
  proxy (PEP 667); assigning to it sets the local (or the cell of a captured variable).
* 3.11 and 3.12, ``"LocalsToFast"``: ``frame.f_locals`` is a snapshot dict; after updating
  it, ``PyFrame_LocalsToFast(frame, 0)`` (called through ctypes) copies it back into the
  frame's locals and cells. (From 3.13 that call does nothing.)

Nothing else in pypto writes a frame. tests/frontend/test_frame_locals.py checks
``write_locals`` on the running interpreter and on any other CPython version installed.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping

#: How ``write_locals`` writes on this interpreter: "proxy" (PEP 667) or "LocalsToFast".
METHOD = "proxy" if sys.version_info >= (3, 13) else "LocalsToFast"


def write_locals(frame, values: Mapping[str, Any]) -> None:
    """Rebinds the local variables ``values`` (name -> value) of the function running in
    ``frame``; the function reads the new values when it resumes."""
    if not values:
        return
    if METHOD == "proxy":
        proxy = frame.f_locals
        for k, v in values.items():
            proxy[k] = v
        return
    import ctypes  # noqa: PLC0415 - only loops with carried variables need it

    frame.f_locals.update(values)
    to_fast = ctypes.pythonapi.PyFrame_LocalsToFast
    to_fast.argtypes = [ctypes.py_object, ctypes.c_int]
    to_fast.restype = None
    to_fast(frame, 0)
