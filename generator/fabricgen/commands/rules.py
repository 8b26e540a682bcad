"""`fabricgen rules`: every diagnostic code with its one-line documentation."""

from __future__ import annotations

from pathlib import Path

from fabricgen.commands import generated_file
from fabricgen.validation.rules import catalogue

DIAGNOSTICS_INTRO = """\
# Diagnostics

Generated from fabricgen's rules by `fabricgen rules --markdown -o docs/diagnostics.md`; do not
edit by hand. Every problem is reported as `FILE:LINE:COL: path.to.field: message [CODE]`;
warnings say `warning:` and do not fail. The codes are stable.

"""


def run(*, markdown: bool, output: Path | None = None) -> int:
    rows = catalogue()
    if markdown:
        lines = ["| code | name | what it means |", "| --- | --- | --- |"]
        lines += [f"| {code} | `{name}` | {summary} |" for code, name, summary in rows]
    else:
        lines = [f"{code}  {name:28} {summary}" for code, name, summary in rows]
    text = "\n".join(lines) + "\n"
    if output is not None:
        text = DIAGNOSTICS_INTRO + text if markdown else text
    return generated_file.write(text, output)
