#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The policies from the command line: listing with parameters, choosing by name with
# --policy-param, errors with suggestions, and critical_path beating fifo on a graph whose
# critical path matters (120 lone 10 us tasks queued before a 10-task chain).
# Usage: test_cli_policies.sh PYPTO_SIM
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
makespan() { /usr/bin/python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["makespan_ns"]))' "$1"; }

/usr/bin/python3 - >"$TMP/cp.ndjson" <<'PY'
import json
lone, chain = 120, 10
print(json.dumps({"format": "pypto-sim-trace", "version": 1, "chip": "a2", "tasks": lone + chain}))
for i in range(lone):
    print(json.dumps({"id": i, "core": "AIV", "kernel": "lone", "dur": 10000}))
for j in range(chain):
    r = {"id": lone + j, "core": "AIV", "kernel": "chain", "dur": 10000}
    if j + 1 < chain:
        r["succ"] = [lone + j + 1]
    print(json.dumps(r))
PY

out="$("$SIM" policies)"
for p in fifo l2_affinity fair l2_fair critical_path work_stealing random; do
  grep -q "^$p " <<<"$out" || bad "policies lacks $p"
done
grep -qE "^    seed: int in \[0, 4294967295\], default 1" <<<"$out" && ok "policies lists parameters" \
  || bad "policies parameters: $out"

"$SIM" run "$TMP/cp.ndjson" --sched-mode fifo -q --no-trace -o "$TMP/fifo" &&
  "$SIM" run "$TMP/cp.ndjson" --sched-mode critical_path -q --no-trace -o "$TMP/cp" || bad "runs"
f=$(makespan "$TMP/fifo/stats.json"); c=$(makespan "$TMP/cp/stats.json")
# fifo starts the chain in the third wave (about 20 us late); critical_path at once.
if (( c + 10000 < f )); then ok "critical_path beats fifo ($c ns < $f ns)"; else bad "critical_path $c vs fifo $f"; fi

# The list-scheduling case: 960 lone tasks listed first, then a 20-task chain of the same
# length (100 us, then 10 us). fifo runs the chain after 20 waves of lone tasks (40 lengths);
# critical_path keeps the chain's pending slot free and its tasks on the core a poll round
# reads last, and finishes near 21 lengths: under 0.6x of fifo. With 10 us tasks each chain
# step also waits about 1.3 us for its completion to reach the AICPU and be polled.
for dur in 100000 10000; do
/usr/bin/python3 - "$dur" >"$TMP/cp960.ndjson" <<'PY'
import json, sys
lone, chain, dur = 960, 20, int(sys.argv[1])
print(json.dumps({"format": "pypto-sim-trace", "version": 1, "chip": "a2", "tasks": lone + chain}))
for i in range(lone):
    print(json.dumps({"id": i, "core": "AIV", "kernel": "lone", "dur": dur}))
for j in range(chain):
    r = {"id": lone + j, "core": "AIV", "kernel": "chain", "dur": dur}
    if j + 1 < chain:
        r["succ"] = [lone + j + 1]
    print(json.dumps(r))
PY
"$SIM" run "$TMP/cp960.ndjson" --sched-mode fifo -q --no-trace -o "$TMP/f960" &&
  "$SIM" run "$TMP/cp960.ndjson" --sched-mode critical_path -q --no-trace -o "$TMP/c960" || bad "runs 960"
f=$(makespan "$TMP/f960/stats.json"); c=$(makespan "$TMP/c960/stats.json")
if (( c * 100 < f * 60 )); then ok "critical_path under 0.6x of fifo on 960 + 20 of $dur ns ($c ns, $f ns)"
else bad "critical_path $c vs fifo $f on 960 + 20 of $dur ns"; fi
done

"$SIM" run "$TMP/cp.ndjson" --sched-mode random --policy-param seed=9 -q --no-trace -o "$TMP/r1" &&
  "$SIM" run "$TMP/cp.ndjson" --sched-mode random --policy-param seed=9 -q --no-trace -o "$TMP/r2" || bad "random runs"
