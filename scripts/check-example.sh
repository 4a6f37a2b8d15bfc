#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves the ZeroMQ library product usable from outside: builds Examples/zeromq-roundtrip, a
# package of its own that depends on this one by path, and runs its ROUTER/DEALER round trip.
# Its build goes under .build/examples, new each time (about 5 s): SwiftPM does not plan a
# path dependency again when only its files changed, so a kept build can miss a new source file.
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
