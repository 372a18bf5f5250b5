// SPDX-License-Identifier: Apache-2.0
// pypto-sim compare TRACE: runs several policies on the same trace, writes each one's
// reports and prints one table.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "flags.h"
#include "progress_line.h"
#include "pypto/sched/registry.h"
#include "replay.h"

namespace pypto::cli {

namespace {

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

}  // namespace

int cmd_compare(Context& ctx, int argc, char** argv) {
  Common c;
  std::string policies = "0,1,2,3";
  po::options_description d = common_options(c);
  add_policy_module_option(d, c.policy_modules);
  d.add_options()("trace", po::value(&c.trace), "trace file");
  d.add_options()("policies", po::value(&policies), "policies to compare: 0,1,2,3 or names");
  po::positional_options_description p;
  p.add("trace", 1);
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "compare TRACE [options]")) return 0;
  if (c.trace.empty()) throw UsageError("missing TRACE: pypto-sim compare TRACE [options]");
  const Inputs inputs = common_inputs(c, c.trace, c.prof);
  // compare runs the policies of --policies: a policy named elsewhere would be ignored.
  refuse_unused(vm, {"device-sched-mode", "sched-mode"},
                "by compare, which runs the policies of --policies (give it there)");
  load_policy_modules(ctx.host, c.policy_modules);
  std::vector<std::string> run_config_keys;
  sched::RuntimeOptions rt = runtime_options(vm, c, /*check_params=*/false, &run_config_keys);
  if (std::find(run_config_keys.begin(), run_config_keys.end(), "device_sched_mode") !=
      run_config_keys.end()) {
    throw UsageError("--run-config " + c.run_config +
                     ": its device_sched_mode is not used by compare, which runs the policies "
                     "of --policies; give the policy there, or remove the key");
  }
  // The policies, checked before the trace is read.
  std::vector<std::string> names;
  // The list as messages show it: a long one cut, so that the line stays one line.
  const std::string shown = policies.size() <= 80 ? policies : policies.substr(0, 77) + "...";
  std::stringstream ss(policies);
  std::size_t position = 0;
  for (std::string item; std::getline(ss, item, ',');) {
    ++position;
    if (item.empty()) {
      // "fifo,,fair": a policy left out by a slip; a trailing comma alone is harmless.
      if (ss.peek() == std::char_traits<char>::eof() && !names.empty()) continue;
      throw UsageError("--policies " + shown + ": item " + std::to_string(position) +
                       " is empty; expected policy names or mode numbers separated by commas");
    }
    const std::string name = sched::parse_policy(item);
    // Twice the same run, and its reports written over the first's: a slip, not a wish.
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw UsageError("--policies " + shown + ": policy " + name +
                       " is given twice (a mode number and its name are one policy)");
    }
    names.push_back(name);
  }
  if (names.empty()) throw UsageError("--policies: no policy given");
  if (!c.out.empty()) {
    for (const auto& n : names) refuse_overwrite_by_reports(c.out + "/" + n, inputs);
  }
  model::ChipConfig chip;
  ProgressLine bar(c.quiet);
  const trace::LoadedTrace trace = load_with_chip(c, c.trace, c.prof, rt, chip, bar);
  warn_unrecorded(trace);
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
    ctx.kept.push_back("the reports of " + n + " in " + out + "/" + n + "/");
  }
  std::cout << "trace " << c.trace << " on " << chip.chip.name << " (" << trace.graph.num_tasks()
            << " tasks)\n"
            << sim::compare_table(runs) << "reports in " << out << "/<policy>/\n";
  return 0;
}

}  // namespace pypto::cli
