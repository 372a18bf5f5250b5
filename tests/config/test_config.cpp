// SPDX-License-Identifier: Apache-2.0
// Chip configuration: presets, user files, --set overrides, validation, derived timing.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../common/temp_dir.h"
#include "pypto/common/errors.h"
#include "pypto/model/chip_config.h"
#include "pypto/model/config_loader.h"
#include "reader.h"  // private to model/src: the Reader is tested directly

using Catch::Matchers::Contains;
using pypto::ConfigError;
using pypto::model::ChipConfig;
using namespace pypto;
namespace fs = std::filesystem;

namespace {

const std::string kSourceConfigs = std::string(PYPTO_SOURCE_DIR) + "/configs";

// Sets (or unsets) PYPTO_CONFIG_DIR for one test and restores it afterwards.
class ConfigDirEnv {
 public:
  explicit ConfigDirEnv(const std::optional<std::string>& dir) {
    if (const char* old = std::getenv("PYPTO_CONFIG_DIR")) old_ = old;
    if (dir) {
      setenv("PYPTO_CONFIG_DIR", dir->c_str(), 1);
    } else {
      unsetenv("PYPTO_CONFIG_DIR");
    }
  }
  ~ConfigDirEnv() {
    if (old_) {
      setenv("PYPTO_CONFIG_DIR", old_->c_str(), 1);
    } else {
      unsetenv("PYPTO_CONFIG_DIR");
    }
  }
  ConfigDirEnv(const ConfigDirEnv&) = delete;
  ConfigDirEnv& operator=(const ConfigDirEnv&) = delete;

 private:
  std::optional<std::string> old_;
};

using pypto::testing::TempDir;

// Loads `text` as a user file named t.yaml (the name only appears in messages).
ChipConfig load(const std::string& text) { return model::load_chip_config_text(text, "t.yaml"); }

}  // namespace

