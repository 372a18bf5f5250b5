#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole benchmark suite: sets up and builds (tools/setup.sh, Release; PGO=1 for the
# profile-guided build, which bench.json then records), then runs
# `pypto-sim bench` — the full model against the bare SystemC ceiling and a C++ heap
# event loop side by side, scaling from 10k to 10M tasks (wall time, tasks/s, peak RSS per
# task, each size in its own process), the four policies, and the Python frontend — prints
# the table and writes bench.json. Synthetic traces are kept in output/bench_traces and
# reused by later runs (10M tasks is about 1.9 GB).
# Usage: tools/bench.sh [--quick] [-o DIR] [--sizes 10k,100k,1M,10M] [--rounds N] ...
# (all flags go to `pypto-sim bench`; see `.venv/bin/pypto-sim bench --help`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
tools/setup.sh
# Our defaults for what the caller did not set: a timestamped output folder, and a trace
# folder shared between runs.
OUT="output/bench_$(date +%Y%m%d_%H%M%S)"
has_out=0; has_trace_dir=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -o|--out) has_out=1; OUT="${args[i + 1]:-}" ;;
    -o?*) has_out=1; OUT="${args[i]#-o}" ;;
    --out=*) has_out=1; OUT="${args[i]#--out=}" ;;
    --trace-dir|--trace-dir=*) has_trace_dir=1 ;;
  esac
done
extra=()
((has_out)) || extra+=(-o "$OUT")
((has_trace_dir)) || extra+=(--trace-dir output/bench_traces)
echo
.venv/bin/pypto-sim bench "${extra[@]}" "$@"
[[ "$OUT" == /* ]] || OUT="$ROOT/$OUT"
echo "bench.json: $OUT/bench.json"
