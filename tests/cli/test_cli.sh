#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the pypto-sim CLI: every command, the report files, determinism,
# and exit status 2 with a message naming the file/line or key for each bad input.
# Usage: test_cli.sh PYPTO_SIM SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SRC="$2"
SAMPLES="$SRC/traces/samples"

strip_wall() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("wall_s"); d.pop("tasks_per_s"); print(json.dumps(d, sort_keys=True))' "$1"; }

# --- run on the board recording -------------------------------------------------------
if "$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -o "$TMP/r1" >"$TMP/out" 2>&1; then
  ok "run board recording"
else
  bad "run board recording: $(cat "$TMP/out")"
fi
/usr/bin/python3 - "$TMP/r1" <<'PY' && ok "report files are well formed" || bad "report files"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/stats.json"))
for k in ["makespan_ns", "tasks", "device_tasks", "cores", "aicpu", "l2", "hbm", "workspace",
          "wall_s", "tasks_per_s", "replay"]:
    assert k in s, k
assert s["tasks"] == 9 and s["device_tasks"] == 2, s
assert s["replay"]["recorded_makespan_ns"] == 26600.0
t = json.load(open(d + "/trace.json"))
ev = t["traceEvents"]
assert sum(1 for e in ev if e["ph"] == "X" and e["pid"] == 1) == 9
assert any(e["ph"] == "s" for e in ev) and any(e["ph"] == "f" for e in ev)
assert any(e["ph"] == "C" for e in ev)
w = json.load(open(d + "/swim.json"))
assert sum(len(b["tasks"]) for b in w) == 9
assert all({"blockIdx", "coreType", "tasks"} <= set(b) for b in w)
PY
"$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -o "$TMP/r2" -q >/dev/null 2>&1
if [[ "$(strip_wall "$TMP/r1/stats.json")" == "$(strip_wall "$TMP/r2/stats.json")" ]]; then
  ok "stats.json is deterministic"
else
  bad "stats.json differs between identical runs"
fi
cmp -s "$TMP/r1/swim.json" "$TMP/r2/swim.json" && ok "swim.json is deterministic" || bad "swim.json differs"

# --- other formats and commands ---------------------------------------------------------
for f in fixed_task_topo.json pipeline.ndjson; do
  "$SIM" run "$SAMPLES/$f" -o "$TMP/$f" -q >"$TMP/out" 2>&1 && ok "run $f" || bad "run $f: $(cat "$TMP/out")"
done
"$SIM" run "$SAMPLES/topo.json" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -o "$TMP/topo" -q >"$TMP/out" 2>&1 \
  && ok "run topo.json" || bad "run topo.json: $(cat "$TMP/out")"
if "$SIM" compare "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -o "$TMP/cmp" >"$TMP/out" 2>&1 \
   && [[ $(grep -cE "^(fifo|l2_affinity|fair|l2_fair) " "$TMP/out") -eq 4 ]]; then
  ok "compare prints four policies"
else
  bad "compare: $(cat "$TMP/out")"
fi
"$SIM" gen --shape loops --tasks 500 -o "$TMP/gen.ndjson" && "$SIM" run "$TMP/gen.ndjson" --sched-mode 3 -o "$TMP/gen" -q \
  && ok "gen + run mode 3" || bad "gen + run"
"$SIM" gen --shape mix --tasks 300 --seed 7 -o "$TMP/g1" && "$SIM" gen --shape mix --tasks 300 --seed 7 -o "$TMP/g2" \
  && cmp -s "$TMP/g1" "$TMP/g2" && ok "gen is deterministic" || bad "gen determinism"
"$SIM" policies | grep -q l2_fair && ok "policies lists l2_fair" || bad "policies"
"$SIM" config --chip 950dt | grep -q "aic: 32" && ok "config shows a preset" || bad "config"

