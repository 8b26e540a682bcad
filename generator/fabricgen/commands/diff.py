"""`fabricgen diff FABRIC --base REV`: what a fabric change does to the rendered output.

The fabric as it is now and as it was at REV (read from git) are both rendered
in memory with this fabricgen; nothing is written. Exit 3 when they differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from fabricgen import exit_codes, provenance, report, review
from fabricgen.errors import InvalidFabricError
from fabricgen.gitdiff import read_at
from fabricgen.pipeline import Build, build, load_text, render
from fabricgen.source import display_name


def _base_build(path: Path, revision: str) -> Build | None:
    text = read_at(path, revision)
    if text is None:
        return None
    fabric, _source, _warnings = load_text(text, f"{display_name(path)}@{revision}")
    return render(fabric, provenance.source_name(path))


def invalid_comment(title: str, exc: InvalidFabricError) -> str:
    """The pull-request comment for a fabric that does not validate: its located errors."""
    lines = "".join(report.text_line(d) + "\n" for d in exc.diagnostics)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", lines)), default=0))
    return (f"## {title}\n\n**Invalid fabric: nothing to compare** ({report.summary(exc.diagnostics)}). "
            f"Fix these and push again:\n\n{fence}text\n{lines}{fence}\n")


def run(*, fabric: Path, base: str, fmt: str) -> int:
    name = display_name(fabric)
    try:
        head = build(fabric)
        base_build = _base_build(fabric, base)
    except InvalidFabricError as exc:
        if fmt == "markdown":  # the comment says why, instead of being empty
            sys.stdout.write(invalid_comment(f"fabricgen: {name} against {base}", exc))
        raise
    for d in head.warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    items = review.changes(base_build, head)
    if fmt == "markdown":
        sys.stdout.write(review.markdown(items, f"fabricgen: {name} against {base}", name) + "\n")
    else:
        sys.stdout.writelines(review.plain(items, name))
    return exit_codes.CHANGED if items else 0
