// SPDX-License-Identifier: Apache-2.0
// The commands of pypto-sim, the command-line client of the simulator library (sim/). It
// parses flags, loads the chip config and the trace, runs, writes reports and maps each error
// type to an exit status: 2 for user errors (bad flags, config, trace, a Python policy's
// code), 3 for internal errors, 1 for I/O failures, 130 when interrupted (Ctrl-C, SIGTERM).
// Every output file is written to a temporary and renamed when complete
// (pypto/common/output_file.h): a failed or interrupted run leaves no file behind and says
// what it kept. What needs Python (--policy-module, sweep) goes through the Host.
#include "pypto/cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/bench/bench.h"
#include "pypto/calibrate/calibrate.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/common/suggest.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/registry.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sim/report.h"
#include "pypto/sim/run_config.h"
#include "pypto/sim/simulation.h"
#include "pypto/sim/trace/native_writer.h"
#include "pypto/sim/trace/pypto_writers.h"
#include "pypto/sim/trace/synthetic.h"
#include "pypto/sim/trace/trace_loader.h"

namespace po = boost::program_options;
using namespace pypto;

namespace {

constexpr const char* kUsage = R"(usage: pypto-sim <command> [options]

commands:
  run TRACE        replay a task trace on the chip model, write stats.json, trace.json, swim.json
  compare TRACE    run several policies on the same trace and print one table
  gen              write a synthetic native trace
  config           show a chip configuration (--describe lists every key)
  policies         list the scheduling policies
  bench            benchmark suite: speed against the SystemC ceiling, scaling, policies
  calibrate TRACE  fit the AICPU costs to recordings, print the fit, write a config overlay
  sweep            run a grid of policies, parameters and traces (pypto.sweep, in Python)
Run 'pypto-sim <command> --help' for the options of a command.
)";

using cli::UsageError;

// The host of the command being run (set by cli::main).
const cli::Host* g_host = nullptr;

// What this process has completed and kept so far (told when a later step fails or is
// interrupted).
std::vector<std::string> g_kept;

// A whole number flag: digits only (no sign, so "-1" is no 4294967295), within [lo, hi].
std::uint64_t parse_count(const std::string& flag, const std::string& text, std::uint64_t lo,
                          std::uint64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  std::uint64_t v = 0;
  bool in_range = digits;
  if (digits) {
    try {
      v = std::stoull(text);
    } catch (const std::out_of_range&) {
      in_range = false;
    }
  }
  if (!digits || !in_range || v < lo || v > hi) {
    const char* why = !text.empty() && text[0] == '-' ? "is negative"
                      : digits                        ? "is out of range"
                                                      : "is not a whole number";
    throw UsageError("--" + flag + " " + text + ": " + why + "; expected a whole number in " +
                     range);
  }
  return v;
}

// A flag given with an empty value ("-o ''", "--config="): refused rather than read as "not
// given" (an empty -o would quietly write to a new folder under ./output/).
void check_no_empty_values(const po::variables_map& vm) {
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || name == "help") continue;  // --help holds an empty string
    const auto* text = boost::any_cast<std::string>(&value.value());
    const auto* list = boost::any_cast<std::vector<std::string>>(&value.value());
    const bool empty = (text != nullptr && text->empty()) ||
                       (list != nullptr && std::any_of(list->begin(), list->end(),
                                                       [](const auto& v) { return v.empty(); }));
    if (!empty) continue;
    if (name == "trace") throw UsageError("TRACE is an empty path");
    throw UsageError("--" + name + ": the value is empty");
  }
  // A key given twice to a repeatable key=value flag: which one was meant is a guess (the
  // last used to win without a word), as for any other flag given twice.
  for (const char* flag : {"set", "policy-param"}) {
    if (vm.count(flag) == 0) continue;
    std::vector<std::pair<std::string, std::string>> seen;  // key, its assignment
    for (const std::string& kv : vm[flag].as<std::vector<std::string>>()) {
      std::string key = kv.substr(0, kv.find('='));
      key.erase(0, key.find_first_not_of(" \t"));
      key.erase(key.find_last_not_of(" \t") + 1);
      const auto it =
          std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == key; });
      if (it != seen.end() && !key.empty()) {
        throw UsageError(std::string("--") + flag + " " + key + " is given twice (" + it->second +
                         ", then " + kv + "); give each key once");
      }
      seen.emplace_back(key, kv);
    }
  }
}

// Whether two paths name one file: the same file on disk, or (for a file not written yet)
// the same absolute path once links and ".." are resolved.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  const auto canonical = [](const std::string& p, std::error_code& e) {
    return fs::weakly_canonical(fs::absolute(p, e), e).lexically_normal();
  };
  const fs::path ca = canonical(a, ec);
  if (ec) return false;
  const fs::path cb = canonical(b, ec);
  return !ec && ca == cb;
}

// The input files of a command, named as its flags name them, for refuse_overwrite.
using Inputs = std::vector<std::pair<std::string, std::string>>;  // (flag, path)

// Refuses an output that would replace one of the inputs (the input is read before the
// output is written, so nothing would fail, but the user's file would be gone).
void refuse_overwrite(const std::string& flag, const std::string& output, const Inputs& inputs) {
  for (const auto& [what, path] : inputs) {
    if (path.empty() || !same_file(output, path)) continue;
    throw UsageError(flag + ": writing " + output + " would replace the input " + path + " (" +
                     what + "); choose another output path");
  }
}

// Flags shared by run and compare: chip, trace and the runtime options of a trace.
struct Common {
  std::string trace, prof, chip, config, out;
  std::vector<std::string> sets;
  bool no_trace = false, quiet = false;
  std::vector<std::string> policy_params;   // --policy-param key=value
  std::string run_config;                   // --run-config FILE.yaml
  std::vector<std::string> policy_modules;  // --policy-module FILE.py
};