TEST_CASE("every preset loads and round-trips through YAML", "[config]") {
  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  const auto names = model::list_chip_presets();
  for (const char* expected :
       {"950dt", "950dt-28c", "950pr", "950pr-28c", "a2", "a2-20c", "a3", "a3-20c"}) {
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
  for (const auto& name : names) {
    INFO("preset " << name);
    const ChipConfig c = model::load_chip_preset(name);
    CHECK(c.chip.name == name);
    const std::string text = model::to_yaml(c);
    const ChipConfig again = model::load_chip_config_text(text, name + " (emitted)");
    CHECK(model::first_difference(c, again) == std::nullopt);
    // The emitter is deterministic, so YAML -> struct -> YAML is a fixed point.
    CHECK(model::to_yaml(again) == text);
  }
}

TEST_CASE("the presets carry DESIGN.md's numbers", "[config]") {
  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  struct Row {
    const char* name;
    std::uint32_t aic, aicpu, sched, early;
    double freq_mhz, board_mhz, gbps;
    std::uint64_t l2_kib, hbm_gib;
    std::uint32_t gm, l2_read, l2_write, ub, l0c;
  };
  const Row rows[] = {
      {"a2", 24, 6, 4, 0, 1850, 50, 1600, 192 * 1024, 64, 32, 110, 86, 192, 128},
      {"a3", 24, 6, 4, 0, 1850, 50, 1600, 192 * 1024, 32, 32, 110, 86, 192, 128},
      {"950pr", 32, 8, 6, 2, 1650, 1000, 1600, 128 * 1024, 128, 31, 100, 100, 248, 256},
      {"950dt", 32, 8, 6, 2, 1650, 1000, 4000, 128 * 1024, 96, 61, 100, 100, 248, 256},
      // The core-count variants (configs/README.md "Core-count variants" cites the sources).
      {"a2-20c", 20, 6, 4, 0, 1850, 50, 1600, 96 * 1024, 32, 32, 110, 86, 192, 128},
      {"a3-20c", 20, 6, 4, 0, 1850, 50, 1600, 192 * 1024, 64, 32, 110, 86, 192, 128},
      {"950pr-28c", 28, 7, 5, 2, 1650, 1000, 1600, 128 * 1024, 128, 31, 100, 100, 248, 256},
      {"950dt-28c", 28, 6, 4, 2, 1650, 1000, 4000, 128 * 1024, 96, 80, 100, 100, 248, 256},
  };
  for (const Row& r : rows) {
    INFO("preset " << r.name);
    const ChipConfig c = model::load_chip_preset(r.name);
    CHECK(c.cores.aic == r.aic);
    CHECK(c.cores.aic * c.cores.aiv_per_aic == 2 * r.aic);
    CHECK(c.aicpu.count == r.aicpu);
    CHECK(c.aicpu.max_sched_threads == r.sched);
    CHECK(c.chip.launch_early_mode_default == r.early);
    CHECK(c.cores.freq_mhz == r.freq_mhz);
    CHECK(c.chip.board_clock_mhz == r.board_mhz);
    CHECK(c.hbm.aggregate_gbps == r.gbps);
    CHECK(c.l2.size_kib == r.l2_kib);
    CHECK(c.hbm.size_gib == r.hbm_gib);
    CHECK(c.hbm.bytes_per_cycle_per_core == r.gm);
    CHECK(c.l2.read_bytes_per_cycle == r.l2_read);
    CHECK(c.l2.write_bytes_per_cycle == r.l2_write);
    CHECK(c.cores.ub_kib == r.ub);
    CHECK(c.cores.l1_kib == 512);
    CHECK(c.cores.l0a_kib == 64);
    CHECK(c.cores.l0b_kib == 64);
    CHECK(c.cores.l0c_kib == r.l0c);
    CHECK((c.cores.cube_m == 16 && c.cores.cube_n == 16 && c.cores.cube_k == 16));
    CHECK(c.l2.line_bytes == 512);
    CHECK(c.aicpu.freq_mhz == 1800);
    // A2/A3 (and their variants): calibrated to board measurements (configs/a2.yaml says
    // which); 950: PyPTO's cost-model values, no measurement.
    const bool calibrated = r.name[0] == 'a';
    CHECK(c.aicpu.poll_cycles == (calibrated ? 138u : 240u));
    CHECK(c.aicpu.resolve_cycles == (calibrated ? 57u : 390u));
    CHECK(c.aicpu.dispatch_cycles == (calibrated ? 17u : 200u));
    CHECK(c.aicpu.completion_latency_ns == (calibrated ? 992u : 0u));
    CHECK(c.aicpu.device_task_build_cycles == 10000);
  }
}

TEST_CASE("a file from disk is read and reports its own path", "[config]") {
  TempDir dir;
  const std::string path = dir.write("mine.yaml", "cores:\n  aic: 8\n");
  const ChipConfig c = model::load_chip_config_file(path);
  CHECK(c.cores.aic == 8);
  CHECK(c.cores.aiv_per_aic == 2);  // untouched: the struct default
  CHECK(c.l2.ways == ChipConfig{}.l2.ways);

  const std::string bad = dir.write("bad.yaml", "l2:\n  wyas: 8\n");
  CHECK_THROWS_WITH(model::load_chip_config_file(bad), Contains(bad + ":2:3"));
  CHECK_THROWS_WITH(model::load_chip_config_file(dir.path() + "/none.yaml"),
                    Contains("none.yaml' does not exist"));
  CHECK_THROWS_WITH(model::load_chip_config_file(dir.path()), Contains("is a directory"));
}

TEST_CASE("an empty file means all defaults", "[config]") {
  const ChipConfig c = load("");
  CHECK(model::first_difference(c, ChipConfig{}) == std::nullopt);
  CHECK(model::first_difference(load("# only a comment\n"), ChipConfig{}) == std::nullopt);
}

TEST_CASE("unknown keys are rejected with a suggestion", "[config]") {
  CHECK_THROWS_WITH(load("l2:\n  size_kib: 1024\n  wyas: 8\n"),
                    Contains("unknown key 'wyas' in l2 (t.yaml:3:3); did you mean 'ways'?"));
  CHECK_THROWS_WITH(
      load("l22:\n  ways: 8\n"),
      Contains("unknown key 'l22' at the top level (t.yaml:1:1); did you mean 'l2'?"));
  CHECK_THROWS_WITH(load("aicpu:\n  pol_cycles: 8\n"), Contains("did you mean 'poll_cycles'?"));
  // Nothing close: no guess, but the keys that exist.
  CHECK_THROWS_WITH(load("hbm:\n  frobnicate: 1\n"),
                    Contains("unknown key 'frobnicate' in hbm (t.yaml:2:3); known keys: size_gib"));
  try {
    load("hbm:\n  frobnicate: 1\n");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), !Contains("did you mean"));
  }
}

TEST_CASE("values of the wrong type are rejected", "[config]") {
  CHECK_THROWS_WITH(load("l2:\n  ways: sixteen\n"),
                    Contains("l2.ways (t.yaml:2:9): expected an unsigned integer, got 'sixteen'"));
  CHECK_THROWS_WITH(load("cores:\n  freq_mhz: fast\n"),
                    Contains("cores.freq_mhz (t.yaml:2:13): expected a number, got 'fast'"));
  CHECK_THROWS_WITH(load("l2:\n  ways: [1, 2]\n"),
                    Contains("expected an unsigned integer, got a list"));
  CHECK_THROWS_WITH(load("l2:\n  ways:\n"),
                    Contains("l2.ways (t.yaml:2:3): expected an unsigned integer, got nothing"));
  // A quoted number is a string in YAML; silently converting it would hide a mistake.
  CHECK_THROWS_WITH(load("l2:\n  ways: \"16\"\n"), Contains("got the quoted string \"16\""));
  CHECK_THROWS_WITH(load("chip:\n  name: [a2]\n"),
                    Contains("chip.name (t.yaml:2:9): expected a string"));
  CHECK_THROWS_WITH(load("l2: 5\n"), Contains("l2 (t.yaml:1:5): expected a map of keys, got '5'"));
  CHECK_THROWS_WITH(load("- a\n- b\n"), Contains("the top level (t.yaml:1:1): expected a map"));
}