# --- runtime options: flags and --help from sched's table -----------------------------
help="$("$SIM" run --help | tr -s " \n" " ")"  # one line: --help wraps at 80 columns
for f in device-sched-mode stitch-function-max-num device-sched-parallelism launch-sched-aicpu-num launch-early-mode; do
  grep -q -- "--$f" <<<"$help" || bad "run --help lacks --$f"
done
grep -qF "([1, 1024] roots, default 128)" <<<"$help" && grep -qF "([1, 7] threads, default 7)" <<<"$help" \
  && ok "run --help: ranges and defaults from the option table" || bad "run --help: $help"
# launch_sched_aicpu_num: <=0 or above the chip's maximum (a2: 4) -> the automatic count (3).
threads() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["aicpu"]["sched_threads"])' "$1/stats.json"; }
aicpu_ok=1
for v in 0 -1 99 7:3 2:2 4:4; do
  n="${v%%:*}"; want="${v#*:}"; [[ "$v" == *:* ]] || want=3
  if ! "$SIM" run "$SAMPLES/pipeline.ndjson" --launch-sched-aicpu-num "$n" --no-trace -q -o "$TMP/aicpu$n" >"$TMP/out" 2>&1 \
     || [[ "$(threads "$TMP/aicpu$n")" != "$want" ]]; then
    aicpu_ok=0; bad "--launch-sched-aicpu-num $n: want $want threads ($(cat "$TMP/out"))"
  fi
done
[[ $aicpu_ok -eq 1 ]] && ok "launch-sched-aicpu-num: <=0 or above the chip's maximum is automatic"
"$SIM" run "$SAMPLES/pipeline.ndjson" --launch-early-mode -1 --no-trace -q -o "$TMP/early" >/dev/null 2>&1 \
  && ok "launch-early-mode -1 is the chip's default" || bad "launch-early-mode -1"
# PyPTO's older stitching options re-stitch a trace without device-task ids: 63 roots of 8
# tasks -> initial 1, step 1: 1+2+...+11 >= 63 (11 device tasks); size 10: one root each;
# with --stitch-function-max-num 4 that one rules (16) and stderr says so.
"$SIM" gen --shape loops --tasks 500 -o "$TMP/older.ndjson" >/dev/null
device_tasks() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device_tasks"])' "$1/stats.json"; }
older_ok=1
for v in "1:" "11:--stitch-function-num-initial 1 --stitch-function-num-step 1" \
         "63:--stitch-function-size 10" "16:--stitch-function-num-initial 1 --stitch-function-max-num 4"; do
  want="${v%%:*}"; read -r -a args <<<"${v#*:}"
  if ! "$SIM" run "$TMP/older.ndjson" "${args[@]}" --no-trace -o "$TMP/older" >/dev/null 2>"$TMP/older.err" \
     || [[ "$(device_tasks "$TMP/older")" != "$want" ]]; then
    older_ok=0; bad "older stitching options ${v#*:}: want $want device tasks ($(cat "$TMP/older.err"))"
  fi
done
grep -qF "pypto-sim: warning: runtime_options: stitch_function_num_initial=1 superseded by stitch_function_max_num=4" "$TMP/older.err" \
  || { older_ok=0; bad "older stitching options: no superseded warning on stderr"; }
[[ $older_ok -eq 1 ]] && ok "older stitching options act on traces; max-num supersedes them"

