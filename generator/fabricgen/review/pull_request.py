"""The parts of a pull-request comment that `fabricgen diff` builds around the semantic diff."""

from __future__ import annotations

import re
from pathlib import Path

from fabricgen import report
from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import Build, load_text, render
from fabricgen.review import topology
from fabricgen.review.git_revisions import read_at
from fabricgen.source import provenance
from fabricgen.source.reader import display_name


def base_build(path: Path, revision: str) -> Build | None:
    """The fabric as it was at `revision`, rendered in memory; None when it did not exist."""
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
