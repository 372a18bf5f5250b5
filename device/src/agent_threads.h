// SPDX-License-Identifier: Apache-2.0
// Host threads kept across runs for the runtime's agents (internal to device/). A run needs
// every core stream and schedule thread at once, as they wait on one another, so it borrows
// one thread per agent; starting ~75 threads on every call would be most of a small kernel's
// host overhead. Idle threads stay parked for the next run; a fork()ed child starts
// with none (fork copies only the calling thread) and makes its own.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>

namespace pypto::device {

// Counts jobs down; wait() returns when all have finished.
class Countdown {
 public:
  explicit Countdown(std::size_t n) : left_(n) {}
  void done() {
    const std::lock_guard<std::mutex> lock(mu_);
    if (--left_ == 0) cv_.notify_all();
  }
  // Contract: `n` of the jobs counted never start; they count as done.
  void forget(std::size_t n) {
    const std::lock_guard<std::mutex> lock(mu_);
    left_ -= n;
    if (left_ == 0) cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return left_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t left_;
};

// Contract: runs `job` on a thread of its own (a parked one, else a new one) and calls
// `finished.done()` after it returns. `job` must not throw (agents catch their errors and
// report them to the run). Throws std::system_error if no thread could be started; the job
// then never runs.
void start_agent(std::function<void()> job, Countdown& finished);

}  // namespace pypto::device
