#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a public symbol of a module has no doc comment.

usage: check-doc-comments.py MODULE SYMBOL_GRAPH_DIR

Reads every MODULE*.symbols.json in SYMBOL_GRAPH_DIR (swift-symbolgraph-extract's output, with
-minimum-access-level public) and lists each public or open symbol declared in Sources/MODULE/
that has no docComment, as FILE:LINE: kind name. Symbols without a source location (synthesized
members, members inherited from the standard library) are not the module's to document.
Exit 0 when every one has a comment, 1 otherwise (65 for an unreadable graph).
"""
import glob
import json
import os
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    module, directory = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(os.path.join(directory, f"{module}.symbols.json"))
                   + glob.glob(os.path.join(directory, f"{module}@*.symbols.json")))
    if not files:
        print(f"check-doc-comments: no {module} symbol graph in {directory}", file=sys.stderr)
        return 65
    missing, checked = [], 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                graph = json.load(handle)
        except (OSError, ValueError) as error:
            print(f"check-doc-comments: {path}: {error}", file=sys.stderr)
            return 65
        for symbol in graph.get("symbols", []):
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            uri = symbol.get("location", {}).get("uri", "")
            marker = f"/Sources/{module}/"
            if marker not in uri:
                continue
            checked += 1
            if symbol.get("docComment") is None:
                line = symbol["location"]["position"]["line"] + 1
                name = ".".join(symbol.get("pathComponents", []))
                kind = symbol.get("kind", {}).get("displayName", "symbol")
                missing.append(f"Sources/{module}/{uri.split(marker, 1)[1]}:{line}: {kind} {name}")
    if missing:
        print(f"check-doc-comments: {len(missing)} public symbol(s) of {module} without a doc comment:",
              file=sys.stderr)
        for entry in sorted(set(missing)):
            print(f"  {entry}", file=sys.stderr)
        return 1
    print(f"check-doc-comments: {module}: all {checked} public symbols have a doc comment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
