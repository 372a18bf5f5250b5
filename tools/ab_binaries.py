#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two pypto-sim binaries side by side on the bench's traces: whole `pypto-sim run` commands,
alternated (old, new, old, new, ...) so that both see the same load, medians per binary.

    tools/ab_binaries.py OLD NEW --trace-dir T [--sizes 100k,1M] [--formats native,...]
                         [--rounds 5] [--with-trace]

T is a `pypto-sim bench --trace-dir T` folder (it keeps the traces it generated, named
mix_<size>_seed1_r8.ndjson, dyn_topo_<size>_a2.txt, topo_json_<size>_a2.json and
fixed_latency_<size>_a2.json). Per run: wall time of the whole process, its CPU time (user +
system), system time, minor page faults and peak RSS, from wait4's rusage of the child. Used
for the before/after figures of docs/performance-log.md; build OLD from the commit
before a change (git worktree add /tmp/old COMMIT && BUILD_DIR=/tmp/old/build
tools/setup.sh, or copy build/tools/pypto-sim aside before rebuilding).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The bench's trace names per format: the trace, and the prof file that goes with it.
FORMATS = {
    "native": ("mix_{size}_seed1_r8.ndjson", None),
    "dyn_topo": ("dyn_topo_{size}_a2.txt", "dyn_topo_{size}_a2.prof.json"),
    "topo_json": ("topo_json_{size}_a2.json", "topo_json_{size}_a2.prof.json"),
    "fixed_latency": ("fixed_latency_{size}_a2.json", None),
}


def run_once(binary, trace, prof, with_trace, out_dir):
    argv = [binary, "run", trace, "-q", "-o", out_dir]
    if prof:
        argv += ["--prof", prof]
    if not with_trace:
        argv.append("--no-trace")
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ab_binaries: {' '.join(argv)} failed: {err.strip()}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "sys_s": ru.ru_stime,
            "faults": ru.ru_minflt, "rss_mib": ru.ru_maxrss / 1024}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--trace-dir", required=True)
    ap.add_argument("--sizes", default="100k,1M")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--with-trace", action="store_true",
                    help="also write trace.json, swim.json, topo.json and aicpu.data")
    a = ap.parse_args()
    for b in (a.old, a.new):
        if not os.access(b, os.X_OK):
            sys.exit(f"ab_binaries: {b} is not an executable")
    if a.rounds < 1:
        sys.exit(f"ab_binaries: --rounds {a.rounds}: expected at least 1")
    formats = a.formats.split(",")
    for f in formats:
        if f not in FORMATS:
            sys.exit(f"ab_binaries: --formats: '{f}' is not one of {', '.join(FORMATS)}")
    keys = ["wall_s", "cpu_s", "sys_s", "faults", "rss_mib"]
    print(f"{'format':14s} {'size':>5s}  " +
          "  ".join(f"{k + ' old/new':>22s}" for k in keys) + "  wall new/old")
    with tempfile.TemporaryDirectory(prefix="ab_binaries_") as tmp:
        for size in a.sizes.split(","):
            for f in formats:
                trace_pat, prof_pat = FORMATS[f]
                trace = os.path.join(a.trace_dir, trace_pat.format(size=size))
                prof = os.path.join(a.trace_dir, prof_pat.format(size=size)) if prof_pat else None
                if not os.path.exists(trace):
                    sys.exit(f"ab_binaries: {trace} does not exist (pypto-sim bench --sizes "
                             f"{size} --trace-dir {a.trace_dir} makes it)")
                runs = {a.old: [], a.new: []}
                for _ in range(a.rounds):
                    for b in (a.old, a.new):
                        runs[b].append(run_once(b, trace, prof, a.with_trace,
                                                os.path.join(tmp, "out")))
                med = {b: {k: statistics.median(r[k] for r in runs[b]) for k in keys}
                       for b in runs}
                cells = []
                for k in keys:
                    fmt = "{:.0f}" if k in ("faults", "rss_mib") else "{:.3f}"
                    cells.append(f"{fmt.format(med[a.old][k]) + ' / ' + fmt.format(med[a.new][k]):>22s}")
                ratio = med[a.new]["wall_s"] / med[a.old]["wall_s"]
                print(f"{f:14s} {size:>5s}  " + "  ".join(cells) + f"  {ratio:12.2f}", flush=True)


if __name__ == "__main__":
    main()
