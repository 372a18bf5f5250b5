// SPDX-License-Identifier: Apache-2.0
// PyPTO's dyn_topo.txt, written row by row: the header line, then per task seqNo, taskId,
// rootIndex, rootHash, opmagic, leafIndex, leafHash, coreType, psgId, wrapId (-1: none),
// staticSuccCount and the successors' taskIds. The one writer of the format for every
// producer: the generator's recordings (pypto_writers.h) and the hardware backend's.
//
// Example: DynTopoWriter w(os);
//          DynTopoRow r; r.task_id = 1; r.core_type = "AIC";
//          w.begin(r, 1); w.successor(2); w.end();
//          w.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string_view>

#include "pypto/trace/text_out.h"

namespace pypto::trace {

struct DynTopoRow {
  std::uint32_t seq_no = 0, task_id = 0;
  std::uint64_t root_index = 0, root_hash = 0, opmagic = 0;
  std::uint32_t leaf_index = 0;
  std::uint64_t leaf_hash = 0;
  std::string_view core_type;  // "AIC", "AIV", "HUB" or "AICPU"
  std::uint32_t psg_id = 0;
};

class DynTopoWriter {
 public:
  // Writes the header line. `every_records` as TextOut's.
  explicit DynTopoWriter(std::ostream& os, std::function<void()> every_records = {});
  DynTopoWriter(const DynTopoWriter&) = delete;
  DynTopoWriter& operator=(const DynTopoWriter&) = delete;

  // Contract: begin() with the row and its successor count, that many successor() calls,
  // end(), for each task in turn.
  void begin(const DynTopoRow& r, std::uint64_t successors);
  void successor(std::uint32_t task_id) {
    o_ << ',';
    o_.u(task_id);
  }
  void end() {
    o_ << '\n';
    o_.end_record();
  }
  // Contract: called once, last: hands the text to the stream.
  void finish() { o_.flush(); }

 private:
  TextOut o_;
};

}  // namespace pypto::trace
