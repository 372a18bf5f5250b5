// SPDX-License-Identifier: Apache-2.0
// pypto-sim policies (or --list-policies): lists the scheduling policies of the registry,
// with those of --policy-module files, and their parameters.
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "flags.h"
#include "pypto/sched/registry.h"

namespace pypto::cli {

int cmd_policies(Context& ctx, int argc, char** argv) {
  std::vector<std::string> modules;
  po::options_description d("options");
  d.add_options()("help,h", "show this help");
  add_policy_module_option(d, modules);
  po::positional_options_description p;
  po::variables_map vm;
  if (parse_or_help(argc, argv, d, p, vm, "policies [options]")) return 0;
  load_policy_modules(ctx.host, modules);
  // Name and description, then one line per parameter.
  for (const auto& e : sched::Registry::global().list()) {
    std::cout << e.name << "  " << e.description << "\n";
    for (const auto& p : e.params) {
      std::cout << "    " << p.name << ": " << sched::describe_param(p) << "  " << p.doc << "\n";
    }
  }
  return 0;
}

}  // namespace pypto::cli
