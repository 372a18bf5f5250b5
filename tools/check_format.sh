#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails (exit 1) when a tracked C++ file differs from what clang-format makes of it under the
# project's .clang-format, and names every such file. FIX=1 formats them in place instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.hpp' '*.cc')
if [[ "${FIX:-0}" == 1 ]]; then
  clang-format -i "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
# Batches of files, one clang-format per core; a file it would change is named in its
# "FILE:LINE:COL: error: code should be clang-formatted" lines. Any other failure (no
# clang-format, a bad .clang-format) fails with clang-format's own output.
rc=0
out="$(for f in "${files[@]}"; do [[ -e "$f" ]] && printf '%s\0' "$f"; done |
       xargs -0 -r -n 16 -P "$(nproc)" clang-format --dry-run -Werror 2>&1)" || rc=$?
mapfile -t bad < <(sed -nE 's/^(.+):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p' \
                     <<<"$out" | sort -u)
if ((rc != 0 && ${#bad[@]} == 0)); then
  echo "check_format: clang-format failed (exit $rc):" >&2
  head -20 <<<"$out" >&2
  exit 1
fi
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} file(s) not formatted as .clang-format asks (fix: FIX=1 tools/check_format.sh):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} C++ files formatted"