// The inputs of run, compare and calibrate .
Inputs common_inputs(const Common& c, const std::string& trace, const std::string& prof) {
  Inputs in = {{"the trace", trace},
               {"--prof", prof},
               {"--config", c.config},
               {"--run-config", c.run_config}};
  for (const auto& m : c.policy_modules) in.emplace_back("--policy-module", m);
  return in;
}

constexpr const char* kPolicyModuleHelp =
    "a Python file whose pypto.sim.register_policy calls add policies (repeatable; runs the "
    "command in Python)";

// Registers the policies of --policy-module files (through the host: the native binary
// becomes a Python process here), before any option names one of them.
void load_policy_modules(const std::vector<std::string>& files) {
  if (files.empty()) return;
  if (!g_host->load_policy_modules) {
    throw UsageError("--policy-module " + files.front() + ": " + g_host->no_python);
  }
  g_host->load_policy_modules(files);
}

// The flag of a runtime option: its name with '-' for '_' (device_sched_mode also answers
// to --sched-mode).
std::string flag_of(const sched::OptionSpec& spec) {
  std::string flag(spec.name);
  for (char& ch : flag) {
    if (ch == '_') ch = '-';
  }
  return flag;
}

// The runtime options that trace replay acts on become flags, with their help from the table.
bool is_replay_flag(const sched::OptionSpec& spec) {
  return (spec.acts_on & sched::kActsReplay) != 0 && spec.type != sched::OptionType::kStringList;
}

// The chip and runtime-option flags (run, compare, calibrate).
po::options_description chip_options(Common& c) {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")(
      "prof", po::value(&c.prof), "tilefwk_L1_prof_data.json with recorded times (board traces)")(
      "chip", po::value(&c.chip),
      "chip preset (pypto-sim config --list), or auto: the preset that fits a board "
      "recording's cores (default: auto for board recordings, else a2)")(
      "config", po::value(&c.config), "chip config YAML file (may start with 'base: <preset>')")(
      "set", po::value(&c.sets)->composing(),
      "override a config value: --set l2.ways=8 (repeatable)");
  for (const sched::OptionSpec& spec : sched::kRuntimeOptionSpecs) {
    if (!is_replay_flag(spec)) continue;
    std::string names = flag_of(spec);
    if (spec.name == "device_sched_mode") names += ",sched-mode";
    d.add_options()(names.c_str(), po::value<std::string>(),
                    sched::runtime_option_help(spec).c_str());
  }
  d.add_options()("policy-param", po::value(&c.policy_params)->composing(),
                  "a parameter of the policy: --policy-param seed=3 (repeatable; "
                  "pypto-sim policies lists them)")(
      "run-config", po::value(&c.run_config),
      "runtime options and policy_params from a YAML file (flags override it)");
  return d;
}

void add_policy_module_option(po::options_description& d, std::vector<std::string>& files) {
  d.add_options()("policy-module", po::value(&files)->composing(), kPolicyModuleHelp);
}

po::options_description common_options(Common& c) {
  po::options_description d = chip_options(c);
  d.add_options()("out,o", po::value(&c.out),
                  "output folder (default: a new folder under ./output/)")(
      "no-trace", po::bool_switch(&c.no_trace), "write stats.json only (large traces)")(
      "quiet,q", po::bool_switch(&c.quiet), "no summary table, no progress bar");
  return d;
}

// check_params false (compare): the parameters are checked per policy by policy_params_for.
sched::RuntimeOptions runtime_options(const po::variables_map& vm, const Common& c,
                                      bool check_params = true) {
  sched::RuntimeOptions o;
  if (!c.run_config.empty()) {
    sim::load_run_config(c.run_config, o);
    // A policy named by a flag does not inherit the file's policy's parameters.
    if (vm.count("device-sched-mode") + vm.count("sched-mode") != 0) o.policy_params.clear();
  }
  for (const sched::OptionSpec& spec : sched::kRuntimeOptionSpecs) {
    if (!is_replay_flag(spec)) continue;
    const std::string flag = flag_of(spec);
    if (vm.count(flag) != 0) sched::set_runtime_option(o, spec.name, vm[flag].as<std::string>());
  }
  for (const std::string& kv : c.policy_params) {
    // Boost takes a prefix such as --policy for --policy-param: name the flag the value went
    // to, and where choosing policies lives, so "--policy fifo" is not a riddle.
    if (kv.find('=') == std::string::npos) {
      throw ConfigError("--policy-param " + kv +
                        ": expected key=value, a parameter of the chosen policy (choose the "
                        "policy with --sched-mode, or --policies for compare)");
    }
    const auto [key, value] = sched::parse_param_assignment(kv);
    o.policy_params[key] = value;
  }
  if (check_params) {
    sched::validate(o);
  } else {
    sched::RuntimeOptions bare = o;
    bare.policy_params.clear();
    sched::validate(bare);
  }
  return o;
}

// compare: each --policy-param goes to the compared policies that declare it; one that no
// compared policy declares is an error (with the first policy's suggestion).
sched::ParamText policy_params_for(const std::string& policy, const sched::ParamText& given,
                                   const std::vector<std::string>& policies) {
  sched::ParamText out;
  for (const auto& [key, value] : given) {
    bool declared_anywhere = false;
    for (const auto& p : policies) {
      for (const auto& spec : sched::Registry::global().find(p).params) {
        declared_anywhere |= spec.name == key;
        if (spec.name == key && p == policy) out[key] = value;
      }
    }
    if (!declared_anywhere) sched::Registry::global().resolve(policies.front(), {{key, value}});
  }
  sched::Registry::global().resolve(policy, out);
  return out;
}

std::string default_out_dir(const std::string& trace, const std::string& tag) {
  std::string stem = trace;
  if (const auto slash = stem.find_last_of('/'); slash != std::string::npos)
    stem = stem.substr(slash + 1);
  if (const auto dot = stem.find('.'); dot != std::string::npos) stem = stem.substr(0, dot);
  const std::time_t now = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", std::localtime(&now));
  return "output/" + stem + "_" + tag + "_" + ts + "_" + std::to_string(::getpid());
}