TEST_CASE("negative or fractional or too large integers are rejected", "[config]") {
  CHECK_THROWS_WITH(load("l2:\n  ways: -1\n"),
                    Contains("l2.ways (t.yaml:2:9): expected an unsigned integer, got '-1'"));
  CHECK_THROWS_WITH(load("l2:\n  ways: 1.5\n"),
                    Contains("expected an unsigned integer, got '1.5'"));
  CHECK_THROWS_WITH(load("l2:\n  ways: 1e3\n"),
                    Contains("expected an unsigned integer, got '1e3'"));
  CHECK_THROWS_WITH(
      load("l2:\n  ways: 4294967296\n"),
      Contains("expected an unsigned integer of at most 4294967295, got '4294967296'"));
  CHECK_THROWS_WITH(load("l2:\n  size_kib: 18446744073709551616\n"),
                    Contains("of at most 18446744073709551615"));
  // Hexadecimal, octal and an explicit '+' are YAML integers.
  CHECK(load("l2:\n  ways: 0x10\n").l2.ways == 16);
  CHECK(load("l2:\n  ways: 0o10\n").l2.ways == 8);
  CHECK(load("l2:\n  ways: +4\n").l2.ways == 4);
  CHECK(load("cores:\n  freq_mhz: 1000\n").cores.freq_mhz == 1000.0);
  CHECK(load("cores:\n  freq_mhz: 1.65e3\n").cores.freq_mhz == 1650.0);
}

TEST_CASE("malformed YAML and duplicate keys are errors with a position", "[config]") {
  CHECK_THROWS_WITH(load("l2:\n  ways: [1, 2\n"), Contains("t.yaml:"));
  CHECK_THROWS_WITH(load("l2:\n  ways: [1, 2\n"), Contains("invalid YAML"));
  CHECK_THROWS_WITH(load("l2:\n  ways: 8\n  ways: 4\n"),
                    Contains("duplicate key 'ways' in l2 (t.yaml:3:3)"));
}

TEST_CASE("impossible values are errors naming key and value and range", "[config]") {
  CHECK_THROWS_WITH(load("l2:\n  ways: 0\n"),
                    Contains("l2.ways: 0 is out of range [1, 64] (t.yaml:2:9)"));
  CHECK_THROWS_WITH(load("cores:\n  freq_mhz: 0\n"),
                    Contains("cores.freq_mhz: 0 is out of range (0, 10000]"));
  CHECK_THROWS_WITH(load("cores:\n  freq_mhz: -5\n"), Contains("-5 is out of range (0, 10000]"));
  CHECK_THROWS_WITH(load("cores:\n  freq_mhz: nan\n"), Contains("nan is out of range"));
  CHECK_THROWS_WITH(load("cores:\n  aic: 129\n"),
                    Contains("cores.aic: 129 is out of range [1, 128]"));
  CHECK_THROWS_WITH(load("cores:\n  aiv_per_aic: 5\n"),
                    Contains("cores.aiv_per_aic: 5 is out of range [0, 4]"));
  CHECK_THROWS_WITH(load("chip:\n  launch_early_mode_default: 3\n"),
                    Contains("chip.launch_early_mode_default: 3 is out of range [0, 2]"));
  CHECK_THROWS_WITH(load("l2:\n  line_bytes: 16\n"), Contains("16 is out of range [32, 4096]"));
  CHECK_THROWS_WITH(load("l2:\n  line_bytes: 384\n"),
                    Contains("l2.line_bytes: 384 is not a power of two (t.yaml:2:15)"));
  // 1004 KiB is not a whole number of 512 B x 16-way sets (8 KiB): 125.5 sets.
  CHECK_THROWS_WITH(load("l2:\n  size_kib: 1004\n"),
                    Contains("l2.size_kib: 1004 KiB is not a whole number of sets of "
                             "line_bytes * ways = 8192 bytes"));
  CHECK(load("l2:\n  size_kib: 1000\n").l2.size_kib == 1000);  // 125 sets
  CHECK_THROWS_WITH(load("aicpu:\n  count: 6\n  max_sched_threads: 6\n"),
                    Contains("aicpu.max_sched_threads: 6 exceeds aicpu.count - 1 = 5"));
  CHECK_THROWS_WITH(load("aicpu:\n  count: 1\n"),
                    Contains("aicpu.count: 1 is out of range [2, 64]"));
  // The rule involves aicpu.count, which this file set: the message points at the rule's key
  // and says which file.
  CHECK_THROWS_WITH(
      load("aicpu:\n  count: 3\n"),
      Contains("aicpu.max_sched_threads: 4 exceeds aicpu.count - 1 = 2: one AICPU runs the "
               "control flow (t.yaml)"));
  CHECK_THROWS_WITH(
      load("hbm:\n  size_gib: 8\n"),
      Contains("workspace.capacity_mib: 16384 MiB exceeds the HBM capacity of 8192 MiB"));
  CHECK_THROWS_WITH(load("cores:\n  aic: 1\n  aiv_per_aic: 1\n"),
                    Contains("cores.handshake_cores: 4 exceeds the 2 cores of the chip"));
  CHECK_THROWS_WITH(load("chip:\n  name: \"\"\n"), Contains("chip.name: must not be empty"));
  // A zero poll cost would give the schedule threads a polling grid of period 0.
  CHECK_THROWS_WITH(load("aicpu:\n  poll_cycles: 0\n"),
                    Contains("aicpu.poll_cycles: 0 is out of range [1, 100000000] (t.yaml:2:16)"));
  CHECK(load("aicpu:\n  poll_cycles: 1\n").aicpu.poll_cycles == 1);

  ChipConfig c;
  c.l2.ways = 65;
  CHECK_THROWS_WITH(model::validate(c), "l2.ways: 65 is out of range [1, 64]");
  c = ChipConfig{};
  c.hbm.aggregate_gbps = 0;
  CHECK_THROWS_WITH(model::validate(c), "hbm.aggregate_gbps: 0 is out of range (0, 1000000]");
  CHECK_NOTHROW(model::validate(ChipConfig{}));
}

