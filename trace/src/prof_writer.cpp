// SPDX-License-Identifier: Apache-2.0
// ProfWriter (prof_writer.h).
#include "pypto/trace/prof_writer.h"

#include <utility>

namespace pypto::trace {

ProfWriter::ProfWriter(std::ostream& os, Layout layout, std::function<void()> every_records)
    : o_(os, std::move(every_records)), layout_(layout) {
  o_ << '[';
}

void ProfWriter::end_block() {
  if (!in_block_) return;
  o_ << (layout_.record_per_line ? "\n]}" : "]}");
  in_block_ = false;
}

void ProfWriter::block(std::uint32_t block_idx, std::string_view core_type) {
  end_block();
  o_ << (first_block_ ? "\n" : ",\n") << "{\"blockIdx\":";
  o_.u(block_idx) << ",\"coreType\":\"" << core_type << "\",\"tasks\":[";
  first_block_ = false;
  first_record_ = true;
  in_block_ = true;
}

void ProfWriter::record(const ProfRecord& r) {
  if (layout_.record_per_line) {
    o_ << (first_record_ ? "\n{\"seqNo\":" : ",\n{\"seqNo\":");
  } else {
    o_ << (first_record_ ? "{\"seqNo\":" : ",{\"seqNo\":");
  }
  first_record_ = false;
  o_.u(r.seq_no);
  if (layout_.sub_graph_id == SubGraphId::kBeforeTaskId) {
    o_ << ",\"subGraphId\":";
    o_.u(r.sub_graph_id);
  }
  o_ << ",\"taskId\":";
  o_.u(r.task_id);
  if (layout_.sub_graph_id == SubGraphId::kAfterTaskId) {
    o_ << ",\"subGraphId\":";
    o_.u(r.sub_graph_id);
  }
  o_ << ",\"execStart\":";
  o_.u(r.exec_start) << ",\"execEnd\":";
  o_.u(r.exec_end) << '}';
  o_.end_record();
}

void ProfWriter::finish() {
  end_block();
  o_ << "\n]\n";
  o_.flush();
}

}  // namespace pypto::trace
