"""`fabricgen diff FABRIC --base REV`: what a fabric change does to the rendered output.

The fabric as it is now and as it was at REV (read from git) are both rendered
in memory with this fabricgen; nothing is written. Exit 3 when they differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import exit_codes, report, review
from fabricgen.gitdiff import read_at
from fabricgen.pipeline import Build, build, load_text, render
from fabricgen.source import display_name


def _base_build(path: Path, revision: str) -> Build | None:
    text = read_at(path, revision)
    if text is None:
        return None
    fabric, _source, _warnings = load_text(text, f"{display_name(path)}@{revision}")
    return render(fabric, display_name(path))


def run(*, fabric: Path, base: str, fmt: str) -> int:
    head = build(fabric)
    for d in head.warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    name = display_name(fabric)
    result = review.review(_base_build(fabric, base), head, name)
    if fmt == "markdown":
        sys.stdout.write(review.markdown(result, f"fabricgen: {name} against {base}") + "\n")
    elif fmt == "json":
        sys.stdout.write(review.as_json(result, name, base))
    else:
        sys.stdout.writelines(review.plain(result))
    return exit_codes.CHANGED if result else 0
