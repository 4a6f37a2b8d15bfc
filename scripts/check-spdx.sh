#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a source file lacks the licence line. Every .swift, .c, .h, .py and .sh file in
# Sources, Tests, scripts and Examples (tracked by git or not yet added, ignored files aside),
# and Package.swift, must carry `SPDX-License-Identifier: Apache-2.0` in its first 5 lines
# (`// ...` in Swift and C, `# ...` in shell and Python, after the shebang and the
# swift-tools-version line). https://spdx.dev/learn/handling-license-info/
set -euo pipefail
cd "$(dirname "$0")/.."
tag="SPDX-License-Identifier: Apache-2.0"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files --cached --others --exclude-standard -- Package.swift Sources Tests scripts Examples; }
else
  list() { find Package.swift Sources Tests scripts Examples -path '*/.build' -prune -o -type f -print; }
fi
missing=()
checked=0
while IFS= read -r file; do
  case "$file" in
    *.swift|*.c|*.h|*.py|*.sh) ;;
    *) continue ;;
  esac
  [ -f "$file" ] || continue  # deleted in the work tree, not yet committed
  checked=$((checked + 1))
  head -n 5 "$file" | grep -qF "$tag" || missing+=("$file")
done < <(list)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "check-spdx: ${#missing[@]} file(s) without \"$tag\" in their first 5 lines:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "check-spdx: start each with '// $tag' (Swift, C) or '# $tag' after the shebang (shell, Python)" >&2
  exit 1
fi
echo "check-spdx: all $checked source files carry $tag"
