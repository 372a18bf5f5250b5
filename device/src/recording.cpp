// SPDX-License-Identifier: Apache-2.0
// write_recording(): what a hardware run measured, in the files a board run of PyPTO leaves
// (reference/pypto-runtime.md §6), so that the simulator's board reader replays it. Each file
// through its format's writer in trace/.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/device/device.h"
#include "pypto/trace/dyn_topo_writer.h"
#include "pypto/trace/prof_writer.h"
#include "pypto/trace/topo_json_writer.h"

namespace pypto::device {
namespace {

using common::TaskId;

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write " + path);
  return f;
}

void close_out(std::ofstream& f, const std::string& path) {
  f.close();
  if (!f) throw Error("cannot write " + path);
}

// Kernel names as JSON strings (topo.json's funcName), escaped once each.
std::vector<std::string> func_names(const sched::TaskGraph& g) {
  std::vector<std::string> names;
  names.reserve(g.kernel_names.size());
  for (const std::string& k : g.kernel_names) names.push_back(nlohmann::json(k).dump());
  return names;
}

}  // namespace

RecordingPaths write_recording(const std::string& dir, const sched::TaskGraph& g,
                               const sched::MachineShape& shape, const RunResult& r,
                               double board_clock_mhz) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create output folder " + dir + ": " + ec.message());
  RecordingPaths paths{dir + "/tilefwk_L1_prof_data.json", dir + "/topo.json",
                       dir + "/dyn_topo.txt"};
  const Timeline& tl = r.timeline;
  const double ticks_per_ns = board_clock_mhz / 1e3;
  const std::uint32_t ncores = shape.aic + shape.aiv;

  // ---- tilefwk_L1_prof_data.json: per core, its tasks in the order it ran them ----
  std::vector<std::vector<TaskId>> per_core(ncores);
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    if (tl.core[t] != kNoCore16 && tl.core[t] < ncores) per_core[tl.core[t]].push_back(t);
  }
  {
    std::ofstream f = open_out(paths.prof);
    trace::ProfWriter w(f,
                        {/*record_per_line=*/false, trace::ProfWriter::SubGraphId::kAfterTaskId});
    for (std::uint32_t c = 0; c < ncores; ++c) {
      auto& v = per_core[c];
      if (v.empty()) continue;
      std::stable_sort(v.begin(), v.end(),
                       [&](TaskId a, TaskId b) { return tl.start_ns[a] < tl.start_ns[b]; });
      w.block(c, c < shape.aic ? "AIC" : "AIV");
      for (const TaskId t : v) {
        trace::ProfRecord r;
        r.seq_no = g.device_tasks[g.device_task[t]].seq_no;
        r.task_id = g.orig_id[t];
        r.sub_graph_id = g.kernel[t];
        r.exec_start = static_cast<std::uint64_t>(
            std::floor(static_cast<double>(tl.start_ns[t]) * ticks_per_ns));
        r.exec_end =
            static_cast<std::uint64_t>(std::ceil(static_cast<double>(tl.end_ns[t]) * ticks_per_ns));
        w.record(r);
      }
    }
    w.finish();
    close_out(f, paths.prof);
  }

  // ---- topo.json: device task 0, PyPTO's board shape ----
  {
    std::ofstream f = open_out(paths.topo);
    trace::TopoJsonWriter w(f);
    if (!g.device_tasks.empty()) {
      const std::vector<std::string> names = func_names(g);
      const sched::DeviceTask& d = g.device_tasks[0];
      for (TaskId t = d.first_task; t < d.first_task + d.num_tasks; ++t) {
        trace::TopoRecord r;
        r.task_id = g.orig_id[t];
        r.func_name = names.empty() ? std::string_view("\"task\"") : names[g.kernel[t]];
        r.core_type = common::to_string(g.core_type[t]);
        w.begin(r);
        for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
          w.successor(g.orig_id[g.succ[i]]);
        }
        w.end();
      }
    }
    w.finish();
    close_out(f, paths.topo);
  }

  // ---- dyn_topo.txt: every device task ----
  {
    std::ofstream f = open_out(paths.dyn_topo);
    trace::DynTopoWriter w(f);
    for (TaskId t = 0; t < g.num_tasks(); ++t) {
      trace::DynTopoRow r;
      r.seq_no = g.device_tasks[g.device_task[t]].seq_no;
      r.task_id = g.orig_id[t];
      r.root_index = g.root[t];
      r.opmagic = t;
      r.leaf_index = g.kernel[t];
      r.core_type = common::to_string(g.core_type[t]);
      r.psg_id = g.kernel[t];
      w.begin(r, g.succ_last(t) - g.succ_first(t));
      for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
        w.successor(g.orig_id[g.succ[i]]);
      }
      w.end();
    }
    w.finish();
    close_out(f, paths.dyn_topo);
  }
  return paths;
}

}  // namespace pypto::device
