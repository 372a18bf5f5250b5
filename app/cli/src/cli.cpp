// SPDX-License-Identifier: Apache-2.0
// pypto-sim's command table and its one error boundary. The table lists every command once
// (name, usage line, handler, in cmd_<name>.cpp): the top-level usage text, the dispatch and
// the "did you mean" of an unknown command all come from it. The boundary maps each error
// type to an exit status: 2 for user errors (bad flags, config, trace, a Python policy's
// code), 3 for internal errors, 1 for I/O failures, 130 when interrupted (Ctrl-C, SIGTERM).
// Every output file is written to a temporary and renamed when complete
// (pypto/common/output_file.h): a failed or interrupted run leaves no file behind and says
// what it kept. What needs Python (--policy-module, sweep) goes through the Host.
#include "pypto/cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/one_line.h"
#include "pypto/common/suggest.h"

namespace pypto::cli {

namespace {

namespace po = boost::program_options;

// The commands, in the order the usage text lists them.
constexpr Command kCommands[] = {
    {"run", "TRACE",
     "replay a task trace on the chip model, write stats.json, trace.json, swim.json", cmd_run},
    {"compare", "TRACE", "run several policies on the same trace and print one table", cmd_compare},
    {"gen", "", "write a synthetic native trace", cmd_gen},
    {"config", "", "show a chip configuration (--describe lists every key)", cmd_config},
    {"policies", "", "list the scheduling policies", cmd_policies, "--list-policies"},
    {"bench", "", "benchmark suite: speed against the SystemC ceiling, scaling, policies",
     cmd_bench},
    {"calibrate", "TRACE",
     "fit the AICPU costs to recordings, print the fit, write a config overlay", cmd_calibrate},
    {"sweep", "", "run a grid of policies, parameters and traces (pypto.sweep, in Python)",
     cmd_sweep},
};

std::string usage_name(const Command& c) {
  return *c.operands == '\0' ? std::string(c.name) : std::string(c.name) + " " + c.operands;
}

// "usage: pypto-sim <command> [options]", one line per command (its summary in a column two
// spaces right of the longest name), and where the options of each are told.
std::string usage_text() {
  std::size_t width = 0;
  for (const Command& c : kCommands) width = std::max(width, usage_name(c).size());
  std::string s = "usage: pypto-sim <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) {
    const std::string name = usage_name(c);
    s += "  " + name + std::string(width + 2 - name.size(), ' ') + c.summary + "\n";
  }
  return s + "Run 'pypto-sim <command> --help' for the options of a command.\n";
}

int dispatch(Context& ctx, int argc, char** argv) {
  if (argc < 2) {
    std::cerr << usage_text();
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << usage_text();
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "pypto-sim 0.1.0\n";
    return 0;
  }
  for (const Command& c : kCommands) {
    if (cmd == c.name || (c.alias != nullptr && cmd == c.alias)) {
      return c.handler(ctx, argc - 1, argv + 1);
    }
  }
  std::vector<std::string> names;
  std::string list;
  for (const Command& c : kCommands) {
    list += (names.empty() ? "" : ", ") + std::string(c.name);
    names.emplace_back(c.name);
  }
  std::string msg = "unknown command '" + cmd + "'";
  if (const auto guess = common::closest_match(cmd, names))
    msg += "; did you mean '" + *guess + "'?";
  throw UsageError(msg + " (commands: " + list + ")");
}

// "; kept X" or "; nothing written": what a failed or interrupted run leaves.
std::string kept_note(const Context& ctx) {
  if (ctx.kept.empty()) return "; nothing written";
  std::string s = "; kept ";
  for (std::size_t i = 0; i < ctx.kept.size(); ++i) s += (i == 0 ? "" : ", ") + ctx.kept[i];
  return s;
}

// How a command line that threw ends: its exit status and its line on stderr.
struct Failure {
  int exit_code;
  std::string message;  // after "pypto-sim: "
};

// describe_failure without the interruption: the error's own status and line.
Failure describe_error(const Context& ctx);

// The one boundary between typed errors and exit statuses: 130 interrupted, 2 bad input
// (usage, config, trace, a policy's hook raising or answering outside its contract), 3 a
// model bug, 1 anything else.
// Contract: called only from a catch handler; names the exception in flight (one that is no
// std::exception is rethrown).
Failure describe_failure(const Context& ctx) {
  try {
    throw;
  } catch (const Interrupted& e) {
    // Temporaries are gone by now (destructors ran while the exception unwound).
    return {130, e.what() + kept_note(ctx)};
  } catch (...) {
    Failure f = describe_error(ctx);
    // After Ctrl-C or SIGTERM any failure is the interruption's (a read cut short by EINTR,
    // Python code that turned KeyboardInterrupt into another error): exit 130.
    if (common::interrupt_signal() == 0) return f;
    const std::string note = kept_note(ctx);
    if (f.message.size() >= note.size() &&
        f.message.compare(f.message.size() - note.size(), note.size(), note) == 0) {
      f.message.resize(f.message.size() - note.size());
    }
    return {130, "interrupted while running the command (then: " + f.message + ")" + note};
  }
}

Failure describe_error(const Context& ctx) {
  try {
    throw;
  } catch (const po::error& e) {
    return {2, e.what()};
  } catch (const UsageError& e) {
    return {2, e.what()};
  } catch (const ConfigError& e) {
    return {2, std::string("config error: ") + e.what()};
  } catch (const TraceError& e) {
    return {2, std::string("trace error: ") + e.what()};
  } catch (const PolicyError& e) {
    return {2, e.what() + kept_note(ctx)};
  } catch (const ModelError& e) {
    return {3, e.what()};
  } catch (const std::bad_alloc&) {
    return {1, "out of memory" + kept_note(ctx)};
  } catch (const std::filesystem::filesystem_error& e) {
    // "cannot create directories PATH: Operation not permitted", not the library's
    // "filesystem error: cannot create directories: Operation not permitted [PATH]".
    std::string op = e.what();
    if (op.rfind("filesystem error: ", 0) == 0) op.erase(0, 18);
    if (const auto bracket = op.find(" ["); bracket != std::string::npos) op.resize(bracket);
    if (const auto colon = op.rfind(": "); colon != std::string::npos) op.resize(colon);
    const std::string path = e.path1().empty() ? "" : " " + e.path1().string();
    return {1, op + path + ": " + e.code().message() + kept_note(ctx)};
  } catch (const std::exception& e) {
    // A Python policy's hook raising is the user's code failing: exit 2, as bad input.
    if (ctx.host.describe_user_error) {
      const std::string line = ctx.host.describe_user_error(std::current_exception());
      if (!line.empty()) return {2, line + kept_note(ctx)};
    }
    return {1, e.what() + (ctx.kept.empty() ? std::string() : kept_note(ctx))};
  }
}

// What the command printed reached stdout: a full disk or a closed pipe behind stdout is an
// I/O failure like any other output's, not a success with its output lost.
void check_stdout() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return;
  const int err = errno;
  throw Error(std::string("error while writing to stdout (") +
              (err != 0 ? std::strerror(err) : "write failed: disk full or I/O error") + ")");
}

