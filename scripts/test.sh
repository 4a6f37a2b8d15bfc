#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds SleepTap, lints it and runs the whole test suite (Swift Testing).
set -euo pipefail
cd "$(dirname "$0")/.."
SLEEPTAP_WITH_PYTHON=1 bash scripts/ensure-deps.sh
echo "== lint (swift format, .swift-format)"
swift format lint --strict --recursive Package.swift Sources Tests
echo "== lint (SPDX-License-Identifier lines, scripts/check-spdx.sh)"
bash scripts/check-spdx.sh
echo "== build"
swift build --build-tests
echo "== package checks (scripts/install.sh in a temp prefix; the Examples/zeromq-roundtrip and Examples/twin-month packages)"
bash scripts/check-install.sh
bash scripts/check-example.sh
echo "== API documentation (scripts/docs.sh: doc comments, article code, docc, headless Chromium)"
bash scripts/docs.sh
echo "== test"
swift test --skip-build
