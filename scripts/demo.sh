#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds SleepTap and runs the main job: phone and watch as two processes over an ipc socket,
# in accelerated virtual time (see README). Extra arguments go to sleeptap-demo (--help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
swift build --product phone 2>&1 | tail -n 1
swift build --product watch 2>&1 | tail -n 1
swift build --product sleeptap-demo 2>&1 | tail -n 1
exec .build/debug/sleeptap-demo "$@"
