# SPDX-License-Identifier: Apache-2.0
"""``pypto.error``: PyPTO's exception classes, for code that catches them by name.

The hierarchy is PyPTO's::

    PyptoError(Exception)                 err_code, node
    ├── PyptoGeneralError                 code derived from the wrapped exception's type
    │   ├── FeError                       frontend: jit arguments, annotations, tracing, options
    │   ├── PyptoRtError                  runtime: the launch and the simulation of a kernel
    │   ├── PassError                     pass configuration
    │   └── VerifyError                   pass verification
    └── ParserError(node, msg)
        └── RenderedParserError

Both of PyPTO's ways to build one work: ``FeError(ValueError("bad shape"))`` (the code is
taken from the wrapped type: TypeError F00001, ValueError F00002, RuntimeError F00003,
NameError F00004, NotImplementedError F00005, KeyError F00006, IndexError F00008, other
F0FFFF) and ``FeError("bad shape")`` (F0FFFF). Unlike PyPTO, the message is kept as given
(no ``ErrCode: ...`` prefix, so every error stays one clear line); the code is the
``err_code`` attribute (an int, ``0xF00002``) and ``err_code_str`` (``"F00002"``).

pypto's own errors (``pypto.PyptoValueError`` and the others in ``pypto._errors``) are
subclasses of these *and* of the matching built-in type, so ``except FeError``,
``except pypto.error.PyptoError`` and ``except ValueError`` all catch them.
"""

from __future__ import annotations

from typing import Any, Optional, Union

__all__ = ["PyptoError", "PyptoGeneralError", "ParserError", "RenderedParserError", "FeError",
           "PyptoRtError", "PassError", "VerifyError", "error_code", "shorten_message", "short_repr"]

ERROR_CODE_UNKNOWN = 0xF0FFFF

_CODES = (
    (TypeError, 0xF00001),
    (ValueError, 0xF00002),
    (RuntimeError, 0xF00003),
    (NameError, 0xF00004),
    (NotImplementedError, 0xF00005),  # before RuntimeError's subclasses reach the generic entry
    (KeyError, 0xF00006),
    (IndexError, 0xF00008),
)


#: Longest message kept whole. A longer one (a 100k-entry shape repr'd into it) keeps its
#: head, which says what is wrong, and its tail, which says where, and says how much it left
#: out: a message stays one readable line however large the value it quotes.
MAX_MESSAGE_CHARS = 1000


def shorten_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` if it is at most ``limit`` characters, else its head and tail with the count of
    characters left out in between."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 4
    return f"{text[:head]} ... [{len(text) - head - tail} characters left out] ... {text[-tail:]}"


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters (long lists and
    strings: head, a count of the entries left out, tail)."""
    if isinstance(value, (list, tuple)) and len(value) > 16:
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        items = [repr(v) for v in value[:8]]
        text = f"{open_}{', '.join(items)}, ... ({len(value) - 10} more), " \
               f"{', '.join(repr(v) for v in value[-2:])}{close}"
        return shorten_message(text, max(limit, 240))
    return shorten_message(repr(value), limit)


def error_code(exc_type: type) -> int:
    """PyPTO's code of an exception type (by its most specific built-in base)."""
    for base in exc_type.__mro__:
        for typ, code in _CODES:
            if base is typ:
                return code
    return ERROR_CODE_UNKNOWN


class PyptoError(Exception):
    """Base of every pypto error. ``PyptoError(err_code, msg)`` as in PyPTO; ``msg`` may be an
    exception, whose text becomes the message and which is kept as ``__cause__``."""

    #: Default code of the class (subclasses that mirror a built-in type set theirs).
    default_code = ERROR_CODE_UNKNOWN

    def __init__(self, err_code: Optional[int] = None, msg: Union[str, BaseException] = "",
                 *rest: Any):
        if err_code is not None and not isinstance(err_code, int):
            # Called like a plain exception: PyptoError("message").
            msg, err_code = err_code, None
        if isinstance(msg, BaseException):
            self.__cause__ = msg
            if err_code is None:
                err_code = error_code(type(msg))
            msg = str(msg)
        if isinstance(msg, str):
            msg = shorten_message(msg)
        super().__init__(msg, *rest)
        self.err_code: int = self.default_code if err_code is None else err_code
        self.node: Any = None

    @property
    def err_code_str(self) -> str:
        return f"{self.err_code:X}"


class PyptoGeneralError(PyptoError):
    """``PyptoGeneralError(msg)``: the code follows the type of ``msg`` when it is an
    exception."""

    def __init__(self, msg: Union[str, BaseException] = "", *rest: Any):
        code = error_code(type(msg)) if isinstance(msg, BaseException) else None
        super().__init__(code, msg, *rest)


class ParserError(PyptoError):
    """``ParserError(node, msg)``: an error tied to a source node (``.node``)."""

    def __init__(self, node: Any = None, msg: Union[str, BaseException] = "", *rest: Any):
        code = error_code(type(msg)) if isinstance(msg, BaseException) else None
        super().__init__(code, msg, *rest)
        self.node = node


class RenderedParserError(ParserError):
    """A ParserError whose message already shows the source."""


class FeError(PyptoGeneralError):
    """Frontend errors: jit arguments and options, annotations, tracing."""


class PyptoRtError(PyptoGeneralError):
    """Runtime errors: launching and simulating a kernel."""


class PassError(PyptoGeneralError):
    """Pass management and configuration errors."""


class VerifyError(PyptoGeneralError):
    """Errors of pass verification."""
