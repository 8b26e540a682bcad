"""`fabricgen render FABRIC...`: write `rendered/<site>/`, or `--check` it.

All fabrics are validated before anything is written: one invalid fabric means
nothing is written for any of them. Exit 3 when files changed (or, with
`--check`, would change), so a pre-commit hook fails until the output is staged.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from fabricgen import emit, report
from fabricgen.diagnostics import Diagnostic
from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import Build, build

EXIT_CHANGED = 3


def build_all(paths: Sequence[Path]) -> tuple[list[Build], list[Diagnostic]]:
    builds: list[Build] = []
    found: list[Diagnostic] = []
    for path in paths:
        try:
            result = build(path)
        except InvalidFabricError as exc:
            found.extend(exc.diagnostics)
            continue
        builds.append(result)
        found.extend(result.warnings)
    sites = [b.site for b in builds]
    for b in builds:
        if sites.count(b.site) > 1:
            raise InvalidFabricError([
                Diagnostic(b.plan.source_name, 1, 1, "metadata.name",
                           f"site {b.site!r} is rendered by more than one fabric; "
                           "give each fabric its own metadata.name", "FG004")
            ])
    return builds, found


def run(*, fabrics: Sequence[Path], output: Path, check: bool, fmt: str, quiet: bool) -> int:
    builds, found = build_all(fabrics)
    if found:
        sys.stderr.write(report.format_diagnostics(found, fmt))
    if any(d.is_error for d in found):
        sys.stderr.write(f"fabricgen: {report.summary(found)}; nothing written\n")
        return 1
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
    return EXIT_CHANGED if changed else 0
