// SPDX-License-Identifier: Apache-2.0
// Chip configuration: YAML presets in configs/, user files, `--set key.path=value`
// overrides, validation, and self-description. Every problem is a pypto::ConfigError with
// one line naming the dotted key, the place (file:line:col or the --set argument), the bad
// value and what is allowed.
//
// Example:
//   auto chip = cfg::load_chip_preset("a3");        // configs/a3.yaml
//   cfg::apply_override(chip, "l2.ways=8");          // from --set
//   cfg::validate(chip);
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pypto/sched/suggest.h"
#include "pypto/sim/config/chip_config.h"

namespace pypto::cfg {

// Binds the keys of one YAML map to struct fields and rejects keys nobody asked for.
// Typical use: construct, read() each field, section() for nested maps, then finish().
// A field whose key is absent keeps its value (the struct default) unless the Reader
// was made with Presence::kRequired, in which case a missing key is an error.
class Reader {
 public:
  enum class Presence { kOptional, kRequired };

  // `node` must be a map or null (null reads as an empty map); `path` is its dotted key
  // path ("" at the top level) and `file` the name shown in messages.
  // Throws ConfigError for a non-map node, a duplicate key or a non-scalar key.
  Reader(const YAML::Node& node, std::string path, std::string file,
         Presence presence = Presence::kOptional);

  // Contract: each read() parses the value of `key` into `field` (or leaves it alone when
  // absent and optional) and marks the key consumed. Integers must be plain integer
  // scalars in the field's range (no sign for unsigned, no fraction); numbers must not be
  // quoted. Throws ConfigError "<path.key> (<file>:<line>:<col>): expected ..., got '...'".
  void read(std::string& field, const std::string& key);
  void read(bool& field, const std::string& key);
  void read(std::uint32_t& field, const std::string& key);
  void read(std::uint64_t& field, const std::string& key);
  void read(std::int64_t& field, const std::string& key);
  void read(double& field, const std::string& key);

  // The nested map under `key` as a Reader with the same presence rule; the key counts as
  // consumed. An absent key yields an empty Reader (an error if required).
  Reader section(const std::string& key);

  bool has(const std::string& key) const;
  // Where the value of `key` starts, if present (0-based yaml-cpp mark).
  std::optional<YAML::Mark> value_mark(const std::string& key) const;
  // "file:line:col" (1-based) for the value of `key`, or just the file if unknown.
  std::string where(const std::string& key) const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }

  // Contract: call after every read(); throws ConfigError for the first key that was
  // never read: "unknown key 'wyas' in l2 (f.yaml:12:5); did you mean 'ways'?".
  void finish() const;

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
    bool used = false;
  };
  Entry* find(const std::string& key);
  const Entry* find(const std::string& key) const;
  // The entry of `key`, marked used; nullptr when absent (throws when required).
  const Entry* take(const std::string& key);
  std::string dotted(const std::string& key) const;
  template <class T>
  void read_any(T& field, const std::string& key);  // defined and instantiated in the .cpp

  std::vector<Entry> entries_;
  std::vector<std::string> known_;  // every key asked for: the "did you mean" candidates
  std::string path_;
  std::string file_;
  Presence presence_;
  YAML::Mark mark_;
};

// Shared with the policy registry and the CLI (pypto/sched/suggest.h).
using sched::closest_match;
using sched::edit_distance;

// Reads a chip config from a YAML file. Sections and keys are optional: absent keys keep
// the struct defaults (Atlas A2), or, with a top-level `base: <preset>`, that preset's
// values. The result is validated. Throws ConfigError.
sim::ChipConfig load_chip_config_file(const std::string& path);
// Same, from text; `file_name` is only used in messages.
sim::ChipConfig load_chip_config_text(const std::string& text, const std::string& file_name);

// The directory holding <name>.yaml presets: $PYPTO_CONFIG_DIR if set, else the directory
// compiled in (configs/ of the source tree). Throws ConfigError when neither exists.
std::string chip_preset_dir();
// Preset names (file stems of *.yaml in chip_preset_dir()), sorted.
std::vector<std::string> list_chip_presets();
// Loads <dir>/<name>.yaml. A preset must set every key, must not use `base`, and its
// chip.name must equal its file name. Unknown names throw ConfigError listing the presets.
sim::ChipConfig load_chip_preset(const std::string& name);

// Applies one `key.path=value` assignment (value parsed as a YAML scalar), e.g.
// "l2.ways=8". Throws ConfigError mentioning "--set <assignment>" for a malformed
// assignment, an unknown key (with a suggestion) or a value of the wrong type. Range
// checks are left to validate(), which the caller runs after all overrides.
void apply_override(sim::ChipConfig& c, const std::string& assignment);

// What the CLI and the Python module do with --chip / --config / --set: start from the
// preset `chip` or the file `config_file` (not both; neither means preset "a2"), apply
// the overrides in order, validate. Throws ConfigError.
sim::ChipConfig resolve_chip_config(const std::string& chip, const std::string& config_file,
                                    const std::vector<std::string>& overrides);

// Throws ConfigError for the first impossible value: "l2.ways: 0 is out of range [1, 64]".
void validate(const sim::ChipConfig& c);

// Every field as YAML (sections in struct order); load_chip_config_text(to_yaml(c)) == c.
std::string to_yaml(const sim::ChipConfig& c);

// One line per key: dotted key, type, unit, default (Atlas A2), allowed range, meaning.
std::string describe();

// Dotted key paths of every field ("chip.name", ..., "workspace.capacity_mib").
std::vector<std::string> chip_config_keys();

// The dotted key of the first field where `a` and `b` differ, or nullopt when they are
// equal field by field (ChipConfig has no operator==; tests and caches need one).
std::optional<std::string> first_difference(const sim::ChipConfig& a, const sim::ChipConfig& b);

}  // namespace pypto::cfg
