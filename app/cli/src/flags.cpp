// SPDX-License-Identifier: Apache-2.0
// The flags the commands of pypto-sim share (flags.h).
#include "flags.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "pypto/common/errors.h"
#include "pypto/common/suggest.h"
#include "pypto/sched/registry.h"
#include "pypto/sched/stitcher.h"
#include "pypto/sim/report.h"
#include "pypto/sim/run_config.h"

namespace pypto::cli {

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

void refuse_unused(const po::variables_map& vm, std::initializer_list<const char*> flags,
                   const std::string& why) {
  for (const char* flag : flags) {
    if (vm.count(flag) == 0 || vm[flag].defaulted()) continue;
    const auto* on = boost::any_cast<bool>(&vm[flag].value());
    if (on != nullptr && !*on) continue;  // a switch not given
    std::string shown = std::string("--") + flag;
    if (const auto* text = boost::any_cast<std::string>(&vm[flag].value())) {
      shown += " " + *text;
    } else if (const auto* list = boost::any_cast<std::vector<std::string>>(&vm[flag].value())) {
      shown += " " + list->front();
    }
    throw UsageError(shown + ": not used " + why + "; remove it");
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

void refuse_overwrite(const std::string& flag, const std::string& output, const Inputs& inputs) {
  for (const auto& [what, path] : inputs) {
    if (path.empty() || !same_file(output, path)) continue;
    throw UsageError(flag + ": writing " + output + " would replace the input " + path + " (" +
                     what + "); choose another output path");
  }
}

// Refuses a report folder whose reports would replace an input ("-o ." beside topo.json).
void refuse_overwrite_by_reports(const std::string& dir, const Inputs& inputs) {
  for (const char* name : sim::kReportFiles)
    refuse_overwrite("-o " + dir, dir + "/" + name, inputs);
}

Inputs common_inputs(const Common& c, const std::string& trace, const std::string& prof) {
  Inputs in = {{"the trace", trace},
               {"--prof", prof},
               {"--config", c.config},
               {"--run-config", c.run_config}};
  for (const auto& m : c.policy_modules) in.emplace_back("--policy-module", m);
  return in;
}

namespace {

constexpr const char* kPolicyModuleHelp =
    "a Python file whose pypto.sim.register_policy calls add policies (repeatable; runs the "
    "command in Python)";

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

}  // namespace

void load_policy_modules(const Host& host, const std::vector<std::string>& files) {
  if (files.empty()) return;
  if (!host.load_policy_modules) {
    throw UsageError("--policy-module " + files.front() + ": " + host.no_python);
  }
  host.load_policy_modules(files);
}

po::options_description chip_options(Common& c) {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")(
      "prof", po::value(&c.prof), "tilefwk_L1_prof_data.json with recorded times (board traces)")(
      "chip", po::value(&c.chip),
      "chip preset (pypto-sim config --list), or auto (the default): the preset that fits a "
      "board recording's cores or that a native trace's header names, else a2")(
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

sched::RuntimeOptions runtime_options(const po::variables_map& vm, const Common& c,
                                      bool check_params,
                                      std::vector<std::string>* run_config_keys) {
  sched::RuntimeOptions o;
  if (!c.run_config.empty()) {
    const std::vector<std::string> keys = sim::load_run_config(c.run_config, o);
    if (run_config_keys != nullptr) *run_config_keys = keys;
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
  if (const std::string note = sched::superseded_note(o); !note.empty() && !c.quiet) {
    std::cerr << "pypto-sim: warning: " << note << "\n";
  }
  return o;
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

namespace {

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
  if (const auto guess = common::closest_match(word, names))
    msg += "; did you mean '--" + *guess + "'?";
  throw UsageError(msg + " ('pypto-sim " + cmd + " --help' lists the options)");
}

}  // namespace

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

}  // namespace pypto::cli
