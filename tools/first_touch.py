#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What this machine charges for memory a process touches for the first time.

A pypto-sim run touches about 100-450 bytes of fresh memory per task. On bare metal, the
kernel maps and zeroes that memory at several GB/s. Inside some virtual machines it costs
far more, and how much depends on the memory's history. The project's own VMs have a
virtio balloon with free page reporting: pages freed for a few seconds go back to the host.
Touching such a page again makes the host back it anew.

This probe maps SIZE MiB of anonymous memory and writes one byte per 4 KiB page. It does
this four times:
  thp        advised MADV_HUGEPAGE (as the pypto-sim binary once advised its heap);
  thp again  the same, right after the first mapping was freed (the kernel hands the just
             freed huge pages out again);
  4k later   advised MADV_NOHUGEPAGE (a 4 KiB fault per page), after sleeping --idle
             seconds (right after a freed mapping it would reuse the freed memory);
  thp later  advised MADV_HUGEPAGE again, after sleeping --idle seconds.
For each it prints ms per MiB of the first pass over the pages, less the same loop's time
over the same pages once touched (the second pass: the probe loop's own cost).

Usage: tools/first_touch.py [--mib 256] [--idle 10]
"""
import argparse
import mmap
import time

PAGE = 4096
HUGE = 2 << 20


def probe(mib, huge):
    """ms per MiB of the first pass over fresh pages, less the second pass over them."""
    size = mib << 20
    # Room to start on a 2 MiB boundary, so that every huge page of the range can be used.
    m = mmap.mmap(-1, size + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
        passes = []
        for value in (1, 2):
            t0 = time.perf_counter()
            for off in range(0, size, PAGE):
                m[off] = value
            passes.append(time.perf_counter() - t0)
    finally:
        m.close()
    return (passes[0] - passes[1]) * 1e3 / mib, passes[1] * 1e3 / mib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256, help="memory per probe (default 256)")
    ap.add_argument("--idle", type=float, default=10.0,
                    help="seconds to wait before the last probe (default 10)")
    a = ap.parse_args()
    if a.mib <= 0 or a.idle < 0:
        ap.error("--mib must be positive and --idle not negative")
    print(f"first touch of {a.mib} MiB, one write per 4 KiB page: ms per MiB, the probe "
          f"loop's own time taken out")
    rows = [("thp", True, 0), ("thp again", True, 0), (f"4k after {a.idle:g} s idle", False, a.idle),
            (f"thp after {a.idle:g} s idle", True, a.idle)]
    for name, huge, idle in rows:
        time.sleep(idle)
        touch, loop = probe(a.mib, huge)
        print(f"  {name:<22} {touch:7.2f} ms/MiB   (loop {loop:.2f} ms/MiB)")


if __name__ == "__main__":
    main()
