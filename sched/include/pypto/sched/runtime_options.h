// SPDX-License-Identifier: Apache-2.0
// The runtime_options of pypto.frontend.jit, with the names, ranges and defaults of the
// PyPTO documentation. kRuntimeOptionSpecs below is the one owner of every rule about them:
// C++ validation (validate, set_runtime_option), the pypto-sim CLI flags and their --help
// text, the Python option schema (pypto._C.runtime_option_schema(), read by
// frontend/pypto/_options.py) and the defaults of RuntimeOptions are all derived from it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pypto::sched {

// What a value is, in Python and on the command line.
enum class OptionType {
  kInt,         // an integer
  kStringList,  // a list of strings (Python only: no CLI flag)
  kPolicy,      // an integer mode 0..3; the CLI also takes a registered policy name
  kBool,        // a bool in Python, 0 or 1 as an integer
};

// What happens to an integer outside [min, max].
enum class OutOfRange {
  kError,      // rejected with "runtime.<name>: <v> is out of range [min, max]"
  kAutomatic,  // accepted: the backend picks its automatic value (launch_sched_aicpu_num)
};

// Which parts of pypto-sim act on an option (a bit set).
enum ActsOn : unsigned {
  kActsFrontend = 1u << 0,  // the Python frontend itself (run_mode picks the backend)
  kActsSim = 1u << 1,       // run_mode=SIM launches (compiler instantiation + simulator)
  kActsReplay = 1u << 2,    // trace replay: a pypto-sim run/compare flag
};

struct OptionSpec {
  std::string_view name;
  OptionType type;
  std::int64_t min;  // inclusive documented range (ints and policy modes)
  std::int64_t max;
  // The value RuntimeOptions holds when the option is not given. When fixed_default is
  // false the default is decided elsewhere (run_mode: the environment; launch_early_mode:
  // the chip) and the Python schema reports no default.
  std::int64_t default_value;
  bool fixed_default;
  // A value outside [min, max] that is accepted all the same and means "the backend's
  // default" (launch_early_mode -1 = the chip's); has_auto_value false: none.
  bool has_auto_value;
  std::int64_t auto_value;
  OutOfRange out_of_range;
  std::string_view unit;  // "" when the value is a mode or a flag
  std::string_view doc;   // one line
  unsigned acts_on;       // ActsOn bits; 0: accepted only (validated, then ignored)
};

// The four built-in policies, by device_sched_mode.
inline constexpr std::array<std::string_view, 4> kModePolicies = {"fifo", "l2_affinity", "fair",
                                                                  "l2_fair"};

// Indices into kRuntimeOptionSpecs (the order of PyPTO's documentation).
enum class RuntimeOption : std::size_t {
  kDeviceSchedMode,
  kStitchFunctionMaxNum,
  kMaxWorkspaceKb,
  kRunMode,
  kValidShapeOptimize,
  kReadyOnHostTensors,
  kDeviceSchedParallelism,
  kLaunchSchedAicpuNum,
  kLaunchEarlyMode,
  // PyPTO's older stitching knobs and its control-flow cache, which real kernels still pass.
  // num_initial, num_step and size act (Stitcher, legacy count mode); the others are
  // accepted only (acts_on 0): validated, then ignored.
  kStitchFunctionInnerMemory,
  kStitchFunctionOutcastMemory,
  kStitchFunctionNumInitial,
  kStitchFunctionNumStep,
  kStitchFunctionSize,
  kStitchCfgcacheSize,
  kCfgcacheDeviceTaskNum,
  kCfgcacheRootTaskNum,
  kCfgcacheLeafTaskNum,
  kTripleStreamSched,
  kCount,
};

