// SPDX-License-Identifier: Apache-2.0
// The runtime-option table (sched/runtime_options.h): set by name, validation, the
// out-of-range rules and the help text, all derived from kRuntimeOptionSpecs.
#include <catch2/catch.hpp>

#include "pypto/common/errors.h"
#include "pypto/sched/runtime_options.h"

using namespace pypto;
using namespace pypto::sched;
using Catch::Matchers::Contains;

TEST_CASE("runtime option table: PyPTO's names, ranges and defaults", "[options]") {
  struct Row {
    const char* name;
    std::int64_t min, max, dflt;
  };
  const Row rows[] = {
      {"device_sched_mode", 0, 3, 0},         {"stitch_function_max_num", 1, 1024, 128},
      {"max_workspace_kb", 0, 2147483647, 0}, {"run_mode", 0, 1, 0},
      {"valid_shape_optimize", 0, 1, 0},      {"device_sched_parallelism", 1, 8, 1},
      {"launch_sched_aicpu_num", 1, 7, 7},    {"launch_early_mode", 0, 2, -1}};
  for (const Row& r : rows) {
    const OptionSpec& s = find_runtime_option(r.name);
    CHECK(s.min == r.min);
    CHECK(s.max == r.max);
    CHECK(s.default_value == r.dflt);
  }
  CHECK(find_runtime_option("ready_on_host_tensors").type == OptionType::kStringList);
  // The struct's defaults are the table's.
  const RuntimeOptions o;
  CHECK(o.policy == "fifo");
  CHECK(o.stitch_function_max_num == 128);
  CHECK(o.launch_sched_aicpu_num == 7);
  CHECK(o.launch_early_mode == -1);
  CHECK_NOTHROW(validate(o));
  CHECK_THROWS_WITH(find_runtime_option("stitch_function_max"),
                    Contains("unknown option 'stitch_function_max'; did you mean "
                             "'stitch_function_max_num'?"));
}

TEST_CASE("runtime options: set by name sets the named field", "[options]") {
  RuntimeOptions o;
  set_runtime_option(o, "stitch_function_max_num", std::int64_t{4});
  set_runtime_option(o, "max_workspace_kb", std::int64_t{64});
  set_runtime_option(o, "valid_shape_optimize", std::int64_t{1});
  set_runtime_option(o, "device_sched_parallelism", std::int64_t{2});
  set_runtime_option(o, "launch_sched_aicpu_num", std::int64_t{3});
  set_runtime_option(o, "launch_early_mode", std::int64_t{2});
  set_runtime_option(o, "device_sched_mode", std::int64_t{3});
  set_runtime_option(o, "run_mode", std::int64_t{1});  // checked, acted on by the frontend
  set_runtime_option(o, "ready_on_host_tensors", std::vector<std::string>{"lens"});
  CHECK(o.stitch_function_max_num == 4);
  CHECK(o.max_workspace_kb == 64);
  CHECK(o.valid_shape_optimize == 1);
  CHECK(o.device_sched_parallelism == 2);
  CHECK(o.launch_sched_aicpu_num == 3);
  CHECK(o.launch_early_mode == 2);
  CHECK(o.policy == "l2_fair");
  CHECK(o.ready_on_host_tensors == std::vector<std::string>{"lens"});
  // Text, as the CLI passes it: integers, and policy names for device_sched_mode.
  set_runtime_option(o, "device_sched_mode", std::string("fair"));
  CHECK(o.policy == "fair");
  set_runtime_option(o, "device_sched_mode", std::string("1"));
  CHECK(o.policy == "l2_affinity");
  set_runtime_option(o, "stitch_function_max_num", std::string("16"));
  CHECK(o.stitch_function_max_num == 16);
  CHECK_THROWS_WITH(set_runtime_option(o, "device_sched_mode", std::string("fiar")),
                    Contains("runtime.device_sched_mode: unknown policy 'fiar'"));
  CHECK_THROWS_WITH(set_runtime_option(o, "stitch_function_max_num", std::string("16x")),
                    Contains("runtime.stitch_function_max_num: '16x' is not an integer "
                             "(expected [1, 1024])"));
  CHECK_THROWS_WITH(set_runtime_option(o, "ready_on_host_tensors", std::int64_t{1}),
                    Contains("runtime.ready_on_host_tensors: expected a list of strings"));
  CHECK_THROWS_WITH(set_runtime_option(o, "run_mode", std::int64_t{2}),
                    Contains("runtime.run_mode: 2 is out of range [0, 1]"));
}

