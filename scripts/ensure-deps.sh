#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing SleepTap needs on Debian, when it is missing:
# libzmq3-dev and pkg-config (the ZeroMQ C library), python3 + python3-zmq (the interop client).
# Needs root (or sudo) only when something must be installed. The Swift toolchain itself must
# already be on PATH (https://www.swift.org/install/linux/).
set -euo pipefail

missing=()
pkg-config --exists libzmq 2>/dev/null || missing+=(libzmq3-dev pkg-config)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if [ "${SLEEPTAP_WITH_PYTHON:-0}" = 1 ]; then
  /usr/bin/python3 -c 'import zmq' >/dev/null 2>&1 || missing+=(python3 python3-zmq)
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "ensure-deps: need root or sudo to apt-get install ${missing[*]}" >&2; exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "ensure-deps: no 'swift' on PATH; install the Swift 6 toolchain first" >&2
  exit 1
fi
