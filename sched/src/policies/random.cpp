// SPDX-License-Identifier: Apache-2.0
// random: a baseline. A thread takes a uniformly random entry of the shared queue and
// sends a uniformly random staged task to its idle core; cores and everything else as
// fifo. Seeded (splitmix64), so every run with the same seed makes the same decisions.
#include <memory>

#include "pypto/sched/registry.h"

namespace pypto::sched {
namespace {

class Random final : public Policy {
 public:
  explicit Random(const PolicyParams& p) : state_(static_cast<std::uint64_t>(p.get_int("seed"))) {}

  std::size_t pick_shared(ThreadContext&, common::CoreType, const TaskListView& q, bool,
                          bool) override {
    return below(q.size());
  }

  StagedPick pick_staged(ThreadContext& c, common::CoreType ct,
                         const TaskListView& staged) override {
    const std::size_t idle = c.view().idle_count(c.thread(), ct);
    if (idle == 0) return {};
    return {below(staged.size()), c.view().idle_core(c.thread(), ct, idle - 1)};
  }

 private:
  // A uniform index in [0, n) (n > 0); the modulo bias is far below anything measurable.
  std::size_t below(std::size_t n) {
    state_ += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::size_t>((z ^ (z >> 31)) % n);
  }
  std::uint64_t state_;
};

}  // namespace

void register_random(Registry& r) {
  r.add("random", "a random ready task (seeded baseline)",
        {{"seed", ParamType::kInt, 1, 0, 4294967295.0, "random seed"}},
        [](const PolicyParams& p) { return std::make_unique<Random>(p); });
}

}  // namespace pypto::sched
