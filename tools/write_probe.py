#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How fast this machine takes a large file written in one stream, three ways.

pypto-sim's reports of a 10M-task run are gigabytes. Written plainly, every page of them is
a fresh page-cache page, and on VMs that hand freed memory back to their host a fresh page
costs far more than the copy into it (tools/first_touch.py). This probe writes SIZE MiB in
blocks of --block-kib KiB (aligned; default 4096) to a file in DIR three times, after
sleeping --idle seconds each time:
  plain        write(2) alone: the data stays in the page cache, dirty;
  drop-behind  as pypto-sim's OutputFile does: every 16 MiB, sync_file_range(WRITE) on the
               stretch just written and posix_fadvise(DONTNEED) on the one two before;
  direct       O_DIRECT: no page cache at all, each write waits for the disk.
For each it prints seconds and GB/s, and removes the file. On a kernel that gives buffered
writes large page-cache folios (ext4 on Linux 6.x), the block size moves the plain figure
most: a large aligned block takes large folios, which on these VMs come from memory the host
has taken back (compare --block-kib 256 with the default).

Usage: tools/write_probe.py [--mib 2000] [--block-kib 4096] [--idle 4] [--dir .]
"""
import argparse
import ctypes
import ctypes.util
import mmap
import os
import time

WINDOW = 16 << 20
SYNC_FILE_RANGE_WRITE = 2

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]


def write_file(path, mib, block_bytes, mode):
    """Seconds to write `mib` MiB to `path` in blocks of `block_bytes`, the way `mode` says."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if mode == "direct":
        flags |= os.O_DIRECT
    block = mmap.mmap(-1, block_bytes)  # page aligned, as O_DIRECT needs
    block.write(b"x" * block_bytes)
    total = mib << 20
    fd = os.open(path, flags, 0o644)
    try:
        t0 = time.perf_counter()
        written = 0
        window_end = WINDOW
        while written < total:
            written += os.write(fd, block)
            while mode == "drop-behind" and written >= window_end:
                libc.sync_file_range(fd, window_end - WINDOW, WINDOW, SYNC_FILE_RANGE_WRITE)
                if window_end >= 3 * WINDOW:
                    os.posix_fadvise(fd, window_end - 3 * WINDOW, WINDOW, os.POSIX_FADV_DONTNEED)
                window_end += WINDOW
        os.close(fd)
        fd = -1
        return time.perf_counter() - t0
    finally:
        if fd >= 0:
            os.close(fd)
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=2000, help="MiB per file (default 2000)")
    ap.add_argument("--block-kib", type=int, default=4096,
                    help="KiB per write, a multiple of 4 (default 4096)")
    ap.add_argument("--idle", type=float, default=4, help="seconds of sleep before each write")
    ap.add_argument("--dir", default=".", help="folder for the file (default: here)")
    args = ap.parse_args()
    if args.block_kib <= 0 or args.block_kib % 4 or (args.mib << 10) % args.block_kib:
        ap.error("--block-kib must be a positive multiple of 4 that divides --mib * 1024")
    path = os.path.join(args.dir, ".write_probe.%d" % os.getpid())
    for mode in ("plain", "drop-behind", "direct"):
        time.sleep(args.idle)
        try:
            s = write_file(path, args.mib, args.block_kib << 10, mode)
        except OSError as e:  # tmpfs and some network file systems refuse O_DIRECT
            print("%-12s %s" % (mode, e))
            continue
        print("%-12s %7.3f s  %6.2f GB/s" % (mode, s, (args.mib << 20) / s / 1e9))


if __name__ == "__main__":
    main()