// "120.5 / 800.0 MB, 95.3 MB/s": `done` of `total` bytes read in `seconds`.
std::string read_rate_text(std::uint64_t done, std::uint64_t total, double seconds) {
  char text[96];
  std::snprintf(text, sizeof text, "%.1f / %.1f MB, %.1f MB/s", 1e-6 * static_cast<double>(done),
                1e-6 * static_cast<double>(total),
                1e-6 * static_cast<double>(done) / std::max(seconds, 1e-9));
  return text;
}

// The progress line on stderr: every phase of a long command (reading, simulating, writing)
// shows itself, only on a terminal, never with -q, and only once the command has taken a
// second (a short run prints nothing). One line, redrawn in place at most every 100 ms and
// erased when the phase ends, so that nothing of it stays between the command's own lines.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  // Contract: enabled() is fixed from here on; when false every other method does nothing.
  // PYPTO_SIM_PROGRESS_DELAY_MS replaces the first second (the tests set 0 to see every
  // phase of a short run).
  explicit ProgressLine(bool quiet) : enabled_(!quiet && ::isatty(STDERR_FILENO) == 1) {
    if (const char* ms = std::getenv("PYPTO_SIM_PROGRESS_DELAY_MS"))
      delay_ = std::chrono::milliseconds(std::strtoll(ms, nullptr, 10));
  }
  bool enabled() const { return enabled_; }

  // Starts a phase named `label` ("reading x.ndjson"): its rate and ETA count from now. The
  // label shows at once when the command has already taken a second.
  void phase(std::string label) {
    if (!enabled_) return;
    label_ = std::move(label);
    phase_t0_ = Clock::now();
    draw("", /*force=*/true);
  }

  // Bytes read of the files being loaded: "120.5 / 800.0 MB, 95.3 MB/s". The last call (all
  // read) always draws: the rate of the whole read stays until the next phase.
  void bytes(std::uint64_t done, std::uint64_t total) {
    if (!enabled_ || (!due() && (done < total || Clock::now() - t0_ < delay_))) return;
    draw(read_rate_text(done, total, elapsed_s()), false);
  }

  // Tasks simulated: "[#####     ] 45 % 123456/270000 tasks, 51282 tasks/s, ETA 3 s".
  void tasks(std::uint64_t done, std::uint64_t total) {
    if (!enabled_ || !due()) return;
    constexpr int kWidth = 20;
    const double frac = static_cast<double>(done) / static_cast<double>(total);
    const int filled = static_cast<int>(kWidth * frac);
    const double rate = static_cast<double>(done) / std::max(elapsed_s(), 1e-9);
    std::string eta = "?";
    if (done > 0)
      eta = std::to_string(
                static_cast<long long>(std::ceil(static_cast<double>(total - done) / rate))) +
            " s";
    draw("[" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "] " +
             std::to_string(static_cast<int>(100 * frac)) + " % " + std::to_string(done) + "/" +
             std::to_string(total) + " tasks, " + std::to_string(static_cast<long long>(rate)) +
             " tasks/s, ETA " + eta,
         false);
  }

  // Erases the line (before the command prints anything else, and when it ends).
  void clear() {
    if (drawn_) std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  double elapsed_s() const {
    return std::chrono::duration<double>(Clock::now() - phase_t0_).count();
  }
  // Past the command's first second and 100 ms after the last redraw.
  bool due() const {
    const auto now = Clock::now();
    return now - t0_ >= delay_ && now - last_ >= std::chrono::milliseconds(100);
  }
  void draw(const std::string& detail, bool force) {
    const auto now = Clock::now();
    if (force && now - t0_ < delay_) return;
    last_ = now;
    std::cerr << "\r\033[K" << label_ << (detail.empty() ? "" : ": ") << detail << std::flush;
    drawn_ = true;
  }

  bool enabled_;
  Clock::duration delay_ = std::chrono::seconds(1);
  Clock::time_point t0_ = Clock::now(), phase_t0_ = t0_, last_ = t0_;
  std::string label_;
  bool drawn_ = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

sim::SimResult run_one(const sched::TaskGraph& graph, const sim::ChipConfig& chip,
                       const sched::RuntimeOptions& rt, bool timeline, ProgressLine& bar) {
  sim::SimOptions opt;
  opt.runtime = rt;
  opt.record_timeline = timeline;
  opt.record_aicpu_events = timeline;
  bar.phase("simulating (policy " + rt.policy + ")");
  // The progress callback is where a Ctrl-C is seen during the run: the exception stops the
  // model and simulate() rethrows it.
  opt.progress_every_tasks = 4096;
  opt.progress = [&bar, &rt](std::uint64_t d, std::uint64_t t) {
    if (interrupt_requested()) {
      bar.clear();
      throw Interrupted("interrupted while simulating (policy " + rt.policy + ", " +
                        std::to_string(d) + " of " + std::to_string(t) + " tasks done)");
    }
    bar.tasks(d, t);
  };
  sim::SimResult r = sim::simulate(graph, chip, opt);
  bar.clear();
  check_interrupt("simulating (policy " + rt.policy + ": finished, reports not written yet)");
  return r;
}

// The reports of one run, with the progress line naming each file as it is written.
// ahead: the graph-only reports started before the run (null: none).
std::vector<std::string> write_reports_shown(const std::string& dir, const sched::TaskGraph& g,
                                             const sim::ChipConfig& chip, const sim::SimResult& r,
                                             sim::ReportOptions ro, ProgressLine& bar,
                                             sim::GraphReports* ahead = nullptr) {
  if (bar.enabled()) ro.on_file = [&bar](const std::string& path) { bar.phase("writing " + path); };
  auto files = sim::write_reports(dir, g, chip, r, ro, ahead);
  bar.clear();
  return files;
}

// Loading writes nothing: a Ctrl-C there exits at once (see set_exit_on_interrupt).
struct ExitWhileLoading {
  std::string line;
  // erase_line: the progress line is on the terminal; the exit line replaces it.
  ExitWhileLoading(const std::string& path, bool erase_line)
      : line(std::string(erase_line ? "\r\033[K" : "") + "pypto-sim: interrupted while loading " +
             path + "; nothing written") {
    set_exit_on_interrupt(line.c_str());
  }
  ~ExitWhileLoading() { set_exit_on_interrupt(nullptr); }
  ExitWhileLoading(const ExitWhileLoading&) = delete;
  ExitWhileLoading& operator=(const ExitWhileLoading&) = delete;
};

// "unrecognised option '--chp'; did you mean '--chip'?", from the command's own flags.
[[noreturn]] void throw_unknown_flag(const po::unknown_option& e, const po::options_description& d,
                                     const char* cmd) {
  std::string word = e.get_option_name();
  word.erase(0, word.find_first_not_of('-'));
  if (const auto eq = word.find('='); eq != std::string::npos) word.resize(eq);
  std::vector<std::string> names;
  for (const auto& o : d.options()) {
    const auto [first, count] = o->long_names();
    names.insert(names.end(), first, first + count);
  }
  std::string msg = e.what();
  if (const auto guess = sched::closest_match(word, names))
    msg += "; did you mean '--" + *guess + "'?";
  throw UsageError(msg + " ('pypto-sim " + cmd + " --help' lists the options)");
}

po::parsed_options parse_line(int argc, char** argv, const po::options_description& d,
                              const po::positional_options_description& p) {
  try {
    return po::command_line_parser(argc, argv).options(d).positional(p).run();
  } catch (const po::unknown_option& e) {
    throw_unknown_flag(e, d, argv[0]);
  } catch (const po::too_many_positional_options_error&) {
    // Name the argument boost counted one too many (flag values are skipped).
    unsigned positional = 0;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.size() > 1 && a[0] == '-') {
        const std::string name = a.substr(a.find_first_not_of('-'));
        if (name.find('=') != std::string::npos) continue;
        const po::option_description* o =
            d.find_nothrow(name, /*approx=*/false, /*long_ignore_case=*/false,
                           /*short_ignore_case=*/false);
        if (o == nullptr && a.size() == 2) o = d.find_nothrow(a, false, false, false);
        if (o != nullptr && o->semantic()->max_tokens() > 0) ++i;
        continue;
      }
      if (++positional > p.max_total_count()) {
        throw UsageError("unexpected argument '" + a + "' ('pypto-sim " + argv[0] +
                         " --help' lists what it takes)");
      }
    }
    throw UsageError(std::string("too many arguments ('pypto-sim ") + argv[0] +
                     " --help' lists what it takes)");
  }
}

