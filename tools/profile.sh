#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where the full model spends its time: runs `pypto-sim run TRACE --no-trace -q` on a
# synthetic mix trace of 1M tasks under `perf record -g` and prints the top 25 functions by
# self time (reading the trace is part of the run: it shows as NativeReader/simdjson). If
# perf is missing or not permitted (perf_event_paranoid, containers), falls back to
# `valgrind --tool=callgrind` on a 100k-task trace (callgrind is ~50x slower).
#
# Usage: tools/profile.sh [TASKS] [-- extra 'pypto-sim run' flags, e.g. --sched-mode 1]
# Environment: SIM (default .venv/bin/pypto-sim; run tools/setup.sh first), OUT (default
# output/profile: traces are kept there and reused), TOP (default 25), PROFILER (perf or
# callgrind: force one).
# Output: $OUT/perf.data (perf report -i $OUT/perf.data) or $OUT/callgrind.out
# (callgrind_annotate or kcachegrind).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SIM="${SIM:-.venv/bin/pypto-sim}"
OUT="${OUT:-output/profile}"
TOP="${TOP:-25}"
TASKS=1000000
if [[ $# -gt 0 && "$1" != "--" ]]; then TASKS="$1"; shift; fi
[[ $# -gt 0 && "$1" == "--" ]] && shift
EXTRA=("$@")
[[ -x "$SIM" ]] || { echo "profile: $SIM not found; run tools/setup.sh first" >&2; exit 1; }
mkdir -p "$OUT"

trace_for() {  # the mix trace of $1 tasks, generated once
  local t="$OUT/mix_$1.ndjson"
  if [[ ! -s "$t" ]]; then
    echo "profile: generating $t" >&2
    "$SIM" gen --shape mix --tasks "$1" -o "$t.tmp$$" && mv "$t.tmp$$" "$t"
  fi
  echo "$t"
}

PROFILER="${PROFILER:-}"
perf_ok() { command -v perf >/dev/null && perf record -q -o /dev/null -- true >/dev/null 2>&1; }
if [[ "$PROFILER" == perf || ( -z "$PROFILER" ) ]] && perf_ok; then
  TRACE="$(trace_for "$TASKS")"
  echo "profile: perf record -g on '$SIM run $TRACE --no-trace -q ${EXTRA[*]:-}'" >&2
  perf record -q -g -o "$OUT/perf.data" -- "$SIM" run "$TRACE" --no-trace -q -o "$OUT/run" \
    "${EXTRA[@]}" 2>"$OUT/perf.log" || { cat "$OUT/perf.log" >&2; exit 1; }
  echo "top $TOP functions by self time ($TASKS tasks; perf report -i $OUT/perf.data for more):"
  perf report -i "$OUT/perf.data" --no-children --sort symbol -g none --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^[[:space:]]*$' | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//' |
    head -n "$TOP"
elif [[ "$PROFILER" != perf ]] && command -v valgrind >/dev/null; then
  [[ "$TASKS" == 1000000 ]] && TASKS=100000
  TRACE="$(trace_for "$TASKS")"
  echo "profile: perf not used; valgrind --tool=callgrind on $TASKS tasks (slow)" >&2
  valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" -- \
    "$SIM" run "$TRACE" --no-trace -q -o "$OUT/run" "${EXTRA[@]}" 2>"$OUT/callgrind.log" ||
    { tail -20 "$OUT/callgrind.log" >&2; exit 1; }
  echo "top $TOP functions by self cost ($TASKS tasks; callgrind_annotate $OUT/callgrind.out):"
  callgrind_annotate --inclusive=no "$OUT/callgrind.out" 2>/dev/null |
    grep -E '^[[:space:]]*[0-9,]+ \(' | grep -v 'PROGRAM TOTALS' | head -n "$TOP"
else
  echo "profile: no usable profiler: perf (apt-get install linux-perf; perf_event_paranoid <= 2)" \
       "or valgrind (apt-get install valgrind)" >&2
  exit 1
fi
