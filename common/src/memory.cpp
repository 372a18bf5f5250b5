// SPDX-License-Identifier: Apache-2.0
#include "pypto/common/memory.h"

#include <fstream>
#include <string>

namespace pypto::common {
namespace {

// One "Key: N kB" line of /proc/meminfo, in bytes; 0 if absent.
std::uint64_t meminfo_bytes(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string k, unit;
  std::uint64_t v = 0;
  while (in >> k >> v >> unit) {
    if (k == key) return v * 1024;
  }
  return 0;
}

std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  return in >> v ? v : 0;  // "max" reads as no number: no limit
}

}  // namespace

std::uint64_t available_memory_bytes() {
  std::uint64_t avail = meminfo_bytes("MemAvailable:");
  const std::uint64_t limit = read_number("/sys/fs/cgroup/memory.max");
  const std::uint64_t used = read_number("/sys/fs/cgroup/memory.current");
  if (limit != 0 && limit > used && (avail == 0 || limit - used < avail)) avail = limit - used;
  return avail;
}

}  // namespace pypto::common
