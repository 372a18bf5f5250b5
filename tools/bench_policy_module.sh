#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cost of Python policies from the CLI (--policy-module): fifo in C++ against three
# Python fifos on one synthetic trace (default 1M tasks), interleaved, ROUNDS rounds (default
# 3), medians. tasks/s is stats.json's (the simulation alone); wall s is the whole command,
# Python's start-up (importing pypto) included. Every run must give fifo's makespan.
# Usage: tools/bench_policy_module.sh [TASKS] [ROUNDS]   (env PYPTO_SIM: the binary)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIM="${PYPTO_SIM:-$ROOT/build/tools/pypto-sim}"
TASKS="${1:-1000000}"; ROUNDS="${2:-3}"
POL="$ROOT/tests/cli/policies"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
TRACE="$TMP/t.ndjson"
"$SIM" gen --tasks "$TASKS" -o "$TRACE"
declare -A FLAGS=(
  [fifo]="--sched-mode fifo"
  [empty]="--policy-module $POL/empty.py --sched-mode empty"
  [delegating]="--policy-module $POL/delegating.py --sched-mode delegating"
  [py_fifo]="--policy-module $POL/py_fifo.py --sched-mode py_fifo"
)
ORDER=(fifo empty delegating py_fifo)
for ((r = 1; r <= ROUNDS; r++)); do
  for p in "${ORDER[@]}"; do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$SIM" run "$TRACE" --no-trace -q ${FLAGS[$p]} -o "$TMP/$p$r"
    t1=$(date +%s.%N)
    echo "$p $r $(echo "$t1 - $t0" | bc)" >>"$TMP/wall.txt"
  done
done
echo "pypto-sim run --no-trace, $TASKS tasks, $ROUNDS interleaved rounds, medians ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
/usr/bin/python3 - "$TMP" "$ROUNDS" "${ORDER[@]}" <<'PY'
import json, statistics, sys
tmp, rounds, order = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
wall = {}
for line in open(f"{tmp}/wall.txt"):
    p, _, s = line.split()
    wall.setdefault(p, []).append(float(s))
base = None
print(f"{'policy':12s} {'tasks/s':>10s} {'us/task':>8s} {'wall s':>7s}  makespan")
for p in order:
    stats = [json.load(open(f"{tmp}/{p}{r}/stats.json")) for r in range(1, rounds + 1)]
    rate = statistics.median(s["tasks_per_s"] for s in stats)
    span = {s["makespan_ns"] for s in stats}
    base = base or span
    same = "= fifo" if span == base else f"DIFFERS {span} vs {base}"
    print(f"{p:12s} {rate:10.0f} {1e6 / rate:8.2f} {statistics.median(wall[p]):7.2f}  {same}")
PY
