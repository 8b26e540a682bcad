"""`fabricgen rules`: every diagnostic code with its one-line documentation."""

from __future__ import annotations

import sys

from fabricgen.validation.rules import catalogue


def run(*, markdown: bool) -> int:
    rows = catalogue()
    if markdown:
        lines = ["| code | name | what it means |", "| --- | --- | --- |"]
        lines += [f"| {code} | `{name}` | {summary} |" for code, name, summary in rows]
    else:
        lines = [f"{code}  {name:28} {summary}" for code, name, summary in rows]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
