#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's test command: set-up, then every test. Runs the C++ suite (Catch2 through
# ctest) in a Release build and again in an AddressSanitizer+UBSan build, then the Python
# tests; between them, real viewers read our trace.json (tools/check_viewers.sh). It fails
# first on a C++ file that clang-format would change, then on a date in product code
# (tools/check_no_dates.sh), then on a library linking one above it (tools/check_layers.py).
# With FUZZ_SECONDS=N (the CI sets 5, .ci/run) it ends by fuzzing every input reader for N
# seconds each (tools/fuzz.sh, clang + libFuzzer, a build of its own); without it, the
# readers' corpora and saved regressions are still replayed by ctest in both builds. Set
# QUICK=1 to skip the sanitizer build and the fuzzing. Everything it installs, the set-up
# installs (SETUP_TESTS=1 tools/setup.sh); at the end it prints each phase's time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="$(nproc)"

phases=()
phase_name=""
phase_start=$SECONDS
phase() {  # phase NAME: ends the current phase (its time kept for the summary), starts NAME
  if [[ -n "$phase_name" ]]; then
    phases+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")")
  fi
  phase_name="$1"
  phase_start=$SECONDS
  [[ -n "$1" ]] && echo "== $1 =="
  return 0
}
summary() {
  phase ""
  echo "== phase times (total $SECONDS s) =="
  printf '%s\n' "${phases[@]}"
}
trap summary EXIT

FUZZ_SECONDS="${FUZZ_SECONDS:-0}"
if [[ "${QUICK:-0}" == 1 ]]; then FUZZ_SECONDS=0; fi
export FUZZ_SECONDS   # the set-up installs clang-14 only when the run fuzzes

phase "set-up and build (Release)"
BUILD_DIR=build SETUP_TESTS=1 tools/setup.sh
phase "format (clang-format, .clang-format)"
tools/check_format.sh
phase "no dates in product code"
tools/check_no_dates.sh
phase "no library links one above it (README.md's architecture map)"
/usr/bin/python3 tools/check_layers.py
phase "C++ tests (Release)"
ctest --test-dir build --output-on-failure -j "$JOBS"

if [[ "${QUICK:-0}" != 1 ]]; then
  phase "build (ASan+UBSan)"
  BUILD_DIR=build-asan BUILD_TYPE=Debug SANITIZE=1 tools/setup.sh
  phase "C++ tests (ASan+UBSan)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$JOBS"
fi

phase "viewers (DevTools trace engine, speedscope in headless Chromium)"
tools/check_viewers.sh

if [[ -d tests/frontend ]] && compgen -G "tests/frontend/test_*.py" >/dev/null; then
  phase "Python tests"
  # One worker per core (pytest-xdist): the tests are independent (each writes under its own
  # tmp_path), and one process left a core idle for a third of the suite's time.
  .venv/bin/python -m pytest -q -n "$JOBS" --durations=10 tests/frontend
fi

if [[ "$FUZZ_SECONDS" != 0 ]]; then
  phase "fuzzing (tools/fuzz.sh all $FUZZ_SECONDS, seed ${FUZZ_SEED:-1})"
  # A fixed libFuzzer seed: the test run starts from the corpora in the tree and mutates the
  # same way each time, so it repeats (up to how far each run gets in its time). It checks
  # that the libFuzzer build (clang) builds and every target runs; exploring new inputs is
  # what long runs (tools/fuzz.sh TARGET 3600) are for.
  FUZZ_ARGS="-seed=${FUZZ_SEED:-1} ${FUZZ_ARGS:-}" tools/fuzz.sh all "$FUZZ_SECONDS"
fi
