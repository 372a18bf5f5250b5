#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ThreadSanitizer over what runs on several threads: the Catch2 suites (the native reader's
# parse threads, the report writer ahead, the replay metrics' second thread) and pypto-sim
# runs of every input format with every report, and a compare. Any report fails the run. Not part of
# tools/test.sh: with its build it takes about 7 minutes on the 2-core box.
# Environment: BUILD_DIR (default build-tsan), TASKS (tasks per generated trace, default
# 150000: above the sizes where the helper threads start).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build-tsan}"
TASKS="${TASKS:-150000}"

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
      -DPYPTO_SANITIZE_THREAD=ON -DPYPTO_BUILD_PYTHON=OFF \
      -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target test_sched test_sim test_device pypto-sim

# halt_on_error: the first race fails the step that met it (exit 66).
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export SC_COPYRIGHT_MESSAGE=DISABLE
for t in test_sched test_sim test_device; do
  echo "tsan: $t"
  "$BUILD_DIR/tests/$t" >/dev/null
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
sim="$BUILD_DIR/tools/pypto-sim"
"$sim" gen --tasks "$TASKS" -o "$tmp/n.ndjson"
"$sim" gen --tasks "$TASKS" --format topo_json -o "$tmp/t.json" --prof "$tmp/t.prof.json"
"$sim" gen --tasks "$TASKS" --format dyn_topo -o "$tmp/d.txt" --prof "$tmp/d.prof.json"
"$sim" gen --tasks "$TASKS" --format fixed_latency -o "$tmp/f.json"
runs=("run $tmp/n.ndjson"
      "run $tmp/t.json --prof $tmp/t.prof.json"
      "run $tmp/d.txt --prof $tmp/d.prof.json"
      "run $tmp/f.json"
      "compare $tmp/n.ndjson")
for r in "${runs[@]}"; do
  echo "tsan: pypto-sim $r"
  # shellcheck disable=SC2086  # the words of each run
  "$sim" $r -q -o "$tmp/out" >/dev/null
  rm -rf "$tmp/out"
done
echo "tsan: no data race reported"
