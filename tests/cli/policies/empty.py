# SPDX-License-Identifier: Apache-2.0
# An empty subclass of pypto.sim.Policy: every hook stays C++'s fifo default.
import pypto.sim as ps


class Empty(ps.Policy):
    """fifo, an empty Python subclass"""


ps.register_policy("empty", Empty)