// Columns: name, type, min, max, default_value, fixed_default, has_auto_value, auto_value,
// out_of_range, unit, doc, acts_on.
inline constexpr std::array<OptionSpec, static_cast<std::size_t>(RuntimeOption::kCount)>
    kRuntimeOptionSpecs = {{
        {"device_sched_mode", OptionType::kPolicy, 0, 3, 0, true, false, 0, OutOfRange::kError, "",
         "scheduling policy: 0 fifo, 1 l2_affinity, 2 fair, 3 l2_fair", kActsSim | kActsReplay},
        {"stitch_function_max_num", OptionType::kInt, 1, 1024, 128, true, false, 0,
         OutOfRange::kError, "roots", "root functions per stitched device task",
         kActsSim | kActsReplay},
        {"max_workspace_kb", OptionType::kInt, 0, 2147483647, 0, true, false, 0, OutOfRange::kError,
         "KB", "workspace budget; >0 enables memory-driven stitching", kActsSim},
        {"run_mode", OptionType::kInt, 0, 1, 0, false, false, 0, OutOfRange::kError, "",
         "0 NPU, 1 SIM; default NPU if ASCEND_HOME_PATH is set, else SIM", kActsFrontend},
        {"valid_shape_optimize", OptionType::kInt, 0, 1, 0, true, false, 0, OutOfRange::kError, "",
         "static main blocks, dynamic tail in dynamic loops", kActsSim},
        {"ready_on_host_tensors", OptionType::kStringList, 0, 0, 0, true, false, 0,
         OutOfRange::kError, "", "input tensor names whose data is ready on host", kActsSim},
        {"device_sched_parallelism", OptionType::kInt, 1, 8, 1, true, false, 0, OutOfRange::kError,
         "device tasks", "concurrent device tasks of parallel loops", kActsSim | kActsReplay},
        {"launch_sched_aicpu_num", OptionType::kInt, 1, 7, 7, true, false, 0,
         OutOfRange::kAutomatic, "threads",
         "schedule AICPU threads; <=0 or above the chip's maximum: automatic",
         kActsSim | kActsReplay},
        {"launch_early_mode", OptionType::kInt, 0, 2, -1, false, true, -1, OutOfRange::kError, "",
         "0 early launch only in capture mode, 1 always, 2 never; -1 or absent: the chip's",
         kActsSim | kActsReplay},
        // PyPTO sizes these pools in multiples of the largest root's workspace; its runtime
        // submits a device task when a root does not fit and frees memory as device tasks
        // finish, which depends on run timing: pypto-sim lays each root's workspace out
        // exactly instead. Accepted only.
        {"stitch_function_inner_memory", OptionType::kInt, 1, 2147483647, 128, true, false, 0,
         OutOfRange::kError, "roots",
         "root-inner workspace pool (deprecated in PyPTO for stitch_function_max_num)", 0},
        {"stitch_function_outcast_memory", OptionType::kInt, 1, 2147483647, 128, true, false, 0,
         OutOfRange::kError, "roots",
         "outcast workspace pool (deprecated in PyPTO for stitch_function_max_num)", 0},
        // No fixed default: absent means not given (RuntimeOptions holds std::nullopt). The
        // default_value is PyPTO's old default, which the Stitcher takes for the missing one
        // of the num_initial / num_step pair (stitcher.h).
        {"stitch_function_num_initial", OptionType::kInt, 1, 1024, 30, false, false, 0,
         OutOfRange::kError, "roots",
         "roots of the first device task (deprecated in PyPTO for stitch_function_max_num, "
         "which supersedes it when given)",
         kActsSim | kActsReplay},
        {"stitch_function_num_step", OptionType::kInt, 0, 1024, 30, false, false, 0,
         OutOfRange::kError, "roots",
         "growth of each later device task's root count, up to 1024 (deprecated in PyPTO for "
         "stitch_function_max_num, which supersedes it when given)",
         kActsSim | kActsReplay},
        {"stitch_function_size", OptionType::kInt, 1, 65535, 20000, false, false, 0,
         OutOfRange::kError, "call ops",
         "most call ops (leaf tasks) of one device task; absent: the runtime's 60000",
         kActsSim | kActsReplay},
        {"stitch_cfgcache_size", OptionType::kInt, 0, 100000000, 0, true, false, 0,
         OutOfRange::kError, "bytes", "control-flow cache size; 0 disables it", 0},
        // PyPTO documents no range for these (int64 runtime config, default 0): counts >= 0.
        {"cfgcache_device_task_num", OptionType::kInt, 0, 2147483647, 0, true, false, 0,
         OutOfRange::kError, "device tasks",
         "device tasks the control-flow cache holds; 0 disables it", 0},
        {"cfgcache_root_task_num", OptionType::kInt, 0, 2147483647, 0, true, false, 0,
         OutOfRange::kError, "root tasks", "root tasks the control-flow cache holds", 0},
        {"cfgcache_leaf_task_num", OptionType::kInt, 0, 2147483647, 0, true, false, 0,
         OutOfRange::kError, "leaf tasks", "leaf tasks the control-flow cache holds", 0},
        // PyPTO's board launch over three streams (published kernels pass True): a bool.
        {"triple_stream_sched", OptionType::kBool, 0, 1, 0, true, false, 0, OutOfRange::kError, "",
         "launch on three streams (board only)", 0},
    }};