// Parses a command's flags into `vm`. Contract: true when they ask for --help, which has then
// been answered ("usage: pypto-sim " + usage, then the options): the command returns 0.
bool parse_or_help(int argc, char** argv, po::options_description& d,
                   po::positional_options_description& p, po::variables_map& vm,
                   const std::string& usage) {
  po::store(parse_line(argc, argv, d, p), vm);
  po::notify(vm);
  check_no_empty_values(vm);
  if (vm.count("help") == 0) return false;
  std::cout << "usage: pypto-sim " << usage << "\n" << d;
  return true;
}

// Loads a trace and resolves the chip. --chip auto (the default without --chip/--config): a
// board recording's blockIdx tell the core counts, so the preset that fits is taken; other
// traces run on a2. The trace is read with a2 first (its board clock converts the ticks) and
// again if another preset fits. A named chip is checked against the recording.
sim::LoadedTrace load_with_chip(const Common& c, const std::string& path, const std::string& prof,
                                const sched::RuntimeOptions& rt, sim::ChipConfig& chip,
                                ProgressLine& bar) {
  sim::LoadOptions lo;
  lo.prof_path = prof;
  lo.runtime = rt;
  if (bar.enabled()) {
    lo.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar.bytes(done, total); };
  }
  bar.phase("reading " + path);
  check_interrupt("loading " + path);
  const ExitWhileLoading exit_while_loading(path, bar.enabled());
  const bool auto_chip = c.chip == "auto" || (c.chip.empty() && c.config.empty());
  chip = cfg::resolve_chip_config(auto_chip ? std::string("a2") : c.chip, c.config, c.sets);
  sim::LoadedTrace trace = sim::load_trace(path, lo, chip);
  if (trace.recorded_cores) {
    if (auto_chip) {
      const auto fits = cfg::fitting_chip_presets(*trace.recorded_cores);
      if (!fits.empty() && fits.front() != chip.chip.name) {
        chip = cfg::resolve_chip_config(fits.front(), "", c.sets);
        bar.phase("reading " + path + " again for " + chip.chip.name);
        trace = sim::load_trace(path, lo, chip);
      }
      bar.clear();
      // Say so when the recording moved the chip off the default (a2 and a3 share core counts
      // and clocks, so the choice between fitting presets is a convention: name it).
      if (!c.quiet && !fits.empty() && fits.front() != "a2") {
        std::cerr << "pypto-sim: --chip auto: using " << chip.chip.name << " (presets that fit:";
        for (const auto& f : fits) std::cerr << " " << f;
        std::cerr << ")\n";
      }
    }
    cfg::check_recorded_cores(chip, *trace.recorded_cores);
  }
  bar.clear();
  return trace;
}

// Refuses a report folder whose reports would replace an input ("-o ." beside topo.json).
void refuse_overwrite_by_reports(const std::string& dir, const Inputs& inputs) {
  for (const char* name : sim::kReportFiles)
    refuse_overwrite("-o " + dir, dir + "/" + name, inputs);
}

