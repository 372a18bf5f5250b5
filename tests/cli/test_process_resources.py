#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a pypto-sim run takes from the system, counted under strace (exact, not timed).

heap_policy: the binary's allocation policy (tools/cli/src/heap_policy.cpp) is in force: every block
comes from malloc's heap, so memory a run frees is reused instead of being unmapped and faulted
in again (on the project's VMs a first touch costs 0.6-10 ms per MiB; docs/performance-log.md).
A 200k-task run with every report must map no anonymous block of 1 MiB or more of its own:
thread stacks aside, the one such mapping allowed is the ~3 MiB that SystemC's static
constructors take before the policy is set. With malloc's defaults the same run maps 12
(blocks of 128 KiB or more until malloc's threshold adapts, and a 128 MiB arena for each
thread that allocates).

thread_count: a run starts a fixed number of threads whatever the size of its trace: the native
reader parses its 1 MiB chunks on two threads kept for the whole read (ParseWorker,
sim/src/trace/native_reader.cpp), not on a thread per chunk. Runs of a 20k-task and a
200k-task native trace (~4 and ~37 chunks) with every report must create the same number of
threads, and few of them (a thread per chunk: 8 and 40).

Skipped where strace is missing.
Usage: test_process_resources.py heap_policy|thread_count PYPTO_SIM
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_BLOCKS = 1  # SystemC's static constructors' block, taken before the policy is set
MIN_BYTES = 1 << 20
MMAP = re.compile(r"mmap\(NULL, (\d+), [^)]*MAP_ANONYMOUS[^)]*\)")
MAX_THREADS = 16  # the reading, its parsers, the replay metrics, report writers, ...
CLONE = re.compile(r"\bclone3?\(")


def run(argv):
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAIL {' '.join(argv)}: {proc.stderr.strip()}")


def traced_run(strace, sim, tmp, tasks, calls):
    """The strace log lines of `pypto-sim run` on a generated native trace of `tasks`."""
    trace = os.path.join(tmp, f"t{tasks}.ndjson")
    log = os.path.join(tmp, f"strace{tasks}.log")
    run([sim, "gen", "--tasks", str(tasks), "-o", trace])
    run([strace, "-f", "-e", f"trace={calls}", "-o", log,
         sim, "run", trace, "-q", "-o", os.path.join(tmp, f"r{tasks}")])
    with open(log) as f:
        return f.readlines()


def check_heap(strace, sim, tmp):
    blocks = []
    for line in traced_run(strace, sim, tmp, 200000, "mmap"):
        m = MMAP.search(line)
        if m and "MAP_STACK" not in line and int(m.group(1)) >= MIN_BYTES:
            blocks.append(int(m.group(1)))
    line = (f"{len(blocks)} anonymous mappings of 1 MiB or more besides thread stacks "
            f"({', '.join(str(b) for b in blocks) or 'none'}; at most {MAX_BLOCKS})")
    return len(blocks) <= MAX_BLOCKS, "heap policy", line


def check_threads(strace, sim, tmp):
    # A clone that another thread's line interrupts is logged as "<unfinished ...>" and
    # "<... clone resumed>"; count the calls, not the resumptions.
    small, large = (sum(1 for line in traced_run(strace, sim, tmp, tasks, "clone,clone3")
                        if CLONE.search(line)) for tasks in (20000, 200000))
    line = f"threads started: {small} for 20k tasks, {large} for 200k (at most {MAX_THREADS}, equal)"
    return large == small and large <= MAX_THREADS, "thread count", line


def main():
    checks = {"heap_policy": check_heap, "thread_count": check_threads}
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        sys.exit(__doc__.strip().splitlines()[-1])
    strace = shutil.which("strace")
    if strace is None:
        print("skip: no strace")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        ok, what, line = checks[sys.argv[1]](strace, sys.argv[2], tmp)
    print(f"{'ok' if ok else 'FAIL'} {what}: {line}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
