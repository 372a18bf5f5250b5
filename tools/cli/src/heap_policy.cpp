// SPDX-License-Identifier: Apache-2.0
// The pypto-sim binary's allocation policy: memory once touched is kept for reuse.
// - every block comes from malloc's main heap (its brk arena; mallopt below), large ones
//   included (a large trace's graph columns, sort buffers): malloc never maps a block of its
//   own (M_MMAP_MAX 0) and trims the heap only past 2 GiB free at its top, so a freed block
//   is reused by the next allocation rather than given back and faulted in again;
// - one arena: a thread's blocks come from that heap too, so what the reading threads free
//   the run reuses.
//
// Why: a run touches 70-150 bytes of fresh memory per task, and on the project's machines
// (paravirtualised VMs whose balloon takes freed memory back within seconds) a first touch
// costs milliseconds per MiB (tools/first_touch.py measures it). Memory reused within the
// process costs nothing of that.
//
// The heap is not advised for transparent huge pages (MADV_HUGEPAGE): on these VMs a fresh
// huge page is sometimes far dearer than its 4 KiB pages, and 4 KiB pages make the worst
// case the smaller loss (docs/performance-log.md, "No more huge-page advice"); where huge
// pages pay, the system's THP setting "always" gives them to every process without advice.
//
// The policy is set by a static initializer, before main() and any thread: only the blocks
// the libraries' static constructors take before it keep malloc's defaults (small ones).
// The sanitizer build does not link this file (ASan's allocator), nor does the Python module
// (its interpreter's malloc).
#include <malloc.h>

#include <limits>

namespace {

// What the heap grows by at least: fewer brk calls; untouched, it costs no memory.
constexpr int kHeapStepBytes = 32 << 20;
// mallopt's largest trim threshold: the heap is trimmed only past 2 GiB free at its top.
constexpr int kTrimPastBytes = std::numeric_limits<int>::max();

bool set_heap_policy() noexcept {
  ::mallopt(M_MMAP_MAX, 0);
  ::mallopt(M_TOP_PAD, kHeapStepBytes);
  ::mallopt(M_TRIM_THRESHOLD, kTrimPastBytes);
  ::mallopt(M_ARENA_MAX, 1);
  return true;
}

[[maybe_unused]] const bool g_heap_policy_set = set_heap_policy();

}  // namespace