// The outputs of one `run` and its summary.
void finish_run(const Common& c, const std::string& timed_trace, const std::string& out,
                const sched::TaskGraph& graph, const sim::ChipConfig& chip, const sim::SimResult& r,
                const sim::ReportOptions& ro, ProgressLine& bar, sim::GraphReports* ahead,
                sim::PhaseWall& phases) {
  const auto write_t0 = std::chrono::steady_clock::now();
  // The timed trace is complete before the reports are written and renamed after them:
  // either every output of the run is there, or none.
  std::unique_ptr<OutputFile> timed;
  if (!timed_trace.empty()) {
    timed = std::make_unique<OutputFile>(timed_trace);
    bar.phase("writing " + timed_trace);
    sim::write_native_trace(graph, &r.timeline, chip.chip.name,
                            "pypto-sim run " + c.trace + " (simulated times)", timed->stream());
    timed->finish();
    check_interrupt("writing " + timed_trace);
  }
  const auto files = write_reports_shown(out, graph, chip, r, ro, bar, ahead);
  if (timed) timed->commit();
  phases.write_s = seconds_since(write_t0);
  if (!c.quiet) {
    std::cout << sim::summary_table(r, &phases) << "reports in " << out << "/\n";
  }
  if (ro.trace_json) {
    for (const auto& n : sim::trace_notes(graph, r, ro))
      std::cerr << "pypto-sim: note: " << n << "\n";
  }
}

int cmd_run(int argc, char** argv, bool compare) {
  Common c;
  std::string policies = "0,1,2,3";
  po::options_description d = common_options(c);
  add_policy_module_option(d, c.policy_modules);
  d.add_options()("trace", po::value(&c.trace), "trace file");
  std::string timed_trace;
  if (compare)
    d.add_options()("policies", po::value(&policies), "policies to compare: 0,1,2,3 or names");
  else
    d.add_options()("timed-trace", po::value(&timed_trace),
                    "also write the replay as a native trace with every task's simulated "
                    "start/end (a recording made by the model; traces/FORMAT.md)");
  po::positional_options_description p;
  p.add("trace", 1);
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm,
                    std::string(compare ? "compare" : "run") + " TRACE [options]")) {
    return 0;
  }
  if (c.trace.empty())
    throw UsageError("missing TRACE: pypto-sim " + std::string(compare ? "compare" : "run") +
                     " TRACE [options]");
  const Inputs inputs = common_inputs(c, c.trace, c.prof);
  if (!compare && !c.out.empty()) refuse_overwrite_by_reports(c.out, inputs);
  if (!timed_trace.empty()) {
    refuse_overwrite("--timed-trace", timed_trace, inputs);
    const std::string out = c.out.empty() ? "" : c.out;
    for (const char* name : sim::kReportFiles) {
      if (!out.empty() && same_file(timed_trace, out + "/" + name)) {
        throw UsageError("--timed-trace " + timed_trace + " is also the report " + out + "/" +
                         name + " of -o; choose another path");
      }
    }
  }
  load_policy_modules(c.policy_modules);
  sched::RuntimeOptions rt = runtime_options(vm, c, /*check_params=*/!compare);
  std::vector<std::string> names;  // compare: the policies, checked before the trace is read
  if (compare) {
    std::stringstream ss(policies);
    for (std::string item; std::getline(ss, item, ',');) {
      if (item.empty()) continue;
      const std::string name = sched::parse_policy(item);
      // Twice the same run, and its reports written over the first's: a slip, not a wish.
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        throw UsageError("--policies " + policies + ": policy " + name +
                         " is given twice (a mode number and its name are one policy)");
      }
      names.push_back(name);
    }
    if (names.empty()) throw UsageError("--policies: no policy given");
    if (!c.out.empty()) {
      for (const auto& n : names) refuse_overwrite_by_reports(c.out + "/" + n, inputs);
    }
  }
  sim::ChipConfig chip;
  ProgressLine bar(c.quiet);
  const auto read_t0 = std::chrono::steady_clock::now();
  sim::LoadedTrace trace = load_with_chip(c, c.trace, c.prof, rt, chip, bar);
  sim::PhaseWall phases;
  phases.read_s = seconds_since(read_t0);
  if (trace.unrecorded_tasks > 0) {
    std::cerr << "pypto-sim: warning: " << trace.unrecorded_tasks
              << " AIC/AIV tasks of the topology have no --prof record; they count as zero-cost "
                 "dependency nodes\n";
  }
  if (!compare) {
    const std::string out = c.out.empty() ? default_out_dir(c.trace, rt.policy) : c.out;
    sim::ReportOptions ro;
    ro.trace_json = ro.swim_json = !c.no_trace;
    // topo.json depends on the graph alone: it is written while the model runs.
    sim::GraphReports ahead = sim::start_graph_reports(out, trace.graph, ro);
    const sim::SimResult r =
        run_one(trace.graph, chip, rt, !c.no_trace || !timed_trace.empty(), bar);
    finish_run(c, timed_trace, out, trace.graph, chip, r, ro, bar, &ahead, phases);
    return 0;
  }
  const sched::ParamText given = rt.policy_params;
  for (const auto& n : names) policy_params_for(n, given, names);  // all errors before any run
  std::vector<sim::SimResult> runs;
  const std::string out = c.out.empty() ? default_out_dir(c.trace, "compare") : c.out;
  for (const auto& n : names) {
    rt.policy = n;
    rt.policy_params = policy_params_for(n, given, names);
    runs.push_back(run_one(trace.graph, chip, rt, !c.no_trace, bar));
    sim::ReportOptions ro;
    ro.trace_json = ro.swim_json = !c.no_trace;
    write_reports_shown(out + "/" + n, trace.graph, chip, runs.back(), ro, bar);
    g_kept.push_back("the reports of " + n + " in " + out + "/" + n + "/");
  }
  std::cout << "trace " << c.trace << " on " << chip.chip.name << " (" << trace.graph.num_tasks()
            << " tasks)\n"
            << sim::compare_table(runs) << "reports in " << out << "/<policy>/\n";
  return 0;
}

