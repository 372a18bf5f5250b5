# SPDX-License-Identifier: Apache-2.0
"""The timing report of one SIM call (``kernel.last_report``)."""

from __future__ import annotations

from dataclasses import dataclass, field
import os
from typing import Any, Dict, List


@dataclass(frozen=True)
class Report:
    """What the simulator measured for one kernel call.

    ``path`` is the folder holding ``stats.json``, ``trace.json`` (open it in Perfetto),
    ``swim.json`` and, where PyPTO's tooling looks for it, PyPTO's merged swimlane
    ``CostModelSimulationOutput/merged_swimlane.json`` (``swimlane_path``); ``stats`` is the
    dict of ``stats.json``.

    Example::

        out = my_kernel(x, y)
        print(my_kernel.last_report.makespan_ns, my_kernel.last_report.path)
    """

    path: str
    stats: Dict[str, Any]
    log: List[str] = field(default_factory=list)
    tasks: int = 0
    tile_ops: int = 0

    @property
    def makespan_ns(self) -> float:
        """Simulated time from kernel launch to the end of the last device task, in ns."""
        return float(self.stats["makespan_ns"])

    @property
    def swimlane_path(self) -> str:
        """PyPTO's merged swimlane of this call (Chrome trace events; open it in Perfetto)."""
        return os.path.join(self.path, "CostModelSimulationOutput", "merged_swimlane.json")

    def __repr__(self) -> str:
        return (f"Report(makespan_ns={self.makespan_ns:.1f}, tasks={self.tasks}, "
                f"path={self.path!r})")
