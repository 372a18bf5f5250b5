# SPDX-License-Identifier: Apache-2.0
"""``pypto.experimental``: PyPTO's experimental ops (``load``, ``gather_in_ub``,
``gather_in_l1``, ``transposed_batchmatmul``, the 950's ``online_softmax`` and
``online_softmax_update``) and the operation options PyPTO's published
kernels set (``set_operation_options(combine_axis=True)``, formerly
``set_operation_config``), scoped and validated like the other option groups.

Example::

    pypto.experimental.set_operation_options(combine_axis=True)
    kv = pypto.experimental.gather_in_ub(kv_cache, topk_ids, block_table, 128, -2)
"""

from ._compat import PyptoUnsupportedError, unsupported_reason
from ._ops.experimental_ops import (gather_in_l1, gather_in_ub, load, online_softmax,
                                   online_softmax_update, transposed_batchmatmul)
from ._options import get_operation_options, set_operation_options

__all__ = ["set_operation_options", "get_operation_options", "set_operation_config",
           "get_operation_config", "load", "gather_in_ub", "gather_in_l1",
           "transposed_batchmatmul", "online_softmax", "online_softmax_update"]

#: The names before PyPTO renamed them (older published kernels call these).
set_operation_config = set_operation_options
get_operation_config = get_operation_options


def __getattr__(name: str):
    reason = unsupported_reason("experimental." + name)
    if not reason:
        raise AttributeError(f"module 'pypto.experimental' has no attribute {name!r}")
    raise PyptoUnsupportedError(f"pypto.experimental.{name} is not supported by pypto-sim: "
                                f"{reason}")