int cmd_gen(int argc, char** argv) {
  sim::SyntheticSpec s;
  std::string out, tasks, seed, tasks_per_root, format, prof, chip_name;
  bool no_memory = false;
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("shape", po::value(&s.shape)->default_value("mix"),
                                              "mix, chain, fanout, loops or independent")(
      "tasks", po::value(&tasks)->default_value("1000"), "number of tasks (1 .. 4294967294)")(
      "seed", po::value(&seed)->default_value("1"), "random seed (0 .. 4294967295)")(
      "tasks-per-root", po::value(&tasks_per_root)->default_value("8"),
      "tasks per loop body (1 .. 4294967295)")("recorded", po::bool_switch(&s.recorded),
                                               "give every task a recorded duration")(
      "no-memory", po::bool_switch(&no_memory), "no memory ranges")(
      "out,o", po::value(&out), "output file (default: stdout)")(
      "format", po::value(&format)->default_value("native"),
      "native, dyn_topo, topo_json or fixed_latency (PyPTO's formats: the same graph, recorded "
      "durations in whole board ticks, no memory ranges; needs -o)")(
      "prof", po::value(&prof),
      "dyn_topo/topo_json: where the tilefwk_L1_prof_data.json recording goes (default: "
      "tilefwk_L1_prof_data.json beside -o)")("chip", po::value(&chip_name)->default_value("a2"),
                                              "chip preset whose clocks the PyPTO formats use");
  po::positional_options_description p;
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "gen [options]")) return 0;
  // Read after each branch's own checks (a bad --format is named before a bad count).
  const auto read_counts = [&] {
    s.tasks = parse_count("tasks", tasks, 1, 4'294'967'294ull);
    s.seed = static_cast<std::uint32_t>(parse_count("seed", seed, 0, 4'294'967'295ull));
    s.tasks_per_root = static_cast<std::uint32_t>(
        parse_count("tasks-per-root", tasks_per_root, 1, 4'294'967'295ull));
  };
  // Flags the format does not use are refused, not ignored (--chip bogus used to pass).
  const sim::ChipConfig gen_chip = cfg::load_chip_preset(chip_name);
  if (!prof.empty() && format != "dyn_topo" && format != "topo_json") {
    throw UsageError("--prof " + prof + ": only --format dyn_topo and topo_json write a " +
                     "recording (this is --format " + format + ")");
  }
  if (!prof.empty() && !out.empty() && same_file(prof, out)) {
    throw UsageError("--prof " + prof + " is also -o; the topology and the recording need two " +
                     "files");
  }
  if (format != "native") {
    const std::vector<std::pair<std::string, sim::TraceFormat>> formats = {
        {"dyn_topo", sim::TraceFormat::kDynTopo},
        {"topo_json", sim::TraceFormat::kTopoJson},
        {"fixed_latency", sim::TraceFormat::kFixedLatency}};
    const auto it = std::find_if(formats.begin(), formats.end(),
                                 [&](const auto& f) { return f.first == format; });
    if (it == formats.end()) {
      throw UsageError("--format " + format +
                       ": expected native, dyn_topo, topo_json or fixed_latency");
    }
    if (out.empty()) throw UsageError("--format " + format + " needs -o FILE");
    const sim::ChipConfig& chip = gen_chip;
    read_counts();
    s.recorded = true;
    s.memory = false;
    s.dur_step_ns = static_cast<std::uint32_t>(std::llround(1000.0 / chip.chip.board_clock_mhz));
    if (prof.empty() && it->second != sim::TraceFormat::kFixedLatency) {
      prof = (std::filesystem::path(out).parent_path() / "tilefwk_L1_prof_data.json").string();
      if (same_file(prof, out)) {
        throw UsageError("-o " + out + " is where the recording goes by default; name the " +
                         "recording with --prof or -o another file");
      }
    }
    sim::write_synthetic_as(s, it->second, chip, out, prof);
    return 0;
  }
  s.memory = !no_memory;
  read_counts();
  if (out.empty()) {
    sim::write_synthetic_trace(s, std::cout);
    std::cout.flush();
    if (!std::cout) throw Error("error while writing the trace to stdout");
    return 0;
  }
  // The writer does not poll for Ctrl-C: a signal removes the temporary and exits at once.
  OutputFile f(out);
  const std::string line = "pypto-sim: interrupted while writing " + out + "; nothing written";
  set_exit_on_interrupt(line.c_str());
  try {
    sim::write_synthetic_trace(s, f.stream());
  } catch (...) {
    set_exit_on_interrupt(nullptr);
    throw;
  }
  set_exit_on_interrupt(nullptr);
  f.commit();
  return 0;
}

int cmd_config(int argc, char** argv) {
  std::string chip, config;
  std::vector<std::string> sets;
  bool describe = false, list = false;
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("chip", po::value(&chip), "chip preset")(
      "config", po::value(&config), "chip config YAML file")("set", po::value(&sets)->composing(),
                                                             "override a value")(
      "describe", po::bool_switch(&describe), "list every key with unit, default and range")(
      "list", po::bool_switch(&list), "list the chip presets");
  po::positional_options_description p;
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "config [options]")) return 0;
  if (list) {
    for (const auto& n : cfg::list_chip_presets()) std::cout << n << "\n";
  } else if (describe) {
    std::cout << cfg::describe();
  } else {
    std::cout << cfg::to_yaml(cfg::resolve_chip_config(chip, config, sets));
  }
  return 0;
}

// "10k,100k,1M" -> {10000, 100000, 1000000}
std::vector<std::uint64_t> parse_sizes(const std::string& list) {
  std::vector<std::uint64_t> sizes;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    std::uint64_t mult = 1;
    std::string digits = item;
    if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) mult = 1'000;
    if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M')) mult = 1'000'000;
    if (mult != 1) digits.pop_back();
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 10) {
      throw UsageError("--sizes: '" + item + "' is not a task count (expected e.g. 10k,100k,1M)");
    }
    sizes.push_back(std::stoull(digits) * mult);
  }
  if (sizes.empty()) throw UsageError("--sizes: no size given (expected e.g. 10k,100k,1M)");
  return sizes;
}

