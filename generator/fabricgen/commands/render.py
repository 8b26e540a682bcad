"""`fabricgen render FABRIC...`: write `rendered/<site>/`, or `--check` it.

All fabrics are validated before anything is written: one invalid fabric means
nothing is written for any of them. Exit 3 when files changed (or, with
`--check`, would change), so a pre-commit hook fails until the output is staged.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from fabricgen import emit, exit_codes, report
from fabricgen.diagnostics import Diagnostic
from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import Build, load, render


def build_all(paths: Sequence[Path]) -> tuple[list[Build], list[Diagnostic]]:
    """Validate and render every fabric; all problems of all fabrics are collected."""
    builds: list[Build] = []
    found: list[Diagnostic] = []
    owners: dict[str, str] = {}
    for path in paths:
        try:
            fabric, source, warnings = load(path)
        except InvalidFabricError as exc:
            found.extend(exc.diagnostics)
            continue
        found.extend(warnings)
        site = fabric.metadata.name
        if site in owners:
            found.append(source.diagnostic(
                ("metadata", "name"),
                f"site {site!r} is also rendered by {owners[site]}; both would own "
                f"rendered/{site}/; give each fabric its own metadata.name", "FG004", value=True))
            continue
        owners[site] = source.name
        builds.append(render(fabric, source.name))
    return builds, found


def run(*, fabrics: Sequence[Path], output: Path, check: bool, fmt: str, quiet: bool) -> int:
    builds, found = build_all(fabrics)
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
        sys.stderr.write("fabricgen: rendered output changed; review and stage it\n")
    elif not quiet:
        sys.stderr.write(f"fabricgen: {output} is up to date\n")
    return exit_codes.CHANGED if changed else 0
