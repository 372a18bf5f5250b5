// SPDX-License-Identifier: Apache-2.0
// Checks (a Catch CHECK) that two task graphs are the same column by column: for graphs made
// two ways (a whole read and device tasks cut and appended, say). A failure names the
// columns that differ.
#pragma once

#include <catch2/catch.hpp>

#include "graph_diff.h"

namespace pypto::testing {

inline void check_same_graph(const sched::TaskGraph& a, const sched::TaskGraph& b) {
  CHECK(graph_differences(a, b) == std::vector<std::string>{});
}

}  // namespace pypto::testing
