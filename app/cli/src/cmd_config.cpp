// SPDX-License-Identifier: Apache-2.0
// pypto-sim config: shows a chip configuration, every key (--describe) or the presets (--list).
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "flags.h"
#include "pypto/model/config_loader.h"

namespace pypto::cli {

int cmd_config(Context& /*ctx*/, int argc, char** argv) {
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
    refuse_unused(vm, {"describe", "chip", "config", "set"},
                  "with --list (it lists the presets, no chip's values)");
  } else if (describe) {
    refuse_unused(vm, {"chip", "config", "set"},
                  "with --describe (it lists every key with its default, no chip's values)");
  }
  if (list) {
    for (const auto& n : model::list_chip_presets()) std::cout << n << "\n";
  } else if (describe) {
    std::cout << model::describe();
  } else {
    std::cout << model::to_yaml(model::resolve_chip_config(chip, config, sets));
  }
  return 0;
}

}  // namespace pypto::cli
