// SPDX-License-Identifier: Apache-2.0
// A reader's parse on a thread of its own: the producer parses the file into batches of
// plain records, the consumer (the reading thread) checks them in file order and builds the
// graph. Batches wait in a bounded queue, so a large file is never held twice. What ended
// the parse (a syntax error, a record that fails its own checks) is rethrown by next() once
// the batches before it are taken: with the consumer's own checks run in file order, the
// first error in file order is the one reported, as if one thread read the file.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace pypto::trace::detail {

template <class Batch>
class BatchPipe {
 public:
  // Thrown by push() once the consumer has stopped the parse; the producer lets it pass.
  struct Stopped {};
  using Producer = std::function<void(BatchPipe&)>;

  // Contract: starts `produce` on a thread of its own; the batches it push()es, weighing
  // `max_weight` in all at most (a heavier batch still goes alone), are taken by next().
  BatchPipe(std::size_t max_weight, Producer produce)
      : max_weight_(max_weight), produce_(std::move(produce)), thread_([this] { run(); }) {}
  ~BatchPipe() { stop(); }
  BatchPipe(const BatchPipe&) = delete;
  BatchPipe& operator=(const BatchPipe&) = delete;

  // Contract (consumer): the next batch in file order into `out`, true; false once the
  // producer has returned and every batch is taken; the producer's exception, rethrown,
  // once the batches before it are taken. `out`'s previous contents go back to the
  // producer for reuse (recycle()).
  bool next(Batch& out) {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [this] { return !queue_.empty() || done_; });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    if (spare_.size() < kMaxSpare) spare_.push_back(std::move(out));
    out = std::move(queue_.front().first);
    queued_weight_ -= queue_.front().second;
    queue_.pop_front();
    room_.notify_one();
    return true;
  }
  // Contract (consumer): stops the parse and joins the thread; true if the producer had
  // returned normally (for a JsonStream: read the whole file without a syntax error).
  bool stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    room_.notify_one();
    if (thread_.joinable()) thread_.join();
    return finished_;
  }

  // Contract (producer): queues `b` (weight `weight`), waiting for room; throws Stopped
  // once the consumer has stopped.
  void push(Batch&& b, std::size_t weight) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock,
               [&] { return stop_ || queue_.empty() || queued_weight_ + weight <= max_weight_; });
    if (stop_) throw Stopped{};
    queued_weight_ += weight;
    queue_.emplace_back(std::move(b), weight);
    ready_.notify_one();
  }
  // Contract (producer): push() unless `b` holds nothing (weight 0): for the last, partly
  // filled batch, and for the records parsed before an error, which go ahead of it.
  void push_partial(Batch&& b, std::size_t weight) {
    if (weight > 0) push(std::move(b), weight);
  }
  // Contract (producer): a batch the consumer is done with (its buffers keep their
  // capacity), or a default one.
  Batch recycle() {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.empty()) return Batch{};
    Batch b = std::move(spare_.back());
    spare_.pop_back();
    return b;
  }
  // Contract (producer): whether the consumer has stopped (to leave a long batch early).
  bool stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }

 private:
  void run() {
    try {
      produce_(*this);
      finished_ = true;
    } catch (const Stopped&) {
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    ready_.notify_one();
  }

  static constexpr std::size_t kMaxSpare = 4;  // a producer that recycles nothing holds no more

  const std::size_t max_weight_;
  Producer produce_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::pair<Batch, std::size_t>> queue_;
  std::vector<Batch> spare_;
  std::size_t queued_weight_ = 0;
  bool stop_ = false, done_ = false;
  bool finished_ = false;  // written by the thread before done_, read after join
  std::exception_ptr error_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace pypto::trace::detail
