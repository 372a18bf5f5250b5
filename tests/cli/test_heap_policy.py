#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The pypto-sim binary's allocation policy (tools/cli/src/heap_policy.cpp) is in force: every
block comes from malloc's heap, so memory a run frees is reused instead of being unmapped and
faulted in again (on the project's VMs a first touch costs 0.6-10 ms per MiB;
docs/performance-log.md). A 200k-task run with every report, under strace, must map no anonymous block
of 1 MiB or more of its own: thread stacks aside, the one such mapping allowed is the ~3 MiB
that SystemC's static constructors take before the policy is set. With malloc's defaults the
same run maps 12 (blocks of 128 KiB or more until malloc's threshold adapts, and a 128 MiB
arena for each thread that allocates).

Skipped where strace is missing.
Usage: test_heap_policy.py PYPTO_SIM
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


def run(argv):
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAIL {' '.join(argv)}: {proc.stderr.strip()}")


def main():
    sim = sys.argv[1]
    strace = shutil.which("strace")
    if strace is None:
        print("skip: no strace")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.ndjson")
        log = os.path.join(tmp, "strace.log")
        run([sim, "gen", "--tasks", "200000", "-o", trace])
        run([strace, "-f", "-e", "trace=mmap", "-o", log,
             sim, "run", trace, "-q", "-o", os.path.join(tmp, "r")])
        blocks = []
        for line in open(log):
            m = MMAP.search(line)
            if m and "MAP_STACK" not in line and int(m.group(1)) >= MIN_BYTES:
                blocks.append(int(m.group(1)))
    line = (f"{len(blocks)} anonymous mappings of 1 MiB or more besides thread stacks "
            f"({', '.join(str(b) for b in blocks) or 'none'}; at most {MAX_BLOCKS})")
    if len(blocks) > MAX_BLOCKS:
        print(f"FAIL heap policy: {line}")
        return 1
    print(f"ok heap policy: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
