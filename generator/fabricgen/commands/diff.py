"""`fabricgen diff FABRIC --base REV`: what a fabric change does to the rendered output.

The fabric as it is now and as it was at REV (read from git) are both rendered
in memory with this fabricgen; nothing is written. Exit 3 when they differ. The
Markdown comment also shows the head topology with what changed marked and, when
the OVN programs are installed, the `fabricgen verify` matrix of the head.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from fabricgen import exit_codes, provenance, report, review, topology
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


def topology_section(base: Build | None, head: Build) -> str:
    before = topology.build(base.plan.fabric) if base is not None else None
    marked, picture = topology.marks(before, topology.build(head.plan.fabric))
    legend = ", ".join(topology.legend(marked)) or "nothing"
    return (f"<details>\n<summary>Topology of the head (marked: {legend})</summary>\n\n"
            f"```mermaid\n{topology.mermaid(picture, marked)}```\n\n</details>\n")


def lab_section(head: Build, name: str) -> str | None:
    """The verify matrix of the head, or None when the OVN programs are not installed."""
    from fabricgen.commands import verify
    from fabricgen.lab import proof

    if head.plan.fabric.interconnection is None or verify.missing_programs() is not None:
        return None
    try:
        return verify.markdown(proof.prove(head), name)
    except proof.ProofError as exc:
        return f"### OVN-IC lab: not run\n\n{exc}\n"


def run(*, fabric: Path, base: str, fmt: str, lab: bool = True) -> int:
    name = display_name(fabric)
    try:
        head = build(fabric)
        before = _base_build(fabric, base)
    except InvalidFabricError as exc:
        if fmt == "markdown":  # the comment says why, instead of being empty
            sys.stdout.write(invalid_comment(f"fabricgen: {name} against {base}", exc))
        raise
    for d in head.warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    result = review.review(before, head, name)
    if fmt == "markdown":
        extra = [topology_section(before, head)] if result else []
        if result and lab:
            section = lab_section(head, name)
            extra += [section] if section else []
        sys.stdout.write(review.markdown(result, f"fabricgen: {name} against {base}", extra) + "\n")
    elif fmt == "json":
        sys.stdout.write(review.as_json(result, name, base))
    else:
        sys.stdout.writelines(review.plain(result))
    return exit_codes.CHANGED if result else 0
