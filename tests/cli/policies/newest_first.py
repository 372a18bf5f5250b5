# SPDX-License-Identifier: Apache-2.0
# Takes the newest ready task of the shared queue first (fifo takes the oldest).
import pypto.sim as ps


class NewestFirst(ps.Policy):
    """newest ready task first"""

    def pick_shared(self, c, ct, q, first_batch, before_resolve):
        return len(q) - 1


ps.register_policy("newest_first", NewestFirst)