# --- bad input: exit 2, one line naming the place -------------------------------------
printf '{"format":"pypto-sim-trace","version":1}\n{"id":0,"core":"AIV","succ":[5]}\n' >"$TMP/unknown_succ.ndjson"
expect_error "unknown successor" "unknown_succ.ndjson.*5" -- "$SIM" run "$TMP/unknown_succ.ndjson" -o "$TMP/x"
printf '{"format":"pypto-sim-trace","version":1}\n{"id":0,"core":"AIV","succ":[1]}\n{"id":1,"core":"AIV","succ":[0]}\n' >"$TMP/cycle.ndjson"
expect_error "dependency cycle" "cycle.*0.*1" -- "$SIM" run "$TMP/cycle.ndjson" -o "$TMP/x"
printf '{"format":"pypto-sim-trace","version":1}\n{"id":0,"core":"AIV","succ":[}\n' >"$TMP/malformed.ndjson"
expect_error "malformed line" "malformed.ndjson:2" -- "$SIM" run "$TMP/malformed.ndjson" -o "$TMP/x"
head -c 700 "$SAMPLES/fixed_task_topo.json" >"$TMP/truncated.json"
expect_error "truncated JSON" "truncated.json" -- "$SIM" run "$TMP/truncated.json" -o "$TMP/x"
expect_error "missing --prof" "prof" -- "$SIM" run "$SAMPLES/dyn_topo.txt" -o "$TMP/x"
printf '[{"blockIdx":0,"coreType":"AIV","tasks":[{"seqNo":0,"taskId":999,"execStart":1,"execEnd":2}]}]\n' >"$TMP/prof_unknown.json"
expect_error "prof record of no task" "999" -- "$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$TMP/prof_unknown.json" -o "$TMP/x"
expect_error "missing trace file" "no_such_file" -- "$SIM" run "$TMP/no_such_file.ndjson" -o "$TMP/x"
printf 'base: a2\nl2:\n  wyas: 8\n' >"$TMP/typo.yaml"
expect_error "config unknown key" "wyas.*typo.yaml:3.*ways" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --config "$TMP/typo.yaml" -o "$TMP/x"
printf 'base: a2\nl2:\n  ways: sixteen\n' >"$TMP/type.yaml"
expect_error "config wrong type" "l2.ways.*type.yaml:3" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --config "$TMP/type.yaml" -o "$TMP/x"
expect_error "config out of range" "l2.ways: 0 is out of range" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --set l2.ways=0 -o "$TMP/x"
expect_error "unknown chip" "unknown chip.*a2" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --chip a22 -o "$TMP/x"
expect_error "bad sched mode" "device_sched_mode: 7 is out of range \[0, 3\]" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --sched-mode 7 -o "$TMP/x"
expect_error "unknown policy name" "did you mean 'fair'" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --sched-mode fiar -o "$TMP/x"
expect_error "stitch out of range" "stitch_function_max_num: 0" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --stitch-function-max-num 0 -o "$TMP/x"
expect_error "early mode out of range" "launch_early_mode: 3 is out of range \\[0, 2\\]" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --launch-early-mode 3 -o "$TMP/x"
expect_error "parallelism out of range" "device_sched_parallelism: 9 is out of range \\[1, 8\\]" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --device-sched-parallelism 9 -o "$TMP/x"
expect_error "option not an integer" "stitch_function_max_num: 'abc' is not an integer" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --stitch-function-max-num abc -o "$TMP/x"
expect_error "unknown flag" "unrecognised|unrecognized" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --frobnicate
expect_error "no cores of a type" "pipeline.ndjson: task id .* has no AIV cores \(cores.aiv_per_aic = 0\)" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --set cores.aiv_per_aic=0 -o "$TMP/x"
# Values inside their documented ranges that make the run too slow stop with the setting to
# blame (they used to spin for ever in the HBM flow model); the timeout turns a hang into a
# failure.
"$SIM" gen --tasks 200 -o "$TMP/slow.ndjson" 2>/dev/null
expect_error "HBM too slow to finish" "hbm.aggregate_gbps.*time limit|time limit.*hbm.aggregate_gbps" -- timeout 60 "$SIM" run "$TMP/slow.ndjson" --set hbm.aggregate_gbps=1e-12 -o "$TMP/x"
expect_error "AICore clock too slow to finish" "time limit.*cores.freq_mhz" -- timeout 60 "$SIM" run "$TMP/slow.ndjson" --set cores.freq_mhz=1e-9 -o "$TMP/x"
expect_error "clock blamed on itself" "^pypto-sim: config error: cores.freq_mhz = 1e-300 MHz is too slow.{0,200}$" -- "$SIM" run "$SAMPLES/pipeline.ndjson" --set cores.freq_mhz=1e-300 -o "$TMP/x"
expect_error "config from /dev/zero" "/dev/zero' is a character device, not a regular file" -- timeout 60 "$SIM" run "$SAMPLES/pipeline.ndjson" --config /dev/zero -o "$TMP/x"
expect_error "prof from /dev/zero" "/dev/zero: is a character device" -- timeout 60 "$SIM" run "$SAMPLES/topo.json" --prof /dev/zero -o "$TMP/x"
expect_error "a directory as the trace" "is a directory" -- "$SIM" run "$TMP" -o "$TMP/x"
expect_error "unknown command" "did you mean 'run'" -- "$SIM" rnu
expect_error "poll_cycles 0" "aicpu.poll_cycles: 0 is out of range \\[1, " -- "$SIM" run "$SAMPLES/pipeline.ndjson" --set aicpu.poll_cycles=0 -o "$TMP/x"

