// SPDX-License-Identifier: Apache-2.0
// The graph-only reports (topo.json) written ahead on a worker thread while the model runs
// (GraphReports, start_graph_reports); write_reports takes them over.
#include "report_files.h"

namespace pypto::sim {

GraphReports::GraphReports() = default;
GraphReports::GraphReports(GraphReports&&) noexcept = default;
GraphReports& GraphReports::operator=(GraphReports&&) noexcept = default;
GraphReports::~GraphReports() = default;

GraphReports start_graph_reports(const std::string& dir, const sched::TaskGraph& g,
                                 const ReportOptions& opt) {
  GraphReports ahead;
  if (!opt.swim_json || g.num_tasks() < report::kParallelWriteTasks) return ahead;
  ahead.s_ = std::make_unique<GraphReports::State>();
  GraphReports::State& st = *ahead.s_;  // stays put when `ahead` moves
  st.dir = dir;
  st.made = report::make_folder(dir);
  st.topo = std::make_unique<common::OutputFile>(dir + "/topo.json");
  // The file, not st.topo: write_reports may take the pointer over while this writes.
  st.writer = std::thread([&st, &g, topo = st.topo.get()] {
    try {
      report::write_topo_json(*topo, g);
    } catch (...) {
      st.error = std::current_exception();
    }
  });
  return ahead;
}

}  // namespace pypto::sim
