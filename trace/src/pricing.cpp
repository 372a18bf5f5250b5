// SPDX-License-Identifier: Apache-2.0
// The pricing pass (pricing.h): a chip's costs applied to what a reader left unpriced. Each
// part reports the first cost that does not fit in file order, as the readers did when they
// priced while parsing.
#include "pypto/trace/pricing.h"

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "json_stream.h"
#include "pypto/common/errors.h"
#include "pypto/trace/trace_loader.h"
#include "readers.h"

namespace pypto::trace {

namespace {

using W = UnpricedWork;

// Native traces: each op list once, then every task's ops plus its "cycles".
void price_ops(sched::TaskGraph& g, const W& w, const model::ChipConfig& chip) {
  if (w.task_ops.empty()) return;
  constexpr std::uint64_t kBad = ~std::uint64_t{0};
  std::vector<std::uint64_t> list_cycles(w.op_lists.size(), 0);
  std::uint64_t bad_line = 0;  // the first line of a list that cannot be priced
  std::string bad_msg;
  for (std::size_t i = 0; i < w.op_lists.size(); ++i) {
    const W::OpList& list = w.op_lists[i];
    std::uint64_t total = 0;
    std::string msg;
    try {
      for (const model::TileOp& op : list.ops) total += model::tile_op_cycles(op, chip);
    } catch (const TraceError& e) {
      msg = e.what();
    }
    if (msg.empty() && total > 0xFFFFFFFFull) {
      msg = "the \"ops\" of one task add up to more than 2^32 cycles";
    }
    if (msg.empty()) {
      list_cycles[i] = total;
      continue;
    }
    list_cycles[i] = kBad;
    if (bad_line == 0 || list.line < bad_line) {
      bad_line = list.line;
      bad_msg = std::move(msg);
    }
  }
  // A task whose ops and "cycles" overflow: the first in the file (ids are in file order).
  std::uint64_t over_id = kBad;
  const std::size_t n = g.num_tasks();
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t list = w.task_ops[t];
    if (list == W::kNoOps || list_cycles[list] == kBad) continue;
    const std::uint64_t total = list_cycles[list] + g.compute_cycles[t];
    if (total > 0xFFFFFFFFull) {
      if (g.orig_id[t] < over_id) over_id = g.orig_id[t];
      continue;
    }
    g.compute_cycles[t] = static_cast<std::uint32_t>(total);
  }
  if (over_id != kBad) {
    const std::uint64_t line = detail::native_task_line(w.path, over_id);
    if (bad_line == 0 || line < bad_line) {
      bad_line = line;
      bad_msg = "the task's compute cycles (ops + \"cycles\") exceed 2^32-1";
    }
  }
  if (bad_line != 0) {
    throw TraceError(w.path + ":" + std::to_string(bad_line) + ": " + bad_msg);
  }
}

// "prof.json: block 3 (blockIdx 5), record 7" for the prof record of ordinal `ord`.
std::string prof_where(const W& w, std::uint64_t ord) {
  std::size_t b = 0;
  while (b + 1 < w.prof_blocks.size() && w.prof_blocks[b + 1].first_ord <= ord) ++b;
  const W::ProfBlock& blk = w.prof_blocks[b];
  std::string s = w.path + ": block " + std::to_string(b);
  if (blk.has_block_idx) s += " (blockIdx " + std::to_string(blk.block_idx) + ")";
  return s + ", record " + std::to_string(ord - blk.first_ord);
}

// Board recordings: durations, starts relative to the first and the makespan, at the board
// clock.
void price_ticks(sched::TaskGraph& g, const W& w, double mhz) {
  const std::size_t n = g.num_tasks();
  std::uint32_t bad_ord = W::kNoProf;
  std::size_t bad_task = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t ord = w.prof_ord[t];
    if (ord == W::kNoProf) continue;
    const double ns = std::nearbyint(static_cast<double>(w.dur_ticks[t]) * 1000.0 / mhz);
    if (!(ns >= 0) || ns >= static_cast<double>(sched::kNoRecord)) {
      if (ord < bad_ord) {
        bad_ord = ord;
        bad_task = t;
      }
      continue;
    }
    g.recorded_ns[t] = static_cast<std::uint32_t>(ns);
  }
  if (bad_ord != W::kNoProf) {
    (void)detail::ticks_to_ns(w.dur_ticks[bad_task], mhz, prof_where(w, bad_ord));  // throws
  }
  // Recorded times become ps relative to the first start: the whole span must fit the
  // clock (ticks 2^64 apart would overflow the conversion and read as 0).
  const std::uint64_t min_start = w.min_start_ticks, max_end = w.max_end_ticks;
  const double span_ps = std::nearbyint(static_cast<double>(max_end - min_start) * 1e6 / mhz);
  if (!(span_ps < static_cast<double>(common::kTimeLimitPs))) {
    throw TraceError(w.path + ": the recorded ticks span " + std::to_string(max_end - min_start) +
                     " ticks at chip.board_clock_mhz = " + detail::compact(mhz) +
                     " MHz, more than the model's time limit of 2^62 ps (about 53 days): from "
                     "execStart " +
                     std::to_string(min_start) + " (" + w.min_start_where + ") to execEnd " +
                     std::to_string(max_end) + " (" + w.max_end_where + ")");
  }
  for (std::size_t t = 0; t < n; ++t) {
    if (w.prof_ord[t] == W::kNoProf) continue;
    g.recorded_start_ps[t] = static_cast<common::TimePs>(
        std::nearbyint(static_cast<double>(g.recorded_start_ps[t] - min_start) * 1e6 / mhz));
  }
  const std::uint64_t core0 = w.aicore_start_ticks, core1 = w.aicore_end_ticks;
  g.recorded_makespan_ps = core0 <= core1 ? static_cast<common::TimePs>(std::nearbyint(
                                                static_cast<double>(core1 - core0) * 1e6 / mhz))
                                          : common::TimePs{0};
}