TEST_CASE("set overrides change any value", "[config]") {
  ChipConfig c;
  model::apply_override(c, "l2.ways=8");
  model::apply_override(c, "aicpu.poll_cycles=300");
  model::apply_override(c, "cores.freq_mhz=1650.5");
  model::apply_override(c, "chip.description=my chip");
  model::apply_override(c, " hbm.size_gib = 8");
  CHECK(c.l2.ways == 8);
  CHECK(c.aicpu.poll_cycles == 300);
  CHECK(c.cores.freq_mhz == 1650.5);
  CHECK(c.chip.description == "my chip");
  CHECK(c.hbm.size_gib == 8);  // below the 16 GiB of workspace
  CHECK_THROWS_WITH(model::validate(c), Contains("workspace.capacity_mib"));
  model::apply_override(c, "workspace.capacity_mib=1024");
  CHECK_NOTHROW(model::validate(c));
}

TEST_CASE("set overrides reach every key: a2 values set one by one turn 950dt into a2",
          "[config]") {
  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  const ChipConfig a2 = model::load_chip_preset("a2");
  ChipConfig c = model::load_chip_preset("950dt");
  const YAML::Node a2_yaml = YAML::Load(model::to_yaml(a2));
  for (const auto& key : model::chip_config_keys()) {
    const auto dot = key.find('.');
    const std::string value = a2_yaml[key.substr(0, dot)][key.substr(dot + 1)].Scalar();
    INFO(key << "=" << value);
    model::apply_override(c, key + "=" + value);
  }
  CHECK(model::first_difference(c, a2) == std::nullopt);
  CHECK(model::first_difference(model::load_chip_preset("950dt"), a2) == std::string("chip.name"));
}

TEST_CASE("bad set overrides name the argument", "[config]") {
  ChipConfig c;
  CHECK_THROWS_WITH(model::apply_override(c, "l2.ways=abc"),
                    "--set l2.ways=abc: expected an unsigned integer, got 'abc'");
  CHECK_THROWS_WITH(model::apply_override(c, "l2.ways=-3"),
                    Contains("--set l2.ways=-3: expected an unsigned integer"));
  CHECK_THROWS_WITH(model::apply_override(c, "l2.wyas=8"),
                    "--set l2.wyas=8: unknown key 'l2.wyas'; did you mean 'l2.ways'?");
  CHECK_THROWS_WITH(model::apply_override(c, "ways=8"),
                    Contains("unknown key 'ways' (pypto-sim config --describe lists every key)"));
  CHECK_THROWS_WITH(model::apply_override(c, "l2.ways"),
                    "--set l2.ways: expected key.path=value, e.g. l2.ways=8");
  CHECK_THROWS_WITH(model::apply_override(c, "=8"), Contains("expected key.path=value"));
  CHECK_THROWS_WITH(model::apply_override(c, "l2.ways=[1,2]"), Contains("got a list"));
  CHECK_THROWS_WITH(model::apply_override(c, "l2.ways="), Contains("got nothing (null)"));
  CHECK_THROWS_WITH(model::apply_override(c, "l2.ways=[1"), Contains("invalid YAML"));
  CHECK(c.l2.ways == ChipConfig{}.l2.ways);  // failed assignments change nothing
}

TEST_CASE("resolve_chip_config combines --chip/--config and --set", "[config]") {
  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  const ChipConfig c = model::resolve_chip_config("950pr", "", {"l2.ways=8", "cores.aic=16"});
  CHECK(c.chip.name == "950pr");
  CHECK(c.l2.ways == 8);
  CHECK(c.cores.aic == 16);
  CHECK(c.hbm.size_gib == 128);
  CHECK(model::resolve_chip_config("", "", {}).chip.name == "a2");
  CHECK_THROWS_WITH(model::resolve_chip_config("a3", "", {"l2.ways=0"}),
                    "l2.ways: 0 is out of range [1, 64] (--set l2.ways=0)");
  CHECK_THROWS_WITH(model::resolve_chip_config("a3", "x.yaml", {}),
                    Contains("use either --chip or --config, not both"));

  TempDir dir;
  const std::string file = dir.write("c.yaml", "base: a3\naicpu:\n  count: 4\n");
  // The file alone is inconsistent (a3's 4 threads need 5 AICPUs); --set repairs it.
  CHECK_THROWS_WITH(
      model::resolve_chip_config("", file, {}),
      Contains("aicpu.max_sched_threads: 4 exceeds aicpu.count - 1 = 3: one AICPU runs the "
               "control flow (" +
               file + ")"));
  const ChipConfig d = model::resolve_chip_config("", file, {"aicpu.max_sched_threads=3"});
  CHECK(d.aicpu.count == 4);
  CHECK(d.aicpu.max_sched_threads == 3);
  CHECK(d.hbm.size_gib == 32);
}

