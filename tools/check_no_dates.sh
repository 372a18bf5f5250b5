#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails (exit 1) when product code holds a calendar date, and names every such line as
# file:line. A comment gives the reason for the code in a line; dated measurements belong
# in docs/performance-log.md, and another project's dated history is phrased by its commit
# ("since PyPTO commit a05166a96"). Product code: C++, Python and shell sources and
# CMakeLists.txt under common/ sched/ model/ trace/ sim/ exec/ device/ frontend/ app/ tools/, the top
# CMakeLists.txt and configs/*.yaml (tracked files and new ones git does not ignore). Dates:
# an ISO year-month with or without its day, a month name with a day ("Dec 3", "December
# 3rd") and a day, month and year. SPDX lines are allowed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

mapfile -d '' -t files < <(
  git ls-files -z --cached --others --exclude-standard -- \
    'common/*' 'sched/*' 'model/*' 'trace/*' 'sim/*' 'exec/*' 'device/*' 'frontend/*' 'app/*' \
    'tools/*' \
    CMakeLists.txt 'configs/*.yaml' |
    grep -zE '(\.(cpp|cc|cxx|h|hpp|py|sh|cmake)|/CMakeLists\.txt|^CMakeLists\.txt|^configs/[^/]*\.yaml)$' |
    grep -zvx 'tools/check_no_dates.sh' || true)  # this file names the patterns it looks for

months='Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec'
months_long='January|February|March|April|June|July|August|September|October|November|December'
day='(0?[1-9]|[12][0-9]|3[01])(st|nd|rd|th)?'
iso='(^|[^0-9A-Za-z_])(19|20)[0-9]{2}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?($|[^0-9])'
month_day="(^|[^A-Za-z])(${months}|${months_long})\\.? ${day}($|[^0-9A-Za-z])"
day_month="(^|[^0-9])${day} (${months}|${months_long})\\.?,? (19|20)[0-9]{2}($|[^0-9])"

hits=()
if ((${#files[@]})); then
  while IFS= read -r line; do
    case "$line" in *SPDX-*) continue ;; esac
    hits+=("$line")
  done < <(grep -nHE "${iso}|${month_day}|${day_month}" -- "${files[@]}" 2>/dev/null || true)
fi

if ((${#hits[@]})); then
  echo "check_no_dates: ${#hits[@]} line(s) of product code hold a date (dated figures go to docs/performance-log.md; comments give the reason):"
  for h in "${hits[@]}"; do
    # file:line: text, the text cut to keep one line each
    printf '  %s\n' "${h:0:160}"
  done
  exit 1
fi
echo "check_no_dates: ${#files[@]} product files without a date"