[[ "$(makespan "$TMP/r1/stats.json")" == "$(makespan "$TMP/r2/stats.json")" ]] && ok "random is seeded" \
  || bad "random differs for one seed"
"$SIM" compare "$TMP/cp.ndjson" --policies fifo,random,work_stealing --policy-param seed=2 \
  --policy-param min_victim_staged=2 -q --no-trace -o "$TMP/cmp" >/dev/null && ok "compare hands each policy its parameters" \
  || bad "compare with parameters"

expect_error "unknown parameter" "unknown parameter 'sed'; did you mean 'seed'\?" -- \
  "$SIM" run "$TMP/cp.ndjson" --sched-mode random --policy-param sed=3 -o "$TMP/x"
expect_error "parameter of another policy" "policy 'fifo': unknown parameter 'seed' \(it takes no parameters\)" -- \
  "$SIM" run "$TMP/cp.ndjson" --policy-param seed=3 -o "$TMP/x"
expect_error "parameter out of range" "seed = -3 is out of range" -- \
  "$SIM" run "$TMP/cp.ndjson" --sched-mode random --policy-param seed=-3 -o "$TMP/x"
expect_error "parameter not key=value" "expected key=value" -- \
  "$SIM" run "$TMP/cp.ndjson" --sched-mode random --policy-param seed -o "$TMP/x"
expect_error "unknown policy name" "did you mean 'work_stealing'" -- \
  "$SIM" run "$TMP/cp.ndjson" --sched-mode work_steal -o "$TMP/x"
expect_error "compare: parameter no policy takes" "unknown parameter 'sead'; did you mean 'seed'" -- \
  "$SIM" compare "$TMP/cp.ndjson" --policies random,fifo --policy-param sead=1 -o "$TMP/x"

# A run YAML: runtime options and the policy's parameters; flags override it.
printf 'device_sched_mode: random\npolicy_params: {seed: 9}\nlaunch_sched_aicpu_num: 2\n' >"$TMP/run.yaml"
"$SIM" run "$TMP/cp.ndjson" --sched-mode random --policy-param seed=9 --launch-sched-aicpu-num 2 \
  -q --no-trace -o "$TMP/y0" || bad "flags run"
if "$SIM" run "$TMP/cp.ndjson" --run-config "$TMP/run.yaml" -q --no-trace -o "$TMP/y1" &&
   [[ "$(makespan "$TMP/y1/stats.json")" == "$(makespan "$TMP/y0/stats.json")" ]]; then
  ok "run YAML picks random with seed 9"
else
  bad "run YAML"
fi
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["aicpu"]["sched_threads"] != 2)' \
  "$TMP/y1/stats.json" && ok "run YAML sets launch_sched_aicpu_num" || bad "run YAML thread count"
"$SIM" run "$TMP/cp.ndjson" --run-config "$TMP/run.yaml" --sched-mode fifo -q --no-trace -o "$TMP/y2" &&
  /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["policy"] != "fifo")' \
  "$TMP/y2/stats.json" && ok "a --sched-mode flag overrides the YAML's policy" || bad "YAML override"
printf 'device_sched_mod: random\n' >"$TMP/bad.yaml"
expect_error "run YAML unknown key" "bad.yaml:1: device_sched_mod: not a runtime option of a replay; did you mean 'device_sched_mode'\?" -- \
  "$SIM" run "$TMP/cp.ndjson" --run-config "$TMP/bad.yaml" -o "$TMP/x"
printf 'device_sched_mode: random\npolicy_params: {sed: 9}\n' >"$TMP/bad2.yaml"
expect_error "run YAML unknown parameter" "did you mean 'seed'" -- \
  "$SIM" run "$TMP/cp.ndjson" --run-config "$TMP/bad2.yaml" -o "$TMP/x"

finish
