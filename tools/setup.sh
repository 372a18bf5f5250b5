#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Idempotent set-up: installs the Debian packages the project needs (if missing), builds
# with CMake + Ninja, and installs the CLI into .venv/bin/pypto-sim. The venv is made over
# Debian's /usr/bin/python3 with --system-site-packages (torch, numpy, pytest come from
# Debian). Environment: BUILD_DIR (default build), BUILD_TYPE (Release), SANITIZE=1, PGO=1 (a
# Release build with profile-guided optimisation, tools/pgo.sh; off by default), TARGETS (the
# CMake targets to build, e.g. "pypto-sim pypto_native"; default all), SETUP_TESTS=1 (also
# install what tools/test.sh needs: clang-format, strace, pytest, Dask, libtorch-dev for the
# ATen executor, chromium, node and the viewers' pinned npm packages; with FUZZ_SECONDS other
# than 0, clang-14 and libFuzzer for tools/fuzz.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# What the build, the CLI, the Python package and tools/demo.sh need (docs/dependencies.md).
PACKAGES=(cmake ninja-build g++ pkg-config libsystemc-dev libyaml-cpp-dev catch2
          libboost-program-options-dev libsimdjson-dev nlohmann-json3-dev
          pybind11-dev python3-dev python3-venv python3-pybind11 python3-numpy python3-torch
          python3-matplotlib)
# What only the tests need (tools/test.sh sets SETUP_TESTS=1): the format check, the process
# checks (strace), pytest, sweeps (Dask), the ATen executor (libtorch-dev), the viewers
# (tools/check_viewers.sh) and, when the test run fuzzes, tools/fuzz.sh (clang-14, libFuzzer).
if [[ "${SETUP_TESTS:-0}" == 1 ]]; then
  PACKAGES+=(clang-format strace python3-pytest python3-pytest-xdist python3-distributed
             libtorch-dev chromium)
  command -v node >/dev/null || PACKAGES+=(nodejs)
  command -v npm >/dev/null || PACKAGES+=(npm)
  if [[ "${FUZZ_SECONDS:-0}" != 0 ]]; then PACKAGES+=(clang-14 libclang-rt-14-dev); fi
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

BUILD_DIR="${BUILD_DIR:-build}"
BUILD_TYPE="${BUILD_TYPE:-Release}"
SAN=OFF; PY=ON
# The sanitizer build skips the Python module: an ASan extension cannot load into a
# normal interpreter.
[[ "${SANITIZE:-0}" == 1 ]] && { SAN=ON; PY=OFF; }
# Opt-in (PGO=1): a Release build optimised with a profile of its own training runs
# (tools/pgo.sh, made once per build folder, about 2.5 minutes on 2 cores): the same results
# in less time end to end on the hosts it was measured on (docs/performance-log.md). Off by
# default, so that the binary the tests run is the one a fresh set-up builds and benchmarks.
PGO_ARGS=(-DPYPTO_PGO= -DPYPTO_PGO_DIR=)
PGO_NOTE="no PGO"
if [[ "$SAN" == OFF && "$BUILD_TYPE" == Release && "${PGO:-0}" == 1 ]]; then
  trained=0
  if [[ ! -d "$BUILD_DIR/pgo-profile" ]]; then
    BUILD_DIR="$BUILD_DIR" tools/pgo.sh
    trained=1
  fi
  PGO_ARGS=(-DPYPTO_PGO=use -DPYPTO_PGO_DIR="$(cd "$BUILD_DIR/pgo-profile" && pwd)")
  PGO_NOTE="PGO"
  # Objects built with an older profile have the same command line, so ninja would keep them.
  if ((trained)) && [[ -f "$BUILD_DIR/build.ninja" ]]; then
    cmake --build "$BUILD_DIR" --target clean >/dev/null
  fi
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DPYPTO_SANITIZE="$SAN" \
      -DPYPTO_BUILD_PYTHON="$PY" -DPython3_EXECUTABLE=/usr/bin/python3 "${PGO_ARGS[@]}" >/dev/null
read -r -a targets <<<"${TARGETS:-}"
cmake --build "$BUILD_DIR" -j "$(nproc)" ${targets[@]:+--target "${targets[@]}"}

if [[ ! -x .venv/bin/python ]]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
if [[ "$SAN" == OFF ]]; then
  ln -sf "$ROOT/$BUILD_DIR/tools/pypto-sim" .venv/bin/pypto-sim
  # The pypto package is used in place from frontend/ (a .pth file puts it on sys.path).
  SITE="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$ROOT/frontend" > "$SITE/pypto_sim_frontend.pth"
  for mod in "$BUILD_DIR"/frontend/bindings/_C*.so; do
    [[ -e "$mod" ]] && ln -sf "$ROOT/$mod" frontend/pypto/
  done
fi
if [[ "${SETUP_TESTS:-0}" == 1 ]]; then
  tools/check_viewers.sh --install   # the viewers' pinned npm packages (tools/viewers)
fi
echo "setup: built $BUILD_DIR ($BUILD_TYPE, $PGO_NOTE, sanitizers $SAN); CLI at .venv/bin/pypto-sim"
