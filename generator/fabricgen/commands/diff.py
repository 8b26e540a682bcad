"""`fabricgen diff FABRIC --base REV`: what a fabric change does to the rendered output.

The fabric as it is now and as it was at REV (read from git) are both rendered
in memory with this fabricgen; nothing is written. Exit 3 when they differ. The
Markdown comment also shows the head topology with what changed marked and, when
the OVN programs are installed, the `fabricgen verify` matrix of the head.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import exit_codes, report
from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import build
from fabricgen.review import pull_request, semantic_diff
from fabricgen.source.reader import display_name


def run(*, fabric: Path, base: str, fmt: str, lab: bool = True) -> int:
    name = display_name(fabric)
    try:
        head = build(fabric)
        before = pull_request.base_build(fabric, base)
    except InvalidFabricError as exc:
        if fmt == "markdown":  # the comment says why, instead of being empty
            sys.stdout.write(pull_request.invalid_comment(f"fabricgen: {name} against {base}", exc))
        raise
    for d in head.warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    result = semantic_diff.review(before, head, name)
    if fmt == "markdown":
        extra = [pull_request.topology_section(before, head)] if result else []
        if result and lab:
            from fabricgen.lab import verify as verification

            section = verification.lab_section(head, name)
            extra += [section] if section else []
        sys.stdout.write(semantic_diff.markdown(result, f"fabricgen: {name} against {base}", extra) + "\n")
    elif fmt == "json":
        sys.stdout.write(semantic_diff.as_json(result, name, base))
    else:
        sys.stdout.writelines(semantic_diff.plain(result))
    return exit_codes.CHANGED if result else 0
