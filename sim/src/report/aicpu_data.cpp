// SPDX-License-Identifier: Apache-2.0
// aicpu.data: PyPTO's device log records (report_files.h's write_aicpu_data).
#include "pypto/trace/aicpu_data_writer.h"
#include "report_files.h"

namespace pypto::sim::report {

// PyPTO's device log records (aicpu.data): per core its tasks in start order, in board ticks.
void write_aicpu_data(common::OutputFile& out, const sched::TaskGraph& g,
                      const model::ChipConfig& chip, const SimResult& r,
                      const std::vector<std::vector<common::TaskId>>& per_core) {
  const Timeline& tl = r.timeline;
  const std::uint32_t aic = r.stats.aic.count;
  const std::uint32_t cores = aic + r.stats.aiv.count;
  const double ticks_per_ps = chip.chip.board_clock_mhz / 1e6;
  trace::AicpuDataWriter w(out.stream(), [&out] { check_writer(out); });
  for (std::uint32_t c = 0; c < cores; ++c) {
    const auto& v = per_core[c];
    w.core(c, c < aic, v.size(), [&](std::size_t i) {
      const common::TaskId t = v[i];
      if (i + kPrefetchAhead < v.size()) prefetch_task(g, tl, v[i + kPrefetchAhead]);
      return trace::AicpuTask{g.device_tasks[g.device_task[t]].seq_no, g.kernel[t], g.orig_id[t],
                              board_ticks(tl.start_ps[t], ticks_per_ps),
                              board_ticks(tl.end_ps[t], ticks_per_ps)};
    });
  }
  out.finish();
}

}  // namespace pypto::sim::report
