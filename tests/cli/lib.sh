# SPDX-License-Identifier: Apache-2.0
# What every tests/cli/test_*.sh starts with, sourced with the script's own arguments still
# in $1..: strict pipes, the binary under test ($SIM, the first argument), a temporary folder
# ($TMP, removed on exit), the ok/bad counters, expect_error and finish.
set -uo pipefail
SIM="$1"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
pass=0; fail=0

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# expect_error NAME PATTERN -- CMD...: exit status 2 and one stderr line matching PATTERN.
# With NO_LEFTOVER=PATH set, PATH is removed first and must not exist afterwards (a failed
# command leaves nothing behind).
expect_error() {
  local name="$1" pattern="$2"; shift 3
  [[ -n "${NO_LEFTOVER:-}" ]] && rm -rf "$NO_LEFTOVER"
  "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
  if [[ $rc -ne 2 ]]; then bad "$name: exit $rc, want 2 ($(head -c 300 "$TMP/err"))"; return; fi
  if ! grep -qE -- "$pattern" "$TMP/err"; then bad "$name: stderr '$(cat "$TMP/err")' lacks /$pattern/"; return; fi
  if [[ $(grep -c . "$TMP/err") -ne 1 ]]; then bad "$name: want one line, got: $(cat "$TMP/err")"; return; fi
  if [[ -n "${NO_LEFTOVER:-}" && -e "$NO_LEFTOVER" ]]; then bad "$name: left $NO_LEFTOVER behind"; return; fi
  ok "$name"
}

# The summary line; as a script's last command, its exit status (0 when nothing failed).
finish() {
  echo "$pass passed, $fail failed"
  [[ $fail -eq 0 ]]
}