TEST_CASE("a partial file can start from a preset with base", "[config]") {
  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  const ChipConfig c = load("base: 950dt\nl2:\n  size_kib: 65536\naicpu:\n  poll_cycles: 120\n");
  CHECK(c.chip.name == "950dt");
  CHECK(c.l2.size_kib == 65536);
  CHECK(c.aicpu.poll_cycles == 120);
  CHECK(c.hbm.size_gib == 96);
  CHECK(c.hbm.aggregate_gbps == 4000);
  CHECK(c.cores.aic == 32);
  ChipConfig expected = model::load_chip_preset("950dt");
  expected.l2.size_kib = 65536;
  expected.aicpu.poll_cycles = 120;
  CHECK(model::first_difference(c, expected) == std::nullopt);

  CHECK_THROWS_WITH(load("base: a4\n"),
                    Contains("base (t.yaml:1:7): unknown chip 'a4'; did you mean 'a2'?"));
  CHECK_THROWS_WITH(load("base: 7\n"), Contains("unknown chip '7'"));
  CHECK_THROWS_WITH(load("base: [a2]\n"), Contains("base (t.yaml:1:7): expected a string"));
}

TEST_CASE("an unknown preset name lists the presets", "[config]") {
  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  CHECK_THROWS_WITH(model::load_chip_preset("a4"),
                    Contains("unknown chip 'a4'; did you mean 'a2'?"));
  CHECK_THROWS_WITH(model::load_chip_preset("a4"),
                    Contains("Known chips: 950dt 950dt-28c 950pr 950pr-28c a2 a2-20c a3 a3-20c"));
  CHECK_THROWS_WITH(model::load_chip_preset("950"), Contains("Known chips:"));
  CHECK_THROWS_WITH(model::load_chip_preset("../configs/a2"), Contains("unknown chip"));
  CHECK_THROWS_WITH(model::load_chip_preset("A2"), Contains("did you mean 'a2'?"));
}

TEST_CASE("presets are complete and self-named and found through the config dir", "[config]") {
  TempDir dir;
  std::string full;
  {
    ConfigDirEnv source(kSourceConfigs);
    full = model::to_yaml(model::load_chip_preset("a2"));
  }
  ConfigDirEnv env(dir.path());
  // A copy of a2 under another name must carry that name.
  dir.write("mychip.yaml", full);
  CHECK_THROWS_WITH(model::load_chip_preset("mychip"),
                    Contains("'a2' must equal the preset's file name 'mychip'"));
  dir.write("a2.yaml", full);
  CHECK(model::load_chip_preset("a2").cores.aic == 24);
  CHECK(model::list_chip_presets() == std::vector<std::string>{"a2", "mychip"});

  dir.write("short.yaml", "chip:\n  name: short\n");
  CHECK_THROWS_WITH(model::load_chip_preset("short"),
                    Contains("missing required key 'description' in chip"));
  // A variant preset starts from a family preset and still names itself.
  dir.write("based.yaml", "base: a2\n");
  CHECK_THROWS_WITH(model::load_chip_preset("based"),
                    Contains("'a2' must equal the preset's file name 'based'"));
  dir.write("based.yaml", "base: a2\nchip:\n  name: based\ncores:\n  aic: 20\n");
  const auto based = model::load_chip_preset("based");
  CHECK(based.cores.aic == 20);
  CHECK(based.l2.size_kib == model::load_chip_preset("a2").l2.size_kib);
  // ... but never from another variant: each number has one owner.
  dir.write("based2.yaml", "base: based\nchip:\n  name: based2\n");
  CHECK_THROWS_WITH(model::load_chip_preset("based2"),
                    Contains("preset 'based' is itself a variant"));
  dir.write("notes.txt", "not a preset");
  CHECK(model::list_chip_presets().size() == 5);  // a2, based, based2, mychip, short

  ConfigDirEnv missing(dir.path() + "/nope");
  CHECK_THROWS_WITH(model::list_chip_presets(), Contains("PYPTO_CONFIG_DIR='"));
  CHECK_THROWS_WITH(model::list_chip_presets(), Contains("' is not a directory"));
}

TEST_CASE("without PYPTO_CONFIG_DIR the presets come from the source tree", "[config]") {
  ConfigDirEnv unset(std::nullopt);
  CHECK(fs::equivalent(model::chip_preset_dir(), kSourceConfigs));
  CHECK(model::load_chip_preset("a3").chip.name == "a3");
}

