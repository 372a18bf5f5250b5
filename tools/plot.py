#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pictures of pypto-sim runs (Debian's python3-matplotlib).

  tools/plot.py RUN_DIR -o swim.png            the whole run: AICPU threads and cores as rows
                                               (one bar per task), device-task boundaries,
                                               busy cores and ready-queue depth over time
  tools/plot.py COMPARE_DIR -o cmp.png         a `pypto-sim compare -o` folder: policies side
  tools/plot.py RUN_DIR RUN_DIR... -o cmp.png  by side, makespan change vs fifo printed
  tools/plot.py RUN_DIR --recorded tilefwk_L1_prof_data.json -o replay.png
                                               recorded (top) vs simulated (bottom) swimlanes
                                               of a board recording's replay, same time axis

RUN_DIR is a folder written by `pypto-sim run` or by a SIM call (`kernel.last_report.path`):
it holds stats.json and, for the swimlane, trace.json. The drawing lives in
frontend/pypto/_plot.py (also behind `Report.plot`); this is its command line.
"""
import argparse
import importlib.util
import os
import sys


def _plot_module():
    # Loaded from its file, not through `import pypto`: the package pulls in torch and the
    # compiled module, which drawing a finished run does not need.
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "frontend", "pypto", "_plot.py")
    spec = importlib.util.spec_from_file_location("pypto_sim_plot", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="pypto-sim output folders (or one compare folder)")
    p.add_argument("-o", "--out", required=True, help="PNG file to write")
    p.add_argument("--max-tasks", type=int, default=20000, help="swimlane: task bars drawn at most")
    p.add_argument("--recorded", metavar="PROF",
                   help="tilefwk_L1_prof_data.json of the recording RUN_DIR replayed: draw "
                        "recorded and simulated swimlanes one above the other")
    a = p.parse_args()
    if a.max_tasks < 1:
        p.error(f"--max-tasks {a.max_tasks}: expected a positive count")
    plot = _plot_module()
    try:
        if a.recorded:
            if len(a.runs) != 1:
                p.error("--recorded takes one RUN_DIR")
            plot.replay(a.runs[0], a.recorded, a.out, a.max_tasks)
        elif len(a.runs) == 1 and os.path.exists(os.path.join(a.runs[0], "stats.json")):
            plot.swimlane(a.runs[0], a.out, a.max_tasks)
        else:
            plot.compare(a.runs, a.out)
    except plot.PlotError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        sys.exit(2)
    print(a.out)


if __name__ == "__main__":
    main()
