// SPDX-License-Identifier: Apache-2.0
// The built-in policies, one line each. To add a policy: write
// sched/src/policies/<name>.cpp defining a Policy subclass and either a make_<name>()
// factory (no parameters) or a register_<name>(Registry&) that declares its parameters,
// declare it here and add one line to register_builtin().
#include <memory>

#include "pypto/sched/registry.h"

namespace pypto::sched {

std::unique_ptr<Policy> make_fifo();
std::unique_ptr<Policy> make_l2_affinity();
std::unique_ptr<Policy> make_fair();
std::unique_ptr<Policy> make_l2_fair();
void register_critical_path(Registry& r);
void register_work_stealing(Registry& r);
void register_random(Registry& r);

void register_builtin(Registry& r) {
  r.add("fifo", "device_sched_mode 0: shared FIFO, send before resolve", make_fifo);
  r.add("l2_affinity", "device_sched_mode 1: direct send to the producer's core, newest first",
        make_l2_affinity);
  r.add("fair", "device_sched_mode 2: no pending prefill while another thread idles", make_fair);
  r.add("l2_fair", "device_sched_mode 3: L2 affinity under the fairness rule", make_l2_fair);
  register_critical_path(r);
  register_work_stealing(r);
  register_random(r);
}

}  // namespace pypto::sched
