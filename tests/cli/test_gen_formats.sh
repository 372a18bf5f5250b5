#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pypto-sim gen --format` end to end: the synthetic graph in every input format replays with
# the task count asked for (tests/trace/test_pypto_writers.cpp checks the makespans), and bad
# gen flags are exit status 2.
# Usage: test_gen_formats.sh PYPTO_SIM
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tasks_of() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tasks"] + d["hub_tasks"])' "$1"; }

declare -A FILE=([native]=t.ndjson [dyn_topo]=dyn_topo.txt [topo_json]=topo.json
                 [fixed_latency]=fixed.json)
for f in native dyn_topo topo_json fixed_latency; do
  mkdir -p "$TMP/$f"
  if ! "$SIM" gen --format "$f" --tasks 5000 -o "$TMP/$f/${FILE[$f]}" 2>"$TMP/err"; then
    bad "gen --format $f: $(cat "$TMP/err")"; continue
  fi
  prof=()
  [[ $f == dyn_topo || $f == topo_json ]] && prof=(--prof "$TMP/$f/tilefwk_L1_prof_data.json")
  if ! "$SIM" run "$TMP/$f/${FILE[$f]}" "${prof[@]}" --no-trace -q -o "$TMP/$f/out" 2>"$TMP/err"; then
    bad "run the $f trace: $(cat "$TMP/err")"; continue
  fi
  n=$(tasks_of "$TMP/$f/out/stats.json")
  [[ $n == 5000 ]] && ok "gen --format $f: 5000 tasks replayed" || bad "gen --format $f: $n tasks"
done

"$SIM" gen --format csv --tasks 10 -o "$TMP/x" >/dev/null 2>"$TMP/err"; rc=$?
[[ $rc == 2 ]] && grep -q "expected native, dyn_topo, topo_json or fixed_latency" "$TMP/err" \
  && ok "gen --format csv is exit status 2" || bad "gen --format csv: exit $rc, $(cat "$TMP/err")"
"$SIM" gen --format dyn_topo --tasks 10 >/dev/null 2>"$TMP/err"; rc=$?
[[ $rc == 2 ]] && grep -q "needs -o" "$TMP/err" && ok "gen --format dyn_topo needs -o" \
  || bad "gen --format dyn_topo without -o: exit $rc, $(cat "$TMP/err")"

finish