TEST_CASE("derive converts to picoseconds", "[config]") {
  const auto d = pypto::model::derive(ChipConfig{});  // A2: AICPU 1.8 GHz, AICore 1.85 GHz
  CHECK(d.aicpu_ps_per_cycle == Approx(555.5556));
  CHECK(d.aicore_ps_per_cycle == Approx(540.5405));
  CHECK(d.poll_ps == 133333);                // 240 cycles / 1.8 GHz = 133333.3 ps
  CHECK(d.resolve_ps == 216667);             // 390 -> 216666.7
  CHECK(d.dispatch_ps == 111111);            // 200 -> 111111.1
  CHECK(d.device_task_build_ps == 5555556);  // 10000 -> 5555555.6
  CHECK(d.stitch_per_task_ps == 16667);      // 30 -> 16666.7
  CHECK(d.submit_ps == 55556);
  CHECK(d.barrier_ps == 166667);
  CHECK(d.queue_op_ps == 22222);
  CHECK(d.fair_scan_per_thread_ps == 11111);
  CHECK(d.aicpu_launch_ps == 3000000);
  CHECK(d.aicore_start_ps == 5000000);
  CHECK(d.slot_switch_ps == 10811);     // 20 cycles / 1.85 GHz = 10810.8 ps
  CHECK(d.l2_hit_latency_ps == 27027);  // 50 -> 27027.03
  CHECK(d.hbm_latency_ps == 150000);
  CHECK(d.board_tick_ps == 20000);  // 50 MHz
  // 1600 GB/s less 4 % refresh and 6 % turnaround
  CHECK(d.hbm_bytes_per_ps == Approx(1.6 * 0.96 * 0.94));
  CHECK(d.hbm_core_bytes_per_ps == Approx(0.0592));  // 32 B x 1.85e9 /s
  CHECK(d.l2_read_bytes_per_ps == Approx(0.2035));   // 110 x 1.85e9
  CHECK(d.l2_write_bytes_per_ps == Approx(0.1591));  // 86 x 1.85e9
  CHECK(d.aiv == 48);

  ConfigDirEnv env(kSourceConfigs);  // the checked-in presets, whatever the caller set
  const auto dt = pypto::model::derive(model::load_chip_preset("950dt"));
  CHECK(dt.board_tick_ps == 1000);  // 1 GHz
  CHECK(dt.aiv == 64);
  CHECK(dt.hbm_bytes_per_ps == Approx(4.0 * 0.96 * 0.94));
  CHECK(dt.hbm_core_bytes_per_ps == Approx(0.10065));  // 61 B x 1.65e9
  CHECK(dt.slot_switch_ps == 12121);                   // 20 / 1.65 GHz = 12121.2

  ChipConfig bad;
  bad.aicpu.freq_mhz = 0;  // skipped validate(): derive must not divide its way into UB
  CHECK_THROWS_WITH(pypto::model::derive(bad), Contains("aicpu.poll_cycles"));
}

TEST_CASE("describe lists every key with type and unit and default and range", "[config]") {
  const std::string text = model::describe();
  const auto keys = model::chip_config_keys();
  CHECK(keys.size() == 83);  // every field of ChipConfig, counted by hand
  for (const auto& k : keys) {
    INFO(k);
    CHECK(text.find("\n" + k + " ") != std::string::npos);
  }
  CHECK_THAT(text, Contains("l2.ways"));
  CHECK_THAT(text, Contains("uint32  -        16                [1, 64]"));
  CHECK_THAT(text, Contains("cores.freq_mhz"));
  CHECK_THAT(text, Contains("real    MHz      1850              (0, 10000]"));
  CHECK_THAT(text, Contains("[1, 63]; at most aicpu.count - 1"));
  CHECK_THAT(text, Contains("'a2'"));
}

TEST_CASE("Reader binds generic fields and checks presence", "[config]") {
  const YAML::Node n = YAML::Load("policy: fifo\nlookahead: -8\nwarm: yes\nratio: 0.25\n");
  model::Reader r(n, "scheduler", "s.yaml");
  std::string policy;
  std::int64_t lookahead = 0;
  bool warm = false;
  double ratio = 0;
  std::uint32_t absent = 7;
  r.read(policy, "policy");
  r.read(lookahead, "lookahead");
  r.read(warm, "warm");
  r.read(ratio, "ratio");
  r.read(absent, "absent");
  CHECK_NOTHROW(r.finish());
  CHECK(policy == "fifo");
  CHECK(lookahead == -8);
  CHECK(warm);
  CHECK(ratio == 0.25);
  CHECK(absent == 7);
  CHECK(r.where("ratio") == "s.yaml:4:8");
  CHECK(r.where("absent") == "s.yaml");

  model::Reader strict(YAML::Load("a: maybe\nb: 9223372036854775808\n"), "x", "s.yaml",
                       model::Reader::Presence::kRequired);
  bool a = false;
  std::int64_t b = 0;
  CHECK_THROWS_WITH(strict.read(a, "a"), "x.a (s.yaml:1:4): expected true or false, got 'maybe'");
  CHECK_THROWS_WITH(strict.read(b, "b"),
                    Contains("expected an integer of at most 9223372036854775807"));
  CHECK_THROWS_WITH(strict.read(b, "c"), "missing required key 'c' in x (s.yaml:1:1)");
  CHECK_THROWS_WITH(model::Reader(YAML::Load("? [a]\n: 1\n"), "", "s.yaml"),
                    Contains("keys must be plain names"));
  std::int64_t lowest = 0;
  model::Reader low(YAML::Load("v: -9223372036854775808\n"), "", "s.yaml");
  low.read(lowest, "v");
  CHECK(lowest == std::numeric_limits<std::int64_t>::min());
}

