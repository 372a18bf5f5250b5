// SPDX-License-Identifier: Apache-2.0
// PyPTO's fixed-latency task graph (one device task): execTime is in AICore cycles, HUB
// tasks are zero-cost dependency nodes, remainingPredecessors is a redundant predecessor
// count that we check against the successor lists.
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::sim::trace_detail {

LoadedTrace load_fixed_latency(const std::string& path, const ChipConfig& chip) {
  using nlohmann::json;
  const json doc = parse_json(path, read_file(path));
  if (!doc.is_array()) throw TraceError(path + ": expected a JSON array of tasks");
  if (doc.empty()) throw TraceError(path + ": the JSON array is empty (no tasks)");

  std::unordered_map<std::uint32_t, std::uint32_t> index;  // taskId -> record
  std::unordered_map<std::uint32_t, std::uint32_t> roots;  // taskId >> 20 -> dense root
  std::vector<std::uint32_t> remaining(doc.size());
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::string where = path + ": record " + std::to_string(i);
    if (!doc[i].is_object()) {
      throw TraceError(where + ": expected an object, got " + json_brief(doc[i]));
    }
    const auto id = static_cast<std::uint32_t>(
        json_uint(json_field(doc[i], "taskId", where), "taskId", where, 0xFFFFFFFFull));
    const auto [it, inserted] = index.emplace(id, static_cast<std::uint32_t>(i));
    if (!inserted) {
      throw TraceError(where + ": taskId " + std::to_string(id) + " already appears in record " +
                       std::to_string(it->second));
    }
  }

  sched::TaskGraphBuilder builder(path);
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const json& rec = doc[i];
    sched::TaskGraphBuilder::Task t;
    t.orig_id = static_cast<std::uint32_t>(rec["taskId"].get<std::uint64_t>());
    const std::string where =
        path + ": record " + std::to_string(i) + " (taskId " + std::to_string(t.orig_id) + ")";
    t.kernel =
        builder.kernel_index(json_string(json_field(rec, "funcName", where), "funcName", where));
    const std::string core = json_string(json_field(rec, "coreType", where), "coreType", where);
    const auto ct = sched::parse_core_type(core);
    if (!ct) {
      throw TraceError(where + ": expected \"coreType\" to be AIC, AIV or HUB, got \"" + core +
                       "\"");
    }
    t.core_type = *ct;
    const json& exec = json_field(rec, "execTime", where);
    if (!exec.is_number() || exec.get<double>() < 0) {
      throw TraceError(where +
                       ": expected \"execTime\" to be a non-negative number of cycles, "
                       "got " +
                       json_brief(exec));
    }
    const double cycles = exec.get<double>();
    if (t.core_type == sched::CoreType::kHub && cycles != 0) {
      throw TraceError(where +
                       ": a HUB task is a zero-cost dependency node, but its execTime "
                       "is " +
                       json_brief(exec));
    }
    const double ns = std::nearbyint(cycles * 1000.0 / chip.cores.freq_mhz);
    if (ns >= static_cast<double>(sched::kNoRecord)) {
      throw TraceError(where + ": execTime " + json_brief(exec) +
                       " cycles does not fit in 32-bit nanoseconds");
    }
    t.recorded_ns = static_cast<std::uint32_t>(ns);
    t.root = roots.emplace(t.orig_id >> 20, static_cast<std::uint32_t>(roots.size())).first->second;
    remaining[i] =
        static_cast<std::uint32_t>(json_uint(json_field(rec, "remainingPredecessors", where),
                                             "remainingPredecessors", where, 0xFFFFFFFFull));
    builder.add_task(t);
    const json& succ = json_field(rec, "successors", where);
    if (!succ.is_array()) {
      throw TraceError(where + ": expected \"successors\" to be an array of taskIds, got " +
                       json_brief(succ));
    }
    for (const json& s : succ) {
      const auto sid = static_cast<std::uint32_t>(json_uint(s, "successors", where, 0xFFFFFFFFull));
      const auto it = index.find(sid);
      if (it == index.end()) {
        throw TraceError(where + ": successor " + std::to_string(sid) + " is not a task of " +
                         path);
      }
      builder.add_successor(it->second);
    }
  }

  LoadedTrace out;
  try {
    out.graph = builder.finish();
  } catch (const TraceError& e) {
    throw TraceError(path + ": " + e.what());
  }
  // One device task and file order, so task i of the graph is record i.
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (out.graph.pred_count[i] != remaining[i]) {
      throw TraceError(path + ": record " + std::to_string(i) + " (taskId " +
                       std::to_string(out.graph.orig_id[i]) + "): remainingPredecessors is " +
                       std::to_string(remaining[i]) + " but " +
                       std::to_string(out.graph.pred_count[i]) + " tasks list it as a successor");
    }
  }
  out.format = TraceFormat::kFixedLatency;
  return out;
}

}  // namespace pypto::sim::trace_detail
