#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Python policies from the command line (--policy-module FILE.py, the Python bridge): policies
# that only delegate to the defaults give exactly fifo's stats on the sample traces and a
# 100k-task synthetic trace; newest-first gives the mirrored, hand-checked start order; a
# raising hook and unusable files are exit 2 with one line naming them, nothing left behind;
# stats.json records a Python policy's parameters; sweep forwards to pypto.sweep.
# Usage: test_cli_policy_module.sh PYPTO_SIM ROOT [nopython]
#   nopython: the build has no Python module; the flag and sweep are clear errors (exit 2).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ROOT="$2"; MODE="${3:-python}"
POL="$ROOT/tests/cli/policies"
SAMPLES="$ROOT/traces/samples"
cd "$TMP" || exit 1
# A failed command leaves no ./x behind (expect_error checks).
NO_LEFTOVER=x

if [[ "$MODE" == nopython ]]; then
  expect_error "no Python module: --policy-module" \
    "--policy-module .*delegating.py: this pypto-sim was built without the Python module" -- \
    "$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module "$POL/delegating.py" -o x
  expect_error "no Python module: sweep" "sweep: this pypto-sim was built without" -- "$SIM" sweep
  finish; exit
fi

# stats.json without wall-clock fields and the policy's name: what must equal fifo's.
strip() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("wall_s", "tasks_per_s", "policy", "policy_params"):
    d.pop(k, None)
print(json.dumps(d, sort_keys=True, indent=1))
PY
}

out="$("$SIM" policies --policy-module "$POL/delegating.py" --policy-module "$POL/py_fifo.py")"
if grep -q "^delegating  fifo, with pick_shared in Python calling super()" <<<"$out" &&
   grep -qE "^    weight: float in \[0, 1\], default 0.5  unused" <<<"$out" &&
   grep -q "^fifo " <<<"$out"; then
  ok "policies lists the modules' policies with their parameters"
else
  bad "policies --policy-module: $out"
fi

# Every sample trace and a 100k-task synthetic one: one compare per trace, fifo against the
# three Python fifos (empty subclass, one delegating hook, every decision in Python).
"$SIM" gen --shape mix --tasks 100000 --seed 7 -o mix100k.ndjson || bad "gen"
run_compare() {  # NAME TRACE [flags...]
  local name="$1" trace="$2"; shift 2
  if ! "$SIM" compare "$trace" "$@" --policies fifo,empty,delegating,py_fifo \
      --policy-module "$POL/empty.py" --policy-module "$POL/delegating.py" \
      --policy-module "$POL/py_fifo.py" -q --no-trace -o "cmp_$name" >"cmp_$name.txt" 2>&1; then
    bad "$name: compare failed: $(cat "cmp_$name.txt")"; return
  fi
  strip "cmp_$name/fifo/stats.json" >"fifo_$name.json"
  local p same=1
  for p in empty delegating py_fifo; do
    strip "cmp_$name/$p/stats.json" >"${p}_$name.json"
    if ! cmp -s "fifo_$name.json" "${p}_$name.json"; then
      same=0; bad "$name: $p differs from fifo: $(diff "fifo_$name.json" "${p}_$name.json" | head -5)"
    fi
  done
  ((same)) && ok "$name: the Python fifos give fifo's stats exactly"
}
run_compare dyn_topo "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json"
run_compare topo_json "$SAMPLES/topo.json" --prof "$SAMPLES/tilefwk_L1_prof_data.json"
run_compare fixed_task_topo "$SAMPLES/fixed_task_topo.json"
run_compare pipeline "$SAMPLES/pipeline.ndjson"
run_compare mix100k mix100k.ndjson

# The declared parameter of py_fifo is in stats.json (default, then as given); fifo has none.
/usr/bin/python3 - cmp_pipeline/py_fifo/stats.json cmp_pipeline/fifo/stats.json <<'PY' &&
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["policy"] == "py_fifo" and a["policy_params"] == {"weight": 0.5}, a.get("policy_params")
assert "policy_params" not in b
PY
  ok "stats.json: policy_params of a Python policy, none for fifo" || bad "policy_params in stats.json"
"$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module "$POL/py_fifo.py" --sched-mode py_fifo \
  --policy-param weight=0.25 -q --no-trace -o w >/dev/null 2>&1 &&
  /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open("w/stats.json"))["policy_params"] != {"weight": 0.25})' &&
  ok "run --policy-param of a Python policy" || bad "run --policy-param weight=0.25"