# --- chip variants: a recording's blockIdx choose (--chip auto) and check the chip ------------
# The sample's blocks renumbered as on a 20-cluster part: AIC 0, AIV 20 and 21.
/usr/bin/python3 - "$SAMPLES/tilefwk_L1_prof_data.json" "$TMP/prof20.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b, idx in zip(d, [0, 20, 21]):
    b["blockIdx"] = idx
json.dump(d, open(sys.argv[2], "w"))
PY
"$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$TMP/prof20.json" -o "$TMP/auto20" >"$TMP/out" 2>"$TMP/err" \
  && grep -q "chip a2-20c" "$TMP/out" && grep -q "using a2-20c (presets that fit: a2-20c a3-20c)" "$TMP/err" \
  && ok "--chip auto picks a2-20c for a 20-cluster recording" || bad "auto chip: $(cat "$TMP/out" "$TMP/err")"
"$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -o "$TMP/auto24" >"$TMP/out" 2>"$TMP/err" \
  && grep -q "chip a2," "$TMP/out" && ! grep -v "inferred from its recorded starts" "$TMP/err" | grep -q . \
  && ok "--chip auto keeps a2 for the sample" || bad "auto chip on the sample: $(cat "$TMP/out" "$TMP/err")"
# The mode a recording ran under, from its start times: a replay made under l2_affinity and
# written with --timed-trace is replayed under l2_affinity; a mode given is taken as given.
"$SIM" gen --shape mix --tasks 600 --seed 7 -o "$TMP/mix600.ndjson" >/dev/null 2>&1
"$SIM" run "$TMP/mix600.ndjson" --sched-mode l2_affinity --timed-trace "$TMP/rec600.ndjson" -q --no-trace -o "$TMP/made600" \
  && "$SIM" run "$TMP/rec600.ndjson" --no-trace -o "$TMP/inf600" >"$TMP/out" 2>"$TMP/err" \
  && grep -q "policy l2_affinity (inferred from the recorded starts)" "$TMP/out" \
  && grep -q "device_sched_mode of $TMP/rec600.ndjson inferred from its recorded starts: l2_affinity (median start error fifo" "$TMP/err" \
  && /usr/bin/python3 - "$TMP/inf600/stats.json" <<'PY' \
  && ok "run infers the mode a recording was made under" || bad "mode inference: $(cat "$TMP/out" "$TMP/err")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["policy"] == "l2_affinity", s["policy"]
t = {x["policy"]: x["start_error_median_us"] for x in s["policy_inferred_from"]}
assert list(t) == ["fifo", "l2_affinity", "fair", "l2_fair"], t
assert t["l2_affinity"] < 0.005 < t["fifo"], t
PY
"$SIM" run "$TMP/rec600.ndjson" --no-trace --sched-mode fifo -o "$TMP/given600" >"$TMP/out" 2>"$TMP/err" \
  && grep -q "policy fifo," "$TMP/out" && ! grep -q "inferred" "$TMP/err" \
  && ! grep -q policy_inferred_from "$TMP/given600/stats.json" \
  && ok "a mode given is not inferred" || bad "mode given: $(cat "$TMP/out" "$TMP/err")"
