# SPDX-License-Identifier: Apache-2.0
# A Python policy that overrides one hook per task and only delegates to the default: fifo.
import pypto.sim as ps


class Delegating(ps.Policy):
    """fifo, with pick_shared in Python calling super()"""

    def pick_shared(self, c, ct, q, first_batch, before_resolve):
        return super().pick_shared(c, ct, q, first_batch, before_resolve)


ps.register_policy("delegating", Delegating)
