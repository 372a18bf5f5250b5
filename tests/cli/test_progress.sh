#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The progress line: on a terminal (a pty from script(1)) every phase of `run` and `compare`
# shows itself (reading with MB/s, simulating with % and tasks/s, writing with the file);
# with -q, or when stderr is no terminal, none of it appears. The summary's wall line names
# the phases. PYPTO_SIM_PROGRESS_DELAY_MS=0 shows the line from the start of a short run.
# Usage: test_progress.sh PYPTO_SIM
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
has() { if grep -qE -- "$2" "$3"; then ok "$1"; else bad "$1: no /$2/ in $(head -c 600 "$3" | cat -v)"; fi; }
lacks() { if grep -qE -- "$2" "$3"; then bad "$1: /$2/ in $(head -c 600 "$3" | cat -v)"; else ok "$1"; fi; }

if ! command -v script >/dev/null; then echo "skip: no script(1)"; exit 0; fi
"$SIM" gen --tasks 20000 -o "$TMP/t.ndjson" || { echo "FAIL gen"; exit 1; }
export PYPTO_SIM_PROGRESS_DELAY_MS=0 SC_COPYRIGHT_MESSAGE=DISABLE
# script -e returns the command's status; its output (stdout and stderr both on the pty)
# goes to the capture file, with carriage returns as the terminal got them.
on_tty() { script -qec "$1" "$2" >/dev/null; }

on_tty "'$SIM' run '$TMP/t.ndjson' -o '$TMP/r'" "$TMP/tty" || bad "run on a terminal failed"
tr '\r' '\n' <"$TMP/tty" >"$TMP/tty.lines"
has "tty: reading with MB/s" "reading .*t\.ndjson: [0-9.]+ / [0-9.]+ MB, [0-9.]+ MB/s" "$TMP/tty.lines"
has "tty: simulating phase" "simulating \(policy fifo\)" "$TMP/tty.lines"
has "tty: writing names the file" "writing .*/r/(trace|swim|stats)\.json" "$TMP/tty.lines"
has "tty: wall by phase" "wall +[0-9.]+ s \(read [0-9.]+ s, simulate [0-9.]+ s at [0-9]+ tasks/s, write [0-9.]+ s\)" "$TMP/tty.lines"
# The line is erased before the summary: the summary's first line starts clean.
has "tty: line erased before the summary" $'\033\\[Kchip a2, policy fifo' "$TMP/tty"

on_tty "'$SIM' compare '$TMP/t.ndjson' --policies fifo,fair --no-trace -o '$TMP/c'" "$TMP/ctty" \
  || bad "compare on a terminal failed"
tr '\r' '\n' <"$TMP/ctty" >"$TMP/ctty.lines"
has "compare tty: each policy simulated" "simulating \(policy fair\)" "$TMP/ctty.lines"
has "compare tty: writing" "writing .*/c/fair/stats\.json" "$TMP/ctty.lines"

on_tty "'$SIM' run '$TMP/t.ndjson' -q -o '$TMP/q'" "$TMP/qtty" || bad "run -q on a terminal failed"
lacks "tty -q: no progress" "reading|simulating|writing|"$'\033' "$TMP/qtty"

# No terminal: stderr is exactly what it was (empty for this run), stdout the summary only.
"$SIM" run "$TMP/t.ndjson" --no-trace -o "$TMP/n" >"$TMP/out" 2>"$TMP/err" || bad "run without a terminal failed"
if [[ -s "$TMP/err" ]]; then bad "no tty: stderr not empty: $(cat -v "$TMP/err")"; else ok "no tty: stderr empty"; fi
lacks "no tty: no progress on stdout" "reading|simulating|writing|"$'\033|\r' "$TMP/out"
has "no tty: wall by phase" "wall +[0-9.]+ s \(read " "$TMP/out"

finish
