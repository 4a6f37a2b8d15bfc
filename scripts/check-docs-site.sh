#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Opens the DocC site that scripts/docs.sh built in headless Chromium (Debian's `chromium`,
# installed with apt when missing) and checks that the pages render: DocC draws its pages with
# JavaScript, so the check reads the DOM after the scripts ran (--dump-dom) and looks for each
# module's title and its getting-started article, and takes a screenshot of each landing page
# (SITE/../screenshots/<Module>.png; a blank page is a small PNG, so its size is checked too).
# The site is served on 127.0.0.1 by python3's http.server, stopped by pid on every exit.
# usage: scripts/check-docs-site.sh [SITE]   (default .build/docs/site)
set -euo pipefail
cd "$(dirname "$0")/.."
site="${1:-.build/docs/site}"
[ -f "$site/index.html" ] || { echo "check-docs-site: no $site/index.html; run scripts/docs.sh first" >&2; exit 66; }

if ! command -v chromium >/dev/null 2>&1; then
  echo "check-docs-site: installing chromium (Debian package)" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "check-docs-site: need root or sudo to apt-get install chromium" >&2; exit 69
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

shots="$(dirname "$site")/screenshots"
mkdir -p "$shots"
work="$(mktemp -d "${TMPDIR:-/tmp}/sleeptap-docs.XXXXXX")"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Port 0: the kernel picks a free port; http.server prints it on its first line.
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$site" >"$work/server.log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 100); do
  port="$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$work/server.log" | head -1)"
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || { echo "check-docs-site: http.server ended: $(cat "$work/server.log")" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "check-docs-site: http.server did not say its port within 10 s" >&2; exit 1; }

browse() {  # browse OUTPUT_ARGUMENT URL: chromium headless, root-safe, bounded in time
  timeout 120 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --hide-scrollbars --window-size=1280,900 --virtual-time-budget=15000 \
    --user-data-dir="$work/profile" "$@" 2>>"$work/chromium.log"
}

status=0
# module:article path:article title
for entry in "ZeroMQ:gettingstarted:Getting Started" "SleepTapOS:gettingstarted:Getting Started" \
  "SleepTapCore:gettingstarted:Getting Started" \
  "SleepTapEmbedded:monthinthetwin:A Month of Nights"; do
  IFS=: read -r module page title <<<"$entry"
  lower="$(tr '[:upper:]' '[:lower:]' <<<"$module")"
  url="http://127.0.0.1:$port/$module/documentation/$lower/"
  browse --dump-dom "$url" >"$work/$module.html" || true
  if ! grep -q "<h1[^>]*>[^<]*$module[^<]*</h1>\|<h1[^>]*>.*>$module<" "$work/$module.html"; then
    echo "check-docs-site: $url did not render a title $module (DOM: $(wc -c <"$work/$module.html") bytes)" >&2
    status=1
  fi
  if ! grep -q "$title" "$work/$module.html"; then
    echo "check-docs-site: $url does not list its article \"$title\"" >&2
    status=1
  fi
  article="http://127.0.0.1:$port/$module/documentation/$lower/$page"
  browse --dump-dom "$article" >"$work/$module-article.html" || true
  if ! grep -q "$title" "$work/$module-article.html" || ! grep -q "<pre" "$work/$module-article.html"; then
    echo "check-docs-site: $article did not render the article with its code" >&2
    status=1
  fi
  rm -f "$shots/$module.png"
  browse --screenshot="$shots/$module.png" "$url" >/dev/null || true
  size="$(stat -c %s "$shots/$module.png" 2>/dev/null || echo 0)"
  if [ "$size" -lt 20000 ]; then
    echo "check-docs-site: the screenshot of $url is missing or blank ($size bytes)" >&2
    status=1
  else
    echo "check-docs-site: $module renders: title, article, screenshot $shots/$module.png ($size bytes)"
  fi
done
if [ "$status" -ne 0 ]; then
  echo "check-docs-site: chromium said: $(tail -5 "$work/chromium.log")" >&2
fi
exit "$status"
