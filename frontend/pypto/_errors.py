# SPDX-License-Identifier: Apache-2.0
"""Exception types of the pypto frontend.

Every error the frontend raises derives from :class:`PyptoError` *and* from the matching built-in
type, so both ``except pypto.PyptoError`` (PyPTO's style) and ``except ValueError`` work. PyPTO
tags each error with a code (TypeError -> F00001, ValueError -> F00002, ...); we keep the code as
the ``err_code`` attribute instead of prefixing every message with it, so messages stay one
clear line.
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "PyptoError",
    "PyptoTypeError",
    "PyptoValueError",
    "PyptoRuntimeError",
    "PyptoNotImplementedError",
    "user_location",
]


class PyptoError(Exception):
    """Base class of every error raised by the pypto frontend."""

    err_code = "F0FFFF"


class PyptoTypeError(PyptoError, TypeError):
    """A value of the wrong type (an option, an argument, an operand)."""

    err_code = "F00001"


class PyptoValueError(PyptoError, ValueError):
    """A value of the right type but not allowed (range, shape, dtype mismatch, ...)."""

    err_code = "F00002"


class PyptoRuntimeError(PyptoError, RuntimeError):
    """An environment problem (no NPU, missing native module) or a misuse found while running."""

    err_code = "F00003"


class PyptoNotImplementedError(PyptoError, NotImplementedError):
    """A feature this frontend or its backend does not provide (yet)."""

    err_code = "F00005"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_location(skip: int = 1) -> str:
    """Returns ``"file.py:LINE"`` of the innermost frame outside the pypto package.

    Used to point trace-time errors and IR nodes at the kernel line that produced them. Returns
    ``"<unknown>"`` when every frame belongs to pypto (e.g. called from pypto's own tests).
    """
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep):
            return f"{os.path.basename(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"
