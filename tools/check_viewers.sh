#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real viewers read our trace.json offline: Chrome DevTools' trace engine and speedscope in
# headless Chromium (tools/viewers/check_trace.mjs says what each checks). Installs what it
# needs on first use: Debian's chromium, node and npm, and the pinned npm packages of
# tools/viewers/package-lock.json (into tools/viewers/node_modules).
#   tools/check_viewers.sh                 runs pypto-sim on a synthetic mix and on the sample
#                                          board recording, then checks both trace.json files
#   tools/check_viewers.sh TRACE.json...   checks the given files
#   tools/check_viewers.sh --install       installs what it needs, checks nothing
#                                          (SETUP_TESTS=1 tools/setup.sh runs it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
V="$ROOT/tools/viewers"

# Debian's chromium; node and npm from whichever package provides them (Debian's nodejs and
# npm, or a nodejs that bundles npm).
missing=()
dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed" || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "check_viewers: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [[ ! -d "$V/node_modules/@paulirish/trace_engine" || ! -d "$V/node_modules/speedscope" ||
      ! -d "$V/node_modules/puppeteer-core" ]]; then
  echo "check_viewers: npm ci (tools/viewers)"
  (cd "$V" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

[[ "${1:-}" == --install ]] && exit 0
files=("$@")
if ((${#files[@]} == 0)); then
  SIM="$ROOT/build/tools/pypto-sim"
  [[ -x "$SIM" ]] || { echo "check_viewers: $SIM not built (run tools/setup.sh)" >&2; exit 2; }
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
  "$SIM" gen --tasks 3000 --seed 3 -o "$OUT/mix.ndjson" >/dev/null
  "$SIM" run "$OUT/mix.ndjson" -o "$OUT/mix" >/dev/null
  "$SIM" run "$ROOT/traces/samples/dyn_topo.txt" --prof "$ROOT/traces/samples/tilefwk_L1_prof_data.json" \
    -o "$OUT/board" >/dev/null
  files=("$OUT/mix/trace.json" "$OUT/board/trace.json")
fi
rc=0
for f in "${files[@]}"; do
  node "$V/check_trace.mjs" "$f" || rc=$?
done
exit "$rc"
