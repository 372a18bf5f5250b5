// SPDX-License-Identifier: Apache-2.0
// device_sched_mode 0 (FIFO): all threads take the oldest ready task of the shared queue,
// and refill their cores from it before resolving completions. Ties: queue order.
#include <memory>

#include "pypto/sched/policy.h"

namespace pypto::sched {
namespace {

// The interface defaults are mode 0.
class Fifo final : public Policy {};

}  // namespace

std::unique_ptr<Policy> make_fifo() { return std::make_unique<Fifo>(); }

}  // namespace pypto::sched