int cmd_bench(int argc, char** argv) {
  bench::BenchOptions o;
  std::string sizes, rounds, formats;
  bool no_frontend = false;
  po::options_description d("options");
  d.add_options()("help,h", "show this help")(
      "quick", po::bool_switch(&o.quick), "smoke test: 10k and 100k tasks, one round (< 1 min)")(
      "out,o", po::value(&o.out_dir), "output folder (default: output/bench_<timestamp>)")(
      "sizes", po::value(&sizes), "scaling sizes, e.g. 10k,100k,1M,10M (the default)")(
      "trace-dir", po::value(&o.trace_dir),
      "where synthetic traces are kept and reused "
      "(default: the output folder)")(
      "rounds", po::value(&rounds),
      "interleaved repetitions, median taken (default 3; quick 1; sizes "
      "up to 100k run three times as many, except with --quick)")(
      "chip", po::value(&o.chip)->default_value("a2"), "chip preset")(
      "no-frontend", po::bool_switch(&no_frontend), "skip tools/bench_frontend.py")(
      "formats", po::value(&formats),
      "end-to-end input formats, e.g. native,dyn_topo (default: native, dyn_topo, topo_json, "
      "fixed_latency; none: no end-to-end table)");
  po::positional_options_description p;
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "bench [options]")) return 0;
  if (!sizes.empty()) o.sizes = parse_sizes(sizes);
  if (!rounds.empty()) o.rounds = static_cast<int>(parse_count("rounds", rounds, 1, 1000));
  o.frontend = !no_frontend;
  std::stringstream formats_list(formats);
  for (std::string f; std::getline(formats_list, f, ',');) o.formats.push_back(f);
  if (!formats.empty() && o.formats.empty()) throw UsageError("--formats: no format given");
  if (o.out_dir.empty()) {
    const std::time_t now = std::time(nullptr);
    char ts[32];
    std::strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", std::localtime(&now));
    o.out_dir = std::string("output/bench_") + ts;
  }
  o.self_exe = std::filesystem::read_symlink("/proc/self/exe").string();
  const nlohmann::ordered_json j = bench::run_bench(o, std::cerr);
  const std::string path = o.out_dir + "/bench.json";
  OutputFile f(path);
  f.stream() << j.dump(2) << "\n";
  f.commit();
  std::cout << bench::bench_table(j) << "bench.json in " << path << "\n";
  return 0;
}

