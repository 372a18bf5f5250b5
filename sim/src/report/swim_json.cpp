// SPDX-License-Identifier: Apache-2.0
// swim.json: PyPTO's swimlane shape (report_files.h's write_swim_json).
#include "pypto/trace/prof_writer.h"
#include "report_files.h"

namespace pypto::sim::report {

// PyPTO's swimlane shape, in the chip's board-counter ticks so that it lines up with a
// recorded tilefwk_L1_prof_data.json (and can be read back as one).
void write_swim_json(common::OutputFile& out, const sched::TaskGraph& g,
                     const model::ChipConfig& chip, const SimResult& r,
                     const std::vector<std::vector<common::TaskId>>& per_core) {
  const Timeline& tl = r.timeline;
  const std::uint32_t aic = r.stats.aic.count;
  const std::uint32_t cores = aic + r.stats.aiv.count;
  const double ticks_per_ps = chip.chip.board_clock_mhz / 1e6;
  trace::ProfWriter w(out.stream(),
                      {/*record_per_line=*/false, trace::ProfWriter::SubGraphId::kBeforeTaskId},
                      [&out] { check_writer(out); });
  for (std::uint32_t c = 0; c < cores; ++c) {
    const auto& v = per_core[c];
    if (v.empty()) continue;
    w.block(c, c < aic ? "AIC" : "AIV");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const common::TaskId t = v[i];
      if (i + kPrefetchAhead < v.size()) prefetch_task(g, tl, v[i + kPrefetchAhead]);
      // subGraphId: PyPTO's leaf-function index of the task; ours is the kernel index, which
      // names the same thing (PyPTO's tools colour and group tasks by it).
      w.record({g.device_tasks[g.device_task[t]].seq_no, g.orig_id[t], g.kernel[t],
                board_ticks(tl.start_ps[t], ticks_per_ps),
                board_ticks(tl.end_ps[t], ticks_per_ps)});
    }
  }
  w.finish();
  out.finish();
}

}  // namespace pypto::sim::report