// Fixed-latency graphs: execTime cycles at the AICore clock (task i is record i).
void price_cycles(sched::TaskGraph& g, const W& w, double mhz) {
  for (std::size_t t = 0; t < w.exec_cycles.size(); ++t) {
    const W::Cycles c = w.exec_cycles[t];
    detail::JsonStream::Scalar v;
    double cycles = 0;
    switch (c.kind) {
      case W::Number::kUint:
        v.kind = detail::JsonStream::Kind::kUint;
        v.u = c.raw;
        cycles = static_cast<double>(c.raw);
        break;
      case W::Number::kInt:
        v.kind = detail::JsonStream::Kind::kInt;
        v.i = static_cast<std::int64_t>(c.raw);
        cycles = static_cast<double>(v.i);
        break;
      case W::Number::kFloat:
        v.kind = detail::JsonStream::Kind::kFloat;
        std::memcpy(&v.d, &c.raw, sizeof v.d);
        cycles = v.d;
        break;
    }
    const double ns = std::nearbyint(cycles * 1000.0 / mhz);
    if (ns >= static_cast<double>(sched::kNoRecord)) {
      throw TraceError(w.path + ": record " + std::to_string(t) + " (taskId " +
                       std::to_string(g.orig_id[t]) + "): execTime " + detail::brief(v) +
                       " cycles does not fit in 32-bit nanoseconds");
    }
    g.recorded_ns[t] = static_cast<std::uint32_t>(ns);
  }
}

}  // namespace

LoadedTrace price_trace(ReadTrace&& read, const model::ChipConfig& chip) {
  LoadedTrace out = std::move(read.trace);
  const UnpricedWork work = std::move(read.work);
  switch (out.format) {
    case TraceFormat::kNative: price_ops(out.graph, work, chip); break;
    case TraceFormat::kDynTopo:
    case TraceFormat::kTopoJson: price_ticks(out.graph, work, chip.chip.board_clock_mhz); break;
    case TraceFormat::kFixedLatency: price_cycles(out.graph, work, chip.cores.freq_mhz); break;
    case TraceFormat::kSwimlane: break;  // recorded in µs: nothing depends on the chip
  }
  return out;
}

}  // namespace pypto::trace
