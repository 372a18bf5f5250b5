// SPDX-License-Identifier: Apache-2.0
// TopoJsonWriter (topo_json_writer.h).
#include "pypto/trace/topo_json_writer.h"

#include <utility>

namespace pypto::trace {

TopoJsonWriter::TopoJsonWriter(std::ostream& os, std::function<void()> every_records)
    : o_(os, std::move(every_records)) {
  o_ << '[';
}

void TopoJsonWriter::begin(const TopoRecord& r) {
  o_ << (first_ ? "\n{\"taskId\":" : ",\n{\"taskId\":");
  first_ = false;
  o_.u(r.task_id);
  if (r.has_ori) {
    o_ << ",\"oriTaskId\":";
    o_.u(r.ori_task_id) << ",\"oriSeqNo\":";
    o_.u(r.ori_seq_no);
  }
  o_ << ",\"funcName\":" << r.func_name << ",\"semanticLabel\":\"\"";
  if (!r.core_type.empty()) o_ << ",\"coreType\":\"" << r.core_type << '"';
  if (r.has_root) {
    o_ << ",\"rootIndex\":";
    o_.u(r.root_index) << ",\"psgId\":";
    o_.u(r.psg_id);
  }
  o_ << ",\"successors\":[";
  first_successor_ = true;
}

void TopoJsonWriter::end() {
  o_ << "]}";
  o_.end_record();
}

void TopoJsonWriter::finish() {
  o_ << "\n]\n";
  o_.flush();
}

}  // namespace pypto::trace