expect_error "recording on the wrong chip" "ran on 1 to 20 AIC and at least 2 AIV .*chip a2 has 24 AIC and 48 AIV; presets that fit: a2-20c a3-20c" -- \
  "$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$TMP/prof20.json" --chip a2 -o "$TMP/x"
expect_error "recording on 950pr" "but chip 950pr has 32 AIC" -- \
  "$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" --chip 950pr -o "$TMP/x"
"$SIM" run "$SAMPLES/pipeline.ndjson" --chip auto -q -o "$TMP/autonative" && grep -q '"chip": "a2"' "$TMP/autonative/stats.json" \
  && ok "--chip auto on a native trace is a2" || bad "auto chip on a native trace"
# A native trace's header names the chip it was made for: --chip auto (the default) takes a
# preset, warns about another name, and a chip given on the command line wins.
sed '1s/"chip":"a2"/"chip":"a2-20c"/' "$SAMPLES/pipeline.ndjson" >"$TMP/hint20.ndjson"
sed '1s/"chip":"a2"/"chip":"910B9"/' "$SAMPLES/pipeline.ndjson" >"$TMP/hintx.ndjson"
"$SIM" run "$TMP/hint20.ndjson" --no-trace -o "$TMP/hint20" >"$TMP/out" 2>"$TMP/err" \
  && grep -q '"chip": "a2-20c"' "$TMP/hint20/stats.json" \
  && grep -q "using a2-20c (named by .*hint20.ndjson's header)" "$TMP/err" \
  && ok "--chip auto takes a native header's chip" || bad "header chip: $(cat "$TMP/out" "$TMP/err")"
"$SIM" run "$TMP/hint20.ndjson" --chip a2 --no-trace -q -o "$TMP/hint24" 2>"$TMP/err" \
  && grep -q '"chip": "a2"' "$TMP/hint24/stats.json" && [[ ! -s "$TMP/err" ]] \
  && ok "--chip a2 wins over the header's chip" || bad "--chip over the header: $(cat "$TMP/err")"
"$SIM" run "$TMP/hintx.ndjson" --no-trace -q -o "$TMP/hintx" 2>"$TMP/err" \
  && grep -q '"chip": "a2"' "$TMP/hintx/stats.json" \
  && grep -q 'warning: .*hintx.ndjson.s header names chip "910B9", which is no preset (.*a2-20c.*); --chip auto uses a2' "$TMP/err" \
  && ok "a header chip that is no preset is named in a warning" || bad "unknown header chip: $(cat "$TMP/err")"

# --- replay metrics, with and without trace.json ---------------------------------------------
"$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" --no-trace -q -o "$TMP/nt" \
  && [[ ! -e "$TMP/nt/trace.json" ]] && /usr/bin/python3 - "$TMP/nt/stats.json" "$TMP/r1/stats.json" <<'PY' \
  && ok "--no-trace keeps the task span and the replay metrics" || bad "--no-trace replay metrics"
import json, sys
nt, full = (json.load(open(p)) for p in sys.argv[1:])
assert nt["task_span_ns"] > 0 and nt["task_span_ns"] == full["task_span_ns"], nt["task_span_ns"]
assert nt["replay"] == full["replay"], (nt["replay"], full["replay"])
r = nt["replay"]
assert r["error_pct"] > -100 and r["tasks_compared"] == 9
assert set(r["start_error_us"]) == {"median", "p90"} and -1 <= r["start_order_spearman"] <= 1
assert set(r["wait_us"]["recorded"]) == {"p10", "p50", "p90"} and r["wait_us"]["tasks"] == 6
PY
"$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -o "$TMP/tbl" >"$TMP/out" 2>&1 \
  && grep -q "start error     median" "$TMP/out" && grep -q "start order     Spearman" "$TMP/out" \
  && grep -q "wait p10/50/90  recorded" "$TMP/out" && ok "summary prints the replay metrics" \
  || bad "summary replay metrics: $(cat "$TMP/out")"

