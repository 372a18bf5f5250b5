// SPDX-License-Identifier: Apache-2.0
#include "agent_threads.h"

#include <pthread.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace pypto::device {
namespace {

// One parked thread: takes one job at a time through its own slot.
struct Worker {
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> job;
  Countdown* finished = nullptr;
};

class Pool {
 public:
  // Never destroyed: at exit parked threads still wait on their workers.
  static Pool& get() {
    static const bool registered = [] {
      ::pthread_atfork(nullptr, nullptr, [] { current().store(nullptr); });
      return true;
    }();
    (void)registered;
    Pool* p = current().load();
    if (p == nullptr) {
      const std::lock_guard<std::mutex> lock(make_mu());
      p = current().load();
      if (p == nullptr) {
        p = new Pool;
        current().store(p);
      }
    }
    return *p;
  }

  void start(std::function<void()> job, Countdown& finished) {
    Worker* w = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      if (!parked_.empty()) {
        w = parked_.back();
        parked_.pop_back();
      }
    }
    if (w == nullptr) {
      auto fresh = std::make_unique<Worker>();
      fresh->job = std::move(job);
      fresh->finished = &finished;
      Worker* raw = fresh.get();
      std::thread([this, raw] { loop(raw); }).detach();  // may throw: nothing started then
      fresh.release();                                   // owned by its thread from now on
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(w->mu);
      w->job = std::move(job);
      w->finished = &finished;
    }
    w->cv.notify_one();
  }

 private:
  static std::atomic<Pool*>& current() {
    static std::atomic<Pool*> p{nullptr};
    return p;
  }
  static std::mutex& make_mu() {
    static std::mutex mu;
    return mu;
  }

  void loop(Worker* w) {
    for (;;) {
      std::function<void()> job;
      Countdown* finished = nullptr;
      {
        std::unique_lock<std::mutex> lock(w->mu);
        w->cv.wait(lock, [w] { return w->finished != nullptr; });
        job = std::move(w->job);
        w->job = nullptr;
        finished = w->finished;
        w->finished = nullptr;
      }
      job();
      job = nullptr;  // the run's captures go before the run is told
      {
        // Parked before the run hears of it, so that the run's next call finds it.
        const std::lock_guard<std::mutex> lock(mu_);
        parked_.push_back(w);
      }
      finished->done();
    }
  }

  std::mutex mu_;
  std::vector<Worker*> parked_;
};

}  // namespace

void start_agent(std::function<void()> job, Countdown& finished) {
  Pool::get().start(std::move(job), finished);
}

}  // namespace pypto::device
