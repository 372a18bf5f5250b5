// SPDX-License-Identifier: Apache-2.0
// write_reports: a run's report files, written as one set (each to a temporary, all renamed
// once complete, stats.json last), trace.json beside the others on a second thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "report_files.h"

namespace pypto::sim {

std::vector<std::string> write_reports(const std::string& dir, const sched::TaskGraph& g,
                                       const model::ChipConfig& chip, const SimResult& r,
                                       const ReportOptions& opt, GraphReports* ahead_reports) {
  GraphReports::State* const ahead = ahead_reports != nullptr ? ahead_reports->s_.get() : nullptr;
  std::filesystem::path made = report::make_folder(dir);
  // topo.json written ahead, with the folder it may have made: this call's from here on. Its
  // writer may still be running: it is waited for after the other files are written, not
  // before, so that it overlaps them.
  std::unique_ptr<common::OutputFile>
      ahead_topo;  // taken in the try below, which waits on every path
  if (ahead != nullptr) {
    ahead->taken = true;
    if (made.empty()) made = ahead->made;
  }
  // Contract: before anything that ends the file written ahead (commit, removal).
  const auto wait_ahead = [ahead] {
    if (ahead != nullptr) ahead->wait();
  };
  const bool have_timeline = r.timeline.core.size() == g.num_tasks();
  const std::string stats = dir + "/stats.json";
  const std::string merged = opt.merged_swimlane.empty() ? "" : dir + "/" + opt.merged_swimlane;
  const std::filesystem::path merged_dir = std::filesystem::path(merged).parent_path();
  std::filesystem::path merged_made;
  // Each file goes to a temporary and every one is renamed only once all are complete,
  // stats.json last: a folder holding stats.json holds the complete reports of that run. The
  // earlier run's stats.json goes first, so a failure here never leaves one claiming success
  // next to this run's files, and its other reports go too (a folder holds one run).
  std::error_code ec;
  std::filesystem::remove(stats, ec);
  std::vector<std::unique_ptr<common::OutputFile>> files;
  try {
    if (ahead != nullptr) ahead_topo = std::move(ahead->topo);
    // trace.json, the largest report, is written on this thread while a second thread writes
    // the others (each reads only the graph and the result): the same bytes, in about the
    // time of trace.json alone. The helper joins before anything is committed or removed,
    // and an error of trace.json (the first file) goes before one of the others.
    common::OutputFile* trace = nullptr;
    if (opt.trace_json && have_timeline) {
      files.push_back(std::make_unique<common::OutputFile>(dir + "/trace.json"));
      trace = files.back().get();
    }
    std::vector<std::function<void()>> others;
    if (opt.swim_json && have_timeline) {
      files.push_back(std::make_unique<common::OutputFile>(dir + "/swim.json"));
      common::OutputFile* swim = files.back().get();
      // PyPTO's own profiling tools read these two next to swim.json (docs/cli.md).
      const bool topo_written = ahead_topo != nullptr;
      files.push_back(topo_written ? std::move(ahead_topo)
                                   : std::make_unique<common::OutputFile>(dir + "/topo.json"));
      common::OutputFile* topo = files.back().get();
      files.push_back(std::make_unique<common::OutputFile>(dir + "/aicpu.data"));
      common::OutputFile* aicpu = files.back().get();
      others.push_back([&g, &chip, &r, swim, topo, topo_written, aicpu] {
        // Both per-core reports walk the same order.
        const std::vector<std::vector<common::TaskId>> per_core =
            report::tasks_by_core(g, r.timeline, r.stats.aic.count + r.stats.aiv.count);
        report::write_swim_json(*swim, g, chip, r, per_core);
        if (!topo_written) report::write_topo_json(*topo, g);
        report::write_aicpu_data(*aicpu, g, chip, r, per_core);
      });
    }
    if (!merged.empty() && have_timeline) {
      merged_made = report::make_folder(merged_dir);
      files.push_back(std::make_unique<common::OutputFile>(merged));
      common::OutputFile* m = files.back().get();
      // PyPTO's swimlane tool writes its bubble analysis beside it; analyzers read both.
      files.push_back(
          std::make_unique<common::OutputFile>((merged_dir / kBubbleAnalysisFile).string()));
      common::OutputFile* b = files.back().get();
      others.push_back(
          [&g, &r, &opt, m, b] { report::write_merged_swimlane_to(*m, g, r, opt, b); });
    }
    if (opt.on_file) {
      for (const auto& f : files) opt.on_file(f->path());
      if (trace != nullptr) opt.on_file(trace->path());  // the one the run waits for
    }
    auto write_others = [&others] {
      for (auto& w : others) w();
    };
    if (trace != nullptr && !others.empty() && g.num_tasks() >= report::kParallelWriteTasks) {
      std::exception_ptr helper_error;
      // The helper sees an interruption through its own flag: only this thread may poll the
      // host (Python's signal check), so it polls while it waits.
      std::atomic<bool> cancel{false}, done{false};
      std::thread helper([&] {
        const common::ScopedCancelFlag on_cancel(&cancel);
        try {
          write_others();
        } catch (...) {
          helper_error = std::current_exception();
        }
        done = true;
      });
      try {
        report::write_trace_json(*trace, g, r, opt);
      } catch (...) {
        cancel = true;
        helper.join();
        throw;
      }
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (common::interrupt_requested()) cancel = true;
      }
      helper.join();
      if (helper_error) std::rethrow_exception(helper_error);
    } else {
      if (trace != nullptr) report::write_trace_json(*trace, g, r, opt);
      write_others();
    }
    wait_ahead();
    if (ahead != nullptr && ahead->error) std::rethrow_exception(ahead->error);
    if (opt.on_file) opt.on_file(stats);
    files.push_back(std::make_unique<common::OutputFile>(stats));
    files.back()->stream() << stats_json(r).dump(2) << "\n";
    files.back()->finish();
    common::check_interrupt("writing the reports in " + dir);
    for (const char* stale : {"trace.json", "swim.json", "topo.json", "aicpu.data"}) {
      const std::string p = dir + "/" + stale;
      const bool kept =
          std::any_of(files.begin(), files.end(), [&](const auto& f) { return f->path() == p; });
      if (!kept) std::filesystem::remove(p, ec);
    }
    for (auto& f : files) f->commit();  // stats.json is the last
  } catch (...) {
    wait_ahead();   // its file may be one of those below
    files.clear();  // removes the temporaries
    ahead_topo.reset();
    if (!merged.empty()) report::remove_made_folders(merged_dir, merged_made);
    report::remove_made_folders(dir, made);
    throw;
  }
  std::vector<std::string> written;
  written.push_back(stats);
  for (const auto& f : files) {
    if (f->path() != stats) written.push_back(f->path());
  }
  return written;
}

}  // namespace pypto::sim
