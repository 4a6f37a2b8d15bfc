#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Copies docs/protocol.md's event table into Sources/SleepTapCore/Events/EventFieldCatalog.swift.

usage: scripts/sync-event-table.py   (from anywhere; rewrites the Swift file in place)

The catalogue checks scenario expectations against the documented fields; its table must be the
docs' table row for row (ExpectationCatalogTests). Edit the docs, then run this.
"""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
docs = (root / "docs/protocol.md").read_text(encoding="utf-8")


def is_row(line: str) -> bool:
    cells = [cell.strip() for cell in line.split("|") if cell != ""]
    return (line.startswith("| ") and len(cells) >= 3 and cells[1].startswith("`")
            and all(c.isalpha() or c == "-" for c in cells[0]))


rows = [line for line in docs.split("\n") if is_row(line)]
swift = root / "Sources/SleepTapCore/Events/EventFieldCatalog.swift"
text = swift.read_text(encoding="utf-8")
body = "\n".join("        " + row for row in rows)
new, count = re.subn(r'((?:public|package) static let table = #"""\n).*?(\n        """#)',
                     lambda m: m.group(1) + body + m.group(2), text, flags=re.S)
if count != 1:
    raise SystemExit("sync-event-table: the table literal was not found in " + str(swift))
swift.write_text(new, encoding="utf-8")
print(f"sync-event-table: {len(rows)} rows")
