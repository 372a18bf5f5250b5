#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI smoke test of the benchmark suite: `pypto-sim bench --quick` runs, says every task
# completed, and writes a well-formed bench.json with every key the issue lists. Never a
# speed threshold: CI machines are too noisy for that. Also: bad --sizes is exit status 2.
# Usage: test_bench_quick.sh PYPTO_SIM SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SRC="$2"
export PYPTO_ROOT="$SRC"

start=$(date +%s)
if ! "$SIM" bench --quick -o "$TMP/bench" >"$TMP/out" 2>"$TMP/err"; then
  echo "FAIL bench --quick exited non-zero"; cat "$TMP/err" "$TMP/out"; exit 1
fi
echo "bench --quick took $(( $(date +%s) - start )) s"
cat "$TMP/out"
grep -q "every run completed every task: yes" "$TMP/out" || { echo "FAIL no completion line"; exit 1; }

/usr/bin/python3 - "$TMP/bench/bench.json" "$SRC" <<'PY' || exit 1
import json, math, os, sys
path, src = sys.argv[1], sys.argv[2]
with open(path) as f:
    d = json.load(f)
errors = []
def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
def positive(key, v):
    if not number(v) or v <= 0:
        errors.append(f"{key}: {v!r} is not a positive number")
for k in ["model_tasks_per_s", "ceiling_tasks_per_s", "ratio_to_ceiling", "heap_des_tasks_per_s"]:
    positive(k, d.get(k))
if d.get("all_tasks_completed") is not True:
    errors.append("all_tasks_completed is not true")
scaling = d.get("scaling")
if not isinstance(scaling, list) or [p.get("tasks") for p in scaling] != [10000, 100000]:
    errors.append(f"scaling: want sizes [10000, 100000], got {scaling!r}")
else:
    for p in scaling:
        for k in ["tasks", "wall_s", "tasks_per_s", "rss_bytes_per_task"]:
            positive(f"scaling[{p['tasks']}].{k}", p.get(k))
# End to end per input format: every format at both sizes, both runs measured.
e2e = d.get("end_to_end") or {}
formats = e2e.get("formats")
if formats != ["native", "dyn_topo", "topo_json", "fixed_latency"]:
    errors.append(f"end_to_end.formats: want the four input formats, got {formats!r}")
points = e2e.get("points") or []
got = sorted((p.get("format"), p.get("tasks")) for p in points)
want = sorted((f, n) for f in formats or [] for n in (10000, 100000))
if got != want:
    errors.append(f"end_to_end.points: want {want}, got {got}")
for p in points:
    for mode in ["no_trace", "with_trace"]:
        # --quick runs every point once (a full bench runs sizes up to 100k three times a round).
        if (p.get(mode) or {}).get("runs") != 1:
            errors.append(f"end_to_end[{p.get('format')} {p.get('tasks')}].{mode}.runs: want 1")
        for k in ["wall_s", "tasks_per_s", "us_per_task", "sim_wall_s", "rss_bytes_per_task"]:
            positive(f"end_to_end[{p.get('format')} {p.get('tasks')}].{mode}.{k}", (p.get(mode) or {}).get(k))
for f in formats or []:
    for mode in ["no_trace", "with_trace"]:
        if "max_deviation_from_first" not in ((e2e.get("flatness") or {}).get(f) or {}).get(mode, {}):
            errors.append(f"end_to_end.flatness.{f}.{mode} lacks max_deviation_from_first")
names = [t.get("target", "") for t in d.get("targets", [])]
for f in formats or []:
    if sum(n.startswith(f + ":") for n in names) != 4:
        errors.append(f"targets: want 4 end-to-end rows for {f}")
policies = d.get("policies")
if not isinstance(policies, dict) or sorted(policies) != ["fair", "fifo", "l2_affinity", "l2_fair"]:
    errors.append(f"policies: want the four built-ins, got {policies!r}")
else:
    for k, v in policies.items():
        positive(f"policies.{k}", v)
# The frontend keys are numbers, or null with the reason when the frontend cannot run
# here (no venv, or no tools/bench_frontend.py yet).
frontend_present = os.access(os.path.join(src, ".venv/bin/python"), os.X_OK) and \
    os.path.exists(os.path.join(src, "tools/bench_frontend.py"))
for k in ["compile_tile_ops_per_s", "first_call_ms", "cached_call_ms",
          "cached_call_sustained_ms", "sim_us_per_task_python"]:
    if k not in d:
        errors.append(f"missing key {k}")
    elif d[k] is None:
        if frontend_present or not isinstance(d.get("frontend_error"), str):
            errors.append(f"{k} is null (frontend_error: {d.get('frontend_error')!r})")
    elif not number(d[k]) or d[k] < 0:
        errors.append(f"{k}: {d[k]!r} is not a number")
if errors:
    print("FAIL bench.json:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("ok   bench.json has every key")
PY

"$SIM" bench --sizes 10k,abc -o "$TMP/bad" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [[ $rc -ne 2 ]] || ! grep -q "'abc' is not a task count" "$TMP/err"; then
  echo "FAIL bad --sizes: exit $rc, stderr: $(cat "$TMP/err")"; exit 1
fi
echo "ok   bad --sizes is exit status 2"

"$SIM" bench --quick --formats native,xml -o "$TMP/bad2" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [[ $rc -ne 2 ]] || ! grep -q "'xml' is not an input format" "$TMP/err"; then
  echo "FAIL bad --formats: exit $rc, stderr: $(cat "$TMP/err")"; exit 1
fi
echo "ok   bad --formats is exit status 2"
