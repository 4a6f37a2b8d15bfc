#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the whole test suite with code coverage (swift test --enable-code-coverage, in a build
# directory of its own, .build/coverage, so the normal build is not rebuilt) and prints an
# llvm-cov report per module: each file's regions, functions and lines covered, then a summary
# of the line coverage of every module. Lines of the executables' processes that the
# integration tests start are not counted (phone and watch end with _exit, which writes no
# profile): the figures are what the test process itself ran.
# usage: scripts/coverage.sh [--summary]   (--summary prints only the summary table)
# Takes a full build with coverage the first time (several minutes on 2 cores), then the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
summary_only=0
for argument in "$@"; do
  case "$argument" in
    --summary) summary_only=1 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "coverage.sh: unknown argument $argument (usage: scripts/coverage.sh [--summary])" >&2; exit 64 ;;
  esac
done
SLEEPTAP_WITH_PYTHON=1 bash scripts/ensure-deps.sh

scratch=.build/coverage
echo "== swift test --enable-code-coverage (build directory $scratch)" >&2
swift test --enable-code-coverage --scratch-path "$scratch" >"$scratch.log" 2>&1 || {
  tail -40 "$scratch.log" >&2
  echo "coverage.sh: the suite failed under coverage (full log: $scratch.log)" >&2
  exit 1
}
bin="$(swift build --scratch-path "$scratch" --show-bin-path)"
profdata="$bin/codecov/default.profdata"
[ -f "$profdata" ] || { echo "coverage.sh: no $profdata after the run" >&2; exit 1; }
tests="$(find "$bin" -maxdepth 1 -name '*PackageTests.xctest' | head -1)"
[ -n "$tests" ] || { echo "coverage.sh: no test binary in $bin" >&2; exit 1; }
# The toolchain's llvm-cov: it reads the profile format of the toolchain's compiler (a
# distribution's older llvm-cov earlier on PATH does not).
llvm_cov="$(dirname "$(readlink -f "$(command -v swift)")")/llvm-cov"
[ -x "$llvm_cov" ] || llvm_cov="$(command -v llvm-cov || true)"
[ -n "$llvm_cov" ] || { echo "coverage.sh: no llvm-cov next to swift or on PATH" >&2; exit 69; }

modules=(ZeroMQ SleepTapOS SleepTapCore SleepTapEmbedded SleepTapRuntime SleepTapCommandLine SleepTapProcess SleepTapScenario)
rows=()
for module in "${modules[@]}"; do
  report="$("$llvm_cov" report "$tests" -instr-profile "$profdata" "$PWD/Sources/$module")"
  if [ "$summary_only" = 0 ]; then
    echo "== $module"
    sed "s|$PWD/||" <<<"$report"
    echo
  fi
  # TOTAL regions missed cover% functions missed executed% lines missed cover% [branches...]
  rows+=("$(awk -v m="$module" '$1 == "TOTAL" { printf "%-20s %8s %8s %8s\n", m, $8, $9, $10 }' <<<"$report")")
done
echo "== line coverage per module (what the test process ran; profile ${profdata#"$PWD/"})"
printf "%-20s %8s %8s %8s\n" module lines missed cover
printf "%s\n" "${rows[@]}"
