"""`fabricgen render FABRIC...`: write `rendered/<site>/`, or `--check` it.

All fabrics are validated before anything is written: one invalid fabric means
nothing is written for any of them. Exit 3 when files changed (or, with
`--check`, would change), so a pre-commit hook fails until the output is staged.
With `--all` the fabrics are those git tracks, and a tracked site directory that no
fabric renders any more is removed (or, with `--check`, reported).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from fabricgen import emit, exit_codes, report, stamp
from fabricgen.diagnostics import Diagnostic
from fabricgen.pipeline import Build, load_all, provenance_name, render


def build_all(paths: Sequence[Path], output: Path | None = None) -> tuple[list[Build], list[Diagnostic]]:
    """Validate and render every fabric; all problems of all fabrics are collected."""
    loaded, found = load_all(paths)
    return [stamp.stamped(render(fabric, provenance_name(source, output)), source.text,
                          sum(d.file == source.name and not d.is_error for d in found))
            for fabric, source in loaded], found


def run(*, fabrics: Sequence[Path], output: Path, check: bool, fmt: str, quiet: bool,
        all_tracked: bool = False) -> int:
    top = None
    if all_tracked:
        from fabricgen import git_index

        top = git_index.toplevel(Path.cwd())
        fabrics = git_index.fabrics(top)
    builds, found = build_all(fabrics, output)
    if report.resolve(fmt) == "json":  # a report for tools, on stdout like `validate`'s
        sys.stdout.write(report.format_diagnostics(found, fmt))
    elif found:
        sys.stderr.write(report.format_diagnostics(found, fmt))
    if any(d.is_error for d in found):
        sys.stderr.write(f"fabricgen: {report.summary(found)}; nothing written\n")
        return exit_codes.INVALID
    orphans: list[str] = []
    if top is not None:  # before anything is written: an unusable output root writes nothing
        from fabricgen import git_index

        rendered = {result.site for result in builds}
        orphans = [site for site in git_index.sites(top, output) if site not in rendered]
    results = [emit.diff(output, result) if check else emit.write(output, result) for result in builds]
    results += [emit.remove(output, site, check=check) for site in orphans]
    changed = any(results)
    if not quiet:
        for changes in results:
            for line in changes.lines():
                sys.stderr.write(f"{line}\n")
    command = "fabricgen render --all" if all_tracked else "fabricgen render"
    if check and changed:
        sys.stderr.write(f"fabricgen: {output} is out of date; run `{command}` and commit the result "
                         "with the fabrics it comes from\n")
    elif changed:
        sys.stderr.write(f"fabricgen: {output} changed; review it and stage it with the fabrics it comes from: "
                         f"git add {shlex.quote(str(output))}\n")
    elif not quiet:
        sys.stderr.write(f"fabricgen: {output} is up to date\n")
    return exit_codes.CHANGED if changed else 0