# Hand-checked: four independent 10 us AIV tasks on idle cores. fifo sends them oldest first,
# 13 ns apart (ids 0 1 2 3); newest_first sends 3 2 1 0 at the same four instants.
/usr/bin/python3 - >four.ndjson <<'PY'
import json
print(json.dumps({"format": "pypto-sim-trace", "version": 1, "chip": "a2", "tasks": 4}))
for i in range(4):
    print(json.dumps({"id": i, "core": "AIV", "kernel": "k", "dur": 10000}))
PY
order() {  # the task ids of a timed trace by start time, and the start times
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"start"' in l]
rows.sort(key=lambda r: r["start"])
print(" ".join(str(r["id"]) for r in rows), "|", " ".join(str(r["start"]) for r in rows))
PY
}
"$SIM" run four.ndjson -q --no-trace --timed-trace fifo4.ndjson -o f4 &&
  "$SIM" run four.ndjson --policy-module "$POL/newest_first.py" --sched-mode newest_first \
    -q --no-trace --timed-trace newest4.ndjson -o n4 || bad "four-task runs"
fo="$(order fifo4.ndjson)"; no="$(order newest4.ndjson)"
if [[ "${fo%% |*}" == "0 1 2 3" && "${no%% |*}" == "3 2 1 0" && "${fo#*| }" == "${no#*| }" ]]; then
  ok "newest_first sends 3 2 1 0 where fifo sends 0 1 2 3 ($no)"
else
  bad "start orders: fifo '$fo', newest_first '$no'"
fi

# Output and exit status pass through the bridge.
"$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module "$POL/delegating.py" --sched-mode delegating \
  --no-trace -o s >summary.txt 2>&1 && grep -q "reports in s/" summary.txt && [[ -f s/stats.json ]] &&
  ok "run prints its summary through the bridge" || bad "summary: $(cat summary.txt)"

# Errors: one line, exit 2, nothing written.
expect_error "a raising hook names hook, class, exception and line" \
  "Python policy error in scheduling policy hook pick_shared of Raising: ZeroDivisionError: integer division or modulo by zero \(at .*raising.py:8\); nothing written" -- \
  "$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module "$POL/raising.py" --sched-mode raising -o x
expect_error "compare: a raising hook" "hook pick_shared of Raising: ZeroDivisionError" -- \
  "$SIM" compare "$SAMPLES/pipeline.ndjson" --policies raising,fifo --policy-module "$POL/raising.py" -o x
expect_error "missing policy file" "--policy-module nope.py: no such file" -- \
  "$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module nope.py --sched-mode fifo -o x
printf 'import pypto.sim\nclass Broken(pypto.sim.Policy:\n    pass\n' >broken.py
expect_error "syntax error in a policy file" "--policy-module broken.py:2: SyntaxError" -- \
  "$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module broken.py --sched-mode fifo -o x
expect_error "policy file raising at import" \
  "--policy-module .*raise_at_import.py:3: RuntimeError: policy file refuses to load" -- \
  "$SIM" policies --policy-module "$POL/raise_at_import.py"
expect_error "a policy file given twice" "delegating.py: the same file is given twice" -- \
  "$SIM" policies --policy-module "$POL/delegating.py" --policy-module "$POL/delegating.py"
cp "$POL/delegating.py" delegating_copy.py
expect_error "a policy registered twice" "delegating_copy.py:13: .*policy 'delegating' is already registered" -- \
  "$SIM" policies --policy-module "$POL/delegating.py" --policy-module delegating_copy.py
expect_error "unknown policy name suggests a Python one" "did you mean 'delegating'" -- \
  "$SIM" run "$SAMPLES/pipeline.ndjson" --policy-module "$POL/delegating.py" --sched-mode delegatin -o x
expect_error "bad trace through the bridge" "trace error: .*nope.ndjson" -- \
  "$SIM" run nope.ndjson --policy-module "$POL/delegating.py" --sched-mode delegating -o x

# sweep: pypto.sweep.main where the module exists, else a clear error.
if [[ -f "$ROOT/frontend/pypto/sweep.py" ]]; then
  "$SIM" sweep --help >sweep.txt 2>&1 && ok "sweep --help runs pypto.sweep" || bad "sweep --help: $(cat sweep.txt)"
else
  expect_error "sweep without pypto.sweep" "sweep: cannot import pypto.sweep" -- "$SIM" sweep --help
fi

finish
