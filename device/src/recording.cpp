// SPDX-License-Identifier: Apache-2.0
// write_recording(): what a hardware run measured, in the files a board run of PyPTO leaves
// (reference/pypto-runtime.md §6), so that the simulator's board reader replays it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/device/device.h"

namespace pypto::device {
namespace {

using nlohmann::ordered_json;
using sched::TaskId;

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write " + path);
  return f;
}

void close_out(std::ofstream& f, const std::string& path) {
  f.close();
  if (!f) throw Error("cannot write " + path);
}

std::string func_name(const sched::TaskGraph& g, TaskId t) {
  return g.kernel_names.empty() ? std::string("task") : g.kernel_names[g.kernel[t]];
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
    f << "[";
    bool first_block = true;
    for (std::uint32_t c = 0; c < ncores; ++c) {
      auto& v = per_core[c];
      if (v.empty()) continue;
      std::stable_sort(v.begin(), v.end(),
                       [&](TaskId a, TaskId b) { return tl.start_ns[a] < tl.start_ns[b]; });
      f << (first_block ? "\n" : ",\n") << "{\"blockIdx\":" << c << ",\"coreType\":\""
        << (c < shape.aic ? "AIC" : "AIV") << "\",\"tasks\":[";
      first_block = false;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const TaskId t = v[i];
        const auto start = static_cast<std::uint64_t>(
            std::floor(static_cast<double>(tl.start_ns[t]) * ticks_per_ns));
        const auto end =
            static_cast<std::uint64_t>(std::ceil(static_cast<double>(tl.end_ns[t]) * ticks_per_ns));
        f << (i == 0 ? "" : ",") << "{\"seqNo\":" << g.device_tasks[g.device_task[t]].seq_no
          << ",\"taskId\":" << g.orig_id[t] << ",\"subGraphId\":" << g.kernel[t]
          << ",\"execStart\":" << start << ",\"execEnd\":" << end << "}";
      }
      f << "]}";
    }
    f << "\n]\n";
    close_out(f, paths.prof);
  }

  // ---- topo.json: device task 0, PyPTO's board shape ----
  {
    std::ofstream f = open_out(paths.topo);
    f << "[";
    bool first = true;
    if (!g.device_tasks.empty()) {
      const sched::DeviceTask& d = g.device_tasks[0];
      for (TaskId t = d.first_task; t < d.first_task + d.num_tasks; ++t) {
        ordered_json succ = ordered_json::array();
        for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
          succ.push_back(g.orig_id[g.succ[i]]);
        }
        const ordered_json rec{{"taskId", g.orig_id[t]},
                               {"funcName", func_name(g, t)},
                               {"semanticLabel", ""},
                               {"coreType", std::string(sched::to_string(g.core_type[t]))},
                               {"successors", succ}};
        f << (first ? "\n" : ",\n") << rec.dump();
        first = false;
      }
    }
    f << "\n]\n";
    close_out(f, paths.topo);
  }

  // ---- dyn_topo.txt: every device task ----
  {
    std::ofstream f = open_out(paths.dyn_topo);
    f << "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
         "staticSuccCount,successors\n";
    for (TaskId t = 0; t < g.num_tasks(); ++t) {
      const std::uint32_t n = g.succ_last(t) - g.succ_first(t);
      f << g.device_tasks[g.device_task[t]].seq_no << "," << g.orig_id[t] << "," << g.root[t]
        << ",0," << t << "," << g.kernel[t] << ",0," << sched::to_string(g.core_type[t]) << ","
        << g.kernel[t] << ",-1," << n;
      for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) {
        f << "," << g.orig_id[g.succ[i]];
      }
      f << "\n";
    }
    close_out(f, paths.dyn_topo);
  }
  return paths;
}

}  // namespace pypto::device
