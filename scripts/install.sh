#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the SleepTap executables under PREFIX without shadowing the system's commands:
# procps has a watch(1), so the products are installed under prefixed names.
#
#   PREFIX/libexec/sleeptap/  phone, watch, sleeptap-demo, sleeptap-soak, sleeptap-scenario,
#                             sleeptap-report, sleeptap-fleet, sleeptap-calibrate, sleeptap-compare
#                             (the names SwiftPM builds; the demo and the soak find phone and
#                             watch next to themselves)
#   PREFIX/bin/               sleeptap-phone, sleeptap-watch, sleeptap-demo, sleeptap-soak,
#                             sleeptap-scenario, sleeptap-report, sleeptap-fleet, sleeptap-calibrate,
#                             sleeptap-compare:
#                             relative symbolic links into libexec/sleeptap
#
# usage: scripts/install.sh [--debug] PREFIX
#   --debug   install the debug build (default: swift build -c release)
# Exit: 0 installed, 64 usage, 73 PREFIX cannot be created or written, else swift build's status.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/install.sh [--debug] PREFIX" >&2; exit 64; }
configuration=release
prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) configuration=debug ;;
    -h|--help) echo "usage: scripts/install.sh [--debug] PREFIX  (installs PREFIX/bin/sleeptap-phone, sleeptap-watch, ...)"; exit 0 ;;
    -*) echo "install.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$prefix" ] || { echo "install.sh: PREFIX given twice ($prefix, $1)" >&2; usage; }; prefix="$1" ;;
  esac
  shift
done
[ -n "$prefix" ] || { echo "install.sh: PREFIX is required" >&2; usage; }

libexec="$prefix/libexec/sleeptap"
if ! mkdir -p "$prefix/bin" "$libexec" 2>/dev/null || [ ! -w "$prefix/bin" ] || [ ! -w "$libexec" ]; then
  echo "install.sh: cannot create or write $prefix/bin and $libexec" >&2
  exit 73
fi

products=(phone watch sleeptap-demo sleeptap-soak sleeptap-scenario sleeptap-report sleeptap-fleet sleeptap-calibrate sleeptap-compare)
# One swift build per product (SwiftPM takes one --product at a time); an up-to-date build is quick.
for product in "${products[@]}"; do swift build -c "$configuration" --product "$product"; done
bin_path="$(swift build -c "$configuration" --show-bin-path)"

for product in "${products[@]}"; do
  install -m 0755 "$bin_path/$product" "$libexec/$product"
  case "$product" in
    sleeptap-*) name="$product" ;;
    *) name="sleeptap-$product" ;;
  esac
  ln -sfn "../libexec/sleeptap/$product" "$prefix/bin/$name"
  echo "installed $prefix/bin/$name -> libexec/sleeptap/$product"
done
