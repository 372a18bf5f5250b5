// SPDX-License-Identifier: Apache-2.0
// The chip config loader with `--set` overrides. The input is a YAML file, optionally
// followed by a line `#--set` (a YAML comment, so the YAML part stays well-formed when the
// separator is mutated away) and one `key.path=value` assignment per line:
//   l2:
//     ways: 8
//   #--set
//   hbm.aggregate_gbps=1600
// The YAML is loaded, the assignments applied in order and the result validated, as
// model::resolve_chip_config does for --config/--set. A config that validates must also
// survive the documented round trip load_chip_config_text(to_yaml(c)) == c.
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "pypto/model/config_loader.h"

namespace {

constexpr std::string_view kSeparator = "#--set\n";

}  // namespace

PYPTO_FUZZ_TARGET(config) {
  if (size > pypto::fuzz::kMaxInputBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t sep = text.find(kSeparator);
  const std::string yaml(text.substr(0, sep));
  std::vector<std::string> sets;
  if (sep != std::string_view::npos) {
    std::string_view rest = text.substr(sep + kSeparator.size());
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      sets.emplace_back(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
  }

  pypto::fuzz::run_one([&] {
    pypto::model::ChipConfig c = pypto::model::load_chip_config_text(yaml, "fuzz.yaml");
    for (const std::string& s : sets) pypto::model::apply_override(c, s);
    pypto::model::validate(c);
    // Past validation the config is accepted: the round trip must hold, and nothing in it may
    // throw.
    pypto::model::ChipConfig again;
    try {
      again = pypto::model::load_chip_config_text(pypto::model::to_yaml(c), "round-trip.yaml");
    } catch (const pypto::Error& e) {
      pypto::fuzz::finding("a validated config does not reload from to_yaml()", e.what());
    }
    if (const auto diff = pypto::model::first_difference(c, again)) {
      pypto::fuzz::finding("to_yaml() round trip changes a validated config", *diff);
    }
  });
  return 0;
}
