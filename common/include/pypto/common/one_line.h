// SPDX-License-Identifier: Apache-2.0
// one_line(): an error message made safe to print as one line of text. Messages quote the
// user's input (a key, a value, a path), which may hold newlines, terminal escapes or bytes
// that are not UTF-8; printed raw, one message would span lines, recolour the terminal or
// fail to become a Python str.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace pypto::common {

// `s` with every control character (C0, DEL, C1) and every byte that is not part of
// well-formed UTF-8 written as \xNN; printable UTF-8 is kept as it is.
inline std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto escape = [&out](unsigned char b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned>(b));
    out += hex;
  };
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (b < 0x20 || b == 0x7F) {
        escape(b);
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    const std::size_t len = (b & 0xE0) == 0xC0   ? 2
                            : (b & 0xF0) == 0xE0 ? 3
                            : (b & 0xF8) == 0xF0 ? 4
                                                 : 0;
    std::uint32_t cp = len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    bool ok = len != 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) &&
         !(cp >= 0x80 && cp <= 0x9F);
    if (!ok) {
      escape(b);
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

}  // namespace pypto::common