TEST_CASE("runtime options: PyPTO's older stitching options are held as given or not",
          "[options]") {
  RuntimeOptions o;
  CHECK_FALSE(o.stitch_function_num_initial.has_value());
  CHECK_FALSE(o.stitch_function_num_step.has_value());
  CHECK_FALSE(o.stitch_function_size.has_value());
  CHECK_FALSE(o.stitch_function_max_num_given);
  set_runtime_option(o, "stitch_function_num_initial", std::int64_t{2});
  set_runtime_option(o, "stitch_function_num_step", std::string("0"));
  set_runtime_option(o, "stitch_function_size", std::int64_t{2048});
  CHECK(o.stitch_function_num_initial == 2);
  CHECK(o.stitch_function_num_step == 0);
  CHECK(o.stitch_function_size == 2048);
  CHECK_FALSE(o.stitch_function_max_num_given);
  set_runtime_option(o, "stitch_function_max_num", std::int64_t{128});  // the default, given
  CHECK(o.stitch_function_max_num_given);
  // Accepted only: checked, held nowhere.
  set_runtime_option(o, "stitch_function_inner_memory", std::int64_t{4096});
  CHECK_THROWS_WITH(set_runtime_option(o, "stitch_function_num_initial", std::int64_t{0}),
                    Contains("runtime.stitch_function_num_initial: 0 is out of range [1, 1024]"));
  o.stitch_function_size = 70000;
  CHECK_THROWS_WITH(validate(o),
                    Contains("runtime.stitch_function_size: 70000 is out of range [1, 65535]"));
  // No fixed default (absent: not given); the CLI has flags for them.
  CHECK_FALSE(find_runtime_option("stitch_function_num_step").fixed_default);
  CHECK((find_runtime_option("stitch_function_size").acts_on & kActsReplay) != 0);
  CHECK(find_runtime_option("stitch_function_outcast_memory").acts_on == 0);
}

TEST_CASE("runtime options: out of range is an error naming option, value and range", "[options]") {
  RuntimeOptions o;
  CHECK_THROWS_WITH(set_runtime_option(o, "stitch_function_max_num", std::int64_t{1025}),
                    Contains("runtime.stitch_function_max_num: 1025 is out of range [1, 1024]"));
  CHECK_THROWS_WITH(set_runtime_option(o, "device_sched_mode", std::int64_t{4}),
                    Contains("runtime.device_sched_mode: 4 is out of range [0, 3]"));
  CHECK_THROWS_WITH(set_runtime_option(o, "launch_early_mode", std::int64_t{3}),
                    Contains("runtime.launch_early_mode: 3 is out of range [0, 2] (or -1 for "
                             "the default)"));
  CHECK_THROWS_WITH(set_runtime_option(o, "launch_early_mode", std::int64_t{-2}),
                    Contains("launch_early_mode: -2 is out of range"));
  CHECK(o.stitch_function_max_num == 128);  // a rejected value changes nothing
  o.max_workspace_kb = -1;
  CHECK_THROWS_WITH(validate(o), Contains("runtime.max_workspace_kb: -1 is out of range"));
  o = RuntimeOptions{};
  o.policy = "nope";
  CHECK_THROWS_WITH(validate(o), Contains("unknown policy 'nope'"));
}

TEST_CASE("launch_sched_aicpu_num: every integer is accepted, outside 1..7 means automatic",
          "[options]") {
  // The reading of PyPTO's documentation: the range 1..7 is documented, and a value <= 0 or
  // above the chip's maximum falls back to the automatic count (sim::sched_thread_count),
  // so validation never rejects it.
  const OptionSpec& s = spec_of(RuntimeOption::kLaunchSchedAicpuNum);
  CHECK(s.out_of_range == OutOfRange::kAutomatic);
  for (std::int64_t v : {-1, 0, 1, 3, 7, 8, 99}) {
    RuntimeOptions o;
    CHECK_NOTHROW(set_runtime_option(o, "launch_sched_aicpu_num", v));
    CHECK(o.launch_sched_aicpu_num == v);
    CHECK_NOTHROW(validate(o));
  }
  RuntimeOptions o;
  CHECK_NOTHROW(set_runtime_option(o, "launch_sched_aicpu_num", std::string("-1")));
  CHECK(o.launch_sched_aicpu_num == -1);
}

TEST_CASE("runtime options: --help text from the table", "[options]") {
  CHECK(runtime_option_help(find_runtime_option("stitch_function_max_num")) ==
        "root functions per stitched device task ([1, 1024] roots, default 128)");
  CHECK_THAT(runtime_option_help(find_runtime_option("device_sched_mode")),
             Contains("or a registered policy name ([0, 3], default 0)"));
  CHECK_THAT(runtime_option_help(find_runtime_option("launch_sched_aicpu_num")),
             Contains("<=0 or above the chip's maximum: automatic ([1, 7] threads, default 7)"));
  // Replay acts on the options the CLI has flags for.
  CHECK((find_runtime_option("launch_early_mode").acts_on & kActsReplay) != 0);
  CHECK((find_runtime_option("max_workspace_kb").acts_on & kActsReplay) == 0);
  CHECK(find_runtime_option("run_mode").acts_on == kActsFrontend);
}