constexpr const OptionSpec& spec_of(RuntimeOption id) {
  return kRuntimeOptionSpecs[static_cast<std::size_t>(id)];
}

// The enum and the table rows stay in step.
static_assert(spec_of(RuntimeOption::kDeviceSchedMode).name == "device_sched_mode");
static_assert(spec_of(RuntimeOption::kStitchFunctionMaxNum).name == "stitch_function_max_num");
static_assert(spec_of(RuntimeOption::kMaxWorkspaceKb).name == "max_workspace_kb");
static_assert(spec_of(RuntimeOption::kRunMode).name == "run_mode");
static_assert(spec_of(RuntimeOption::kValidShapeOptimize).name == "valid_shape_optimize");
static_assert(spec_of(RuntimeOption::kReadyOnHostTensors).name == "ready_on_host_tensors");
static_assert(spec_of(RuntimeOption::kDeviceSchedParallelism).name == "device_sched_parallelism");
static_assert(spec_of(RuntimeOption::kLaunchSchedAicpuNum).name == "launch_sched_aicpu_num");
static_assert(spec_of(RuntimeOption::kLaunchEarlyMode).name == "launch_early_mode");
static_assert(spec_of(RuntimeOption::kStitchFunctionInnerMemory).name ==
              "stitch_function_inner_memory");
static_assert(spec_of(RuntimeOption::kStitchFunctionOutcastMemory).name ==
              "stitch_function_outcast_memory");
static_assert(spec_of(RuntimeOption::kStitchFunctionNumInitial).name ==
              "stitch_function_num_initial");
static_assert(spec_of(RuntimeOption::kStitchFunctionNumStep).name == "stitch_function_num_step");
static_assert(spec_of(RuntimeOption::kStitchFunctionSize).name == "stitch_function_size");
static_assert(spec_of(RuntimeOption::kStitchCfgcacheSize).name == "stitch_cfgcache_size");
static_assert(spec_of(RuntimeOption::kCfgcacheLeafTaskNum).name == "cfgcache_leaf_task_num");
static_assert(spec_of(RuntimeOption::kTripleStreamSched).name == "triple_stream_sched");
static_assert(static_cast<std::size_t>(spec_of(RuntimeOption::kDeviceSchedMode).max) + 1 ==
              kModePolicies.size());

