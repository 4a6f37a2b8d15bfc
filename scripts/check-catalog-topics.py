#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a module's public API and its DocC catalog's Topics disagree.

usage: check-catalog-topics.py MODULE SYMBOL_GRAPH_DIR CATALOG_PAGE

Reads MODULE.symbols.json in SYMBOL_GRAPH_DIR (swift-symbolgraph-extract's output, with
-minimum-access-level public) and the ``Symbol`` links under "## Topics" of CATALOG_PAGE (the
module's landing page), and lists every public top-level declaration the Topics do not name and
every name the Topics list that is not a public top-level declaration. Exit 0 when they agree,
1 otherwise (65 for an unreadable graph or page).
"""
import json
import os
import re
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    module, directory, page = sys.argv[1:]
    path = os.path.join(directory, f"{module}.symbols.json")
    try:
        with open(path, encoding="utf-8") as handle:
            graph = json.load(handle)
        with open(page, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, ValueError) as error:
        print(f"check-catalog-topics: {error}", file=sys.stderr)
        return 65
    public = {
        symbol["pathComponents"][0]
        for symbol in graph.get("symbols", [])
        if len(symbol.get("pathComponents", [])) == 1 and symbol.get("accessLevel") in ("public", "open")
    }
    _, found, topics = text.partition("\n## Topics")
    if not found:
        print(f"check-catalog-topics: {page}: no '## Topics' section", file=sys.stderr)
        return 65
    listed = {link.split("/")[0] for link in re.findall(r"``([^`]+)``", topics)}
    problems = [f"{page}: public {name} is not in the Topics" for name in sorted(public - listed)]
    problems += [f"{page}: ``{name}`` in the Topics is not a public top-level symbol" for name in sorted(listed - public)]
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"check-catalog-topics: {module}: the Topics name its {len(public)} public top-level symbols")
    return 0


if __name__ == "__main__":
    sys.exit(main())
