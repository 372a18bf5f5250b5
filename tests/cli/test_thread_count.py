#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A run starts a fixed number of threads whatever the size of its trace: the native reader
parses its 1 MiB chunks on two threads kept for the whole read (ParseWorker,
sim/src/trace/native_reader.cpp), not on a thread per chunk. Under strace, runs of a 20k-task
and a 200k-task native trace (~4 and ~37 chunks) with every report must create the same
number of threads, and few of them; a thread per chunk made the larger run's ~35 more.

Skipped where strace is missing.
Usage: test_thread_count.py PYPTO_SIM
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_THREADS = 16  # the reading, its parsers, fault-ahead helpers, report writers, ...
CLONE = re.compile(r"\bclone3?\(")


def run(argv):
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAIL {' '.join(argv)}: {proc.stderr.strip()}")


def threads_started(strace, sim, tmp, tasks):
    trace = os.path.join(tmp, f"t{tasks}.ndjson")
    log = os.path.join(tmp, f"strace{tasks}.log")
    run([sim, "gen", "--tasks", str(tasks), "-o", trace])
    run([strace, "-f", "-e", "trace=clone,clone3", "-o", log,
         sim, "run", trace, "-q", "-o", os.path.join(tmp, f"r{tasks}")])
    # A clone that another thread's line interrupts is logged as "<unfinished ...>" and
    # "<... clone resumed>"; count the calls, not the resumptions.
    return sum(1 for line in open(log) if CLONE.search(line))


def main():
    sim = sys.argv[1]
    strace = shutil.which("strace")
    if strace is None:
        print("skip: no strace")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        small = threads_started(strace, sim, tmp, 20000)
        large = threads_started(strace, sim, tmp, 200000)
    line = f"threads started: {small} for 20k tasks, {large} for 200k (at most {MAX_THREADS}, equal)"
    if large != small or large > MAX_THREADS:
        print(f"FAIL thread count: {line}")
        return 1
    print(f"ok thread count: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