struct RuntimeOptions {
  // Policy, by registry name ("fifo", "l2_affinity", "fair", "l2_fair", a further built-in
  // or a plug-in). device_sched_mode 0..3 maps to the four built-ins.
  std::string policy{kModePolicies[static_cast<std::size_t>(
      spec_of(RuntimeOption::kDeviceSchedMode).default_value)]};
  // The policy's parameters by name, as text (CLI --policy-param key=value, Python
  // pypto.sim.policy_params); checked against the policy's declaration (Registry).
  std::map<std::string, std::string> policy_params;
  std::int64_t stitch_function_max_num =
      spec_of(RuntimeOption::kStitchFunctionMaxNum).default_value;
  std::int64_t max_workspace_kb = spec_of(RuntimeOption::kMaxWorkspaceKb).default_value;
  std::int64_t valid_shape_optimize = spec_of(RuntimeOption::kValidShapeOptimize).default_value;
  std::vector<std::string> ready_on_host_tensors;
  std::int64_t device_sched_parallelism =
      spec_of(RuntimeOption::kDeviceSchedParallelism).default_value;
  // Any value: <=0 or above the chip's maximum means automatic (sim::sched_thread_count).
  std::int64_t launch_sched_aicpu_num = spec_of(RuntimeOption::kLaunchSchedAicpuNum).default_value;
  std::int64_t launch_early_mode = spec_of(RuntimeOption::kLaunchEarlyMode).default_value;
  // Whether stitch_function_max_num was given (set by set_runtime_option): it supersedes
  // PyPTO's older num_initial / num_step pair (Stitcher).
  bool stitch_function_max_num_given = false;
  // PyPTO's older stitching options; std::nullopt when not given (Stitcher, legacy mode).
  std::optional<std::int64_t> stitch_function_num_initial;
  std::optional<std::int64_t> stitch_function_num_step;
  std::optional<std::int64_t> stitch_function_size;

  // Upper bounds, read from the table (kept for code that sizes by them).
  static constexpr std::int64_t kMaxStitch = spec_of(RuntimeOption::kStitchFunctionMaxNum).max;
  static constexpr std::int64_t kMaxWorkspaceKb = spec_of(RuntimeOption::kMaxWorkspaceKb).max;
  static constexpr std::int64_t kMaxParallelism =
      spec_of(RuntimeOption::kDeviceSchedParallelism).max;
  static constexpr std::int64_t kMaxSchedAicpu = spec_of(RuntimeOption::kLaunchSchedAicpuNum).max;
  // Limits of the device runtime, not options.
  static constexpr std::int64_t kMaxLeafTasksPerDeviceTask = 60000;
  static constexpr std::int64_t kMaxRootsPerDeviceTask = 1024;
};

// The spec named `name`; throws ConfigError listing the valid names (with a suggestion)
// when there is none.
const OptionSpec& find_runtime_option(std::string_view name);

// Throws ConfigError ("runtime.<name>: <v> is out of range [min, max]") when the spec's
// rules reject v; a kAutomatic option and its auto_value are always accepted.
void check_runtime_option(const OptionSpec& spec, std::int64_t v);

// Sets one option by name after checking it against the table. Integers: every kInt and
// kPolicy option (run_mode is checked and otherwise ignored: the frontend acts on it).
// Text (CLI): an integer, or for kPolicy also a policy name. Lists: kStringList options.
// Throws ConfigError naming the option, the value and what is expected.
void set_runtime_option(RuntimeOptions& o, std::string_view name, std::int64_t value);
void set_runtime_option(RuntimeOptions& o, std::string_view name, const std::string& text);
void set_runtime_option(RuntimeOptions& o, std::string_view name,
                        const std::vector<std::string>& values);

// One line about an option for --help: doc, range and unit, default, out-of-range rule.
std::string runtime_option_help(const OptionSpec& spec);

// Maps device_sched_mode 0..3 to a built-in policy name; throws ConfigError otherwise.
std::string policy_for_mode(std::int64_t mode);

// Accepts "0".."3" or a policy name; throws ConfigError naming the option on failure.
std::string parse_policy(const std::string& value);

// Checks every field against the table; throws ConfigError naming the first option out of
// range ("runtime.<key>: <value> is out of range [min, max]"), an unknown policy or a
// parameter the policy does not declare or whose value it rejects.
void validate(const RuntimeOptions& o);

}  // namespace pypto::sched
