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

from fabricgen import exit_codes, report
from fabricgen.output import emit
from fabricgen.pipeline import build_all


def run(*, fabrics: Sequence[Path], output: Path, check: bool, fmt: str, quiet: bool,
        all_tracked: bool = False) -> int:
    top = None
    if all_tracked:
        from fabricgen.output import git_index

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
        from fabricgen.output import git_index

        rendered = {result.site for result in builds}
        orphans = [site for site in git_index.sites(top, output) if site not in rendered]
    try:
        results = (emit.check_all if check else emit.write_all)(output, builds, orphans, inputs=fabrics)
    except emit.PartialWriteError as exc:
        for changes in exc.done:
            for line in changes.lines():
                sys.stderr.write(f"{line}\n")
        raise
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
