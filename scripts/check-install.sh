#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests scripts/install.sh in a temporary prefix with the debug build: every executable is
# installed under its prefixed name, none as plain `watch` or `phone`, each prints the package's
# one version, and an installed sleeptap-soak started through PATH, from a directory without a
# .build, finds the phone and watch installed next to it and runs two steps.
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/SleepTapCore/Support/Version.swift)"
[ -n "$version" ] || { echo "check-install: no version string in Sources/SleepTapCore/Support/Version.swift" >&2; exit 1; }
prefix="$(mktemp -d "${TMPDIR:-/tmp}/sleeptap-install.XXXXXX")"
trap 'rm -rf "$prefix"' EXIT

fail() { echo "check-install: $*" >&2; exit 1; }
bash scripts/install.sh --debug "$prefix/usr" >"$prefix/install.log" 2>&1 ||
  fail "scripts/install.sh --debug failed: $(cat "$prefix/install.log")"
for pair in phone:sleeptap-phone watch:sleeptap-watch sleeptap-demo:sleeptap-demo \
  sleeptap-soak:sleeptap-soak sleeptap-scenario:sleeptap-scenario sleeptap-report:sleeptap-report sleeptap-fleet:sleeptap-fleet sleeptap-calibrate:sleeptap-calibrate \
  sleeptap-compare:sleeptap-compare; do
  program="${pair%%:*}" name="${pair##*:}"
  [ -x "$prefix/usr/bin/$name" ] || fail "$prefix/usr/bin/$name is missing"
  got="$("$prefix/usr/bin/$name" --version)"
  # "NAME VERSION", and for the tools that read zone rules " (tz database V at DIR)" after it.
  case "$got" in
    "$program $version" | "$program $version (tz database "*")") ;;
    *) fail "$name --version printed \"$got\", expected \"$program $version\" (and the tz database)" ;;
  esac
done
for plain in phone watch; do
  [ ! -e "$prefix/usr/bin/$plain" ] || fail "$prefix/usr/bin/$plain would shadow a system command"
done
# Bad input: no PREFIX is a usage error (64); a PREFIX that cannot be created is 73.
set +e
bash scripts/install.sh >/dev/null 2>&1; [ $? -eq 64 ] || fail "no PREFIX: expected exit 64"
touch "$prefix/file"
bash scripts/install.sh --debug "$prefix/file/sub" >/dev/null 2>&1; [ $? -eq 73 ] || fail "PREFIX under a file: expected exit 73"
set -e
mkdir "$prefix/elsewhere"
(cd "$prefix/elsewhere" && PATH="$prefix/usr/bin:$PATH" sleeptap-soak --steps 2 --json >"$prefix/soak.json") ||
  fail "the installed sleeptap-soak failed: $(cat "$prefix/soak.json")"
echo "check-install: $(ls "$prefix/usr/bin" | tr '\n' ' ')installed in a temp prefix and run"