# --- progress at every AICPU cost in range (a lost barrier wake-up once stopped these) --------
# The reported reproducer first, then points of its neighbourhood that also stopped.
for point in "1001 546" "800 400" "800 650" "2300 400" "2300 650" "1001 0"; do
  read -r poll barrier <<<"$point"
  if "$SIM" run "$SAMPLES/dyn_topo.txt" --prof "$SAMPLES/tilefwk_L1_prof_data.json" -q --no-trace \
      -o "$TMP/progress" --set aicpu.poll_cycles="$poll" --set aicpu.resolve_cycles=137 \
      --set aicpu.dispatch_cycles=58 --set aicpu.queue_op_cycles=37 \
      --set aicpu.barrier_cycles="$barrier" >"$TMP/out" 2>&1 \
    && /usr/bin/python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["tasks"] == 9' \
      "$TMP/progress/stats.json"; then
    ok "replay completes at poll $poll, barrier $barrier cycles"
  else
    bad "replay at poll $poll, barrier $barrier cycles: $(head -c 600 "$TMP/out")"
  fi
done

# --- outputs are complete or absent: full disk, Ctrl-C, SIGTERM ----------------------------
# A file-size limit stands in for a full disk (SIGXFSZ ignored: the write fails with EFBIG).
(trap '' XFSZ; ulimit -f 8; "$SIM" run "$SAMPLES/pipeline.ndjson" -q -o "$TMP/full") >"$TMP/out" 2>&1
rc=$?
if [[ $rc -eq 1 && ! -e "$TMP/full" ]] && grep -q "error while writing .*; nothing written" "$TMP/out"; then
  ok "a full disk leaves no report"
else
  bad "full disk: exit $rc, $(ls -A "$TMP/full" 2>&1), $(cat "$TMP/out")"
fi
"$SIM" gen --shape nope -o "$TMP/refused.ndjson" >/dev/null 2>&1
[[ ! -e "$TMP/refused.ndjson" ]] && ok "a refused gen -o leaves no file" || bad "refused gen -o left a file"
"$SIM" gen --tasks 600000 -o "$TMP/long.ndjson"
for sig in INT TERM; do
  rm -rf "$TMP/cut"
  "$SIM" run "$TMP/long.ndjson" -q -o "$TMP/cut" >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  sleep 2
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  if [[ $rc -eq 130 && ! -e "$TMP/cut" && $(wc -l <"$TMP/err") -eq 1 ]] &&
     grep -qE "^pypto-sim: interrupted while (loading|simulating|writing).*; nothing written$" "$TMP/err"; then
    ok "SIG$sig: one line, exit 130, nothing left ($(cut -c 11-60 "$TMP/err"))"
  elif [[ $rc -eq 0 ]]; then
    ok "SIG$sig: the run ended before the signal (nothing to check)"
  else
    bad "SIG$sig: exit $rc, $(ls -A "$TMP/cut" 2>&1), stderr: $(cat "$TMP/err")"
  fi
done

# --- topo.json, written while the model runs (from 16k tasks): the bytes of the one written
# after a run (compare writes its reports after each run), and a failed run leaves nothing --
"$SIM" gen --tasks 20000 -o "$TMP/ahead.ndjson"
"$SIM" run "$TMP/ahead.ndjson" -q -o "$TMP/ahead_run" >/dev/null 2>&1
"$SIM" compare "$TMP/ahead.ndjson" --policies fifo -o "$TMP/ahead_cmp" >/dev/null 2>&1
if [[ -s "$TMP/ahead_run/topo.json" ]] && cmp -s "$TMP/ahead_run/topo.json" "$TMP/ahead_cmp/fifo/topo.json" &&
   [[ $(ls -A "$TMP/ahead_run" | tr '\n' ' ') == "aicpu.data stats.json swim.json topo.json trace.json " ]]; then
  ok "topo.json written during the run: the same bytes as after one, no temporary left"
