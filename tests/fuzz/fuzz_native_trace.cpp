// SPDX-License-Identifier: Apache-2.0
// The native trace reader (traces/FORMAT.md) behind format detection.
#include <string_view>

#include "fuzz_trace_common.h"

namespace {

// Known finding (rel-bugs): a header "tasks" count sizes reservations before any task is
// read, so a large count allocates gigabytes. Skipped unless PYPTO_FUZZ_STRICT=1.
bool huge_header_count(std::string_view text) {
  const std::string_view first = text.substr(0, text.find('\n'));
  const std::size_t k = first.find("\"tasks\"");
  if (k == std::string_view::npos) return false;
  std::size_t i = first.find_first_of("0123456789", k);
  if (i == std::string_view::npos) return false;
  std::size_t digits = 0;
  while (i + digits < first.size() && first[i + digits] >= '0' && first[i + digits] <= '9') {
    ++digits;
  }
  return digits > 6;
}

}  // namespace

PYPTO_FUZZ_TARGET(native_trace) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!pypto::fuzz::strict() && huge_header_count(text)) return 0;
  const std::string path = pypto::fuzz::write_input("native.ndjson", data, size);
  pypto::fuzz::run_one([&] { pypto::fuzz::load(path, ""); });
  return 0;
}
