// SPDX-License-Identifier: Apache-2.0
// The replay metrics (traces/FORMAT.md "Replay metrics") as an observer of a run of a graph
// with recorded starts: the recorded half depends on the graph alone and, on a large graph,
// is worked out on a second thread while the model runs; the simulated half is read from
// the run's timeline once the run has ended.
#pragma once

#include <future>

#include "pypto/sim/report.h"
#include "pypto/sim/run_observer.h"
#include "pypto/sim/simulation.h"

namespace pypto::sim {

class ReplayMetrics final : public RunObserver {
 public:
  // Contract: `timeline` holds the run's task times (TimelineRecorder with task times) and
  // outlives this; the graph has recorded starts.
  explicit ReplayMetrics(const Timeline& timeline) : tl_(timeline) {}
  unsigned events() const override { return 0; }
  void on_run_start(const RunInfo& run) override;
  void on_run_end() override;

  // Contract: valid after on_run_end.
  const ReplayFidelity& result() const { return fidelity_; }

 private:
  const Timeline& tl_;
  const sched::TaskGraph* graph_ = nullptr;
  // The recorded half's thread; the future's destructor waits for it on every path out, a
  // failed run's included.
  std::future<RecordedReplay> recorded_;
  ReplayFidelity fidelity_;
};

}  // namespace pypto::sim
