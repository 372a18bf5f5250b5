// SPDX-License-Identifier: Apache-2.0
// A task graph as a native trace (traces/FORMAT.md, version 1), optionally with the times of
// a simulation as recorded `start`/`end`: a replay written this way is a recording that our
// own model made with known parameters (what `pypto-sim calibrate` is tested on, and a way to
// hand a simulated schedule to any tool that reads recordings).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pypto/model/cost_model.h"
#include "pypto/sched/task_graph.h"
#include "pypto/trace/text_out.h"

namespace pypto::trace {

// The native format's lines, field by field (traces/FORMAT.md): the one writer of the format,
// for a task graph (write_native_trace) and for the synthetic generator, which writes each
// record as it makes it. Each method writes its field with the comma before it; the caller
// gives a record's fields in the order it wants them.
//
// Example: NativeWriter w(os);
//          w.header("a2", 1, "");
//          w.begin_task(0, common::CoreType::kAiv, "\"vec\"", 0);
//          w.dur(1000);
//          w.end_task();
//          w.finish();
class NativeWriter {
 public:
  // `every_records` as TextOut's (a writer's Ctrl-C and stream checks).
  explicit NativeWriter(std::ostream& os, std::function<void()> every_records = {})
      : o_(os, std::move(every_records)) {}

  // The header line; an empty `chip` or `generator` is left out.
  void header(std::string_view chip, std::uint64_t tasks, std::string_view generator);
  // A device-task record.
  void device_task(std::uint32_t seq_no, std::uint32_t parallel_group) {
    o_ << "{\"device_task\":";
    o_.u(seq_no) << ",\"parallel_group\":";
    o_.u(parallel_group) << "}\n";
    o_.end_record();
  }
  // Contract: a task record is begin_task(), its other fields, end_task(). `kernel_json` is
  // the kernel's name as JSON text (quoted, escaped).
  void begin_task(std::uint64_t id, common::CoreType core, std::string_view kernel_json,
                  std::uint64_t root) {
    o_ << "{\"id\":";
    o_.u(id) << ",\"core\":\"" << common::to_string(core) << "\",\"kernel\":" << kernel_json
             << ",\"root\":";
    o_.u(root);
  }
  void dt(std::uint32_t seq_no) {
    o_ << ",\"dt\":";
    o_.u(seq_no);
  }
  // Contract: [first, last) is not empty.
  template <class It>
  void succ(It first, It last) {
    o_ << ",\"succ\":[";
    for (It i = first; i != last; ++i) {
      if (i != first) o_ << ',';
      o_.u(*i);
    }
    o_ << ']';
  }
  void start_end(std::uint64_t start_ns, std::uint64_t end_ns) {
    o_ << ",\"start\":";
    o_.u(start_ns) << ",\"end\":";
    o_.u(end_ns);
  }
  void dur(std::uint64_t ns) {
    o_ << ",\"dur\":";
    o_.u(ns);
  }
  // Contract: mem_begin(), mem() per range, mem_end().
  void mem_begin() {
    o_ << ",\"mem\":[";
    first_item_ = true;
  }
  // burst_bytes: sched::MemAccess::burst_bytes, written only when not 0; no_l2: the range goes
  // past L2 (kind "rn" / "wn").
  void mem(std::uint64_t addr, std::uint64_t bytes, bool is_write, std::uint64_t burst_bytes = 0,
           bool no_l2 = false) {
    o_ << (first_item_ ? "[" : ",[");
    first_item_ = false;
    o_.u(addr) << ',';
    o_.u(bytes) << (is_write ? ",\"w" : ",\"r") << (no_l2 ? "n\"" : "\"");
    if (burst_bytes != 0) {
      o_ << ',';
      o_.u(burst_bytes);
    }
    o_ << ']';
  }
  void mem_end() { o_ << ']'; }
  // Contract: ops_begin(), op() per tile op, ops_end(). `dtype` as the reader names it.
  void ops_begin() {
    o_ << ",\"ops\":[";
    first_item_ = true;
  }
  void op(std::string_view name, std::string_view dtype,
          std::initializer_list<std::uint64_t> dims) {
    op_dims(name, dtype, dims.begin(), dims.end());
  }
  // Contract: every dim is >= 0.
  void op(std::string_view name, std::string_view dtype, const std::vector<std::int64_t>& dims) {
    op_dims(name, dtype, dims.begin(), dims.end());
  }
  void ops_end() { o_ << ']'; }
  void tiles(std::uint64_t n) {
    o_ << ",\"tiles\":";
    o_.u(n);
  }
  void cycles(std::uint64_t n) {
    o_ << ",\"cycles\":";
    o_.u(n);
  }
  void end_task() {
    o_ << "}\n";
    o_.end_record();
  }
  // Contract: called once, last: hands the text to the stream.
  void finish() { o_.flush(); }

 private:
  template <class It>
  void op_dims(std::string_view name, std::string_view dtype, It first, It last) {
    o_ << (first_item_ ? "[\"" : ",[\"") << name << "\",\"" << dtype << "\",[";
    first_item_ = false;
    for (It i = first; i != last; ++i) {
      if (i != first) o_ << ',';
      o_.u(static_cast<std::uint64_t>(*i));
    }
    o_ << "]]";
  }

  TextOut o_;
  bool first_item_ = true;
};

// The times of every task of a run, in ps (a simulation's timeline, or a hardware run's).
struct TaskTimes {
  const std::vector<std::uint64_t>& start_ps;
  const std::vector<std::uint64_t>& end_ps;
};

// Writes g with its device tasks (`dt`, one device-task record each), kernels, roots, edges,
// memory ranges, tiles and compute cycles (as `cycles`: the tile ops are already priced).
// With `times` (of a simulation of g), every AIC/AIV/AICPU task gets `start` and
// `end` in ns, the simulated ones rounded down to the ns, the end as start plus the rounded
// duration; without it, a task keeps its recorded duration (`dur`) if it has one. `chip` is
// the header's chip hint, `generator` its free text.
// `task_ops`, if given, appends the tile ops of an AIC/AIV/AICPU task to `ops` (empty when it is
// called) and returns the compute cycles they account for (the compiler's dump of a launch gives
// each task's priced ops): they are written as the task's `ops`, after its memory ranges, and
// `cycles` leaves their cycles out. This writer is the one owner of the format's records.
// Contract: times, if given, holds start_ps/end_ps for every task of g; every dim of an op's
// shape is >= 0. Throws pypto::Error when the stream fails.
using TaskOps = std::function<std::uint64_t(common::TaskId t, std::vector<model::TileOp>& ops)>;
void write_native_trace(const sched::TaskGraph& g, const TaskTimes* times, const std::string& chip,
                        const std::string& generator, std::ostream& out,
                        const TaskOps& task_ops = {});

}  // namespace pypto::trace
