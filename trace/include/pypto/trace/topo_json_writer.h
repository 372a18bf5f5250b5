// SPDX-License-Identifier: Apache-2.0
// PyPTO's topo.json, written record by record: a JSON array of tasks {taskId, funcName,
// semanticLabel, successors} and the optional keys PyPTO's tools read. The one writer of the
// format for every producer: the generator's recordings (pypto_writers.h), the simulator's
// report (taskId = seqNo << 32 | id, with the original ids, core type, root and psgId) and
// the hardware backend's recording (with the core type).
//
// Example: TopoJsonWriter w(os);
//          TopoRecord r; r.task_id = 0; r.func_name = "\"qk_matmul\"";
//          w.begin(r); w.successor(1); w.end();
//          w.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string_view>

#include "pypto/trace/text_out.h"

namespace pypto::trace {

struct TopoRecord {
  std::uint64_t task_id = 0;
  // "oriTaskId"/"oriSeqNo": the task's own id and device task, when taskId packs them.
  bool has_ori = false;
  std::uint32_t ori_task_id = 0, ori_seq_no = 0;
  std::string_view func_name;  // as JSON text: quoted and escaped
  std::string_view core_type;  // "AIC", "AIV", ...; empty: no "coreType"
  bool has_root = false;       // "rootIndex" and "psgId"
  std::uint32_t root_index = 0, psg_id = 0;
};

class TopoJsonWriter {
 public:
  // Starts the array. `every_records` as TextOut's.
  explicit TopoJsonWriter(std::ostream& os, std::function<void()> every_records = {});
  TopoJsonWriter(const TopoJsonWriter&) = delete;
  TopoJsonWriter& operator=(const TopoJsonWriter&) = delete;

  // Contract: begin(), its successors' taskIds, end(), for each task in turn.
  void begin(const TopoRecord& r);
  void successor(std::uint64_t task_id) {
    if (!first_successor_) o_ << ',';
    first_successor_ = false;
    o_.u(task_id);
  }
  void end();
  // Contract: called once, last: closes the array and hands the text to the stream.
  void finish();

 private:
  TextOut o_;
  bool first_ = true;
  bool first_successor_ = true;
};

}  // namespace pypto::trace
