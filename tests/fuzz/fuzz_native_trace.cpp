// SPDX-License-Identifier: Apache-2.0
// The native trace reader (traces/FORMAT.md) behind format detection; and, differentially,
// the same file read whole and streamed (GraphFeed, as `pypto-sim run` reads it): the same
// graph or the same error. The streamed read stitches one root per device task, so that
// every root boundary of the input is a cut.
#include <memory>

#include "fuzz_trace_common.h"
#include "pypto/sim/trace/graph_feed.h"

namespace {

bool same_graph(const pypto::sched::TaskGraph& a, const pypto::sched::TaskGraph& b) {
  if (a.device_tasks.size() != b.device_tasks.size() || a.mem.size() != b.mem.size()) return false;
  for (std::size_t d = 0; d < a.device_tasks.size(); ++d) {
    const auto &x = a.device_tasks[d], &y = b.device_tasks[d];
    if (x.first_task != y.first_task || x.num_tasks != y.num_tasks || x.num_roots != y.num_roots ||
        x.seq_no != y.seq_no || x.parallel_group != y.parallel_group)
      return false;
  }
  for (std::size_t i = 0; i < a.mem.size(); ++i) {
    if (a.mem[i].addr != b.mem[i].addr || a.mem[i].bytes != b.mem[i].bytes ||
        a.mem[i].is_write != b.mem[i].is_write)
      return false;
  }
  return a.core_type == b.core_type && a.device_task == b.device_task && a.root == b.root &&
         a.kernel == b.kernel && a.orig_id == b.orig_id && a.succ_begin == b.succ_begin &&
         a.succ == b.succ && a.pred_count == b.pred_count && a.recorded_ns == b.recorded_ns &&
         a.recorded_start_ps == b.recorded_start_ps && a.mem_begin == b.mem_begin &&
         a.compute_cycles == b.compute_cycles && a.tiles == b.tiles &&
         a.kernel_names == b.kernel_names && a.recorded_makespan_ps == b.recorded_makespan_ps;
}

void check_streamed(const std::string& path) {
  using namespace pypto;
  sim::LoadOptions opts;
  opts.runtime.stitch_function_max_num = 1;
  std::string whole_error = "(none)", streamed_error = "(none)";
  sim::LoadedTrace whole;
  try {
    whole = sim::load_trace(path, opts, fuzz::a2_chip());
  } catch (const Error& e) {
    whole_error = e.what();
  }
  const std::unique_ptr<sim::GraphFeed> feed = sim::start_trace_feed(path, opts, fuzz::a2_chip());
  try {
    feed->complete();
  } catch (const Error& e) {
    streamed_error = e.what();
  }
  if (whole_error != streamed_error) {
    fuzz::finding("the streamed read fails otherwise than the whole read",
                  "whole: " + whole_error + "; streamed: " + streamed_error);
  }
  if (whole_error == "(none)" && !same_graph(whole.graph, feed->graph())) {
    fuzz::finding("the streamed read gives another graph than the whole read", path);
  }
}

}  // namespace

PYPTO_FUZZ_TARGET(native_trace) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string path = pypto::fuzz::write_input("native.ndjson", data, size);
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, ""); });
  pypto::fuzz::run_one([&] { check_streamed(path); });
  return 0;
}
