// SPDX-License-Identifier: Apache-2.0
// The pricing pass: a trace read once and priced for a chip gives what a load for that chip
// gives, and the chip changes only what it prices.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <utility>

#include "../common/temp_dir.h"
#include "pypto/common/errors.h"
#include "pypto/trace/trace_loader.h"

using Catch::Matchers::Contains;
using pypto::TraceError;
using pypto::model::ChipConfig;
using namespace pypto::trace;

namespace {

std::string sample(const std::string& name) {
  return std::string(PYPTO_SOURCE_DIR) + "/traces/samples/" + name;
}

void check_same(const pypto::sched::TaskGraph& a, const pypto::sched::TaskGraph& b) {
  CHECK(a.core_type == b.core_type);
  CHECK(a.succ == b.succ);
  CHECK(a.recorded_ns == b.recorded_ns);
  CHECK(a.recorded_start_ps == b.recorded_start_ps);
  CHECK(a.compute_cycles == b.compute_cycles);
  CHECK(a.recorded_makespan_ps == b.recorded_makespan_ps);
}

}  // namespace

TEST_CASE("pricing: a board recording read once is priced at the board clock") {
  LoadOptions o;
  o.prof_path = sample("tilefwk_L1_prof_data.json");
  ReadTrace r = read_trace(sample("dyn_topo.txt"), o);
  REQUIRE(r.trace.recorded_cores.has_value());  // what --chip auto chooses by, before pricing
  const LoadedTrace direct = load_trace(sample("dyn_topo.txt"), o, ChipConfig{});
  ChipConfig slow;
  slow.chip.board_clock_mhz = ChipConfig{}.chip.board_clock_mhz / 2;
  const LoadedTrace priced = price_trace(std::move(r), ChipConfig{});
  check_same(priced.graph, direct.graph);
  const LoadedTrace halved = load_trace(sample("dyn_topo.txt"), o, slow);
  REQUIRE(halved.graph.num_tasks() == direct.graph.num_tasks());
  for (std::size_t t = 0; t < direct.graph.num_tasks(); ++t) {
    // Half the clock: every tick lasts twice as long (to the rounding of each duration).
    CHECK(halved.graph.recorded_ns[t] + 1 >= 2 * direct.graph.recorded_ns[t]);
    CHECK(halved.graph.recorded_ns[t] <= 2 * direct.graph.recorded_ns[t] + 1);
  }
  CHECK(*halved.graph.recorded_makespan_ps >= 2 * *direct.graph.recorded_makespan_ps - 1000);
}

TEST_CASE("pricing: tile ops are priced by the chip's cost model") {
  pypto::testing::TempDir dir;
  const std::string path = dir.path() + "/ops.ndjson";
  {
    std::ofstream f(path);
    f << "{\"format\":\"pypto-sim-trace\",\"version\":1}\n"
         "{\"id\":0,\"core\":\"AIV\",\"ops\":[[\"sum\",\"fp16\",[64,64]]],\"cycles\":7}\n"
         "{\"id\":1,\"core\":\"AIV\"}\n"
         "{\"id\":2,\"core\":\"AIV\",\"ops\":[[\"sum\",\"fp16\",[64,64]]]}\n";
  }
  ChipConfig wide;
  wide.cost.vec_bytes_per_cycle = ChipConfig{}.cost.vec_bytes_per_cycle * 2;
  const LoadedTrace a = load_trace(path, {}, ChipConfig{});
  const LoadedTrace b = price_trace(read_trace(path, {}), wide);
  CHECK(a.graph.compute_cycles[1] == 0);
  CHECK(a.graph.compute_cycles[0] == a.graph.compute_cycles[2] + 7);
  CHECK(b.graph.compute_cycles[0] == b.graph.compute_cycles[2] + 7);
  CHECK(b.graph.compute_cycles[2] < a.graph.compute_cycles[2]);
}

TEST_CASE("pricing: a cost that does not fit names the line that lists it") {
  pypto::testing::TempDir dir;
  const std::string path = dir.path() + "/big.ndjson";
  {
    std::ofstream f(path);
    f << "{\"format\":\"pypto-sim-trace\",\"version\":1}\n"
         "{\"id\":0,\"core\":\"AIV\",\"ops\":[[\"sum\",\"fp16\",[64,64]]]}\n"
         "\n"
         "{\"id\":1,\"core\":\"AIV\",\"ops\":[[\"sum\",\"fp16\",[64,64]]],\"cycles\":4294967295}\n";
  }
  ReadTrace r = read_trace(path, {});  // reading alone finds nothing wrong
  CHECK_THROWS_WITH(price_trace(std::move(r), ChipConfig{}),
                    path + ":4: the task's compute cycles (ops + \"cycles\") exceed 2^32-1");
}
