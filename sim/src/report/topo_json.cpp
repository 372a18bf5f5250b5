// SPDX-License-Identifier: Apache-2.0
// topo.json: PyPTO's topology of the graph (report_files.h's write_topo_json).
#include <algorithm>

#include "pypto/trace/topo_json_writer.h"
#include "report_files.h"

namespace pypto::sim::report {

// PyPTO's topo.json shape, for its tools/profiling/draw_swim_lane.py (swim.json + topo.json):
// one record per task, taskId = seqNo << 32 | the task's own id (the key that tool joins
// swim.json on), successors in the same encoding, HUB tasks included (the tool draws them
// as zero-length "fake" tasks).
void write_topo_json(common::OutputFile& out, const sched::TaskGraph& g) {
  std::vector<common::TaskId> order(g.num_tasks());
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) order[t] = t;
  auto key = [&](common::TaskId t) {
    return (std::uint64_t{g.device_tasks[g.device_task[t]].seq_no} << 32) | g.orig_id[t];
  };
  const auto by_key = [&](common::TaskId a, common::TaskId b) { return key(a) < key(b); };
  // Usually in key order already (device tasks in order, ids in file order).
  if (!std::is_sorted(order.begin(), order.end(), by_key))
    std::stable_sort(order.begin(), order.end(), by_key);
  const std::vector<std::string> kernels = json_kernel_names(g);
  trace::TopoJsonWriter w(out.stream(), [&out] { check_writer(out); });
  for (const common::TaskId t : order) {
    trace::TopoRecord rec;
    rec.task_id = key(t);
    rec.has_ori = true;
    rec.ori_task_id = g.orig_id[t];
    rec.ori_seq_no = g.device_tasks[g.device_task[t]].seq_no;
    rec.func_name = json_kernel_of(kernels, g, t);
    rec.core_type = common::to_string(g.core_type[t]);
    rec.has_root = true;
    rec.root_index = g.root[t];
    rec.psg_id = g.kernel[t];
    w.begin(rec);
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) w.successor(key(g.succ[i]));
    w.end();
  }
  w.finish();
  out.finish();
}

}  // namespace pypto::sim::report
