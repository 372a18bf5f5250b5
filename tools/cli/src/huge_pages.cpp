// SPDX-License-Identifier: Apache-2.0
// The pypto-sim binary's allocation policy: a block of 2 MiB or more (a trace's graph
// columns, the reader's and the model's per-task state) is advised for transparent huge
// pages (madvise MADV_HUGEPAGE over its whole 2 MiB-aligned interior) before anything touches
// it, so the kernel maps it 2 MiB at a time instead of faulting it in 4 KiB page by page.
//
// Why: a run touches about 120 bytes of fresh memory per task, and a first touch costs a page
// fault per 4 KiB. On the project's machines (a paravirtualised VM) a 4 KiB fault costs
// ~11 us and one 2 MiB fault replaces 512 of them; a 10M-task native trace took 405k faults
// and 7.8 s to read, 20k faults and 6.1 s with its large blocks advised (README,
// Performance). On machines whose THP setting is "never" the advice is ignored; with
// "always" it changes nothing.
//
// It replaces the global operator new of this executable alone (a replaceable allocation
// function): the library code (sim/, sched/) allocates as usual, the Python module keeps its
// interpreter's allocator, and the sanitizer build keeps ASan's. Storage still comes from
// malloc, so the default operator delete (free) releases it; new[] and the nothrow forms
// call this operator new (libstdc++), the aligned forms keep theirs (none is this large).
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::uintptr_t kHugePageBytes = std::uintptr_t(2) << 20;

void advise_huge_pages(void* p, std::size_t n) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + n) & ~(kHugePageBytes - 1);
  // Advice only: a kernel without THP answers EINVAL and the block stays as it is.
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (n >= kHugePageBytes) advise_huge_pages(p, n);
  return p;
}
