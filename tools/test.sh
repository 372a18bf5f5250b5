#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's test command: set-up, then every test. Runs the C++ suite (Catch2 through
# ctest) in a Release build and again in an AddressSanitizer+UBSan build, then the Python
# tests, and last fuzzes every input reader for FUZZ_SECONDS (default 20) each
# (tools/fuzz.sh, clang + libFuzzer; FUZZ_SECONDS=0 skips it); between them, real viewers read
# our trace.json (tools/check_viewers.sh). It fails first on a C++ file that clang-format would
# change, then on a date in product code (tools/check_no_dates.sh). Set QUICK=1 to skip the
# sanitizer build and the fuzzing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="$(nproc)"

echo "== build (Release) =="
BUILD_DIR=build tools/setup.sh   # also installs clang-format when missing
echo "== format (clang-format, .clang-format) =="
tools/check_format.sh
echo "== no dates in product code =="
tools/check_no_dates.sh
echo "== C++ tests (Release) =="
ctest --test-dir build --output-on-failure -j "$JOBS"

if [[ "${QUICK:-0}" != 1 ]]; then
  echo "== build (ASan+UBSan) =="
  BUILD_DIR=build-asan BUILD_TYPE=Debug SANITIZE=1 tools/setup.sh
  echo "== C++ tests (ASan+UBSan) =="
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$JOBS"
fi

echo "== viewers (DevTools trace engine, speedscope in headless Chromium) =="
tools/check_viewers.sh

if [[ -d tests/frontend ]] && compgen -G "tests/frontend/test_*.py" >/dev/null; then
  echo "== Python tests =="
  # One worker per core (pytest-xdist): the tests are independent (each writes under its own
  # tmp_path), and one process left a core idle for a third of the suite's time.
  .venv/bin/python -m pytest -q -n "$JOBS" tests/frontend
fi

FUZZ_SECONDS="${FUZZ_SECONDS:-$([[ "${QUICK:-0}" == 1 ]] && echo 0 || echo 20)}"
if [[ "$FUZZ_SECONDS" != 0 ]]; then
  echo "== fuzzing (tools/fuzz.sh all $FUZZ_SECONDS, seed ${FUZZ_SEED:-1}) =="
  # A fixed libFuzzer seed: the test run starts from the corpora in the tree and mutates the
  # same way each time, so it repeats (up to how far each run gets in its time); exploring
  # new seeds is what long runs (tools/fuzz.sh TARGET 3600) are for.
  FUZZ_ARGS="-seed=${FUZZ_SEED:-1} ${FUZZ_ARGS:-}" tools/fuzz.sh all "$FUZZ_SECONDS"
fi
