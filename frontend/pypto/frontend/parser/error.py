# SPDX-License-Identifier: Apache-2.0
"""``pypto.frontend.parser.error``: the errors a kernel's source is refused with (PyPTO's
import path for them; the classes are those of :mod:`pypto.error`)."""

from ...error import ParserError, RenderedParserError

__all__ = ["ParserError", "RenderedParserError"]
