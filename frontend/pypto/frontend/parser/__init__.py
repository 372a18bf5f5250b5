# SPDX-License-Identifier: Apache-2.0
"""``pypto.frontend.parser``: where PyPTO's kernel parser keeps its error classes; pypto-sim
traces kernels instead of parsing them, and raises the same classes for the same mistakes."""

from . import error

__all__ = ["error"]
