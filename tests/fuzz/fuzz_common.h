// SPDX-License-Identifier: Apache-2.0
// What every fuzz target shares (tests/fuzz/README.md). A target is written once with
// PYPTO_FUZZ_TARGET(name) and built two ways: as a libFuzzer binary (clang, -DPYPTO_FUZZ=ON,
// PYPTO_LIBFUZZER defined) and into the g++ replay binary `fuzz_replay`, which runs the seed
// corpus and the saved regressions of every target under ctest.
//
// The oracle: a reader may reject an input only with one of our typed user-input errors
// (pypto::ConfigError, pypto::TraceError). Any other exception escaping, a crash, undefined
// behaviour (UBSan), a leak or an allocation over the RSS limit (ASan / libFuzzer), or a run
// over the time limit is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <typeinfo>

#include "pypto/common/errors.h"

namespace pypto::fuzz {

// Inputs beyond this are skipped: every reader's logic is reachable with far less, and the
// targets stay fast (libFuzzer runs with -max_len of the same size, tools/fuzz.sh).
constexpr std::size_t kMaxInputBytes = 64 * 1024;

using TargetFn = int (*)(const std::uint8_t*, std::size_t);

inline std::map<std::string, TargetFn>& targets() {
  static std::map<std::string, TargetFn> t;
  return t;
}
inline bool register_target(const char* name, TargetFn fn) {
  targets()[name] = fn;
  return true;
}

// Known open findings (tests/fuzz/README.md, "Known findings") are skipped so that a run keeps
// looking for new ones; PYPTO_FUZZ_STRICT=1 turns the skips off, to check a fix.
inline bool strict() {
  static const bool s = [] {
    const char* e = std::getenv("PYPTO_FUZZ_STRICT");
    return e != nullptr && std::string_view(e) == "1";
  }();
  return s;
}

// The readers take paths: the input goes to a per-process file in /dev/shm (memory, no disk
// traffic), rewritten for every execution.
inline std::string write_input(const char* tag, const std::uint8_t* data, std::size_t size) {
  static const std::string dir = [] {
    if (::access("/dev/shm", W_OK) == 0) return std::string("/dev/shm");
    const char* t = std::getenv("TMPDIR");
    return std::string(t != nullptr ? t : "/tmp");
  }();
  const std::string path = dir + "/pypto-fuzz-" + std::to_string(::getpid()) + "-" + tag;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "FINDING: %s: %s\n", what, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs one input through `fn`. Typed user-input errors are correct rejections; the known open
// finding `known` (nullptr: none) may classify an exception as already reported; everything
// else aborts with a FINDING line (libFuzzer saves the input as a crash).
template <class F, class Known>
void run_one(F&& fn, Known&& known) {
  try {
    fn();
  } catch (const ConfigError&) {
  } catch (const TraceError&) {
  } catch (const ModelError& e) {
    finding("internal error (ModelError) on user input", e.what());
  } catch (const std::exception& e) {
    if (!strict() && known(e)) return;
    finding(typeid(e).name(), e.what());
  } catch (...) {
    finding("non-standard exception", "");
  }
}
template <class F>
void run_one(F&& fn) {
  // No known open finding: the 1e999 escape (nlohmann's out_of_range 406) is fixed in the
  // readers, so every other exception is a finding again.
  run_one(fn, [](const std::exception&) { return false; });
}

}  // namespace pypto::fuzz

#if defined(PYPTO_LIBFUZZER)
#define PYPTO_FUZZ_TARGET(name) \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
#else
#define PYPTO_FUZZ_TARGET(name)                                           \
  static int fuzz_one_##name(const std::uint8_t* data, std::size_t size); \
  [[maybe_unused]] static const bool fuzz_registered_##name =             \
      ::pypto::fuzz::register_target(#name, &fuzz_one_##name);            \
  static int fuzz_one_##name(const std::uint8_t* data, std::size_t size)
#endif