else
  bad "topo.json written during the run differs or left files: $(ls -A "$TMP/ahead_run" | tr '\n' ' ')"
fi
# --- every recording the repository holds, replayed with default flags --------------------
if /usr/bin/python3 "$SRC/tools/replay_fidelity.py" --sim "$SIM" -o "$TMP/rf" >"$TMP/rf.md" 2>"$TMP/rf.err"; then
  ok "tools/replay_fidelity.py replays every recording"
else
  bad "tools/replay_fidelity.py: $(cat "$TMP/rf.err")"
fi
/usr/bin/python3 - "$TMP/rf.md" <<'PY' && ok "replay_fidelity: a row per recording, the board facts within 3 %" || bad "replay_fidelity table: $(cat "$TMP/rf.md")"
import sys
rows = [l.split("|")[1:-1] for l in open(sys.argv[1]) if l.startswith("| ") and "---" not in l][1:]
assert len(rows) == 7, rows
for r in rows:
    assert r[2].strip() in ("fifo (inferred)", "l2_affinity (inferred)"), r  # the mode column
    if r[0].strip().startswith("board fact"):
        err = float(r[3].split("%")[0])
        assert abs(err) < 3.0, r
        assert float(r[4].split("/")[0]) < 1.0, r  # median start error, us
PY
# A swimlane placeholder naming a compiled leaf and its operands is a task without a record.
/usr/bin/python3 - "$TMP/leafph.json" <<'PY'
import json, sys
lane = lambda tid, name: {"args": {"name": name}, "cat": "__metadata", "name": "thread_name",
                          "ph": "M", "pid": 1, "tid": tid}
def task(tid, ts, dur, task_id, name, hint):
    return {"args": dict(hint, taskId=task_id, seqNo=0), "cat": "event", "name": name, "ph": "X",
            "pid": 1, "tid": tid, "ts": ts, "dur": dur}
leaf = {"event-hint": "Task:[0-1-2], leafHash:77, TaskId:65538", "ioperand-hint": "[{1: {}}]",
        "ooperand-hint": "[{2: {}}]"}
hub = {"event-hint": "Task:[0-1-1], leafHash:0, TaskId:65537", "ioperand-hint": "",
       "ooperand-hint": ""}
rec = {"event-hint": "Task:[0-1-0], leafHash:5, TaskId:65536"}
ev = [lane(1000, "Fake Core_0"), lane(1002, "AIC_1"),
      task(1002, 0.0, 2.0, 65536, "0-1-0-82-0()", rec), task(1000, 2.5, 1.0, 65537, "0-1-1(fake)", hub),
      task(1000, 4.0, 1.0, 65538, "0-1-2(fake)", leaf), task(1002, 6.0, 2.0, 65539, "0-1-3-82-0()", rec)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
if "$SIM" run "$TMP/leafph.json" -q --no-trace -o "$TMP/leafph" 2>"$TMP/leafph.err" &&
   grep -q "2 placeholder tasks" "$TMP/leafph.err" &&
   grep -q "1 of them name a compiled leaf" "$TMP/leafph.err"; then
  ok "swimlane: the warning counts placeholders that name a compiled leaf"
else
  bad "swimlane leaf placeholders: $(cat "$TMP/leafph.err")"
fi
NO_LEFTOVER="$TMP/ahead_fail" expect_error "a run that fails after topo.json was started leaves no folder" \
  "has no AIV cores" -- "$SIM" run "$TMP/ahead.ndjson" --set cores.aiv_per_aic=0 -o "$TMP/ahead_fail/deep"

finish
