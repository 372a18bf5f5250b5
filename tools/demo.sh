#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo: set up, then replay sample traces under all four device_sched_mode policies and
# print comparison tables. Reports (stats.json, trace.json for Perfetto, swim.json) land
# in output/demo/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Only what the demo runs: the CLI and the Python module (not the tests, which tools/test.sh
# builds), and the packages those need (not the tests' extras).
TARGETS="pypto-sim pypto_native" tools/setup.sh
SIM=.venv/bin/pypto-sim
OUT=output/demo
rm -rf "$OUT"; mkdir -p "$OUT"

echo
echo "== 1. PyPTO board recording (dyn_topo.txt + tilefwk_L1_prof_data.json), A2 =="
$SIM compare traces/samples/dyn_topo.txt --prof traces/samples/tilefwk_L1_prof_data.json \
  -o "$OUT/board"
echo
echo "== 2. synthetic workload: stitched loops + chains + fan-out, 20k tasks, A3 =="
$SIM gen --shape mix --tasks 20000 -o "$OUT/mix20k.ndjson"
$SIM compare "$OUT/mix20k.ndjson" --chip a3 -o "$OUT/mix20k"
echo
echo "== 3. the same workload on an Ascend 950DT =="
$SIM compare "$OUT/mix20k.ndjson" --chip 950dt -o "$OUT/mix20k_950dt"
echo
echo "== 4. a kernel author's view: @pypto.frontend.jit attention in SIM =="
PYPTO_OUTPUT_DIR="$OUT/kernels" .venv/bin/python tools/demo_kernel.py
/usr/bin/python3 tools/plot.py "$OUT"/mix20k_950dt/{fifo,l2_affinity,fair,l2_fair} -o "$OUT/policies_950dt.png" >/dev/null
/usr/bin/python3 tools/plot.py "$OUT/board/fifo" -o "$OUT/board_swimlane.png" >/dev/null
echo
echo "Pictures: $OUT/policies_950dt.png (policies side by side), $OUT/board_swimlane.png (swimlane)."
echo "Open any $OUT/*/<policy>/trace.json in https://ui.perfetto.dev (Open trace file)."
