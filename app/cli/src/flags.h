// SPDX-License-Identifier: Apache-2.0
// The flags the commands of pypto-sim share: the chip and runtime options of a trace replay,
// --help and the "did you mean" of an unknown flag, whole-number flags, and the checks that
// keep an output from replacing an input.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "pypto/cli/cli.h"
#include "pypto/sched/runtime_options.h"

namespace pypto::cli {

namespace po = boost::program_options;

// A whole number flag: digits only (no sign, so "-1" is no 4294967295), within [lo, hi].
std::uint64_t parse_count(const std::string& flag, const std::string& text, std::uint64_t lo,
                          std::uint64_t hi);

// A flag given with an empty value ("-o ''", "--config="): refused rather than read as "not
// given" (an empty -o would quietly write to a new folder under ./output/).
void check_no_empty_values(const po::variables_map& vm);

// Refuses a flag that was given but that this use of the command does not read (`why`
// says why not): a flag silently ignored lets its user think it acted. Flags left at their
// default do not count.
void refuse_unused(const po::variables_map& vm, std::initializer_list<const char*> flags,
                   const std::string& why);

// Whether two paths name one file: the same file on disk, or (for a file not written yet)
// the same absolute path once links and ".." are resolved.
bool same_file(const std::string& a, const std::string& b);

// The input files of a command, named as its flags name them, for refuse_overwrite.
using Inputs = std::vector<std::pair<std::string, std::string>>;  // (flag, path)

// Refuses an output that would replace one of the inputs (the input is read before the
// output is written, so nothing would fail, but the user's file would be gone).
void refuse_overwrite(const std::string& flag, const std::string& output, const Inputs& inputs);

// Refuses a report folder whose reports would replace an input ("-o ." beside topo.json).
void refuse_overwrite_by_reports(const std::string& dir, const Inputs& inputs);

// Flags shared by run and compare: chip, trace and the runtime options of a trace.
struct Common {
  std::string trace, prof, chip, config, out;
  std::vector<std::string> sets;
  bool no_trace = false, quiet = false;
  std::vector<std::string> policy_params;   // --policy-param key=value
  std::string run_config;                   // --run-config FILE.yaml
  std::vector<std::string> policy_modules;  // --policy-module FILE.py
};

// The inputs of run, compare and calibrate.
Inputs common_inputs(const Common& c, const std::string& trace, const std::string& prof);

// Registers the policies of --policy-module files (through the host: the native binary
// becomes a Python process here), before any option names one of them.
void load_policy_modules(const Host& host, const std::vector<std::string>& files);

// The chip and runtime-option flags (run, compare, calibrate).
po::options_description chip_options(Common& c);

// chip_options, then -o, --no-trace and -q (run, compare).
po::options_description common_options(Common& c);

// --policy-module FILE.py (run, compare, policies).
void add_policy_module_option(po::options_description& d, std::vector<std::string>& files);

// The runtime options of the flags and --run-config. check_params false (compare): the
// parameters are checked per policy by the caller. Prints sched::superseded_note on stderr
// (unless --quiet) when stitch_function_max_num supersedes the older stitching options.
sched::RuntimeOptions runtime_options(const po::variables_map& vm, const Common& c,
                                      bool check_params = true,
                                      std::vector<std::string>* run_config_keys = nullptr);

// A new folder under ./output/ named after the trace, `tag`, the time and the process.
std::string default_out_dir(const std::string& trace, const std::string& tag);

// Parses a command line (argv[0]: the command's name); an unknown flag or one argument too
// many is a UsageError that names it.
po::parsed_options parse_line(int argc, char** argv, const po::options_description& d,
                              const po::positional_options_description& p);

// Parses a command's flags into `vm`. Contract: true when they ask for --help, which has then
// been answered ("usage: pypto-sim " + usage, then the options): the command returns 0.
bool parse_or_help(int argc, char** argv, po::options_description& d,
                   po::positional_options_description& p, po::variables_map& vm,
                   const std::string& usage);

}  // namespace pypto::cli
