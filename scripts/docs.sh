#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the API documentation of the ZeroMQ, SleepTapOS, SleepTapCore and SleepTapEmbedded modules as a static site, with
# the toolchain's own tools only (no plugin package):
#   1. swift build of the modules, then swift-symbolgraph-extract (public symbols);
#   2. every public symbol must have a doc comment (scripts/check-doc-comments.py), and the
#      Topics of each module's catalog must name exactly its public top-level symbols
#      (scripts/check-catalog-topics.py);
#   3. every Swift block of the getting-started articles must be in the code that runs
#      (scripts/check-doc-snippets.py: the Examples packages, and the GettingStartedTests);
#   4. docc convert of Sources/<Module>/<Module>.docc with --warnings-as-errors (a broken symbol
#      link fails the build) and --transform-for-static-hosting;
#   5. scripts/check-docs-site.sh opens the site in headless Chromium and takes screenshots.
# The site is .build/docs/site (index.html links every module); serve that directory over HTTP
# (DocC's pages load their content with JavaScript), e.g.
#   python3 -m http.server --directory .build/docs/site 8000
# usage: scripts/docs.sh [--no-browser]   (--no-browser skips step 5)
set -euo pipefail
cd "$(dirname "$0")/.."
browser=1
for argument in "$@"; do
  case "$argument" in
    --no-browser) browser=0 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs.sh: unknown argument $argument (usage: scripts/docs.sh [--no-browser])" >&2; exit 64 ;;
  esac
done
bash scripts/ensure-deps.sh
command -v docc >/dev/null || { echo "docs.sh: no docc on PATH (it ships with the Swift toolchain)" >&2; exit 69; }

modules=(ZeroMQ SleepTapOS SleepTapCore SleepTapEmbedded)
out=.build/docs
rm -rf "$out/symbol-graphs" "$out/site" "$out/archives"
mkdir -p "$out/symbol-graphs" "$out/site" "$out/archives"

echo "== build the modules"
for module in "${modules[@]}"; do swift build --target "$module"; done
bin="$(swift build --show-bin-path)"
triple="$(swiftc -print-target-info | python3 -c 'import json,sys; print(json.load(sys.stdin)["target"]["triple"])')"

echo "== symbol graphs (public symbols)"
for module in "${modules[@]}"; do
  mkdir -p "$out/symbol-graphs/$module"
  swift-symbolgraph-extract -module-name "$module" -target "$triple" \
    -I "$bin/Modules" -I "$bin" -I Sources/CZeroMQ \
    -minimum-access-level public -output-dir "$out/symbol-graphs/$module"
  python3 scripts/check-doc-comments.py "$module" "$out/symbol-graphs/$module"
  python3 scripts/check-catalog-topics.py "$module" "$out/symbol-graphs/$module" "Sources/$module/$module.docc/$module.md"
done

echo "== article code"
python3 scripts/check-doc-snippets.py Sources/ZeroMQ/ZeroMQ.docc/GettingStarted.md \
  Examples/zeromq-roundtrip/Package.swift Examples/zeromq-roundtrip/Sources/zeromq-roundtrip/main.swift
python3 scripts/check-doc-snippets.py Sources/SleepTapOS/SleepTapOS.docc/GettingStarted.md \
  Tests/SleepTapOSTests/GettingStartedTests.swift
python3 scripts/check-doc-snippets.py Sources/SleepTapCore/SleepTapCore.docc/GettingStarted.md \
  Tests/SleepTapEmbeddedTests/GettingStartedTests.swift
python3 scripts/check-doc-snippets.py Sources/SleepTapEmbedded/SleepTapEmbedded.docc/MonthInTheTwin.md \
  Examples/twin-month/Package.swift Examples/twin-month/Sources/twin-month/main.swift

echo "== docc convert"
for module in "${modules[@]}"; do
  docc convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$out/symbol-graphs/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.sleeptap.$module" \
    --output-path "$out/archives/$module.doccarchive" \
    --transform-for-static-hosting --hosting-base-path "$module" \
    --warnings-as-errors --diagnostics-file "$out/archives/$module-diagnostics.json"
  cp -R "$out/archives/$module.doccarchive" "$out/site/$module"
done
lower() { tr '[:upper:]' '[:lower:]' <<<"$1"; }
cat >"$out/site/index.html" <<HTML
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SleepTap API documentation</title></head>
<body><h1>SleepTap API documentation</h1><ul>
<li><a href="ZeroMQ/documentation/$(lower ZeroMQ)/">ZeroMQ</a>: the libzmq wrapper</li>
<li><a href="SleepTapOS/documentation/$(lower SleepTapOS)/">SleepTapOS</a>: the simulated phone OS</li>
<li><a href="SleepTapCore/documentation/$(lower SleepTapCore)/">SleepTapCore</a>: the sans-I/O core</li>
<li><a href="SleepTapEmbedded/documentation/$(lower SleepTapEmbedded)/">SleepTapEmbedded</a>: the embedded twin</li>
</ul></body></html>
HTML
echo "docs.sh: site in $out/site"

if [ "$browser" = 1 ]; then
  bash scripts/check-docs-site.sh "$out/site"
fi
