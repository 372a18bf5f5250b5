# SPDX-License-Identifier: Apache-2.0
# fifo written out in Python against the documented hooks (docs/policies.md, "Writing one").
# Only the class: py_fifo.py registers it for the CLI tests, and tests/frontend/test_python_policies.py
# registers it for a block at a time.
import pypto.sim as ps


class PyFifo(ps.Policy):
    """fifo, every decision in Python"""

    def send_before_resolve(self, c, ct):
        return True

    def direct_send(self, c, ready, producer):
        return ps.NO_CORE

    def pick_staged(self, c, ct, staged):
        n = c.view.idle_count(c.thread, ct)
        return None if n == 0 else (len(staged) - 1, c.view.idle_core(c.thread, ct, n - 1))

    def publish_staged(self, c, ct, at, queued):
        return at == ps.PublishPoint.ROUND_END

    def fill_quota(self, c, ct, dt):
        return ps.Policy.last_wave_quota(c, ct, dt, True)

    def pick_shared(self, c, ct, q, first_batch, before_resolve):
        return 0

    def pick_core(self, c, ct, task):
        v, t = c.view, c.thread
        n = v.idle_count(t, ct)
        if n > 0:
            return v.idle_core(t, ct, n - 1)
        return super().pick_core(c, ct, task)  # the pending slots, round-robin
