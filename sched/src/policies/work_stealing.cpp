// SPDX-License-Identifier: Apache-2.0
// work_stealing: the tasks a thread resolves stay in its own staging buffer (never
// published, except when the buffer is full); the owner sends the newest to its idle cores,
// then to its free pending slots. A thread with an idle core and no shared work steals the
// oldest staged task of the thread holding the most (ties: lowest id), one locked queue
// operation per task. The device task's first tasks come from the shared queue as in fifo.
#include <memory>

#include "pypto/sched/registry.h"

namespace pypto::sched {
namespace {

class WorkStealing final : public Policy {
 public:
  explicit WorkStealing(const PolicyParams& p)
      : min_staged_(static_cast<std::size_t>(p.get_int("min_victim_staged"))),
        prefill_(p.get_bool("prefill_pending")) {}

  StagedPick pick_staged(ThreadContext& c, common::CoreType ct,
                         const TaskListView& staged) override {
    const MachineView& m = c.view();
    const common::ThreadId t = c.thread();
    const std::size_t idle = m.idle_count(t, ct);
    if (idle > 0) return {staged.size() - 1, m.idle_core(t, ct, idle - 1)};
    if (!prefill_) return {};
    for (common::CoreId core = m.first_core(t, ct); core < m.end_core(t, ct); ++core) {
      if (m.has_free_slot(core)) return {staged.size() - 1, core};
    }
    return {};
  }

  bool publish_staged(ThreadContext&, common::CoreType, PublishPoint, std::size_t) override {
    return false;
  }

  common::ThreadId steal_victim(const MachineView& m, common::ThreadId t,
                                common::CoreType ct) const override {
    common::ThreadId best = kNoThread;
    std::size_t most = min_staged_ > 0 ? min_staged_ - 1 : 0;
    for (common::ThreadId o = 0; o < m.num_threads(); ++o) {
      if (o != t && m.staged_count(o, ct) > most) {
        most = m.staged_count(o, ct);
        best = o;
      }
    }
    return best;
  }

 private:
  std::size_t min_staged_;
  bool prefill_;
};

}  // namespace

void register_work_stealing(Registry& r) {
  r.add("work_stealing", "owners run their newest ready tasks, idle threads steal the oldest",
        {{"min_victim_staged", ParamType::kInt, 1, 1, 1 << 20,
          "steal only from a thread holding at least this many staged tasks"},
         {"prefill_pending", ParamType::kBool, 1, 0, 1,
          "owners also fill their busy cores' pending slots from their staging buffer"}},
        [](const PolicyParams& p) { return std::make_unique<WorkStealing>(p); });
}

}  // namespace pypto::sched
