#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/fuzz.sh TARGET|all SECONDS — coverage-guided fuzzing of the input readers
# (tests/fuzz/README.md). Builds the libFuzzer targets if needed (clang++-14, ASan + UBSan,
# build folder build-fuzz), runs TARGET (or every target, one after another) for SECONDS each,
# and prints per target: executions, executions per second, coverage (cov: edges, ft:
# features), corpus size and findings. Exits 1 when anything was found; the inputs are kept in
# build-fuzz/findings/TARGET/ (copy one to tests/fuzz/regressions/TARGET/ to make it a test).
#
# The run corpus grows in build-fuzz/corpus/TARGET/ (kept between runs, starting from the seeds
# of tests/fuzz/corpus/TARGET/, which are never written). Environment: FUZZ_RSS_MB (2048),
# FUZZ_TIMEOUT_S (10: an input running longer is a finding), FUZZ_NICE (10),
# PYPTO_FUZZ_STRICT=1 (do not skip the known open findings of tests/fuzz/README.md), FUZZ_ARGS (more
# libFuzzer flags).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TARGETS=(native_trace dyn_topo topo_json prof_json fixed_latency swimlane config ir)
usage() {
  echo "usage: tools/fuzz.sh TARGET|all SECONDS   (targets: ${TARGETS[*]})" >&2
  exit 2
}
[[ $# -eq 2 ]] || usage
WHAT="$1"
SECONDS_EACH="$2"
[[ "$SECONDS_EACH" =~ ^[0-9]+$ && "$SECONDS_EACH" -gt 0 ]] || usage
if [[ "$WHAT" == all ]]; then
  RUN=("${TARGETS[@]}")
else
  [[ " ${TARGETS[*]} " == *" $WHAT "* ]] || usage
  RUN=("$WHAT")
fi

BUILD=build-fuzz
CXX_FUZZ="${CXX_FUZZ:-clang++-14}"
if ! command -v "$CXX_FUZZ" >/dev/null || [[ ! -e /usr/lib/llvm-14/lib/clang ]] ||
   ! compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz: installing clang-14 and libclang-rt-14-dev"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
fi
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
        -DPYPTO_FUZZ=ON >/dev/null
fi
echo "== fuzz: build ($BUILD) =="
nice -n "${FUZZ_NICE:-10}" cmake --build "$BUILD" --target fuzz_targets -j "$(nproc)" | tail -1

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
# Known open findings (tests/fuzz/README.md) are suppressed unless PYPTO_FUZZ_STRICT=1.
[[ "${PYPTO_FUZZ_STRICT:-0}" == 1 ]] || UBSAN="$UBSAN:suppressions=$ROOT/tests/fuzz/ubsan.supp"
export UBSAN_OPTIONS="$UBSAN"

status=0
summary=()
for t in "${RUN[@]}"; do
  corpus="$BUILD/corpus/$t"
  findings="$BUILD/findings/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  before=$(find "$findings" -type f | wc -l)
  echo "== fuzz: $t for ${SECONDS_EACH} s =="
  dict=()
  [[ -f "tests/fuzz/dict/$t.dict" ]] && dict=(-dict="tests/fuzz/dict/$t.dict")
  rc=0
  # shellcheck disable=SC2086
  nice -n "${FUZZ_NICE:-10}" "$BUILD/tests/fuzz/fuzz_$t" "$corpus" "tests/fuzz/corpus/$t" \
      -max_total_time="$SECONDS_EACH" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
      -timeout="${FUZZ_TIMEOUT_S:-10}" -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$findings/" "${dict[@]}" ${FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
  after=$(find "$findings" -type f | wc -l)
  # The last status line: "#N ... cov: C ft: F corp: K/S ... exec/s: E ...".
  line=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(grep -oE 'stat::number_of_executed_units:[[:space:]]*[0-9]+' "$log" | awk '{print $2}' || true)
  eps=$(grep -oE 'stat::average_exec_per_sec:[[:space:]]*[0-9]+' "$log" | awk '{print $2}' || true)
  rss=$(grep -oE 'stat::peak_rss_mb:[[:space:]]*[0-9]+' "$log" | awk '{print $2}' || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$line")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$line")
  corp=$(sed -nE 's/.* corp: ([0-9]+)\/([0-9a-zA-Z]+).*/\1 (\2)/p' <<<"$line")
  new=$((after - before))
  if ((rc != 0 || new > 0)); then
    status=1
    verdict="FINDING (exit $rc, $new new input(s) in $findings/; log $log)"
    grep -m1 -E 'FINDING:|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:' "$log" || true
  else
    verdict="none"
  fi
  s="$t: ${SECONDS_EACH} s, ${execs:-?} executions (${eps:-?}/s), cov ${cov:-?}, ft ${ft:-?},"
  s="$s corpus ${corp:-?}, peak rss ${rss:-?} MB, findings: $verdict"
  echo "$s"
  summary+=("$s")
done

echo "== fuzz: summary =="
printf '%s\n' "${summary[@]}"
exit "$status"
