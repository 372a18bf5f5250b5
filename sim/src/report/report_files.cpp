// SPDX-License-Identifier: Apache-2.0
// What more than one report writer uses (report_files.h).
#include "report_files.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"

namespace pypto::sim::report {

void check_writer(common::OutputFile& f) {
  common::check_interrupt("writing " + f.path());
  if (f.failed()) f.finish();  // throws "error while writing ..."
}

std::vector<std::string> json_kernel_names(const sched::TaskGraph& g) {
  std::vector<std::string> k;
  k.reserve(g.kernel_names.size());
  for (const std::string& name : g.kernel_names) k.push_back(nlohmann::ordered_json(name).dump());
  return k;
}

std::vector<std::vector<common::TaskId>> tasks_by_core(const sched::TaskGraph& g,
                                                       const Timeline& tl, std::uint32_t cores) {
  // Sorted as (start, task) pairs gathered in task order: sorting task ids by a start looked
  // up per comparison misses the cache on every look-up at millions of tasks. Task ids grow
  // in insertion order, so ties keep task order as a stable sort by start would.
  std::vector<std::vector<std::pair<std::uint64_t, common::TaskId>>> keyed(cores);
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (common::is_dispatchable(g.core_type[t]) && tl.core[t] != common::kNoCore16)
      keyed[tl.core[t]].emplace_back(tl.start_ps[t], t);
  }
  std::vector<std::vector<common::TaskId>> per_core(cores);
  for (std::uint32_t c = 0; c < cores; ++c) {
    auto& k = keyed[c];
    if (!std::is_sorted(k.begin(), k.end())) std::sort(k.begin(), k.end());
    per_core[c].reserve(k.size());
    for (const auto& [start, t] : k) per_core[c].push_back(t);
    std::vector<std::pair<std::uint64_t, common::TaskId>>().swap(k);
  }
  return per_core;
}

std::filesystem::path make_folder(const std::filesystem::path& dir) {
  std::filesystem::path top;
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p, ec);
       p = p.parent_path()) {
    top = p;
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create output folder " + dir.string() + ": " + ec.message());
  return top;
}

void remove_made_folders(const std::filesystem::path& dir, const std::filesystem::path& top) {
  if (top.empty()) return;
  std::error_code ec;
  for (std::filesystem::path p = dir;; p = p.parent_path()) {
    if (!std::filesystem::remove(p, ec)) return;  // not empty (or gone): stop
    if (p == top || p.empty()) return;
  }
}

}  // namespace pypto::sim::report
