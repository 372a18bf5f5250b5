// SPDX-License-Identifier: Apache-2.0
#include "pypto/common/types.h"

#include <string>

#include "pypto/common/errors.h"

namespace pypto::common {

std::optional<CoreType> parse_core_type(std::string_view s) {
  // Board files may add a suffix ("AIC_0"); compare the prefix up to '_'.
  const auto cut = s.find('_');
  const std::string_view head = cut == std::string_view::npos ? s : s.substr(0, cut);
  if (head == "AIC") return CoreType::kAic;
  if (head == "AIV") return CoreType::kAiv;
  if (head == "HUB") return CoreType::kHub;
  if (head == "AICPU" || head == "AI-CPU") return CoreType::kAicpu;
  return std::nullopt;
}

}  // namespace pypto::common

namespace pypto {

void throw_model_error(const char* file, int line, const std::string& msg) {
  throw ModelError(std::string("internal error at ") + file + ":" + std::to_string(line) + ": " +
                   msg);
}

}  // namespace pypto
