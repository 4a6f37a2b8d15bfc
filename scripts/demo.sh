#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds SleepTap and runs the main job: phone and watch as two processes over an ipc socket,
# in accelerated virtual time (see README). Extra arguments go to sleeptap-demo (--help).
# The build's progress goes to stderr (stdout is the demo's own, --raw JSON included); a failed
# build shows the whole compiler output. SIGINT, SIGTERM or SIGHUP during the build end it too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh >&2
log=$(mktemp)
pid=""
stop() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -f "$log"
  exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
trap 'stop 129' HUP
for product in phone watch sleeptap-demo; do
  swift build --product "$product" >"$log" 2>&1 &
  pid=$!
  if ! wait "$pid"; then
    cat "$log" >&2
    echo "demo: the build of $product failed (above)" >&2
    stop 1
  fi
  pid=""
  tail -n 1 "$log" >&2
done
rm -f "$log"
trap - INT TERM HUP
exec .build/debug/sleeptap-demo "$@"
