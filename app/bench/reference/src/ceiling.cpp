// SPDX-License-Identifier: Apache-2.0
// The bare SystemC ceiling: the chip's agents (one SC_METHOD per schedule thread and per
// core, each with its own event) running the minimal loop of minimal_runtime.h and
// nothing else. Whatever the full model adds (L2, HBM, workspace, policies, statistics)
// can only make it slower, so this model's tasks per second bound any SystemC model of
// the chip.
#include <chrono>
#include <memory>
#include <string>
#include <systemc>

#include "minimal_runtime.h"
#include "pypto/bench/reference.h"
#include "pypto/sim/systemc_context.h"

namespace pypto::bench {
namespace {

using common::CoreId;
using common::ThreadId;
using common::TimePs;
using detail::MinimalRuntime;

class CeilingThread;
class CeilingCore;

struct ScBackend {
  std::vector<CeilingThread*> threads;
  std::vector<CeilingCore*> cores;
  MinimalRuntime<ScBackend>* rt = nullptr;
  std::exception_ptr error;  // first exception raised inside a process

  TimePs now() const { return sc_core::sc_time_stamp().value(); }
  void notify_core(CoreId c, TimePs at);
  void wake_thread(ThreadId t, TimePs at);
  void fail(std::exception_ptr e) {
    if (!error) error = e;
    sc_core::sc_stop();
  }
};

sc_core::sc_time delay_to(TimePs at, TimePs now) {
  return sc_core::sc_time::from_value(at > now ? at - now : 0);
}

class CeilingThread : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CeilingThread);
  CeilingThread(sc_core::sc_module_name name, ScBackend& b, ThreadId id)
      : sc_module(name), b_(b), id_(id) {
    SC_METHOD(step);  // initialised: every thread runs a first round at time 0
    sensitive << ev;
  }
  sc_core::sc_event ev;

 private:
  void step() {
    try {
      ev.cancel();  // this round re-arms from scratch
      b_.rt->thread_round(id_);
    } catch (...) {
      b_.fail(std::current_exception());
    }
  }
  ScBackend& b_;
  ThreadId id_;
};

class CeilingCore : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CeilingCore);
  CeilingCore(sc_core::sc_module_name name, ScBackend& b, CoreId id)
      : sc_module(name), b_(b), id_(id) {
    SC_METHOD(step);
    sensitive << ev;
    dont_initialize();
  }
  sc_core::sc_event ev;

 private:
  void step() {
    try {
      b_.rt->core_event(id_);
    } catch (...) {
      b_.fail(std::current_exception());
    }
  }
  ScBackend& b_;
  CoreId id_;
};

void ScBackend::notify_core(CoreId c, TimePs at) { cores[c]->ev.notify(delay_to(at, now())); }
void ScBackend::wake_thread(ThreadId t, TimePs at) { threads[t]->ev.notify(delay_to(at, now())); }

}  // namespace

MinimalResult run_ceiling(const sched::TaskGraph& g, const MinimalCosts& costs) {
  sim::fresh_systemc_context();
  const auto wall0 = std::chrono::steady_clock::now();
  MinimalResult res;
  {
    ScBackend b;
    MinimalRuntime<ScBackend> rt(g, costs, b);
    b.rt = &rt;
    std::vector<std::unique_ptr<CeilingCore>> cores;
    for (CoreId c = 0; c < rt.num_cores(); ++c) {
      cores.push_back(std::make_unique<CeilingCore>(("core_" + std::to_string(c)).c_str(), b, c));
      b.cores.push_back(cores.back().get());
    }
    std::vector<std::unique_ptr<CeilingThread>> threads;
    for (ThreadId t = 0; t < rt.num_threads(); ++t) {
      threads.push_back(
          std::make_unique<CeilingThread>(("sched_" + std::to_string(t)).c_str(), b, t));
      b.threads.push_back(threads.back().get());
    }
    rt.start();
    sc_core::sc_start();
    if (b.error) std::rethrow_exception(b.error);
    res.tasks_done = rt.tasks_done();
    res.makespan_ps = rt.makespan_ps();
    res.activations = rt.activations();
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  NPU_CHECK(res.tasks_done == g.num_tasks(), "ceiling model completed " +
                                                 std::to_string(res.tasks_done) + " of " +
                                                 std::to_string(g.num_tasks()) + " tasks");
  return res;
}

}  // namespace pypto::bench
