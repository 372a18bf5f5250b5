// SPDX-License-Identifier: Apache-2.0
// A fresh scratch directory for a test's input and output files, unique per process and
// object (mkdtemp), removed with its contents when the object goes out of scope.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace pypto::testing {

class TempDir {
 public:
  TempDir() {
    // mkdtemp replaces the trailing XXXXXX with a unique suffix and creates the folder.
    std::string pattern = (std::filesystem::temp_directory_path() / "pypto-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `text` to the file `name` in the folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::string path_;
};

}  // namespace pypto::testing
