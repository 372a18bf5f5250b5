// SPDX-License-Identifier: Apache-2.0
// PyPTO's per-core task records, tilefwk_L1_prof_data.json, written record by record: a JSON
// array of blocks {blockIdx, coreType, tasks: [{seqNo, taskId, execStart, execEnd}, ...]}, start
// and end in board ticks. The one writer of the format for every producer: the generator's
// recordings (pypto_writers.h), the simulator's swim.json (the same shape, with subGraphId)
// and the hardware backend's board-format recording.
//
// Example: ProfWriter w(os, {});
//          w.block(0, "AIC");
//          w.record({/*seq_no*/ 0, /*task_id*/ 1, /*sub_graph_id*/ 0, 1000000, 1000300});
//          w.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string_view>

#include "pypto/trace/text_out.h"

namespace pypto::trace {

struct ProfRecord {
  std::uint32_t seq_no = 0;
  std::uint32_t task_id = 0;
  std::uint32_t sub_graph_id = 0;  // PyPTO's leaf-function index; written if the layout says
  std::uint64_t exec_start = 0, exec_end = 0;  // board ticks
};

class ProfWriter {
 public:
  // Where a record carries "subGraphId", if at all.
  enum class SubGraphId : std::uint8_t { kNone, kBeforeTaskId, kAfterTaskId };
  struct Layout {
    // A record per line (PyPTO's recordings as the generator writes them), else a block per
    // line (swim.json, the hardware backend's recording: smaller for large runs).
    bool record_per_line = true;
    SubGraphId sub_graph_id = SubGraphId::kNone;
  };

  // Starts the array. `every_records` as TextOut's (a writer's Ctrl-C and stream checks).
  ProfWriter(std::ostream& os, Layout layout, std::function<void()> every_records = {});
  ProfWriter(const ProfWriter&) = delete;
  ProfWriter& operator=(const ProfWriter&) = delete;

  // Contract: starts the next block (closing the one before); a block holds at least one
  // record (readers take an empty one, but no producer writes one).
  void block(std::uint32_t block_idx, std::string_view core_type);
  // Contract: after block(); the block's records in the order the core ran them.
  void record(const ProfRecord& r);
  // Contract: called once, last: closes the array and hands the text to the stream.
  void finish();

 private:
  void end_block();

  TextOut o_;
  const Layout layout_;
  bool in_block_ = false;
  bool first_block_ = true;
  bool first_record_ = true;
};

}  // namespace pypto::trace
