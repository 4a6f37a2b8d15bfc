#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing SleepTap needs on Debian, when it is missing or out of date:
# libzmq3-dev and pkg-config (the ZeroMQ C library), tzdata at the newest version the package
# registry serves (the zone rules SleepTap reads, docs/architecture.md "Zone rules"), and
# python3 + python3-zmq (the interop client) and GNU parallel (a fleet test) for the tests.
# Needs root (or sudo) only when something must be installed. The Swift toolchain itself must
# already be on PATH (https://www.swift.org/install/linux/).
set -euo pipefail

missing=()
pkg-config --exists libzmq 2>/dev/null || missing+=(libzmq3-dev pkg-config)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if [ "${SLEEPTAP_WITH_PYTHON:-0}" = 1 ]; then
  /usr/bin/python3 -c 'import zmq' >/dev/null 2>&1 || missing+=(python3 python3-zmq)
  # GNU parallel: the test that runs fleet shards the way a team spreads them over hosts.
  [ -x /usr/bin/parallel ] || missing+=(parallel)
fi

if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
export DEBIAN_FRONTEND=noninteractive
updated=0

# tzdata: installed, and at the candidate version after a fresh package list (a machine set up
# from an old image keeps the rules of its image until tzdata is upgraded).
if command -v apt-get >/dev/null 2>&1 && [ "$sudo" != none ]; then
  if $sudo apt-get update -qq >/dev/null 2>&1; then
    updated=1
    installed=$(dpkg-query -W -f='${Version}' tzdata 2>/dev/null || true)
    candidate=$(apt-cache policy tzdata 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && [ "$installed" != "$candidate" ]; then
      echo "ensure-deps: tzdata ${installed:-not installed} -> $candidate" >&2
      $sudo apt-get install -y -qq --no-install-recommends tzdata >/dev/null
    fi
  else
    echo "ensure-deps: apt-get update failed; tzdata left at ${installed:-what is installed}" >&2
  fi
fi
[ -d "${TZDIR:-/usr/share/zoneinfo}" ] || missing+=(tzdata)

if [ "${#missing[@]}" -gt 0 ]; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  if [ "$sudo" = none ]; then
    echo "ensure-deps: need root or sudo to apt-get install ${missing[*]}" >&2; exit 1
  fi
  [ "$updated" = 1 ] || $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "ensure-deps: no 'swift' on PATH; install the Swift 6 toolchain first" >&2
  exit 1
fi
