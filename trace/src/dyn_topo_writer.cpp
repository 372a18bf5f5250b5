// SPDX-License-Identifier: Apache-2.0
// DynTopoWriter (dyn_topo_writer.h).
#include "pypto/trace/dyn_topo_writer.h"

#include <utility>

namespace pypto::trace {

DynTopoWriter::DynTopoWriter(std::ostream& os, std::function<void()> every_records)
    : o_(os, std::move(every_records)) {
  o_ << "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
        "staticSuccCount,successors\n";
}

void DynTopoWriter::begin(const DynTopoRow& r, std::uint64_t successors) {
  o_.u(r.seq_no) << ',';
  o_.u(r.task_id) << ',';
  o_.u(r.root_index) << ',';
  o_.u(r.root_hash) << ',';
  o_.u(r.opmagic) << ',';
  o_.u(r.leaf_index) << ',';
  o_.u(r.leaf_hash) << ',' << r.core_type << ',';
  o_.u(r.psg_id) << ",-1,";
  o_.u(successors);
}

}  // namespace pypto::trace
