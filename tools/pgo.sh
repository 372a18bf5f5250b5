#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the profile for profile-guided optimisation of the Release build in BUILD_DIR (default
# build): builds an instrumented pypto-sim in BUILD_DIR/pgo-train (PYPTO_PGO=generate), runs it
# on the training set below and leaves the profile in BUILD_DIR/pgo-profile, which
# tools/setup.sh then builds with (PYPTO_PGO=use). About 2.5 minutes on 2 cores; `PGO=1
# tools/setup.sh` runs it once per build folder (delete BUILD_DIR/pgo-profile to train again).
# Opt-in: the default build is the plain Release build the tests run.
#
# The training set is what users run: synthetic traces of every input format, with and
# without the reports, under the four built-in policies. Seed 7, not the
# benchmark's seed 1, so that the bench does not measure the traces the build was trained on.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD_DIR="${BUILD_DIR:-build}"
mkdir -p "$BUILD_DIR"
ABS_BUILD="$(cd "$BUILD_DIR" && pwd)"
TRAIN="$ABS_BUILD/pgo-train"
PROFILE="$ABS_BUILD/pgo-profile"
# The profile is written to a temporary folder and renamed when the training is complete:
# setup never builds with half a profile.
rm -rf "$PROFILE.tmp" "$TRAIN/work"
cmake -S . -B "$TRAIN" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPYPTO_PGO=generate \
      -DPYPTO_PGO_DIR="$PROFILE.tmp" -DPYPTO_BUILD_TESTS=OFF -DPYPTO_BUILD_PYTHON=OFF \
      -DPYPTO_WITH_ATEN=OFF >/dev/null
cmake --build "$TRAIN" --target pypto-sim -j "$(nproc)"

SIM="$TRAIN/tools/pypto-sim"
W="$TRAIN/work"
mkdir -p "$W"
run() { "$SIM" "$@" -q >/dev/null; }
echo "pgo: training $SIM"
"$SIM" gen --tasks 100000 --seed 7 -o "$W/mix.ndjson"
run run "$W/mix.ndjson" --no-trace -o "$W/o1"
run run "$W/mix.ndjson" -o "$W/o2"
"$SIM" gen --tasks 20000 --seed 7 -o "$W/mix20k.ndjson"
run compare "$W/mix20k.ndjson" --no-trace -o "$W/o4"
for shape in chain fanout loops independent; do
  "$SIM" gen --shape "$shape" --tasks 20000 --seed 7 -o "$W/$shape.ndjson"
  run run "$W/$shape.ndjson" --no-trace -o "$W/o_$shape"
done
for format in dyn_topo topo_json fixed_latency; do
  ext=json; [[ $format == dyn_topo ]] && ext=txt
  prof=(); [[ $format != fixed_latency ]] && prof=(--prof "$W/$format.prof.json")
  "$SIM" gen --format "$format" --tasks 100000 --seed 7 -o "$W/$format.$ext" "${prof[@]}"
  run run "$W/$format.$ext" "${prof[@]}" --no-trace -o "$W/o_$format"
  run run "$W/$format.$ext" "${prof[@]}" -o "$W/o_${format}_reports"
done
# The profile's names are relative to the build folder (-fprofile-prefix-path); a name the
# Release build cannot find would make it build without the profile, silently.
probe="sim#CMakeFiles#pypto_sim.dir#src#simulate.cpp.gcda"
if [[ ! -f "$PROFILE.tmp/$probe" ]]; then
  echo "pgo: the training left no $probe in $PROFILE.tmp (profile names not relative to" \
       "$TRAIN?); the Release build would not be optimised with it" >&2
  exit 1
fi
rm -rf "$W" "$PROFILE"
mv "$PROFILE.tmp" "$PROFILE"
echo "pgo: profile in $PROFILE"
