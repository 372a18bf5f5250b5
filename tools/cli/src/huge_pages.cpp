// SPDX-License-Identifier: Apache-2.0
// The pypto-sim binary's allocation policy: its memory is advised for transparent huge pages
// (madvise MADV_HUGEPAGE) before anything touches it, so the kernel maps it 2 MiB at a time
// instead of faulting it in 4 KiB page by page, and memory once touched is kept for reuse:
// - every block comes from the main heap (malloc's brk arena; mallopt below), which is
//   advised as it grows 32 MiB at a time;
// - malloc never maps a block of its own (M_MMAP_MAX 0) and hardly trims the heap, so a freed
//   block, large ones included (a large trace's graph columns, sort buffers), is reused by the
//   next allocation rather than given back and faulted in again.
//
// Why: a run touches about 120 bytes of fresh memory per task, and a first touch costs a page
// fault per 4 KiB. On the project's machines (a paravirtualised VM) a 4 KiB fault costs
// ~11 us and one 2 MiB fault replaces 512 of them (README, Performance); a 2 MiB fault still
// zeroes 2 MiB, which at 10M tasks took ~30 % of a board trace's run when large blocks were
// mmap'd and unmapped one by one (README). On machines whose THP setting is "never" the
// advice is ignored; with "always" it changes nothing. The peak resident memory is the same
// either way up to the heap's holes: the memory kept is given back at exit.
//
// It replaces the global operator new of this executable alone (a replaceable allocation
// function): the library code (sim/, sched/) allocates as usual, the Python module keeps its
// interpreter's allocator, and the sanitizer build keeps ASan's. Storage still comes from
// malloc, so the default operator delete (free) releases it; new[] and the nothrow forms
// call this operator new (libstdc++), the aligned forms keep theirs.
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>

namespace {

constexpr std::uintptr_t kPageBytes = 4096;
constexpr int kHeapStepBytes = 32 << 20;
// mallopt's largest trim threshold: the heap is trimmed only past 2 GiB free at its top.
constexpr int kTrimPastBytes = std::numeric_limits<int>::max();

// The heap up to here has been advised; blocks are taken from the heap by several threads.
std::atomic<std::uintptr_t> g_heap_advised{0};

// Advises the pages of [begin, end). Whole pages, not whole huge pages: consecutive advised
// ranges of the heap then make one region, and the huge page across their seam counts too.
void advise(std::uintptr_t begin, std::uintptr_t end) noexcept {
  const std::uintptr_t first = begin & ~(kPageBytes - 1);
  const std::uintptr_t last = (end + kPageBytes - 1) & ~(kPageBytes - 1);
  // Advice only: a kernel without THP answers EINVAL and the memory stays as it is.
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

// Advises what the heap has grown by since the last call (one thread claims each step). A
// trimmed heap moves the mark back: what grows again is a new region, advised again.
void advise_heap_growth() noexcept {
  const auto top = reinterpret_cast<std::uintptr_t>(::sbrk(0));
  std::uintptr_t done = g_heap_advised.load(std::memory_order_relaxed);
  if (top == done || !g_heap_advised.compare_exchange_strong(done, top)) return;
  if (top > done) advise(done, top);
}

// The heap's policy, set by the first operator new (the libraries' static constructors
// allocate before main: SystemC's take ~3 MiB, ~770 faults of every run): advice starts at
// the heap's end then.
void set_heap_policy() noexcept {
  ::mallopt(M_MMAP_MAX, 0);
  ::mallopt(M_TOP_PAD, kHeapStepBytes);
  ::mallopt(M_TRIM_THRESHOLD, kTrimPastBytes);
  // One arena: a thread's blocks come from the advised heap too (a second arena would be an
  // mmap'd region of its own).
  ::mallopt(M_ARENA_MAX, 1);
  g_heap_advised.store(reinterpret_cast<std::uintptr_t>(::sbrk(0)), std::memory_order_relaxed);
}

}  // namespace

void* operator new(std::size_t n) {
  static const bool policy_set = (set_heap_policy(), true);
  (void)policy_set;
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  advise_heap_growth();
  return p;
}
