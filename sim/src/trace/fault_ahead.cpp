// SPDX-License-Identifier: Apache-2.0
#include "fault_ahead.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

namespace pypto::sim::trace_detail {

FaultAhead::FaultAhead(std::vector<std::vector<Span>> groups) {
  std::size_t bytes = 0;
  for (auto& group : groups) {
    std::vector<Span> kept;
    for (const Span& s : group) {
      if (s.begin != nullptr && s.bytes >= kMinBytes) kept.push_back(s);
    }
    group = std::move(kept);
    for (const Span& s : group) bytes += s.bytes;
  }
  if (bytes == 0) return;
  thread_ = std::thread([this, groups = std::move(groups)]() mutable { run(std::move(groups)); });
}

void FaultAhead::stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void FaultAhead::run(std::vector<std::vector<Span>> groups) {
  for (const auto& group : groups) {
    std::size_t total = 0;
    for (const Span& s : group) total += s.bytes;
    const std::size_t steps = (total + kStepBytes - 1) / kStepBytes;
    std::vector<std::uintptr_t> done(group.size());
    for (std::size_t i = 0; i < group.size(); ++i) {
      done[i] = reinterpret_cast<std::uintptr_t>(group[i].begin);
    }
    for (std::size_t k = 1; k <= steps; ++k) {
      if (stop_.load(std::memory_order_relaxed)) return;
      const double fraction = static_cast<double>(k) / static_cast<double>(steps);
      for (std::size_t i = 0; i < group.size(); ++i) {
        done[i] = fault_in_to(reinterpret_cast<std::uintptr_t>(group[i].begin), group[i].bytes,
                              done[i], fraction);
      }
    }
  }
}

std::uintptr_t fault_in_to(std::uintptr_t begin, std::size_t bytes, std::uintptr_t done,
                           double fraction) {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // Rounded down to a page (at the end, up: the span's last page).
  const std::uintptr_t to =
      fraction >= 1.0
          ? (begin + bytes + page - 1) & ~(page - 1)
          : (begin + static_cast<std::uintptr_t>(static_cast<double>(bytes) * fraction)) &
                ~(page - 1);
  const std::uintptr_t from = done & ~(page - 1);
  if (to <= from) return done;
  ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  return to;
}

std::vector<FaultAhead::Span> building_spans(sched::TaskGraphBuilder& builder, std::size_t tasks,
                                             std::size_t edges) {
  std::vector<FaultAhead::Span> spans;
  const sched::TaskGraph& g = builder.graph();
  g.for_each_column([&](const auto& col) {
    const void* c = &col;
    if (c != &g.recorded_start_ps) {
      spans.push_back(FaultAhead::span_of(col, c == &g.succ ? edges : tasks));
    }
  });
  builder.reserve_own_columns([&](const std::vector<std::uint32_t>& col) {
    spans.push_back(FaultAhead::span_of(col, tasks));
  });
  return spans;
}

}  // namespace pypto::sim::trace_detail
