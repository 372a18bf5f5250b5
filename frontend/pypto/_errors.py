# SPDX-License-Identifier: Apache-2.0
"""Exception types of the pypto frontend.

Every error the frontend raises is one of PyPTO's classes (:mod:`pypto.error`) *and* the
matching built-in type, so ``except pypto.error.FeError`` / ``except pypto.PyptoError``
(PyPTO's style) and ``except ValueError`` all work. Frontend errors derive from ``FeError``;
errors of a kernel's launch and simulation (``PyptoRuntimeError`` raised by the backend)
derive from ``PyptoRtError`` as well. PyPTO tags each error with a code (TypeError ->
F00001, ValueError -> F00002, ...); we keep it as the ``err_code`` attribute instead of
prefixing every message with it, so messages stay one clear line.
"""

from __future__ import annotations

import os
import sys

from .error import FeError, PyptoError, PyptoRtError

__all__ = [
    "PyptoError",
    "PyptoTypeError",
    "PyptoValueError",
    "PyptoRuntimeError",
    "PyptoNotImplementedError",
    "PyptoKeyError",
    "PyptoIndexError",
    "user_location",
]


class PyptoTypeError(FeError, TypeError):
    """A value of the wrong type (an option, an argument, an operand)."""

    default_code = 0xF00001


class PyptoValueError(FeError, ValueError):
    """A value of the right type but not allowed (range, shape, dtype mismatch, ...)."""

    default_code = 0xF00002


class PyptoRuntimeError(FeError, PyptoRtError, RuntimeError):
    """An environment problem (no NPU, missing native module) or a misuse found while running."""

    default_code = 0xF00003


class PyptoNotImplementedError(FeError, NotImplementedError):
    """A feature this frontend or its backend does not provide (yet)."""

    default_code = 0xF00005


class PyptoKeyError(FeError, KeyError):
    """A missing key (an option looked up by name)."""

    default_code = 0xF00006

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class PyptoIndexError(FeError, IndexError):
    """An index out of range (a tensor subscript with too many indices)."""

    default_code = 0xF00008


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
