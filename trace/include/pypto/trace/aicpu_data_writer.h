// SPDX-License-Identifier: Apache-2.0
// PyPTO's device log records (aicpu.data), the input of its
// tools/profiling/tilefwk_prof_data_parser.py: 256-byte records in the host's native layout
// (Python struct "HHIIIQ" "HHIHBB" "I"*7 then 8 x "HHIQQ"), one per core and up to 8 tasks,
// type 10 (AICPU op info), data type 2 (log); per task seqNo, subGraphId, taskId and start and
// end in board ticks. Core ids are 7 bits and seqNo / subGraphId 16 bits in that format:
// larger values are cut to the field, as on the device. The simulator's reports write it.
//
// Example: AicpuDataWriter w(os);
//          w.core(0, /*aic=*/true, tasks.size(), [&](std::size_t i) { return tasks[i]; });
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <utility>

namespace pypto::trace {

struct AicpuTask {
  std::uint32_t seq_no = 0, sub_graph_id = 0, task_id = 0;
  std::uint64_t exec_start = 0, exec_end = 0;  // board ticks
};

class AicpuDataWriter {
 public:
  // `every_records` is called once every TextOut::kCheckEvery records (a writer's Ctrl-C and
  // stream checks).
  explicit AicpuDataWriter(std::ostream& os, std::function<void()> every_records = {})
      : os_(os), every_records_(std::move(every_records)) {}

  // The tasks a core ran, in the order it ran them: task_at(i) for i < n, 8 to a record.
  template <class TaskAt>
  void core(std::uint32_t core, bool aic, std::size_t n, TaskAt&& task_at) {
    const std::uint16_t core_type = aic ? 1 : 0;  // the format's AIV = 0, AIC = 1
    for (std::size_t i = 0; i < n; i += 8) {
      Record rec;
      rec.core = static_cast<std::uint16_t>((core & 127) | (core_type << 7) | (2 << 10));
      rec.task_count = static_cast<std::uint8_t>(std::min<std::size_t>(8, n - i));
      for (std::size_t k = 0; k < rec.task_count; ++k) {
        const AicpuTask t = task_at(i + k);
        auto& out = rec.tasks[k];
        out.seq_no = static_cast<std::uint16_t>(t.seq_no);
        out.sub_graph_id = static_cast<std::uint16_t>(t.sub_graph_id);
        out.task_id = t.task_id;
        out.exec_start = t.exec_start;
        out.exec_end = t.exec_end;
      }
      write(rec);
    }
  }

 private:
  struct Record {
    std::uint16_t magic = 0x5A5A, level = 0;
    std::uint32_t type = 10, thread_id = 0, data_len = 0;
    std::uint64_t time_stamp = 0;
    std::uint16_t head = 0, core = 0;
    std::uint32_t task_id = 0;
    std::uint16_t stream_id = 0;
    std::uint8_t task_count = 0, res0 = 0;
    std::uint32_t reserved[7] = {};
    struct Task {
      std::uint16_t seq_no = 0, sub_graph_id = 0;
      std::uint32_t task_id = 0;
      std::uint64_t exec_start = 0, exec_end = 0;
    } tasks[8];
  };
  static_assert(sizeof(Record) == 256, "PyPTO's aicpu.data record is 256 bytes");

  void write(const Record& rec);

  std::ostream& os_;
  std::function<void()> every_records_;
  std::uint64_t records_ = 0;
};

}  // namespace pypto::trace
