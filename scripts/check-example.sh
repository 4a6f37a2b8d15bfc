#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves the library products usable from outside: builds two packages of their own that depend
# on this one by path, as the README shows, and runs them: Examples/zeromq-roundtrip (the ZeroMQ
# product, a ROUTER/DEALER round trip) and Examples/twin-month (the SleepTapEmbedded, SleepTapOS and
# SleepTapCore products, a month of nights in the twin). Their builds go under .build/examples,
# new each time: SwiftPM does not plan a path dependency again when only its files changed, so a
# kept build can miss a new source file.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build/examples/zeromq-roundtrip
rm -rf "$scratch"
swift build --package-path Examples/zeromq-roundtrip --scratch-path "$scratch"
output="$("$scratch/debug/zeromq-roundtrip")"
echo "$output"
if ! grep -qx "ROUTER received ping from watch-1; DEALER received pong" <<<"$output"; then
  echo "check-example: Examples/zeromq-roundtrip did not complete its round trip" >&2
  exit 1
fi

scratch=.build/examples/twin-month
rm -rf "$scratch"
swift build --package-path Examples/twin-month --scratch-path "$scratch"
output="$("$scratch/debug/twin-month")"
echo "$output"
expected="late-silent: 7 nights cached, 23 asked by hand, 0 background runs
early: 30 nights cached, 0 asked by hand, 30 background runs"
if [ "$output" != "$expected" ]; then
  echo "check-example: Examples/twin-month did not print the month its README gives" >&2
  exit 1
fi