// calibrate TRACE [--prof PROF] [TRACE [--prof PROF]]...: each --prof belongs to the trace
// before it. The fit is pypto_calibrate's; this only loads, prints and writes.
int cmd_calibrate(int argc, char** argv) {
  Common c;
  std::string overlay, params, max_sims_text;
  po::options_description d = chip_options(c);
  d.add_options()("trace", po::value<std::vector<std::string>>(), "recordings")(
      "params", po::value(&params),
      "keys to fit, comma-separated (default: every AICPU cost and start-up latency; those "
      "the recordings do not constrain are found and left out)")(
      "max-sims", po::value(&max_sims_text)->default_value("400"),
      "at most this many replays (one replay = one recording once)")(
      "out,o", po::value(&overlay), "write the fit as a config overlay (YAML for --config)")(
      "quiet,q", po::bool_switch(&c.quiet), "no progress on stderr");
  po::positional_options_description p;
  p.add("trace", -1);
  po::parsed_options parsed = parse_line(argc, argv, d, p);
  std::vector<std::pair<std::string, std::string>> pairs;  // trace, prof
  for (const po::option& o : parsed.options) {
    if (o.string_key == "trace") pairs.emplace_back(o.value.at(0), "");
    if (o.string_key == "prof") {
      if (pairs.empty() || !pairs.back().second.empty())
        throw UsageError("--prof " + o.value.at(0) + ": give it after the TRACE it belongs to");
      if (o.value.at(0).empty()) throw UsageError("--prof: the value is empty");
      pairs.back().second = o.value.at(0);
    }
  }
  parsed.options.erase(std::remove_if(parsed.options.begin(), parsed.options.end(),
                                      [](const po::option& o) {
                                        return o.string_key == "trace" || o.string_key == "prof";
                                      }),
                       parsed.options.end());
  po::variables_map vm;
  po::store(parsed, vm);
  po::notify(vm);
  check_no_empty_values(vm);
  for (const auto& [trace, prof] : pairs) {
    if (trace.empty()) throw UsageError("TRACE is an empty path");
  }
  if (vm.count("help") != 0) {
    std::cout << "usage: pypto-sim calibrate TRACE [--prof PROF] [TRACE [--prof PROF]]... "
                 "[options]\n"
              << d;
    return 0;
  }
  if (pairs.empty()) throw UsageError("missing TRACE: pypto-sim calibrate TRACE [--prof PROF]...");
  const sched::RuntimeOptions rt = runtime_options(vm, c);
  calibrate::CalibrateOptions opt;
  if (!params.empty()) {
    opt.params.clear();
    std::stringstream ss(params);
    for (std::string k; std::getline(ss, k, ',');) {
      if (!k.empty()) opt.params.push_back(calibrate::param_spec(k));
    }
  }
  opt.max_simulations =
      static_cast<std::uint32_t>(parse_count("max-sims", max_sims_text, 1, 1'000'000));
  if (!c.quiet)
    opt.progress = [](const std::string& s) { std::cerr << "calibrate: " << s << "\n"; };
  std::vector<sim::LoadedTrace> traces;
  sim::ChipConfig chip;
  ProgressLine bar(c.quiet);
  for (const auto& [path, prof] : pairs) {
    sim::ChipConfig this_chip;
    traces.push_back(load_with_chip(c, path, prof, rt, this_chip, bar));
    if (traces.size() == 1) {
      chip = this_chip;
    } else if (this_chip.chip.name != chip.chip.name) {
      throw UsageError(path + " runs on " + this_chip.chip.name + " but " + pairs[0].first +
                       " on " + chip.chip.name + "; name one chip with --chip");
    }
  }
  std::vector<calibrate::Recording> recs;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    recs.push_back({pairs[i].first, &traces[i].graph, rt});
  }
  // The overlay's temporary is opened first, so that an unwritable path fails before the
  // fit rather than after it. The fit writes nothing until it is done: a Ctrl-C during it
  // exits at once (removing that temporary).
  std::unique_ptr<OutputFile> overlay_file;
  if (!overlay.empty()) {
    Inputs inputs = common_inputs(c, "", "");
    for (const auto& [path, prof] : pairs) {
      inputs.emplace_back("a TRACE", path);
      inputs.emplace_back("--prof", prof);
    }
    refuse_overwrite("-o", overlay, inputs);
    overlay_file = std::make_unique<OutputFile>(overlay);
  }
  set_exit_on_interrupt("pypto-sim: interrupted while calibrating; nothing written");
  const calibrate::CalibrateResult r = calibrate::calibrate(recs, chip, opt);
  set_exit_on_interrupt(nullptr);
  std::cout << calibrate::fit_table(r);
  if (!overlay.empty()) {
    std::string text;
    if (c.config.empty()) {
      text = calibrate::overlay_yaml(r, chip.chip.name, c.sets);
    } else {
      // A --config file is no preset a `base:` could name: write the whole fitted chip.
      text = "# Written by `pypto-sim calibrate` from " + c.config + ": the whole chip, with\n";
      for (const auto& pf : r.params) {
        if (pf.sensitive) text += "#   " + pf.key + " fitted: " + std::to_string(pf.fitted) + "\n";
      }
      text += cfg::to_yaml(r.fitted);
    }
    overlay_file->stream() << text;
    overlay_file->commit();
    std::cout << "overlay in " << overlay << "\n";
  }
  return 0;
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "pypto-sim 0.1.0\n";
    return 0;
  }
  if (cmd == "run") return cmd_run(argc - 1, argv + 1, false);
  if (cmd == "compare") return cmd_run(argc - 1, argv + 1, true);
  if (cmd == "gen") return cmd_gen(argc - 1, argv + 1);
  if (cmd == "config") return cmd_config(argc - 1, argv + 1);
  if (cmd == "bench") return cmd_bench(argc - 1, argv + 1);
  if (cmd == "calibrate") return cmd_calibrate(argc - 1, argv + 1);
  if (cmd == "sweep") {
    if (!g_host->sweep) throw UsageError("sweep: " + g_host->no_python);
    return g_host->sweep(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (cmd == "policies" || cmd == "--list-policies") {
    std::vector<std::string> modules;
    po::options_description d("options");
    d.add_options()("help,h", "show this help");
    add_policy_module_option(d, modules);
    po::positional_options_description p;
    po::variables_map vm;
    if (parse_or_help(argc - 1, argv + 1, d, p, vm, "policies [options]")) return 0;
    load_policy_modules(modules);
    // Name and description, then one line per parameter.
    for (const auto& e : sched::Registry::global().list()) {
      std::cout << e.name << "  " << e.description << "\n";
      for (const auto& p : e.params) {
        std::cout << "    " << p.name << ": " << sched::describe_param(p) << "  " << p.doc << "\n";
      }
    }
    return 0;
  }
  std::vector<std::string> cmds = {"run",      "compare", "gen",       "config",
                                   "policies", "bench",   "calibrate", "sweep"};
  std::string msg = "unknown command '" + cmd + "'";
  if (const auto guess = sched::closest_match(cmd, cmds)) msg += "; did you mean '" + *guess + "'?";
  throw UsageError(msg +
                   " (commands: run, compare, gen, config, policies, bench, calibrate, sweep)");
}

// "; kept X" or "; nothing written": what a failed or interrupted run leaves.
std::string kept_note() {
  if (g_kept.empty()) return "; nothing written";
  std::string s = "; kept ";
  for (std::size_t i = 0; i < g_kept.size(); ++i) s += (i == 0 ? "" : ", ") + g_kept[i];
  return s;
}

// How a command line that threw ends: its exit status and its line on stderr.
struct Failure {
  int exit_code;
  std::string message;  // after "pypto-sim: "
};

// The one boundary between typed errors and exit statuses: 130 interrupted, 2 bad input
// (usage, config, trace, a Python policy's hook raising), 3 a model bug, 1 anything else.
// Contract: called only from a catch handler; names the exception in flight (one that is no
// std::exception is rethrown).
Failure describe_failure() {
  try {
    throw;
  } catch (const Interrupted& e) {
    // Temporaries are gone by now (destructors ran while the exception unwound).
    return {130, e.what() + kept_note()};
  } catch (const po::error& e) {
    return {2, e.what()};
  } catch (const UsageError& e) {
    return {2, e.what()};
  } catch (const ConfigError& e) {
    return {2, std::string("config error: ") + e.what()};
  } catch (const TraceError& e) {
    return {2, std::string("trace error: ") + e.what()};
  } catch (const ModelError& e) {
    return {3, e.what()};
  } catch (const std::bad_alloc&) {
    return {1, "out of memory" + kept_note()};
  } catch (const std::exception& e) {
    // A Python policy's hook raising is the user's code failing: exit 2, as bad input.
    if (g_host->describe_user_error) {
      const std::string line = g_host->describe_user_error(std::current_exception());
      if (!line.empty()) return {2, line + kept_note()};
    }
    return {1, e.what() + (g_kept.empty() ? std::string() : kept_note())};
  }
}

int run_cli(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (...) {
    const Failure f = describe_failure();
    std::cerr << "pypto-sim: " << f.message << "\n";
    return f.exit_code;
  }
}

}  // namespace

int pypto::cli::main(const std::vector<std::string>& args, const Host& host) {
  // Several command lines may run in one process (the Python module): nothing carries over.
  g_kept.clear();
  g_host = &host;
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = run_cli(static_cast<int>(copy.size()), argv.data());
  g_host = nullptr;
  return rc;
}