TEST_CASE("suggestions only for plausible typos", "[config]") {
  CHECK(common::edit_distance("wyas", "ways") == 1);  // a transposition is one edit
  CHECK(common::edit_distance("kitten", "sitting") == 3);
  CHECK(common::edit_distance("", "abc") == 3);
  CHECK(common::closest_match("wyas", {"ways", "line_bytes"}) == std::string("ways"));
  CHECK(common::closest_match("zzz", {"ways", "aic"}) == std::nullopt);
  CHECK(common::closest_match("hit_latncy_cycle", {"hit_latency_cycles"}) ==
        std::string("hit_latency_cycles"));
}

TEST_CASE("poll_cycles=0 from --set is a range error, not a division by zero", "[config]") {
  ConfigDirEnv env(kSourceConfigs);
  CHECK_THROWS_WITH(model::resolve_chip_config("a2", "", {"aicpu.poll_cycles=0"}),
                    "aicpu.poll_cycles: 0 is out of range [1, 100000000] "
                    "(--set aicpu.poll_cycles=0)");
}

TEST_CASE("a board recording's blockIdx choose and check the chip", "[config]") {
  ConfigDirEnv env(kSourceConfigs);
  // The MlaProlog recording of issue 9: AIC blockIdx 0-19, AIV 20-59.
  model::RecordedCores r20;
  r20.any_aic = r20.any_aiv = true;
  r20.max_aic_block = 19;
  r20.min_aiv_block = 20;
  r20.max_aiv_block = 59;
  CHECK_FALSE(model::recording_fits(model::load_chip_preset("a2"), r20));
  CHECK(model::recording_fits(model::load_chip_preset("a2-20c"), r20));
  CHECK(model::fitting_chip_presets(r20) == std::vector<std::string>{"a2-20c", "a3-20c"});
  CHECK_THROWS_WITH(
      model::check_recorded_cores(model::load_chip_preset("a2"), r20),
      "the recording ran on 20 AIC and at least 40 AIV (AIC blockIdx up to 19, AIV blockIdx "
      "20-59), but chip a2 has 24 AIC and 48 AIV; presets that fit: a2-20c a3-20c (--chip auto "
      "picks a2-20c)");
  CHECK_NOTHROW(model::check_recorded_cores(model::load_chip_preset("a3-20c"), r20));

  // A recording that used a few cores of a 24-cluster chip fits every chip with 20 to 24 AIC;
  // the largest AIC count comes first, then the name.
  model::RecordedCores few;
  few.any_aic = few.any_aiv = true;
  few.max_aic_block = 0;
  few.min_aiv_block = 24;
  few.max_aiv_block = 25;
  CHECK(model::fitting_chip_presets(few) ==
        std::vector<std::string>{"a2", "a3", "a2-20c", "a3-20c"});
  // 32 AIC + 64 AIV: only the full 950s.
  model::RecordedCores r32 = r20;
  r32.max_aic_block = 31;
  r32.min_aiv_block = 32;
  r32.max_aiv_block = 95;
  CHECK(model::fitting_chip_presets(r32) == std::vector<std::string>{"950dt", "950pr"});
  // AIV past the chip's last core, and AIV numbered below AIC: nothing fits.
  model::RecordedCores bad = r20;
  bad.max_aiv_block = 200;
  CHECK(model::fitting_chip_presets(bad).empty());
  CHECK_THROWS_WITH(model::check_recorded_cores(model::load_chip_preset("a2"), bad),
                    Contains("no preset fits"));
  model::RecordedCores swapped;
  swapped.any_aic = swapped.any_aiv = true;
  swapped.max_aic_block = 5;
  swapped.min_aiv_block = 0;
  swapped.max_aiv_block = 3;
  CHECK_THROWS_WITH(model::check_recorded_cores(model::load_chip_preset("a2"), swapped),
                    Contains("cores numbered AIV below AIC"));
  // Only AIC blocks: a lower bound on the AIC count.
  model::RecordedCores cube_only;
  cube_only.any_aic = true;
  cube_only.max_aic_block = 27;
  CHECK(model::fitting_chip_presets(cube_only) ==
        std::vector<std::string>{"950dt", "950pr", "950dt-28c", "950pr-28c"});
}

