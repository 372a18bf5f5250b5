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
bad=()
for f in "${files[@]}"; do
  [[ -e "$f" ]] || continue
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} file(s) not formatted as .clang-format asks (fix: FIX=1 tools/check_format.sh):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} C++ files formatted"
