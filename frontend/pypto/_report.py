# SPDX-License-Identifier: Apache-2.0
"""The timing report of one SIM call (``kernel.last_report``)."""

from __future__ import annotations

import html
import os
from typing import Any, Dict, List, Optional, Tuple


class Report:
    """What the simulator measured for one kernel call (or, with ``backend`` "device:...",
    what the hardware backend measured: see the field comments below).

    ``path`` is the folder holding ``stats.json``, ``trace.json`` (open it in Perfetto),
    ``swim.json`` and, where PyPTO's tooling looks for it, PyPTO's merged swimlane
    ``CostModelSimulationOutput/merged_swimlane.json`` (``swimlane_path``); ``stats`` is the
    dict of ``stats.json``.

    A SIM call that hit the compile cache returns as soon as its outputs are computed; its
    timing run and report folder follow on a background thread (see ``pypto.sim``). Such a
    report is *pending*: ``log``, ``tasks`` and ``tile_ops`` are known at once, and the first
    use of anything that needs the timing or the files (``stats``, ``path``, ``makespan_ns``,
    printing, ``plot``, :meth:`wait`) waits for them and raises the run's error, if it had
    one.

    Example::

        out = my_kernel(x, y)
        print(my_kernel.last_report.makespan_ns, my_kernel.last_report.path)
    """

    __slots__ = ("_path", "log", "tasks", "tile_ops", "backend", "prof_path", "topo_path",
                 "dyn_topo_path", "_stats", "_pending")

    def __init__(self, path: str, stats: Optional[Dict[str, Any]] = None,
                 log: Optional[List[str]] = None, tasks: int = 0, tile_ops: int = 0,
                 backend: str = "sim", prof_path: str = "", topo_path: str = "",
                 dyn_topo_path: str = "", pending: Any = None):
        if stats is None and pending is None:
            raise TypeError("Report needs stats or a pending run")
        self._path = path
        self.log = list(log or [])
        self.tasks = tasks
        self.tile_ops = tile_ops
        #: "sim", or "device:<type>" for a hardware run (pypto.backends.DeviceBackend), whose
        #: ``stats`` are device.json (measured on the host's steady clock) and whose recording
        #: in PyPTO's board format is at ``prof_path`` / ``topo_path`` (device task 0) /
        #: ``dyn_topo_path`` (every device task): ``pypto-sim run <topo> --prof <prof>``.
        self.backend = backend
        self.prof_path = prof_path
        self.topo_path = topo_path
        self.dyn_topo_path = dyn_topo_path
        self._stats = stats
        self._pending = pending  # pypto._C.PendingSim until its timing run is done

    @property
    def stats(self) -> Dict[str, Any]:
        """The dict of ``stats.json`` (waits for a pending report)."""
        if self._pending is not None:
            raw = self._pending.wait()
            self._stats = raw["stats"]
            self._pending = None
        return self._stats

    @property
    def path(self) -> str:
        """The report folder (waits until a pending report's files are written)."""
        self.wait()
        return self._path

    @property
    def pending(self) -> bool:
        """True while this call's timing run and report folder are still being made."""
        return self._pending is not None and not self._pending.done()

    def wait(self) -> "Report":
        """Waits until the report folder is complete (at once for a finished report) and
        returns the report; raises the timing run's error, if it had one."""
        self.stats  # noqa: B018 - waits
        return self

    @property
    def makespan_ns(self) -> float:
        """Time from kernel launch to the end of the last device task, in ns: simulated, or
        measured for a hardware run."""
        return float(self.stats["makespan_ns"])

    @property
    def aicore_end_to_end_ns(self) -> Optional[float]:
        """Time from the first AICore task's start to the last one's end, in ns: what PyPTO's
        swimlane summary prints as the AICore end-to-end time and its tuning guides quote as a
        kernel's time (launch and the first device task's build excluded). None when the run
        kept no task times."""
        span = self.stats.get("aicore", {}).get("end_to_end_ns")
        return None if span is None else float(span)

    @property
    def swimlane_path(self) -> str:
        """PyPTO's merged swimlane of this call (Chrome trace events; open it in Perfetto).
        SIM calls only: a hardware run's picture is its recording, replayed with
        ``pypto-sim run <topo_path> --prof <prof_path>``."""
        return os.path.join(self.path, "CostModelSimulationOutput", "merged_swimlane.json")

    def summary_rows(self) -> List[Tuple[str, str]]:
        """The short summary as (label, value) rows: what ``str(report)`` prints and what a
        notebook shows as a table."""
        s = self.stats
        measured = self.backend != "sim"
        rows = [("makespan", f"{self.makespan_ns / 1000:.3f} us"
                 + (f" measured on {self.backend}" if measured else "")),
                ("AICore end to end", "-" if self.aicore_end_to_end_ns is None
                 else f"{self.aicore_end_to_end_ns / 1000:.3f} us (PyPTO's kernel time)"),
                ("chip / policy", f"{s.get('chip', '?')} / {s.get('policy', '?')}"),
                ("tasks", f"{s.get('tasks', self.tasks)} in {s.get('device_tasks', '?')} device "
                          f"task(s), {self.tile_ops} tile ops")]
        for ct, c in sorted(s.get("cores", {}).items()):
            if c.get("tasks"):
                rows.append((f"{ct} utilization", f"{100 * c['utilization']:.1f} % of "
                             f"{c['count']} cores ({c['tasks']} tasks)"))
        l2 = s.get("l2")
        if l2 and (l2.get("read_hits", 0) + l2.get("read_misses", 0)):
            rows.append(("L2 hit rate", f"{100 * l2['hit_rate']:.1f} % of "
                         f"{l2['read_hits'] + l2['read_misses']} line reads"))
        hbm = s.get("hbm")
        if hbm:
            rows.append(("HBM", f"{hbm['bytes']} bytes, {hbm['achieved_gbps']:.1f} GB/s "
                         f"achieved"))
        if measured and self.prof_path:
            rows.append(("recording", f"{self.topo_path} + {self.prof_path}"))
        rows.append(("reports", self.path))
        return rows

    def __str__(self) -> str:
        rows = self.summary_rows()
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def _repr_html_(self) -> str:
        """A notebook shows the report as a two-column table."""
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self.summary_rows())
        return f"<table><caption>pypto-sim report</caption>{body}</table>"

    def plot(self, path: str, max_tasks: int = 20000) -> str:
        """Writes the swimlane of this call to ``path`` (a PNG): the AICPU threads and cores
        as rows, device-task boundaries, busy cores and ready-queue depth over time (the
        picture of ``tools/plot.py``). Needs the call's trace.json (not written when the trace
        is switched off). Returns ``path``; a missing or unreadable report raises
        ``pypto.error.FeError`` naming the file."""
        from . import _plot
        from .error import FeError
        folder = self.path  # waits for a pending report
        try:
            return _plot.swimlane(folder, path, max_tasks)
        except _plot.PlotError as e:
            raise FeError(f"Report.plot: {e}") from None

    def __repr__(self) -> str:
        return (f"Report(makespan_ns={self.makespan_ns:.1f}, tasks={self.tasks}, "
                f"path={self.path!r})")
