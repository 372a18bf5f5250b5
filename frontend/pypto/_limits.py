# SPDX-License-Identifier: Apache-2.0
"""The compiler's limits that the frontend checks and names in its messages, read from the
native module (the C++ side owns them: ``kMaxRank`` in exec/include/pypto/exec/program.h)."""

from __future__ import annotations

import importlib

try:
    _native = importlib.import_module("pypto._C")
except ImportError as e:
    raise ImportError("pypto needs its native module pypto._C, which holds the compiler's "
                      "limits; build it with tools/setup.sh") from e

#: The most axes a kernel's tensor has (tensors have 1 to MAX_RANK axes).
MAX_RANK: int = int(_native.max_rank)

#: How messages state the rank limit.
RANK_LIMIT_TEXT = f"1 to {MAX_RANK} axes"
