# SPDX-License-Identifier: Apache-2.0
# fifo written out in Python (fifo_hooks.py, beside this file on sys.path while it loads), with
# a declared parameter that changes nothing (stats.json records it).
import pypto.sim as ps
from fifo_hooks import PyFifo

ps.register_policy("py_fifo", PyFifo, params={
    "weight": {"type": "float", "default": 0.5, "min": 0.0, "max": 1.0, "doc": "unused"}})