// The simulator's environment variables, as pypto._backend lists them: a name of their
// prefixes that is none of them (PYPTO_CONFIG_DIRR) is a typo, refused rather than ignored.
void check_environment() {
  static const std::vector<std::string> kNames = {
      "PYPTO_SIM_CHIP",   "PYPTO_SIM_L2",    "PYPTO_SIM_REPORTS",
      "PYPTO_SIM_PYTHON", "PYPTO_SIM_CLI",   "PYPTO_SIM_PROGRESS_DELAY_MS",
      "PYPTO_OUTPUT_DIR", "PYPTO_CONFIG_DIR"};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    const std::string name(entry.substr(0, eq));
    const std::string value(eq == std::string_view::npos ? "" : entry.substr(eq + 1));
    if (name.rfind("PYPTO_SIM", 0) != 0 && name.rfind("PYPTO_OUTPUT", 0) != 0 &&
        name.rfind("PYPTO_CONFIG", 0) != 0) {
      continue;
    }
    if (std::find(kNames.begin(), kNames.end(), name) == kNames.end()) {
      std::string msg = "environment variable " + name + "='" + value.substr(0, 60) +
                        "' is not one pypto-sim reads";
      if (const auto guess = common::closest_match(name, kNames))
        msg += "; did you mean " + *guess + "?";
      throw UsageError(msg + " (unset it)");
    }
    if (name == "PYPTO_SIM_PROGRESS_DELAY_MS" && !value.empty()) {
      const bool digits =
          value.size() <= 7 && value.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoul(value) > 3'600'000) {
        throw UsageError("environment variable PYPTO_SIM_PROGRESS_DELAY_MS='" +
                         value.substr(0, 60) +
                         "': expected a whole number of milliseconds in [0, 3600000] (or unset)");
      }
    }
  }
}

int run_cli(Context& ctx, int argc, char** argv) {
  try {
    check_environment();
    const int code = dispatch(ctx, argc, argv);
    check_stdout();
    return code;
  } catch (...) {
    const Failure f = describe_failure(ctx);
    std::cerr << "pypto-sim: " << common::one_line(f.message) << "\n";
    return f.exit_code;
  }
}

}  // namespace

int main(const std::vector<std::string>& args, const Host& host) {
  Context ctx{host, {}};
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  return run_cli(ctx, static_cast<int>(copy.size()), argv.data());
}

}  // namespace pypto::cli
