// SPDX-License-Identifier: Apache-2.0
// Chip configuration: YAML presets in configs/, user files, `--set key.path=value`
// overrides, validation, and self-description. Every problem is a pypto::ConfigError with
// one line naming the dotted key, the place (file:line:col or the --set argument), the bad
// value and what is allowed.
//
// Example:
//   auto chip = model::load_chip_preset("a3");  // configs/a3.yaml
//   model::apply_override(chip, "l2.ways=8");   // from --set
//   model::validate(chip);
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "pypto/common/suggest.h"
#include "pypto/model/chip_config.h"

namespace pypto::model {

// Reads a chip config from a YAML file. Sections and keys are optional: absent keys keep
// the struct defaults (Atlas A2), or, with a top-level `base: <preset>`, that preset's
// values. The result is validated. Throws ConfigError.
ChipConfig load_chip_config_file(const std::string& path);
// Same, from text; `file_name` is only used in messages.
ChipConfig load_chip_config_text(const std::string& text, const std::string& file_name);

// Reads a small YAML input (a run config, ...) by the rules of a chip config file, so that
// every YAML file of the project is read alike: a regular file (a directory, pipe or device
// is refused; a FIFO would block), at most 1 MiB, valid UTF-8 YAML of one document (a second
// after '---' is an error, not dropped), no nesting deeper than yaml-cpp's guard, and in
// every map plain, distinct keys. `what` names the file in messages ("run config"). Throws
// ConfigError naming the file (and line:col). An empty file gives a null node.
YAML::Node load_yaml_file(const std::string& path, const char* what);

// The directory holding <name>.yaml presets: $PYPTO_CONFIG_DIR if set, else the directory
// compiled in (configs/ of the source tree). Throws ConfigError when neither exists.
std::string chip_preset_dir();
// Preset names (file stems of *.yaml in chip_preset_dir()), sorted.
std::vector<std::string> list_chip_presets();
// Loads <dir>/<name>.yaml. A preset must set every key, must not use `base`, and its
// chip.name must equal its file name. Unknown names throw ConfigError listing the presets.
ChipConfig load_chip_preset(const std::string& name);

// Applies one `key.path=value` assignment (value parsed as a YAML scalar), e.g.
// "l2.ways=8". Throws ConfigError mentioning "--set <assignment>" for a malformed
// assignment, an unknown key (with a suggestion) or a value of the wrong type. Range
// checks are left to validate(), which the caller runs after all overrides.
void apply_override(ChipConfig& c, const std::string& assignment);

// What the CLI and the Python module do with --chip / --config / --set: start from the
// preset `chip` or the file `config_file` (not both; neither means preset "a2"), apply
// the overrides in order, validate. Throws ConfigError.
ChipConfig resolve_chip_config(const std::string& chip, const std::string& config_file,
                               const std::vector<std::string>& overrides);

// Board recordings (RecordedCores). A recording fits a chip when every AIC blockIdx is
// below cores.aic and every AIV blockIdx lies in [aic, aic + aic * aiv_per_aic).
bool recording_fits(const ChipConfig& c, const RecordedCores& r);
// The presets that fit `r`, best first: the most AIC (a recording's AIV numbering starts right
// after the chip's last AIC, so the largest fitting count is the tightest), then by name.
// Throws ConfigError only when the presets cannot be read.
std::vector<std::string> fitting_chip_presets(const RecordedCores& r);
// Throws ConfigError when `r` does not fit `c`, naming the recording's and the chip's core
// counts and the presets that fit, e.g. "the recording ran on 20 AIC and at least 40 AIV
// (AIC blockIdx up to 19, AIV blockIdx 20-59), but chip a2 has 24 AIC and 48 AIV; presets
// that fit: a2-20c a3-20c (--chip auto picks a2-20c)".
void check_recorded_cores(const ChipConfig& c, const RecordedCores& r);

// Throws ConfigError for the first impossible value: "l2.ways: 0 is out of range [1, 64]".
void validate(const ChipConfig& c);

// Every field as YAML (sections in struct order); load_chip_config_text(to_yaml(c)) == c.
std::string to_yaml(const ChipConfig& c);

// One line per key: dotted key, type, unit, default (Atlas A2), allowed range, meaning.
std::string describe();

// The value of the numeric field at the dotted `key` ("aicpu.poll_cycles"), or nullopt when
// no numeric field has that key (text fields included). Read through the one field table, so
// tools never restate where a key lives.
std::optional<double> numeric_value(const ChipConfig& c, const std::string& key);

// Dotted key paths of every field ("chip.name", ..., "workspace.capacity_mib").
std::vector<std::string> chip_config_keys();

// The dotted key of the first field where `a` and `b` differ, or nullopt when they are
// equal field by field (ChipConfig has no operator==; tests and caches need one).
std::optional<std::string> first_difference(const ChipConfig& a, const ChipConfig& b);

}  // namespace pypto::model
