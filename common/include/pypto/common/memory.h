// SPDX-License-Identifier: Apache-2.0
// How much memory this process may still take, for the limits checked before a large piece
// of work starts (a trace load, a launch's unrolled loops).
#pragma once

#include <cstdint>

namespace pypto::common {

// MemAvailable of /proc/meminfo, or what the cgroup's memory.max leaves above
// memory.current when that is less; 0 when neither can be read (no limit known).
std::uint64_t available_memory_bytes();

}  // namespace pypto::common
