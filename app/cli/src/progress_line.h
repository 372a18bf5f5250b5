// SPDX-License-Identifier: Apache-2.0
// The progress line of pypto-sim's long commands, on stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pypto::cli {

// "120.5 / 800.0 MB, 95.3 MB/s": `done` of `total` bytes read in `seconds`.
std::string read_rate_text(std::uint64_t done, std::uint64_t total, double seconds);

// The progress line on stderr: every phase of a long command (reading, simulating, writing)
// shows itself, only on a terminal, never with -q, and only once the command has taken a
// second (a short run prints nothing). One line, redrawn in place at most every 100 ms and
// erased when the phase ends, so that nothing of it stays between the command's own lines.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  // Contract: enabled() is fixed from here on; when false every other method does nothing.
  // PYPTO_SIM_PROGRESS_DELAY_MS replaces the first second (the tests set 0 to see every
  // phase of a short run).
  explicit ProgressLine(bool quiet);
  bool enabled() const { return enabled_; }

  // Starts a phase named `label` ("reading x.ndjson"): its rate and ETA count from now. The
  // label shows at once when the command has already taken a second.
  void phase(std::string label);

  // Bytes read of the files being loaded: "120.5 / 800.0 MB, 95.3 MB/s". The last call (all
  // read) always draws: the rate of the whole read stays until the next phase.
  void bytes(std::uint64_t done, std::uint64_t total);

  // Tasks simulated: "[#####     ] 45 % 123456/270000 tasks, 51282 tasks/s, ETA 3 s".
  void tasks(std::uint64_t done, std::uint64_t total);

  // Erases the line (before the command prints anything else, and when it ends).
  void clear();

  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  double elapsed_s() const;
  // Past the command's first second and 100 ms after the last redraw.
  bool due() const;
  void draw(const std::string& detail, bool force);

  bool enabled_;
  Clock::duration delay_ = std::chrono::seconds(1);
  Clock::time_point t0_ = Clock::now(), phase_t0_ = t0_, last_ = t0_;
  std::string label_;
  bool drawn_ = false;
};

}  // namespace pypto::cli
