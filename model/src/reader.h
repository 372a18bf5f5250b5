// SPDX-License-Identifier: Apache-2.0
// The config loader's YAML binding (private to model/src: the public
// pypto/model/config_loader.h is free of yaml-cpp types, so yaml-cpp stays a private
// dependency of pypto_model). Defined in config_loader.cpp, next to the scalar decoding and
// messages it shares with --set; tests/config reaches it through an include path of its
// own.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pypto::model {

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

}  // namespace pypto::model
