// SPDX-License-Identifier: Apache-2.0
// The native trace reader (traces/FORMAT.md) behind format detection; and, differentially,
// the same file read whole and streamed (GraphFeed, as `pypto-sim run` reads it): the same
// graph or the same error. The streamed read stitches one root per device task, so that
// every root boundary of the input is a cut.
#include <memory>

#include "../common/graph_diff.h"
#include "fuzz_trace_common.h"
#include "pypto/sim/trace/graph_feed.h"

namespace {

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
  if (whole_error != "(none)") return;
  std::string columns;
  for (const std::string& c : testing::graph_differences(whole.graph, feed->graph()))
    columns += " " + c;
  if (!columns.empty()) {
    fuzz::finding("the streamed read gives another graph than the whole read",
                  path + ": differs in" + columns);
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
