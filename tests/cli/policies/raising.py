# SPDX-License-Identifier: Apache-2.0
# A policy whose hook raises: the CLI names the hook, the class, the exception and this line.
import pypto.sim as ps


class Raising(ps.Policy):
    def pick_shared(self, c, ct, q, first_batch, before_resolve):
        return len(q) // 0


ps.register_policy("raising", Raising)
