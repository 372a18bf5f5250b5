#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The pypto-sim binary's allocation policy (tools/cli/src/huge_pages.cpp) is in force: a run
of a 200k-task trace faults its memory in far fewer page faults than it has 4 KiB pages
resident. With every page faulted 4 KiB at a time the two are about equal (the binary before
the policy: 0.88 faults per resident page on a 100k-task trace); with the heap and the large
blocks on transparent huge pages, about 0.1. The bound, 0.4, leaves room for a kernel that
finds no free 2 MiB page now and then, and fails when the policy is gone.

Skipped where the kernel gives no huge pages on advice (THP "never", or no THP at all).
Usage: test_huge_pages.py PYPTO_SIM
"""
import os
import subprocess
import sys
import tempfile

THP = "/sys/kernel/mm/transparent_hugepage/enabled"
MAX_FAULTS_PER_PAGE = 0.4


def run(argv):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAIL {' '.join(argv)}: {err.strip()}")
    return ru


def main():
    sim = sys.argv[1]
    try:
        mode = open(THP).read()
    except OSError:
        print(f"skip: no {THP}")
        return 0
    if "[never]" in mode:
        print(f"skip: transparent huge pages are off ({mode.strip()})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.ndjson")
        run([sim, "gen", "--tasks", "200000", "-o", trace])
        ru = run([sim, "run", trace, "--no-trace", "-q", "-o", os.path.join(tmp, "r")])
    pages = ru.ru_maxrss * 1024 / 4096  # ru_maxrss is in KiB
    ratio = ru.ru_minflt / pages
    line = (f"{ru.ru_minflt} minor faults for {pages:.0f} resident 4 KiB pages "
            f"({ratio:.2f} a page; at most {MAX_FAULTS_PER_PAGE})")
    if ratio > MAX_FAULTS_PER_PAGE:
        print(f"FAIL huge pages: {line}")
        return 1
    print(f"ok huge pages: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
