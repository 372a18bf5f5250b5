// SPDX-License-Identifier: Apache-2.0
// The progress line of pypto-sim's long commands (progress_line.h).
#include "progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

namespace pypto::cli {

std::string read_rate_text(std::uint64_t done, std::uint64_t total, double seconds) {
  char text[96];
  std::snprintf(text, sizeof text, "%.1f / %.1f MB, %.1f MB/s", 1e-6 * static_cast<double>(done),
                1e-6 * static_cast<double>(total),
                1e-6 * static_cast<double>(done) / std::max(seconds, 1e-9));
  return text;
}

ProgressLine::ProgressLine(bool quiet) : enabled_(!quiet && ::isatty(STDERR_FILENO) == 1) {
  if (const char* ms = std::getenv("PYPTO_SIM_PROGRESS_DELAY_MS"))
    delay_ = std::chrono::milliseconds(std::strtoll(ms, nullptr, 10));
}

void ProgressLine::phase(std::string label) {
  if (!enabled_) return;
  label_ = std::move(label);
  phase_t0_ = Clock::now();
  draw("", /*force=*/true);
}

void ProgressLine::bytes(std::uint64_t done, std::uint64_t total) {
  if (!enabled_ || (!due() && (done < total || Clock::now() - t0_ < delay_))) return;
  draw(read_rate_text(done, total, elapsed_s()), false);
}

void ProgressLine::tasks(std::uint64_t done, std::uint64_t total) {
  if (!enabled_ || !due()) return;
  constexpr int kWidth = 20;
  const double frac = static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(kWidth * frac);
  const double rate = static_cast<double>(done) / std::max(elapsed_s(), 1e-9);
  std::string eta = "?";
  if (done > 0)
    eta = std::to_string(
              static_cast<long long>(std::ceil(static_cast<double>(total - done) / rate))) +
          " s";
  draw("[" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "] " +
           std::to_string(static_cast<int>(100 * frac)) + " % " + std::to_string(done) + "/" +
           std::to_string(total) + " tasks, " + std::to_string(static_cast<long long>(rate)) +
           " tasks/s, ETA " + eta,
       false);
}

void ProgressLine::clear() {
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

double ProgressLine::elapsed_s() const {
  return std::chrono::duration<double>(Clock::now() - phase_t0_).count();
}

bool ProgressLine::due() const {
  const auto now = Clock::now();
  return now - t0_ >= delay_ && now - last_ >= std::chrono::milliseconds(100);
}

void ProgressLine::draw(const std::string& detail, bool force) {
  const auto now = Clock::now();
  if (force && now - t0_ < delay_) return;
  last_ = now;
  std::cerr << "\r\033[K" << label_ << (detail.empty() ? "" : ": ") << detail << std::flush;
  drawn_ = true;
}

}  // namespace pypto::cli