TEST_CASE("a clock too slow for the time limit is blamed on the clock, compactly", "[config]") {
  // 1e-300 MHz is inside (0, 10000]; it used to be blamed on cores.slot_switch_cycles with a
  // 300-digit number of ps.
  ChipConfig c = model::load_chip_preset("a2");
  model::apply_override(c, "cores.freq_mhz=1e-300");
  model::validate(c);
  try {
    (void)pypto::model::derive(c);
    FAIL("derive accepted a 1e-300 MHz clock");
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Contains("cores.freq_mhz = 1e-300 MHz is too slow") &&
                        Contains("raise cores.freq_mhz") && Contains("2^62 ps"));
    CHECK(msg.size() < 300);
  }
  ChipConfig a = model::load_chip_preset("a2");
  model::apply_override(a, "aicpu.freq_mhz=1e-300");
  CHECK_THROWS_WITH(pypto::model::derive(a), Contains("aicpu.freq_mhz = 1e-300 MHz is too slow"));
}

TEST_CASE("config input limits: nesting depth, file size, huge --set values", "[config]") {
  pypto::testing::TempDir dir;
  SECTION("nesting too deep names the problem and the line") {
    const std::string path =
        dir.write("deep.yaml", "cores:\n  aic: " + std::string(3000, '[') + "\n");
    CHECK_THROWS_WITH(model::load_chip_config_file(path),
                      Contains("nesting too deep") && Contains("levels at line"));
    ChipConfig c;
    CHECK_THROWS_WITH(model::apply_override(c, "cores.aic=" + std::string(3000, '[')),
                      Contains("nesting too deep") && Contains("(3010 chars)"));
  }
  SECTION("a file larger than the cap is refused; a device or a pipe is no file") {
    CHECK_THROWS_WITH(model::load_chip_config_file("/dev/zero"),
                      Contains("is a character device, not a regular file"));
    const std::string path = dir.write("big.yaml", "# " + std::string(2 << 20, 'x') + "\n");
    CHECK_THROWS_WITH(model::load_chip_config_file(path), Contains("larger than 1 MiB"));
  }
}

// Found by fuzzing (tests/fuzz/regressions/config): yaml-cpp keeps the bytes of a string that is
// not UTF-8, but to_yaml() cannot write them back, so the documented round trip broke.
TEST_CASE("text values must be valid UTF-8", "[config]") {
  CHECK_THROWS_WITH(load("chip:\n  description: \"a\xb1z\"\n"),
                    Contains("chip.description: is not valid UTF-8 text"));
  CHECK_THROWS_WITH(load("chip:\n  name: \"\xc0\xaf\"\n"),  // overlong '/'
                    Contains("chip.name: is not valid UTF-8 text"));
  ChipConfig c = load("chip:\n  description: \"Atlas \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n");
  CHECK(model::first_difference(c, model::load_chip_config_text(model::to_yaml(c), "r.yaml")) ==
        std::nullopt);
}

// Found by fuzzing (tests/fuzz/regressions/config/set_value_read_as_utf16): yaml-cpp read a
// --set value starting "\x01\0" as UTF-16 and decoded it into a U+FFFF, which to_yaml() did
// not write back. Values must be printable UTF-8 text, checked before yaml-cpp sees them.
TEST_CASE("text values are printable text, and --set values are checked before YAML", "[config]") {
  CHECK_THROWS_WITH(load("chip:\n  name: \"a\\x01b\"\n"),
                    Contains("chip.name: contains the control character U+0001"));
  CHECK_THROWS_WITH(load("chip:\n  description: \"x\xef\xbf\xbfy\"\n"),
                    Contains("chip.description: contains the noncharacter U+FFFF"));
  ChipConfig c = model::load_chip_preset("a3");
  CHECK_THROWS_WITH(
      model::apply_override(c, std::string("chip.name=\x01\0\0abc", 16)),
      Contains(
          "--set chip.name=\\x01\\x00\\x00abc: the value contains the control character U+0001"));
  CHECK_THROWS_WITH(model::apply_override(c,
                                          "chip.name=\xff\xfe"
                                          "a\0b\0"),
                    Contains("the value is not valid UTF-8 text"));
  CHECK_THROWS_WITH(model::apply_override(c, "chip.description=tab\tok\x7f"),
                    Contains("the control character U+007F"));
  model::apply_override(c, "chip.description=tab\tand \xc3\xa9");  // tab and accents are text
  CHECK(c.chip.description == "tab\tand \xc3\xa9");
  CHECK(model::first_difference(c, model::load_chip_config_text(model::to_yaml(c), "r.yaml")) ==
        std::nullopt);
}

TEST_CASE("numeric_value reads a field by its dotted key through the field table", "[config]") {
  const ChipConfig c = model::load_chip_preset("a2");
  CHECK(model::numeric_value(c, "aicpu.poll_cycles") == static_cast<double>(c.aicpu.poll_cycles));
  CHECK(model::numeric_value(c, "cores.freq_mhz") == c.cores.freq_mhz);
  CHECK_FALSE(model::numeric_value(c, "chip.name").has_value());  // text, not a number
  CHECK_FALSE(model::numeric_value(c, "aicpu.poll_cycle").has_value());
}
