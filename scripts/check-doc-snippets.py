#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a Swift code block of a DocC article is not in the file it was copied from.

usage: check-doc-snippets.py ARTICLE.md SOURCE.swift [SOURCE.swift...]

Every ```swift block of ARTICLE must appear in one of the SOURCE files (which build and run: a
test, or the Examples package) as consecutive lines, compared without leading and trailing
spaces, so the article's code is code that compiles and runs. Exit 0 when all are found, 1 when
one is not (naming its first line), 66 for a missing file.
"""
import sys


def blocks(text: str):
    lines, found, inside, start = text.split("\n"), [], None, 0
    for number, line in enumerate(lines, 1):
        if inside is None and line.strip() == "```swift":
            inside, start = [], number + 1
        elif inside is not None and line.strip() == "```":
            found.append((start, inside))
            inside = None
        elif inside is not None:
            inside.append(line.strip())
    return found


def contains(haystack, needle) -> bool:
    return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    texts = {}
    for path in sys.argv[1:]:
        try:
            with open(path, encoding="utf-8") as handle:
                texts[path] = handle.read()
        except OSError as error:
            print(f"check-doc-snippets: {error}", file=sys.stderr)
            return 66
    article, sources = sys.argv[1], [[line.strip() for line in texts[p].split("\n")] for p in sys.argv[2:]]
    found = blocks(texts[article])
    if not found:
        print(f"check-doc-snippets: {article} has no ```swift block", file=sys.stderr)
        return 1
    for start, block in found:
        if not any(contains(source, block) for source in sources):
            print(f"check-doc-snippets: {article}:{start}: this Swift block is in none of "
                  f"{', '.join(sys.argv[2:])} (copy it from the code that runs)", file=sys.stderr)
            return 1
    print(f"check-doc-snippets: {article}: {len(found)} Swift block(s), each in the code that runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
