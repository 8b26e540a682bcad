"""`fabricgen render FABRIC...`: write `rendered/<site>/`, or `--check` it.

All fabrics are validated before anything is written: one invalid fabric means
nothing is written for any of them. Exit 3 when files changed (or, with
`--check`, would change), so a pre-commit hook fails until the output is staged.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from fabricgen import emit, exit_codes, report
from fabricgen.diagnostics import Diagnostic
from fabricgen.pipeline import Build, load_all, provenance_name, render


def build_all(paths: Sequence[Path], output: Path | None = None) -> tuple[list[Build], list[Diagnostic]]:
    """Validate and render every fabric; all problems of all fabrics are collected."""
    loaded, found = load_all(paths)
    return [render(fabric, provenance_name(source, output)) for fabric, source in loaded], found


def run(*, fabrics: Sequence[Path], output: Path, check: bool, fmt: str, quiet: bool) -> int:
    builds, found = build_all(fabrics, output)
    if found:
        sys.stderr.write(report.format_diagnostics(found, fmt))
    if any(d.is_error for d in found):
        sys.stderr.write(f"fabricgen: {report.summary(found)}; nothing written\n")
        return exit_codes.INVALID
    changed = False
    for result in builds:
        changes = emit.diff(output, result) if check else emit.write(output, result)
        changed = changed or bool(changes)
        if not quiet:
            for line in changes.lines():
                sys.stderr.write(f"{line}\n")
    if check and changed:
        sys.stderr.write(f"fabricgen: {output} is out of date; run `fabricgen render` and commit the result\n")
    elif changed:
        sys.stderr.write(f"fabricgen: {output} changed; review it and stage it: git add {shlex.quote(str(output))}\n")
    elif not quiet:
        sys.stderr.write(f"fabricgen: {output} is up to date\n")
    return exit_codes.CHANGED if changed else 0
