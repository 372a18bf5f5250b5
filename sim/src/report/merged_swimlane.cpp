// SPDX-License-Identifier: Apache-2.0
// PyPTO's merged swimlane: as a report of write_reports and on its own (write_merged_swimlane).
#include "pypto/trace/swimlane_writer.h"
#include "report_files.h"

namespace pypto::sim {

namespace report {

void write_merged_swimlane_to(common::OutputFile& out, const sched::TaskGraph& g,
                              const SimResult& r, const ReportOptions& opt,
                              common::OutputFile* bubbles) {
  const Timeline& tl = r.timeline;
  const std::uint32_t cores = r.stats.aic.count + r.stats.aiv.count;
  const std::vector<std::vector<common::TaskId>> per_core = tasks_by_core(g, tl, cores);
  const trace::SwimlaneRun run{g,        tl.start_ps,    tl.end_ps,
                               tl.core,  per_core,       r.stats.aic.count,
                               tl.depth, opt.leaf_hints, opt.max_flow_edges};
  trace::write_merged_swimlane(out.stream(), run, [&out] { check_writer(out); });
  out.finish();
  if (bubbles != nullptr) {
    trace::write_bubble_analysis(bubbles->stream(), run);
    check_writer(*bubbles);
    bubbles->finish();
  }
}

}  // namespace report

bool write_merged_swimlane(const std::string& path, const sched::TaskGraph& g, const SimResult& r,
                           const ReportOptions& opt) {
  if (r.timeline.core.size() != g.num_tasks()) return false;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path made = parent.empty() ? parent : report::make_folder(parent);
  try {
    common::OutputFile out(path);
    report::write_merged_swimlane_to(out, g, r, opt);
    out.commit();
  } catch (...) {
    report::remove_made_folders(parent, made);
    throw;
  }
  return true;
}

}  // namespace pypto::sim
